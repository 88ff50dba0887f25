/* test_docfigs.c -- the figures the documents quote are what the program prints
 * today.  README.md, every page of docs/ and scenarios/README.md are read for
 * two forms (docs/testing.md, "Documentation that is checked"):
 *
 *  - Transcripts: a fenced block whose first line starts with "$ ".  Its "$ "
 *    lines (a line ending in '\' continues on the next) are run in order by one
 *    shell in a directory of the document's own (scenarios/ and tests/ linked
 *    in, ./latsim and `latsim` the program under test, no database yet), and the
 *    block must read as what they print: each "$ " line followed by its stdout
 *    and stderr, every line equal to the next line printed, where a line "..."
 *    (any indentation) stands for any number of lines (none included: the line
 *    after it pairs with the first line printed after the previous pair that
 *    equals it, else with the first of the same shape, its figures aside) and a
 *    block that does not end with "..." must end where the output does.  Masked (not compared): the
 *    version after "latsim", wall times, the seconds and workers of a plan.
 *    "<!-- no-check: REASON -->" on the line above the fence leaves a block out;
 *    "<!-- file: NAME -->" above a fence writes the block to NAME in that
 *    directory (and the figures' one) before anything runs: an .ini file the
 *    transcripts and figures use.
 *
 *  - Figures: a comment line "<!-- check: COMMAND ; PATH = FIGURE ; ... -->"
 *    (or "<!-- check "KEY": ... -->"; it may run over several lines).  COMMAND
 *    (it must print JSON) runs once per document in a second directory; each
 *    PATH ("a.b.c", "[N]" for an array element, "[KEY=VALUE]" for the element
 *    whose KEY is VALUE, ["KEY"] for a key with dots or blanks, a trailing "*K"
 *    or "/K" to scale) picks a number (or a string that is one) that,
 *    printed with as many decimals as FIGURE, must read FIGURE; a further
 *    COMMAND item starts a new command for the paths after it; "@N:PATH" reads
 *    the comment's N-th command, "pct(A, B) = FIGURE" checks the change
 *    from A to B in % (100 (B / A - 1)) and "ratio(A, B) = FIGURE" A / B; a
 *    FIGURE written with a '+' ("+32") reads a positive value.  Each FIGURE
 *    must appear, in order, in the text the comment belongs to: the block
 *    above it (blank lines and other check comments skipped), or with "KEY" the
 *    one line of that block that holds KEY (a table row).
 *
 * With LATSIM_DOCS_UPDATE=1 (`make docs-update`) the tests rewrite the figures,
 * the comments and the transcripts' lines from the fresh output instead of
 * failing, keeping the "..." lines: a line is replaced by the line printed
 * that it pairs with (the next one, or after "..." the first of its shape); a
 * line after "..." that pairs with none makes the block the whole output (a
 * message asks to shorten it again).  What cannot be rewritten (a figure not
 * found in its text) still fails.
 *
 * Run from the repository root, as `make test` does. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tbin.h"
#include "tcli.h"

/* ---- small text helpers --------------------------------------------------------- */

/* A growing byte buffer. */
typedef struct buf {
    char *s;      /* the bytes, NUL-terminated (NULL before the first append) */
    size_t n;     /* their count */
    size_t cap;   /* room in s */
} buf;

static void buf_add(buf *b, const char *p, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        b->cap = 2 * (b->n + len + 1) + 256;
        b->s = realloc(b->s, b->cap);
        cr_assert_not_null(b->s);
    }
    memcpy(b->s + b->n, p, len);
    b->n += len;
    b->s[b->n] = 0;
}

static void buf_str(buf *b, const char *p) { buf_add(b, p, strlen(p)); }

/* One edit of a document: LEN bytes at OFF replaced by TEXT (malloc'd). */
typedef struct edit {
    size_t off;   /* byte offset in the document */
    size_t len;   /* bytes replaced */
    char *text;   /* the new bytes */
} edit;

/* What one document's check found and would change. */
typedef struct doc {
    const char *path;   /* the document, relative to the repository root */
    char *text;         /* its bytes */
    edit *ed;           /* the edits of update mode, in any order */
    int ned;            /* their count */
    int problems;       /* failures reported */
    int checked;        /* transcripts and figures checked */
    int update;         /* LATSIM_DOCS_UPDATE=1 */
    char sandbox[2][300];   /* the transcripts' and the figures' directories */
    int quiet;          /* problems go to msgs, not to Criterion */
    buf msgs;           /* the problems, one a line, when quiet */
} doc;

static void add_edit(doc *d, size_t off, size_t len, const char *text)
{
    d->ed = realloc(d->ed, (size_t) (d->ned + 1) * sizeof *d->ed);
    cr_assert_not_null(d->ed);
    d->ed[d->ned++] = (edit) { off, len, strdup(text) };
}

static int line_no(const doc *d, size_t off)
{
    int n = 1;
    for (size_t i = 0; i < off && d->text[i]; i++) n += d->text[i] == '\n';
    return n;
}

/* Reports a problem at byte OFF of the document: a failed expectation, or with
 * QUIET (the checker's own test) a line added to MSGS. */
static void problem(doc *d, size_t off, const char *fmt, ...)
{
    char msg[4096], line[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "%s:%d: %s\n", d->path, line_no(d, off), msg);
    d->problems++;
    if (d->quiet) buf_str(&d->msgs, line);
    else cr_expect_fail("%s", line);
}

