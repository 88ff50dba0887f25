/* cliopt.c -- a command's option table -> getopt_long and its --help (see cliopt.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cliopt.h"
#include "cliutil.h"

#define WIDTH 80              /* help lines are wrapped at this many columns */
#define VAL0 0x100            /* getopt_long's value of option I of a table: VAL0 + I (above any short option) */

/* What getopt_long reads in place of a word that is an argument though it
 * begins with '-' (cli_cmd.dash_args). */
static char ARG_WORD[] = "ARG";

/* ---- help ------------------------------------------------------------------ */

/* Writes TEXT's words from column AT (where the output is now), a new line
 * indented INDENT before a word that would pass WIDTH.  Returns the column. */
static int wrap(FILE *out, const char *text, int at, int indent)
{
    const char *p = text;
    int first = 1;
    while (*p) {
        while (*p == ' ') p++;
        int n = (int) strcspn(p, " ");
        if (!n) break;
        if (!first && at + 1 + n > WIDTH) {
            fprintf(out, "\n%*s", indent, "");
            at = indent;
        } else if (!first) {
            fputc(' ', out);
            at++;
        }
        fwrite(p, 1, (size_t) n, out);
        at += n;
        p += n;
        first = 0;
    }
    return at;
}

void cli_row(FILE *out, const char *left, const char *help, int col)
{
    int at = fprintf(out, "  %s", left);
    if (at + 2 > col) {
        fputc('\n', out);
        at = 0;
    }
    fprintf(out, "%*s", col - at, "");
    wrap(out, help, col, col);
    fputc('\n', out);
}

/* "--name METAVAR" (or "--name") of O into BUF. */
static const char *opt_left(const cli_opt *o, char *buf, size_t n)
{
    if (o->metavar) snprintf(buf, n, "--%s %s", o->name, o->metavar);
    else snprintf(buf, n, "--%s", o->name);
    return buf;
}

void cli_options(const cli_cmd *c, FILE *out)
{
    char left[128];
    int col = 14;             /* "  -h, --help" and two blanks */
    for (const cli_opt *o = c->opts; o->name; o++) {
        int n = 2 + (int) strlen(opt_left(o, left, sizeof left)) + 2;
        if (n > col && n <= 28) col = n;
    }
    for (const cli_opt *o = c->opts; o->name; o++) cli_row(out, opt_left(o, left, sizeof left), o->help, col);
    cli_row(out, "-h, --help", "print this help", col);
}

void cli_synopsis(const cli_cmd *c, const char *lead, FILE *out)
{
    const char *form = c->args;
    for (int k = 0;; k++) {
        int flen = (int) strcspn(form, "\n");
        int at = k == 0 ? fprintf(out, "%s", lead) : fprintf(out, "%*s", (int) strlen(lead), "");
        at += fprintf(out, "latsim %s", c->name);
        int indent = at + 1;
        if (flen) at += fprintf(out, " %.*s", flen, form);
        for (const cli_opt *o = c->opts; o->name; o++) {
            char item[160], left[128];
            opt_left(o, left, sizeof left);
            if (o->flags & CLI_REQUIRED) snprintf(item, sizeof item, "%s%s", left, o->flags & CLI_REPEAT ? "..." : "");
            else snprintf(item, sizeof item, "[%s]%s", left, o->flags & CLI_REPEAT ? "..." : "");
            /* An item with a blank inside ("[--seed N]") is one word: not split. */
            int n = (int) strlen(item);
            if (at + 1 + n > WIDTH) {
                fprintf(out, "\n%*s", indent, "");
                at = indent;
            } else {
                fputc(' ', out);
                at++;
            }
            fputs(item, out);
            at += n;
        }
        fputc('\n', out);
        if (!form[flen]) break;
        form += flen + 1;
    }
}

void cli_usage(const cli_cmd *c, FILE *out)
{
    cli_synopsis(c, "usage: ", out);
    if (c->about && c->about[0]) fprintf(out, "\n%s", c->about);
    fputs("\noptions:\n", out);
    cli_options(c, out);
    if (c->notes && c->notes[0]) fprintf(out, "\n%s", c->notes);
}

/* ---- parsing --------------------------------------------------------------- */

/* 1 when WORD, as typed, is option NAME in full ("--name" or "--name=..."):
 * getopt_long also takes an unambiguous abbreviation, which is refused. */
static int typed_in_full(const char *word, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(word, "--", 2) && !strncmp(word + 2, name, n) && (word[2 + n] == '\0' || word[2 + n] == '=');
}

/* Prints the error of a '?' or ':' from getopt_long: AV and OPTIND as it left
 * them, T the table.  Returns 2. */
static int bad_option(const cli_cmd *c, const cli_opt *t, int k, char **av)
{
    const char *word = av[optind - 1];
    if (optopt >= VAL0 && typed_in_full(word, t[optopt - VAL0].name)) {
        if (k == ':') return cu_die(2, "%s: --%s needs a value (see latsim %s --help)", c->name, t[optopt - VAL0].name, c->name);
        return cu_die(2, "%s: --%s takes no value, got '%s' (see latsim %s --help)", c->name, t[optopt - VAL0].name, word, c->name);
    }
    if (optopt > 0 && optopt < VAL0) return cu_die(2, "%s: unknown option '-%c' (see latsim %s --help)", c->name, optopt, c->name);
    return cu_die(2, "%s: unknown option '%s' (see latsim %s --help)", c->name, word, c->name);
}

