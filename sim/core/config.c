/* config.c -- reading scenario files (libinih) and applying --set overrides.
 *
 * libinih calls us once per key; it does not say on which line, so we feed it
 * the text through our own line reader (ini_parse_stream) and count lines as
 * we go: when the handler runs, the line just read is the key's line.
 *
 * Lines have no length limit but the file's (CFG_MAX_BYTES): Debian's libinih
 * takes its line buffer's size at run time (ini_use_stack, ini_initial_alloc),
 * and each parse gets a buffer on the heap that holds the text's longest line,
 * so that inih never splits one.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ini.h>
#include "core/config.h"
#include "latsim/infile.h"

#define CFG_MAX_BYTES (16 << 20)   /* largest scenario file read, bytes */

typedef struct reader {
    const char *p;      /* next unread byte of the text */
    int line;           /* lines handed to inih so far */
    cfg *c;             /* where section headers are recorded */
    int too_long;       /* line number of a line longer than inih takes, or 0 */
    int dup_line;       /* line of a second header of one section, or 0 */
    int dup_first;      /* the line of its first header */
    char *dup_name;     /* its name (owned) */
} reader;

static int add_section(cfg *c, const char *name, int line);
static cfg_section *find_section(const cfg *c, const char *name);
static int index_add(cfg *c, int entry);
static char *fold_spaces(const char *s);

typedef struct parse_ctx {
    cfg *c;
    reader *rd;
    char *err;
    size_t errlen;
    int failed;         /* set by the handler on a duplicate key etc. */
} parse_ctx;

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Copies S with leading/trailing white space removed and inner runs of white
 * space folded to one blank ("pool   cpu" -> "pool cpu"). */
static char *fold_spaces(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (!d) return NULL;
    size_t k = 0;
    int blank = 0;
    for (; *s; s++) {
        if (isspace((unsigned char) *s)) { blank = 1; continue; }
        if (blank && k > 0) d[k++] = ' ';
        blank = 0;
        d[k++] = *s;
    }
    d[k] = '\0';
    return d;
}

static char *read_line(char *str, int num, void *stream)
{
    reader *rd = stream;
    if (*rd->p == '\0') return NULL;
    int k = 0;
    while (*rd->p && k < num - 1) {
        char ch = *rd->p++;
        str[k++] = ch;
        if (ch == '\n') break;
    }
    str[k] = '\0';
    rd->line++;
    if (k == num - 1 && str[k - 1] != '\n' && *rd->p != '\0' && !rd->too_long)
        rd->too_long = rd->line;
    /* inih does not report section headers: record them (with their line) here. */
    const char *h = str;
    while (isspace((unsigned char) *h)) h++;
    const char *close = (*h == '[') ? strchr(h, ']') : NULL;
    if (close) {
        char *raw = strndup(h + 1, (size_t) (close - h - 1));
        char *name = raw ? fold_spaces(raw) : NULL;
        if (name && name[0]) {
            /* A section given twice would be merged silently: stop there. */
            const cfg_section *first = find_section(rd->c, name);
            if (first && first->line > 0) {
                rd->dup_line = rd->line;
                rd->dup_first = first->line;
                rd->dup_name = name;
                free(raw);
                return NULL;          /* ends the parse */
            }
            add_section(rd->c, name, rd->line);
        }
        free(raw);
        free(name);
    }
    return str;
}

static int add_section(cfg *c, const char *name, int line)
{
    if (find_section(c, name)) return 0;
    if (c->ns == c->scap) {
        size_t cap = c->scap ? 2 * c->scap : 8;
        cfg_section *s = realloc(c->s, cap * sizeof *s);
        if (!s) return -1;
        c->s = s;
        c->scap = cap;
    }
    c->s[c->ns].name = xstrdup(name);
    if (!c->s[c->ns].name) return -1;
    c->s[c->ns].line = line;
    c->s[c->ns].pool = -1;
    c->ns++;
    return index_add(c, 0);
}

/* ---- hash index (config.h: cfg_index) ----------------------------------- */

struct cfg_index {
    size_t *es;                 /* entry slots: index in c->e + 1, or 0 when empty */
    size_t ecap;                /* slots in es, a power of 2 (0 before the first) */
    size_t *ss;                 /* section slots: index in c->s + 1, or 0 */
    size_t scap;                /* slots in ss, a power of 2 */
    unsigned long long compares;/* string comparisons made by lookups (count) */
};

/* FNV-1a of A, a separator and B (B may be NULL). */
static size_t hash2(const char *a, const char *b)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (; *a; a++) h = (h ^ (unsigned char) *a) * UINT64_C(1099511628211);
    h = (h ^ 0xff) * UINT64_C(1099511628211);
    for (; b && *b; b++) h = (h ^ (unsigned char) *b) * UINT64_C(1099511628211);
    return (size_t) (h ^ (h >> 29));
}