#define PROBLEM problem

/* The end of the line that starts at P (its '\n' or NUL). */
static const char *eol(const char *p)
{
    const char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

/* The start of the line after the one at P (NULL at the end). */
static const char *next_line(const char *p)
{
    const char *e = strchr(p, '\n');
    return e && e[1] ? e + 1 : NULL;
}

static int blank_line(const char *p)
{
    for (; *p && *p != '\n'; p++)
        if (!isspace((unsigned char) *p)) return 0;
    return 1;
}

/* ---- the sandboxes -------------------------------------------------------------- */

/* Makes DIR/NAME a directory with scenarios/ and tests/ linked to the checkout,
 * ./latsim and bin/latsim a wrapper of the program under test (line-buffered
 * stdout, so that its lines and stderr's interleave as on a terminal). */
static void make_sandbox(const char *name, char *out, size_t n)
{
    char cwd[400], p[700];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(out, n, "%s/%s", dir, name);
    snprintf(p, sizeof p, "%s/bin", out);
    cr_assert_eq(mkdir(out, 0755), 0);
    cr_assert_eq(mkdir(p, 0755), 0);
    static const char *links[] = { "scenarios", "tests" };
    for (int i = 0; i < 2; i++) {
        char from[500];
        snprintf(from, sizeof from, "%s/%s", cwd, links[i]);
        snprintf(p, sizeof p, "%s/%s", out, links[i]);
        cr_assert_eq(symlink(from, p), 0, "symlink %s", p);
    }
    const char *bin = LATSIM;
    char abs[600];
    if (bin[0] == '/') snprintf(abs, sizeof abs, "%s", bin);
    else snprintf(abs, sizeof abs, "%s/%s", cwd, bin);
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", out, i ? "bin/latsim" : "latsim");
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f, "cannot write %s", p);
        /* stdbuf preloads its library: an AddressSanitizer build (make SANITIZE=address)
         * would refuse to start without being told the order is fine. */
        fprintf(f, "#!/bin/sh\nASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" "
                   "exec stdbuf -oL '%s' \"$@\"\n", abs);
        fclose(f);
        cr_assert_eq(chmod(p, 0755), 0);
    }
}

/* Runs the shell SCRIPT in SANDBOX (PATH starting with its bin/, no LATSIM_DB)
 * and returns what it printed, stdout and stderr together (malloc'd). */
static char *run_script(const char *sandbox, const char *script)
{
    char sp[400], op[400], cmd[1200];
    snprintf(sp, sizeof sp, "%s.sh", sandbox);
    snprintf(op, sizeof op, "%s.out", sandbox);
    FILE *f = fopen(sp, "w");
    cr_assert_not_null(f);
    fprintf(f, "cd '%s' || exit 99\nunset LATSIM_DB\nexport PATH=\"$PWD/bin:$PATH\"\n%s", sandbox, script);
    fclose(f);
    snprintf(cmd, sizeof cmd, "timeout 600 sh '%s' >'%s' 2>&1 </dev/null", sp, op);
    int rc = system(cmd);
    (void) rc;   /* the commands' own exit statuses are part of the transcript when it quotes them */
    return slurp(op, NULL);
}

/* Appends S to B in single quotes for the shell. */
static void buf_quoted(buf *b, const char *s, size_t len)
{
    buf_str(b, "'");
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\'') buf_str(b, "'\\''");
        else buf_add(b, s + i, 1);
    }
    buf_str(b, "'");
}

/* ---- transcripts ---------------------------------------------------------------- */

#define NMASKS 6
static regex_t masks[NMASKS];
static int masks_ready;

/* LINE (LEN bytes) with the masked parts replaced by "*", in OUT (N bytes). */
static void masked(const char *line, size_t len, char *out, size_t n)
{
    if (!masks_ready) {
        static const char *re[NMASKS] = { "latsim [0-9a-f][-0-9a-z.]*(-dirty)?$", "wall_time_s[\": ]+[0-9.e+-]+",
                                          "[0-9.]+ s, [0-9]+ workers?", "\"version\": \"[^\"]*\"",
                                          "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+Z", "simulations in [0-9.]+ s" };
        for (int i = 0; i < NMASKS; i++) cr_assert_eq(regcomp(&masks[i], re[i], REG_EXTENDED), 0);
        masks_ready = 1;
    }
    snprintf(out, n, "%.*s", (int) len, line);
    for (int i = 0; i < NMASKS; i++) {
        regmatch_t m;
        if (regexec(&masks[i], out, 1, &m, 0) == 0) {
            char tail[4096];
            snprintf(tail, sizeof tail, "%s", out + m.rm_eo);
            snprintf(out + m.rm_so, n - (size_t) m.rm_so, "*%s", tail);
        }
    }
}

/* The shape of a line: numbers (runs of digits, '.', 'e', '+', '-' holding a
 * digit) as '#', runs of blanks as one space; for pairing lines whose figures changed. */
static void shape(const char *line, size_t len, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 2 < n;) {
        if (isspace((unsigned char) line[i])) {
            while (i < len && isspace((unsigned char) line[i])) i++;
            out[k++] = ' ';
            continue;
        }
        size_t j = i;
        int digit = 0;
        while (j < len && (isdigit((unsigned char) line[j]) || strchr(".e+-", line[j]))) digit |= isdigit((unsigned char) line[j++]);
        if (j > i && digit) { out[k++] = '#'; i = j; continue; }
        out[k++] = line[i++];
    }
    out[k] = 0;
}