/* Handles option I of table T with value VAL (NULL for a flag): a shared one
 * into A, the command's own to FN.  Returns 0 or the exit status. */
static int take(const cli_cmd *c, const cli_opt *o, const char *val, cli_args *a, cli_opt_fn fn, void *ctx)
{
    int max = c->max_sets > 0 && c->max_sets < CLI_MAX_SETS ? c->max_sets : CLI_MAX_SETS;
    switch (o->id) {
    case CLI_DB: a->db = val; return 0;
    case CLI_JSON: a->json = 1; return 0;
    case CLI_COST_DB: {
        /* An existing file, made absolute: the key is relative to the scenario's folder. */
        char full[4096];
        struct stat sb;
        if (!val[0]) return cu_die(2, "%s: --cost-db: empty path", c->name);
        if (stat(val, &sb) != 0 || !realpath(val, full))
            return cu_die(2, "%s: --cost-db %s: %s", c->name, val, strerror(errno));
        if (!S_ISREG(sb.st_mode)) return cu_die(2, "%s: --cost-db %s: not a regular file", c->name, val);
        if (a->nsets == max) return cu_die(2, "%s: too many --set options (max %d)", c->name, max);
        /* One per process: the sets point to it after cli_parse's caller returns. */
        static char set[4200];
        snprintf(set, sizeof set, "sim.cost_db=%s", full);
        a->sets[a->nsets++] = set;
        return 0;
    }
    case CLI_SET:
        if (a->nsets == max) return cu_die(2, "%s: too many --set options (max %d)", c->name, max);
        a->sets[a->nsets++] = val;
        return 0;
    default: return fn ? fn(ctx, o->id, val) : 0;
    }
}

int cli_parse(const cli_cmd *c, int argc, char **argv, cli_args *a, cli_opt_fn fn, void *ctx)
{
    memset(a, 0, sizeof *a);
    a->pos = argv;
    int n = 0;
    while (c->opts[n].name) n++;
    /* getopt_long reads AV: the program's name, then ARGV's words (dash_args:
     * an argument such as "-1" hidden as ARG_WORD); WORDS keeps them as typed. */
    struct option *lo = calloc((size_t) n + 2, sizeof *lo);
    char **av = calloc((size_t) argc + 2, sizeof *av);
    char **words = calloc((size_t) argc + 2, sizeof *words);
    char *seen = calloc((size_t) n + 1, 1);     /* option I was given */
    int rc = CLI_GO;
    if (!lo || !av || !words || !seen) { rc = cu_die(1, "out of memory"); goto out; }
    for (int i = 0; i < n; i++)
        lo[i] = (struct option) { c->opts[i].name, c->opts[i].metavar ? required_argument : no_argument, NULL, VAL0 + i };
    lo[n] = (struct option) { "help", no_argument, NULL, 'h' };
    av[0] = words[0] = (char *) c->name;
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        int hide = c->dash_args && w[0] == '-' && w[1] && w[1] != '-' && strcmp(w, "-h");
        words[i + 1] = argv[i];
        av[i + 1] = hide ? ARG_WORD : argv[i];
    }
    /* "-": arguments come back in order (code 1), options may follow them;
     * ":": a missing value is ':', not '?'.  optind 0: glibc starts afresh. */
    optind = 0;
    opterr = 0;
    for (;;) {
        int k = getopt_long(argc + 1, av, "-:h", lo, NULL);
        if (k == -1) break;
        if (k == 1) { a->pos[a->npos++] = words[optind - 1]; continue; }
        if (k == 'h') { cli_usage(c, stdout); rc = 0; goto out; }
        if (k == '?' || k == ':') { rc = bad_option(c, c->opts, k, av); goto out; }
        const cli_opt *o = &c->opts[k - VAL0];
        /* The option's word: before its value when that is a word of its own. */
        int sep = o->metavar && optarg == av[optind - 1];
        const char *word = av[optind - 1 - sep];
        if (!typed_in_full(word, o->name)) { rc = cu_die(2, "%s: unknown option '%s' (see latsim %s --help)", c->name, word, c->name); goto out; }
        const char *val = !o->metavar ? NULL : sep ? words[optind - 1] : optarg;
        seen[k - VAL0] = 1;
        int s = take(c, o, val, a, fn, ctx);
        if (s != 0) { rc = s; goto out; }
    }
    /* After "--": every word left is an argument. */
    for (int i = optind; i < argc + 1; i++) a->pos[a->npos++] = words[i];
    for (int i = 0; i < n; i++)
        if ((c->opts[i].flags & CLI_REQUIRED) && !seen[i]) {
            char left[128];
            rc = cu_die(2, "%s: missing %s (see latsim %s --help)", c->name, opt_left(&c->opts[i], left, sizeof left), c->name);
            goto out;
        }
out:
    free(lo);
    free(av);
    free(words);
    free(seen);
    return rc;
}