/* Puts index I into SLOTS (CAP slots, not full) at its hash H. */
static void slot_put(size_t *slots, size_t cap, size_t h, size_t i)
{
    size_t k = h & (cap - 1);
    while (slots[k]) k = (k + 1) & (cap - 1);
    slots[k] = i + 1;
}

/* Indexes the entry or section just appended (ENTRY: c->e[c->n - 1], else
 * c->s[c->ns - 1]), doubling the table when it would be over half full.
 * Returns 0, or -1 when out of memory. */
static int index_add(cfg *c, int entry)
{
    if (!c->ix && !(c->ix = calloc(1, sizeof *c->ix))) return -1;
    cfg_index *ix = c->ix;
    size_t n = entry ? c->n : c->ns;
    size_t **slots = entry ? &ix->es : &ix->ss;
    size_t *cap = entry ? &ix->ecap : &ix->scap;
    if (2 * n > *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        while (2 * n > nc) nc *= 2;
        size_t *ns = calloc(nc, sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < n; i++)
            slot_put(ns, nc, entry ? hash2(c->e[i].section, c->e[i].key) : hash2(c->s[i].name, NULL), i);
        free(*slots);
        *slots = ns;
        *cap = nc;
        return 0;
    }
    size_t i = n - 1;
    slot_put(*slots, *cap, entry ? hash2(c->e[i].section, c->e[i].key) : hash2(c->s[i].name, NULL), i);
    return 0;
}

static cfg_entry *find(const cfg *c, const char *section, const char *key)
{
    cfg_index *ix = c->ix;
    if (!ix || !ix->ecap) return NULL;
    for (size_t k = hash2(section, key) & (ix->ecap - 1); ix->es[k]; k = (k + 1) & (ix->ecap - 1)) {
        cfg_entry *e = &c->e[ix->es[k] - 1];
        ix->compares++;
        if (strcmp(e->section, section) == 0 && strcmp(e->key, key) == 0) return e;
    }
    return NULL;
}

static cfg_section *find_section(const cfg *c, const char *name)
{
    cfg_index *ix = c->ix;
    if (!ix || !ix->scap) return NULL;
    for (size_t k = hash2(name, NULL) & (ix->scap - 1); ix->ss[k]; k = (k + 1) & (ix->scap - 1)) {
        cfg_section *s = &c->s[ix->ss[k] - 1];
        ix->compares++;
        if (strcmp(s->name, name) == 0) return s;
    }
    return NULL;
}

const cfg_section *cfg_section_get(const cfg *c, const char *name)
{
    return find_section(c, name);
}

unsigned long long cfg_compares(const cfg *c)
{
    return c->ix ? c->ix->compares : 0;
}

static int add_entry(cfg *c, const char *section, const char *key, const char *value, int line)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        cfg_entry *e = realloc(c->e, cap * sizeof *e);
        if (!e) return -1;
        c->e = e;
        c->cap = cap;
    }
    cfg_entry *e = &c->e[c->n];
    e->section = xstrdup(section);
    e->key = xstrdup(key);
    e->value = xstrdup(value);
    e->line = line;
    if (!e->section || !e->key || !e->value) {
        free(e->section); free(e->key); free(e->value);
        return -1;
    }
    c->n++;
    return index_add(c, 1);
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *x = user;
    cfg *c = x->c;
    int line = x->rd->line;
    char *sec = fold_spaces(section);
    if (!sec) goto oom;
    if (sec[0] == '\0') {
        snprintf(x->err, x->errlen, "%s:%d: key '%s' is outside any [section]", c->path, line, name);
        free(sec);
        x->failed = 1;
        return 0;
    }
    if (find(c, sec, name)) {
        snprintf(x->err, x->errlen, "%s:%d: [%s] %s: key given twice (first on line %d)",
                 c->path, line, sec, name, find(c, sec, name)->line);
        free(sec);
        x->failed = 1;
        return 0;
    }
    if (add_section(c, sec, line) || add_entry(c, sec, name, value, line)) { free(sec); goto oom; }
    free(sec);
    return 1;
oom:
    snprintf(x->err, x->errlen, "%s: out of memory", c->path);
    x->failed = 1;
    return 0;
}