static int is_ellipsis(const char *l, size_t len)
{
    while (len && isspace((unsigned char) *l)) l++, len--;
    return len == 3 && !strncmp(l, "...", 3);
}

/* A line of a text: where it starts and how long it is. */
typedef struct span {
    const char *p;   /* its first byte */
    size_t len;      /* its length without the '\n' */
} span;

static int split_lines(const char *s, const char *end, span **out)
{
    int n = 0, cap = 0;
    *out = NULL;
    for (const char *p = s; p < end;) {
        const char *e = memchr(p, '\n', (size_t) (end - p));
        if (!e) e = end;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            *out = realloc(*out, (size_t) cap * sizeof **out);
            cr_assert_not_null(*out);
        }
        (*out)[n++] = (span) { p, (size_t) (e - p) };
        p = e + 1;
    }
    return n;
}

/* Checks the transcript whose lines are BODY .. END (the fence lines excluded). */
static void check_transcript(doc *d, const char *body, const char *end)
{
    span *dl;
    int n = split_lines(body, end, &dl);
    buf script = { 0 };
    for (int i = 0; i < n; i++) {
        if (dl[i].len < 2 || strncmp(dl[i].p, "$ ", 2)) continue;
        int last = i;
        while (last + 1 < n && dl[last].len && dl[last].p[dl[last].len - 1] == '\\') last++;
        size_t len = (size_t) (dl[last].p + dl[last].len - dl[i].p);
        buf_str(&script, "printf '%s\\n' ");
        buf_quoted(&script, dl[i].p, len);
        buf_str(&script, "\n{\n");
        buf_add(&script, dl[i].p + 2, len - 2);
        buf_str(&script, "\n} 2>&1\n");
        i = last;
    }
    char *out = run_script(d->sandbox[0], script.s);
    int ned0 = d->ned, problems0 = d->problems;   /* the edits and problems before this block's */
    span *ol;
    int m = split_lines(out, out + strlen(out), &ol);
    int j = 0, gap = 0;
    char a[4096], b[4096];
    for (int i = 0; i < n; i++) {
        if (is_ellipsis(dl[i].p, dl[i].len)) { gap = 1; continue; }
        char c[4096];
        masked(dl[i].p, dl[i].len, c, sizeof c);
        shape(c, strlen(c), a, sizeof a);
        int k = j;
        if (gap) {   /* after a gap: the next output line equal to it, else the next of the same shape */
            char dm[4096];
            masked(dl[i].p, dl[i].len, dm, sizeof dm);
            for (; k < m; k++) {
                masked(ol[k].p, ol[k].len, c, sizeof c);
                if (!strcmp(dm, c)) break;
            }
            if (k == m) k = j;
            else strcpy(b, a);
        }
        if (k == j || !gap)
            for (; k < m; k++) {   /* the next output line of the same shape: at once, or anywhere after a gap */
                masked(ol[k].p, ol[k].len, c, sizeof c);
                shape(c, strlen(c), b, sizeof b);
                if (!strcmp(a, b) || !gap) break;
            }
        if (k < m && strcmp(a, b) && gap) k = m;   /* without a gap a line pairs with the next one printed */
        if (k >= m && d->update) {   /* the lines do not pair: the block becomes the whole output */
            buf all = { 0 };
            for (int x = 0; x < m; x++) {
                buf_add(&all, ol[x].p, ol[x].len);
                buf_str(&all, "\n");
            }
            while (d->ned > ned0) free(d->ed[--d->ned].text);   /* this block's line edits give way */
            add_edit(d, (size_t) (body - d->text), (size_t) (end - body), all.s ? all.s : "");
            fprintf(stderr, "docs-update: %s:%d: the transcript is rewritten whole (shorten it with '...')\n", d->path,
                    line_no(d, (size_t) (body - d->text)));
            free(all.s);
            gap = 1;
            break;
        }
        if (k >= m) {
            PROBLEM(d, (size_t) (dl[i].p - d->text), "the transcript line '%.*s' has no counterpart in the output%s%.*s'",
                    (int) dl[i].len, dl[i].p, j < m ? " (next output line: '" : " (the output has ended",
                    j < m ? (int) ol[j].len : 0, j < m ? ol[j].p : "");
            break;
        }
        masked(dl[i].p, dl[i].len, a, sizeof a);
        masked(ol[k].p, ol[k].len, b, sizeof b);
        if (strcmp(a, b)) {
            if (d->update) {
                char *t = strndup(ol[k].p, ol[k].len);
                add_edit(d, (size_t) (dl[i].p - d->text), dl[i].len, t);
                free(t);
            } else
                PROBLEM(d, (size_t) (dl[i].p - d->text), "the transcript reads '%.*s', the program prints '%.*s'",
                        (int) dl[i].len, dl[i].p, (int) ol[k].len, ol[k].p);
        }
        j = k + 1;
        gap = 0;
    }
    if (!gap && j < m && d->update) {   /* the rest of the output after the block's last line */
        buf rest = { 0 };
        for (int x = j; x < m; x++) {
            buf_add(&rest, ol[x].p, ol[x].len);
            buf_str(&rest, "\n");
        }
        add_edit(d, (size_t) (end - d->text), 0, rest.s);
        free(rest.s);
    } else if (!gap && j < m && d->problems == problems0)
        PROBLEM(d, (size_t) (end - d->text), "the transcript ends but the program prints more: '%.*s' (end the block with "
                "'...' to leave the rest out)", (int) ol[j].len, ol[j].p);
    d->checked++;
    free(dl);
    free(ol);
    free(out);
    free(script.s);
}

/* ---- figures -------------------------------------------------------------------- */

/* The number at PATH in J ("a.b[2].c", "pools[name=chat].x", then "*K" or "/K");
 * 0 and *V set, or -1 with a reason in WHY. */
static int json_figure(json_t *j, const char *path, double *v, char *why, size_t n)
{
    char p[512];
    snprintf(p, sizeof p, "%s", path);
    double scale = 1;
    char *op = strpbrk(p, "*/");
    if (op) {
        char *e;
        double k = strtod(op + 1, &e);
        if (e == op + 1 || *e || k == 0) { snprintf(why, n, "bad scale in '%s'", path); return -1; }
        scale = *op == '*' ? k : 1 / k;
        *op = 0;
    }
    json_t *at = j;
    for (char *s = p; *s && at;) {
        if (*s == '.') { s++; continue; }
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (!e) { snprintf(why, n, "no ']' in '%s'", path); return -1; }
            *e = 0;
            char *eq = strchr(s + 1, '=');
            if (s[1] == '"' && e[-1] == '"') {   /* ["a key with . or blanks"] */
                e[-1] = 0;
                at = json_object_get(at, s + 2);
            } else if (eq) {
                *eq = 0;
                json_t *el, *found = NULL;
                size_t i;
                json_array_foreach(at, i, el) {
                    json_t *kv = json_object_get(el, s + 1);
                    if (json_is_string(kv) && !strcmp(json_string_value(kv), eq + 1)) { found = el; break; }
                }
                at = found;
            } else at = json_array_get(at, (size_t) atol(s + 1));
            s = e + 1;
            continue;
        }
        size_t len = strcspn(s, ".[");
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int) len, s);
        at = json_object_get(at, key);
        s += len;
    }
    char *end = NULL;
    if (json_is_string(at)) *v = strtod(json_string_value(at), &end);   /* "8": a number as a string */
    if (json_is_number(at)) *v = json_number_value(at);
    else if (!end || end == json_string_value(at) || *end) {
        snprintf(why, n, "'%s' is not a number of the output", path);
        return -1;
    }
    *v *= scale;
    return 0;
}

/* FIGURE printed like V: as many decimals, no blanks; in OUT (N bytes). */
static void as_printed(double v, const char *figure, char *out, size_t n)
{
    const char *dot = strchr(figure, '.');
    int dec = 0;
    if (dot)
        while (isdigit((unsigned char) dot[1 + dec])) dec++;
    snprintf(out, n, "%.*f", dec, v);
    if (out[0] == '-' && strspn(out + 1, "0.") == strlen(out + 1)) memmove(out, out + 1, strlen(out));
}

static void squeeze(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (*s != ' ') out[k++] = *s;
    out[k] = 0;
}

/* The offset of FIGURE in TEXT[FROM, TO) as a whole number (no digit or '.' +
 * digit beside it), or -1. */
static long find_figure(const char *text, size_t from, size_t to, const char *figure)
{
    size_t fl = strlen(figure);
    for (size_t i = from; i + fl <= to; i++) {
        if (strncmp(text + i, figure, fl)) continue;
        char before = i ? text[i - 1] : ' ', after = i + fl < to ? text[i + fl] : ' ';
        char after2 = i + fl + 1 < to ? text[i + fl + 1] : ' ';
        if (isdigit((unsigned char) before) || (before == '.' && i > 1 && isdigit((unsigned char) text[i - 2]))) continue;
        if (isdigit((unsigned char) after) || (after == '.' && isdigit((unsigned char) after2))) continue;
        return (long) i;
    }
    return -1;
}

/* The command outputs of one document, parsed (the figures' cache). */
typedef struct cached {
    char *cmd;     /* the command line */
    json_t *json;  /* its output, NULL when it is not JSON */
    char *out;     /* its output as printed */
} cached;

static cached cache[256];
static int ncache;

static cached *run_cached(doc *d, const char *cmd)
{
    for (int i = 0; i < ncache; i++)
        if (!strcmp(cache[i].cmd, cmd)) return &cache[i];
    cr_assert_lt(ncache, 256);
    buf s = { 0 };
    buf_str(&s, cmd);
    buf_str(&s, " 2>/dev/null\n");
    cached *c = &cache[ncache++];
    c->cmd = strdup(cmd);
    c->out = run_script(d->sandbox[1], s.s);
    c->json = json_loads(c->out, 0, NULL);
    free(s.s);
    return c;
}

static char *trim(char *s)
{
    while (isspace((unsigned char) *s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char) e[-1])) *--e = 0;
    return s;
}

/* Checks the comment at C ("<!-- check"), whose body is BODY (malloc'd copy,
 * newlines as blanks); its text is TEXT_FROM .. TEXT_TO of the document. */
/* The number REF names: "PATH" in the output of CUR, "@N:PATH" in that of the
 * comment's N-th command (CMDS, NCMD of them); 0, or -1 with WHY. */