int cfg_load_string(cfg *c, const char *path, const char *text, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->path = xstrdup(path);
    c->text = xstrdup(text);
    const char *slash = strrchr(path, '/');
    c->dir = slash ? strndup(path, (size_t) (slash - path) + 1) : xstrdup("");
    if (!c->path || !c->text || !c->dir) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    reader rd = { c->text, 0, c, 0, 0, 0, NULL };
    parse_ctx x = { c, &rd, err, errlen, 0 };
    size_t longest = 0;            /* bytes of the longest line, its '\n' included */
    for (const char *p = c->text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t) (nl - p) + 1 : strlen(p);
        if (len > longest) longest = len;
        p += len;
    }
    if (longest > (size_t) INT_MAX - 3) {
        snprintf(err, errlen, "%s: line longer than %d characters", path, INT_MAX - 3);
        return -1;
    }
    ini_allow_multiline = false;
    ini_stop_on_first_error = true;
    ini_use_stack = false;         /* a heap buffer of ini_initial_alloc bytes */
    ini_allow_realloc = false;
    ini_initial_alloc = ini_max_line = longest + 3 > 200 ? (int) longest + 3 : 200;   /* the line, '\0' and spare */
    int rc = ini_parse_stream(read_line, &rd, on_key, &x);
    if (x.failed) { free(rd.dup_name); return -1; }
    if (rd.dup_line) {
        snprintf(err, errlen, "%s:%d: [%s]: section given twice (first on line %d)", path, rd.dup_line, rd.dup_name,
                 rd.dup_first);
        free(rd.dup_name);
        return -1;
    }
    if (rd.too_long) {
        snprintf(err, errlen, "%s:%d: line longer than %d characters", path, rd.too_long, ini_max_line - 1);
        return -1;
    }
    if (rc > 0) {
        snprintf(err, errlen, "%s:%d: expected [section] or key = value", path, rc);
        return -1;
    }
    if (rc == -2) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot parse (error %d)", path, rc);
        return -1;
    }
    return 0;
}

int cfg_load(cfg *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    /* Regular files only (a FIFO would block, /dev/zero never ends), of a
     * sensible size. */
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "%s: cannot open scenario: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(sb.st_mode) && sb.st_size > CFG_MAX_BYTES) {
        snprintf(err, errlen, "%s: scenario larger than %d MB", path, CFG_MAX_BYTES >> 20);
        return -1;
    }
    FILE *f = infile_open(path, CFG_MAX_BYTES, err, errlen);
    if (!f) return -1;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *b = realloc(buf, cap);
            if (!b) { snprintf(err, errlen, "%s: out of memory", path); goto done; }
            buf = b;
        }
        size_t got = fread(buf + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
        if (len > CFG_MAX_BYTES) { snprintf(err, errlen, "%s: scenario larger than %d MB", path, CFG_MAX_BYTES >> 20); goto done; }
    }
    if (ferror(f)) { snprintf(err, errlen, "%s: read error", path); goto done; }
    buf[len] = '\0';
    if (strlen(buf) != len) { snprintf(err, errlen, "%s: contains a NUL byte: not a scenario file", path); goto done; }
    rc = cfg_load_string(c, path, buf, err, errlen);
done:
    free(buf);
    fclose(f);
    return rc;
}

int cfg_set(cfg *c, const char *assignment, char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    int rc = -1;
    char *lhs = NULL, *sec = NULL, *key = NULL, *val = NULL;
    if (!eq) {
        snprintf(err, errlen, "--set %s: expected section.key=value", assignment);
        return -1;
    }
    lhs = strndup(assignment, (size_t) (eq - assignment));
    if (!lhs) goto oom;
    char *dot = strrchr(lhs, '.');
    if (!dot || dot == lhs || dot[1] == '\0') {
        snprintf(err, errlen, "--set %s: expected section.key=value", assignment);
        goto done;
    }
    *dot = '\0';
    sec = fold_spaces(lhs);
    key = fold_spaces(dot + 1);
    val = fold_spaces(eq + 1);
    if (!sec || !key || !val) goto oom;
    if (!sec[0] || !key[0]) {
        snprintf(err, errlen, "--set %s: expected section.key=value", assignment);
        goto done;
    }
    cfg_entry *e = find(c, sec, key);
    if (e) {
        char *v = xstrdup(val);
        if (!v) goto oom;
        free(e->value);
        e->value = v;
        e->line = 0;
    } else if (add_section(c, sec, 0) || add_entry(c, sec, key, val, 0)) {
        goto oom;
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "--set: out of memory");
done:
    free(lhs); free(sec); free(key); free(val);
    return rc;
}

const cfg_entry *cfg_get(const cfg *c, const char *section, const char *key)
{
    return find(c, section, key);
}

const char *cfg_where(const cfg *c, const cfg_entry *e, char *buf, size_t n)
{
    if (e && e->line > 0) snprintf(buf, n, "%s:%d", c->path, e->line);
    else if (e) snprintf(buf, n, "--set");
    else snprintf(buf, n, "%s", c->path);
    return buf;
}

void cfg_free(cfg *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].section); free(c->e[i].key); free(c->e[i].value);
    }
    for (size_t i = 0; i < c->ns; i++) free(c->s[i].name);
    free(c->e); free(c->s);
    if (c->ix) { free(c->ix->es); free(c->ix->ss); free(c->ix); }
    free(c->path); free(c->dir); free(c->text);
    memset(c, 0, sizeof *c);
}