static int ref_value(const char *ref, cached *cur, cached **cmds, int ncmd, double *v, char *why, size_t n)
{
    while (isspace((unsigned char) *ref)) ref++;
    if (*ref == '@') {
        char *e;
        long k = strtol(ref + 1, &e, 10);
        if (*e != ':' || k < 1 || k > ncmd) { snprintf(why, n, "'%s': no such command (@1..@%d)", ref, ncmd); return -1; }
        cur = cmds[k - 1];
        ref = e + 1;
    }
    if (!cur || !cur->json) { snprintf(why, n, "'%s': no command output", ref); return -1; }
    char p[512];
    snprintf(p, sizeof p, "%s", ref);
    char *end = p + strlen(p);
    while (end > p && isspace((unsigned char) end[-1])) *--end = 0;
    return json_figure(cur->json, p, v, why, n);
}

/* The value of the item EXPR: a reference (ref_value), "pct(A, B)", the
 * change from A to B in % (100 (B / A - 1)), or "ratio(A, B)", A / B. */
static int item_value(char *expr, cached *cur, cached **cmds, int ncmd, double *v, char *why, size_t n)
{
    int pct = !strncmp(expr, "pct(", 4), ratio = !strncmp(expr, "ratio(", 6);
    if (!pct && !ratio) return ref_value(expr, cur, cmds, ncmd, v, why, n);
    char *comma = strchr(expr, ','), *close = strrchr(expr, ')');
    if (!comma || !close || close < comma) { snprintf(why, n, "'%s': pct(A, B) or ratio(A, B) expected", expr); return -1; }
    *comma = *close = 0;
    double a, b;
    if (ref_value(expr + (pct ? 4 : 6), cur, cmds, ncmd, &a, why, n) || ref_value(comma + 1, cur, cmds, ncmd, &b, why, n))
        return -1;
    if ((pct ? a : b) == 0) { snprintf(why, n, "%s: %s is 0", pct ? "pct()" : "ratio()", pct ? "A" : "B"); return -1; }
    *v = pct ? 100 * (b / a - 1) : a / b;
    *comma = ',';
    *close = ')';
    return 0;
}

static void check_figures(doc *d, size_t c, char *body, size_t text_from, size_t text_to, size_t body_off)
{
    cached *cur = NULL, *cmds[16];
    int ncmd = 0;
    size_t at = text_from;
    for (char *save = NULL, *item = strtok_r(body, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *t = trim(item);
        if (!*t) continue;
        if (!strncmp(t, "./latsim ", 9) || !strncmp(t, "latsim ", 7)) {
            cur = run_cached(d, t);
            if (ncmd < 16) cmds[ncmd++] = cur;
            if (!cur->json) PROBLEM(d, c, "'%s' did not print JSON: %.300s", t, cur->out);
            continue;
        }
        char *eq = strrchr(t, '=');
        if (!cur || !eq) { PROBLEM(d, c, "'%s': not 'PATH = FIGURE' after a command", t); return; }
        *eq = 0;
        char *path = trim(t), *figure = trim(eq + 1), why[600], fresh[64], fig[64];
        double v;
        if (item_value(path, cur, cmds, ncmd, &v, why, sizeof why)) { PROBLEM(d, c, "%s (%s)", why, cur->cmd); continue; }
        squeeze(figure, fig, sizeof fig);
        as_printed(v, fig, fresh, sizeof fresh);
        long pos = find_figure(d->text, at, text_to, figure);
        if (pos < 0) {
            PROBLEM(d, c, "the figure %s (%s) is not in the text this comment checks (after the previous figure)", figure, path);
            continue;
        }
        at = (size_t) pos + strlen(figure);
        d->checked++;
        if (fig[0] == '+' && fresh[0] != '-') {   /* a signed figure, "+32" */
            memmove(fresh + 1, fresh, strlen(fresh) + 1);
            fresh[0] = '+';
        }
        if (!strcmp(fig, fresh)) continue;
        if (d->update) {
            add_edit(d, (size_t) pos, strlen(figure), fresh);
            add_edit(d, body_off + (size_t) (figure - body), strlen(figure), fresh);
        } else
            PROBLEM(d, c, "%s reads %s, `%s` gives %s (%.6g)", path, figure, cur->cmd, fresh, v);
    }
}

/* The start of the line before the one that starts at LS (LS > 0). */
static size_t line_before(const char *t, size_t ls)
{
    size_t p = ls - 1;
    while (p > 0 && t[p - 1] != '\n') p--;
    return p;
}

/* The block a comment whose first line starts at OFF belongs to: back over
 * blank lines and other comments to the nearest text, then up to the blank
 * line above it; [*FROM, *TO) (both 0 when there is none). */
static void block_above(const doc *d, size_t off, size_t *from, size_t *to)
{
    const char *t = d->text;
    size_t ls = off;
    *from = *to = 0;
    for (;;) {
        if (ls == 0) return;
        ls = line_before(t, ls);
        const char *e = eol(t + ls);
        if (blank_line(t + ls)) continue;
        if (e - (t + ls) >= 3 && !strncmp(e - 3, "-->", 3)) {   /* a comment's last line: to its first */
            while (ls > 0 && strncmp(t + ls, "<!--", 4)) ls = line_before(t, ls);
            continue;
        }
        break;
    }
    *to = (size_t) (eol(t + ls) - t);
    while (ls > 0 && !blank_line(t + line_before(t, ls))) ls = line_before(t, ls);
    *from = ls;
}

/* ---- one document --------------------------------------------------------------- */

static void apply_edits(doc *d)
{
    if (!d->ned) return;
    /* Last edit first, so that the offsets before it stay valid. */
    for (int i = 0; i < d->ned; i++)
        for (int k = i + 1; k < d->ned; k++)
            if (d->ed[k].off > d->ed[i].off) { edit x = d->ed[i]; d->ed[i] = d->ed[k]; d->ed[k] = x; }
    buf out = { 0 };
    buf_str(&out, d->text);
    for (int i = 0; i < d->ned; i++) {
        buf nb = { 0 };
        buf_add(&nb, out.s, d->ed[i].off);
        buf_str(&nb, d->ed[i].text);
        buf_str(&nb, out.s + d->ed[i].off + d->ed[i].len);
        free(out.s);
        out = nb;
        free(d->ed[i].text);
    }
    FILE *f = fopen(d->path, "w");
    cr_assert_not_null(f, "cannot write %s", d->path);
    fputs(out.s, f);
    fclose(f);
    fprintf(stderr, "docs-update: %s: %d edit%s\n", d->path, d->ned, d->ned == 1 ? "" : "s");
    free(out.s);
}

/* Checks (or with UPDATE rewrites) the transcripts and figures of PATH; the
 * number of transcripts and figures checked goes to *CHECKED (unless NULL).
 * With QUIET the problems go to *MSGS (malloc'd, NULL when none) instead of
 * failing the test.  Returns the number of problems. */
static int check_doc(const char *path, int update, int quiet, int *checked, char **msgs)
{
    doc d = { .path = path, .update = update, .quiet = quiet };
    d.text = slurp_or_fail(path, NULL);
    static int runs;
    char name[32];
    snprintf(name, sizeof name, "t%d", runs);
    make_sandbox(name, d.sandbox[0], sizeof d.sandbox[0]);
    snprintf(name, sizeof name, "f%d", runs++);
    make_sandbox(name, d.sandbox[1], sizeof d.sandbox[1]);
    const char *t = d.text;
    /* The files first, so that a figure may quote a command on a file shown further down. */
    for (const char *l = t; l && *l; l = next_line(l)) {
        const char *body = next_line(l), *close = body;
        if (strncmp(l, "<!-- file: ", 11) || !body || strncmp(body, "```", 3)) continue;
        body = next_line(body);
        close = body;
        while (close && strncmp(close, "```", 3)) close = next_line(close);
        if (!body || !close) break;
        char name[200];
        sscanf(l + 11, "%199s", name);
        for (int s = 0; s < 2; s++) {
            char p[600];
            snprintf(p, sizeof p, "%s/%s", d.sandbox[s], name);
            FILE *f = fopen(p, "w");
            cr_assert_not_null(f, "%s: cannot write %s", path, p);
            fwrite(body, 1, (size_t) (close - body), f);
            fclose(f);
        }
    }
    const char *prev = NULL;   /* the line above the current one */
    for (const char *l = t; l && *l; prev = l, l = next_line(l)) {
        if (!strncmp(l, "```", 3)) {
            const char *body = next_line(l), *close = body;
            while (close && strncmp(close, "```", 3)) close = next_line(close);
            if (!body || !close) break;
            char tag[512] = "";
            if (prev && !strncmp(prev, "<!-- ", 5)) snprintf(tag, sizeof tag, "%.*s", (int) (eol(prev) - prev), prev);
            if (!strncmp(tag, "<!-- file: ", 11)) {
                /* written above */
            } else if (!strncmp(body, "$ ", 2) && strncmp(tag, "<!-- no-check: ", 15)) {
                check_transcript(&d, body, close);
            }
            l = close;
            continue;
        }
        if (strncmp(l, "<!-- check", 10) || (l[10] != ':' && l[10] != ' ')) continue;
        const char *end = strstr(l, "-->");
        if (!end) { PROBLEM(&d, (size_t) (l - t), "a check comment without its '-->'"); break; }
        const char *colon = strchr(l, ':');
        char key[256] = "";
        if (l[10] == ' ') {
            const char *q = strchr(l, '"'), *q2 = q ? strchr(q + 1, '"') : NULL;
            colon = q2 ? strchr(q2, ':') : NULL;
            if (!q || !q2 || !colon || colon > end) { PROBLEM(&d, (size_t) (l - t), "check \"KEY\": expected"); continue; }
            snprintf(key, sizeof key, "%.*s", (int) (q2 - q - 1), q + 1);
        }
        size_t body_off = (size_t) (colon + 1 - t);
        char *body = strndup(colon + 1, (size_t) (end - colon - 1));
        for (char *c = body; *c; c++)
            if (*c == '\n') *c = ' ';
        size_t from, to;
        block_above(&d, (size_t) (l - t), &from, &to);
        if (key[0]) {   /* the one line of the block holding KEY */
            size_t hit = 0;
            int hits = 0;
            for (const char *x = t + from; x && x < t + to; x = next_line(x)) {
                const char *xe = eol(x);
                char *ln = strndup(x, (size_t) (xe - x));
                if (strstr(ln, key)) { hits++; hit = (size_t) (x - t); }
                free(ln);
            }
            if (hits != 1) { PROBLEM(&d, (size_t) (l - t), "\"%s\" is in %d lines of the block above, not one", key, hits); free(body); continue; }
            from = hit;
            to = (size_t) (eol(t + hit) - t);
        }
        check_figures(&d, (size_t) (l - t), body, from, to, body_off);
        free(body);
        l = end;
        while (l > t && l[-1] != '\n') l--;   /* continue from the comment's last line */
    }
    if (update && !d.problems) apply_edits(&d);
    for (int i = 0; i < ncache; i++) { free(cache[i].cmd); free(cache[i].out); json_decref(cache[i].json); }
    ncache = 0;
    free(d.ed);
    free(d.text);
    if (checked) *checked = d.checked;
    if (msgs) *msgs = d.msgs.s;
    else free(d.msgs.s);
    return d.problems;
}

/* ---- the tests ------------------------------------------------------------------ */

static void setup(void) { tcli_setup("/tmp/latsim_docfigs_", NULL); }

static int updating(void)
{
    const char *u = getenv("LATSIM_DOCS_UPDATE");
    return u && !strcmp(u, "1");
}

/* The documents checked: one test each (docfigs/page_readme, ...), so that two workers
 * share them.  They run every command the pages quote: the slow tier (`make check`,
 * the Makefile's SLOW_TESTS: docfigs/page_*); the checker's own tests below are fast. */
static const char *pages[] = { "README.md", "scenarios/README.md", "docs/planning.md", "docs/validation.md",
                               "docs/metrics.md", "docs/observed.md", "docs/catalog.md", "docs/explore.md",
                               "docs/llm.md", "docs/gateway.md", "docs/fleet.md", "docs/workloads.md",
                               "docs/calibration.md", "docs/development.md", "docs/architecture.md",
                               "docs/commands.md", "docs/input-limits.md", "docs/scenario-files.md",
                               "docs/testing.md", "docs/bands.md", "docs/learned.md", "docs/accuracy.md" };
#define NPAGES (sizeof pages / sizeof pages[0])

static void check_page(const char *page)
{
    int checked = 0;
    check_doc(page, updating(), 0, &checked, NULL);
    cr_log_info("%s: %d transcripts and figures checked", page, checked);
}

#define PAGE(name, i) Test(docfigs, page_##name, .init = setup, .fini = tcli_teardown) { check_page(pages[i]); }
PAGE(readme, 0)
PAGE(scenarios_readme, 1)
PAGE(planning, 2)
PAGE(validation, 3)
PAGE(metrics, 4)
PAGE(observed, 5)
PAGE(catalog, 6)
PAGE(explore, 7)
PAGE(llm, 8)
PAGE(gateway, 9)
PAGE(fleet, 10)
PAGE(workloads, 11)
PAGE(calibration, 12)
PAGE(development, 13)
PAGE(architecture, 14)
PAGE(commands, 15)
PAGE(input_limits, 16)
PAGE(scenario_files, 17)
PAGE(testing, 18)
PAGE(bands, 19)
PAGE(learned, 20)
PAGE(accuracy, 21)

/* Every page of docs/ (but docs/scenarios.md, which is `latsim keys --markdown`)
 * is one of the pages above. */
Test(docfigs, every_page_is_checked)
{
    DIR *dd = opendir("docs");
    cr_assert_not_null(dd);
    struct dirent *e;
    while ((e = readdir(dd))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".md") || !strcmp(e->d_name, "scenarios.md")) continue;
        char p[300];
        snprintf(p, sizeof p, "docs/%s", e->d_name);
        int found = 0;
        for (size_t i = 0; i < NPAGES; i++) found |= !strcmp(pages[i], p);
        cr_expect(found, "%s is not checked (add it to pages[] and a PAGE() line)", p);
    }
    closedir(dd);
}

/* The checker itself, on a made-up page: a stale transcript line, a stale
 * figure and a figure missing from its text are found; update mode rewrites the
 * stale ones, after which the page checks clean. */
Test(docfigs, checker_finds_and_rewrites_stale_figures, .init = setup, .fini = tcli_teardown)
{
    static const char *INI = "[sim]\nrequests = 2000\n[workload]\nrate = 5\n[pool cpu]\nservers = 1\n"
                             "service_ms = exp(mean=100)\n";
    char page[300], txt[4096];
    snprintf(txt, sizeof txt,
             "# T\n\n<!-- file: mm1.ini -->\n```ini\n%s```\n\n"
             "```\n$ ./latsim run mm1.ini --no-store --set sim.requests=3000\nscenario mm1.ini  seed 1  latsim 0123abc\n"
             "  requests             2001                warmup_requests      0                   warmup_s             0\n"
             "...\n```\n\n"
             "Served 2000 requests at 0.9 utilisation.\n\n"
             "<!-- check: ./latsim run mm1.ini --json --no-store ; served = 2000 ; pools.cpu.busy_share = 0.9 -->\n\n"
             "| row | figure |\n|---|---|\n| one | 12.5 |\n| two | 7.0 |\n\n"
             "<!-- check \"two\": ./latsim run mm1.ini --json --no-store ; pools.cpu.offered_load = 3.0 -->\n\n"
             "Half the rate, half the load: -50 %%, twice as much at the full rate: 2.0 (+100 %%).\n\n"
             "<!-- check: ./latsim run mm1.ini --json --no-store ; ./latsim run mm1.ini --json --no-store --set "
             "workload.rate=2.5 ; pct(@1:pools.cpu.offered_load, @2:pools.cpu.offered_load) = -50 ;"
             " ratio(@1:pools.cpu.offered_load, @2:pools.cpu.offered_load) = 2.0 ;"
             " pct(@2:pools.cpu.offered_load, @1:pools.cpu.offered_load) = +100 -->\n", INI);
    write_file("page.md", txt, page, sizeof page);
    int checked = 0;
    char *msgs = NULL;
    int n = check_doc(page, 0, 1, &checked, &msgs);
    cr_expect_eq(n, 3, "%d problems: %s", n, msgs ? msgs : "");
    cr_expect(msgs && strstr(msgs, "the transcript reads '  requests             2001"), "%s", msgs);
    cr_expect(msgs && strstr(msgs, "pools.cpu.busy_share reads 0.9, `./latsim run mm1.ini --json --no-store` gives 0.5"),
              "%s", msgs);
    cr_expect(msgs && strstr(msgs, "the figure 3.0 (pools.cpu.offered_load) is not in the text"), "%s", msgs);
    cr_expect(msgs && strstr(msgs, "latsim 0123abc") == NULL, "the version is masked: %s", msgs);
    free(msgs);
    /* The row's figure: a figure that is in its text. */
    char *p = slurp_or_fail(page, NULL), *row = strstr(p, "| two | 7.0 |");
    cr_assert_not_null(row);
    row[8] = '3';
    FILE *f = fopen(page, "w");
    cr_assert_not_null(f);
    fputs(p, f);
    fclose(f);
    free(p);
    n = check_doc(page, 1, 1, &checked, &msgs);
    cr_expect_eq(n, 0, "update: %s", msgs ? msgs : "");
    free(msgs);
    n = check_doc(page, 0, 1, &checked, &msgs);
    cr_expect_eq(n, 0, "after the update: %s", msgs ? msgs : "");
    cr_expect_eq(checked, 7, "1 transcript and 6 figures: %d", checked);
    free(msgs);
    p = slurp_or_fail(page, NULL);
    cr_expect(strstr(p, "Served 2000 requests at 0.5 utilisation.") != NULL, "%s", p);
    cr_expect(strstr(p, "pools.cpu.busy_share = 0.5 -->") != NULL, "%s", p);
    cr_expect(strstr(p, "  requests             3000 ") != NULL, "%s", p);
    cr_expect(strstr(p, "latsim 0123abc") != NULL, "a masked part is left as it was: %s", p);
    cr_expect(strstr(p, "| two | 0.5 |") != NULL && strstr(p, "pools.cpu.offered_load = 0.5 -->") != NULL, "%s", p);
    free(p);
}

/* "..." in a transcript: it stands for any run of printed lines, none included,
 * at the start, in the middle or at the end of a block; a line after it pairs
 * with the first equal line printed, and a block not ending with "..." ends
 * where the output does.  Update mode rewrites lines in place and keeps the
 * "..." lines: a changed label (no gap) replaces its line, a changed figure
 * after a gap the line of its shape. */
Test(docfigs, ellipsis_stands_for_any_run_of_lines, .init = setup, .fini = tcli_teardown)
{
#define PRINT "$ printf '%s\\n' alpha beta gamma delta\n"
    char page[300];
    int checked = 0;
    char *msgs = NULL;
    write_file("good.md",
               "```\n" PRINT "alpha\n...\ndelta\n```\n\n"
               "```\n" PRINT "...\nbeta\n...\n```\n\n"
               "```\n" PRINT "alpha\n...\nbeta\ngamma\ndelta\n```\n\n"
               "```\n" PRINT "  ...\ngamma\ndelta\n```\n", page, sizeof page);
    int n = check_doc(page, 0, 1, &checked, &msgs);
    cr_expect_eq(n, 0, "%s", msgs ? msgs : "");
    cr_expect_eq(checked, 4);
    free(msgs);
    write_file("bad.md",
               "```\n" PRINT "alpha\n...\nomega\n```\n\n"
               "```\n" PRINT "alpha\ngamma\n...\n```\n\n"
               "```\n" PRINT "alpha\n...\ngamma\n```\n", page, sizeof page);
    n = check_doc(page, 0, 1, &checked, &msgs);
    cr_expect_eq(n, 3, "%s", msgs ? msgs : "");
    cr_expect(msgs && strstr(msgs, "the transcript line 'omega' has no counterpart"), "%s", msgs);
    cr_expect(msgs && strstr(msgs, "the transcript reads 'gamma', the program prints 'beta'"), "%s", msgs);
    cr_expect(msgs && strstr(msgs, "the transcript ends but the program prints more: 'delta'"), "%s", msgs);
    free(msgs);
#undef PRINT
    write_file("stale.md",
               "```\n$ printf '%s\\n' 'busy_share 1' 'x 2' 'y 3' 'z 4'\nutilization 1\n...\nz 5\n```\n", page,
               sizeof page);
    n = check_doc(page, 1, 1, &checked, &msgs);
    cr_expect_eq(n, 0, "update: %s", msgs ? msgs : "");
    free(msgs);
    char *p = slurp_or_fail(page, NULL);
    cr_expect_str_eq(p, "```\n$ printf '%s\\n' 'busy_share 1' 'x 2' 'y 3' 'z 4'\nbusy_share 1\n...\nz 4\n```\n");
    free(p);
    n = check_doc(page, 0, 1, &checked, &msgs);
    cr_expect_eq(n, 0, "after the update: %s", msgs ? msgs : "");
    free(msgs);
}
