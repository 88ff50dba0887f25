/* csvread.c -- the CSV reader over libcsv, and numeric columns (see csvread.h).
 *
 * The file is read in blocks (fread) and cut at each '\n'; each piece goes to
 * csv_parse(), a line's pieces one after the other, so that the reader counts
 * lines and knows the line each row starts on (libcsv's parser state 0,
 * ROW_NOT_BEGUN, at a line's start: no quoted cell goes on from the line
 * before).  Cells are copied into arrays reused from row to row.
 */
#include "core/csvread.h"
#include "latsim/infile.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/errmsg.h"

#define FIELD_SHOWN 64       /* bytes of a cell quoted in a message (escaped, cut with "...") */
#define BLOCK (1 << 16)      /* bytes read at a time */

/* The state of one pass over a file. */
typedef struct reader {
    csvread_row row;         /* the row being built (field/nfield), the header, path and line */
    size_t cap;              /* allocated entries of row.field */
    size_t hcap;             /* allocated entries of row.header */
    int in_header;           /* 1 while reading the first row */
    csvread_fn on_header;    /* the caller's functions (on_header may be NULL) */
    csvread_fn on_row;
    void *ctx;               /* their context */
    int failed;              /* a message is in err; later callbacks do nothing */
    char *err;               /* the caller's message buffer */
    size_t errlen;           /* its size, bytes */
} reader;

int csvread_fail(const csvread_row *row, long line, char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return -1;
    int k = line > 0 ? snprintf(err, errlen, "%s:%ld: ", row->path, line)
                     : snprintf(err, errlen, "%s: ", row->path);
    if (k < 0 || (size_t) k >= errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, errlen - (size_t) k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends cell S (LEN bytes) to *ARR, reusing the string already in that slot.
 * Returns 0, or -1 when out of memory. */
static int push(char ***arr, size_t *n, size_t *cap, const char *s, size_t len)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        char **a = realloc(*arr, nc * sizeof *a);
        if (!a)
            return -1;
        for (size_t i = *cap; i < nc; i++)
            a[i] = NULL;
        *arr = a;
        *cap = nc;
    }
    char *c = realloc((*arr)[*n], len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    (*arr)[(*n)++] = c;
    return 0;
}

/* libcsv cell callback: refuses a NUL byte, else keeps the cell. */
static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    if (r->failed)
        return;
    size_t col = r->in_header ? r->row.nheader : r->row.nfield;
    const char *nul = s ? memchr(s, '\0', len) : NULL;
    if (nul) {
        char name[FIELD_SHOWN], shown[FIELD_SHOWN];
        size_t k = (size_t) (nul - (const char *) s);
        char *pre = strndup(s, k);   /* the text before the NUL */
        r->failed = 1;
        if (!pre) {
            csvread_fail(&r->row, 0, r->err, r->errlen, "out of memory");
            return;
        }
        if (r->in_header || col >= r->row.nheader)
            snprintf(name, sizeof name, "%s%zu", r->in_header ? "header " : "", col + 1);
        else
            errmsg_field(r->row.header[col], name, sizeof name);
        csvread_fail(&r->row, r->row.line, r->err, r->errlen,
                     "column %s: a NUL byte (byte %zu of the cell, after '%s'): not text", name, k + 1,
                     errmsg_field(pre, shown, sizeof shown));
        free(pre);
        return;
    }
    int bad = r->in_header ? push(&r->row.header, &r->row.nheader, &r->hcap, s ? s : "", s ? len : 0)
                           : push(&r->row.field, &r->row.nfield, &r->cap, s ? s : "", s ? len : 0);
    if (bad) {
        r->failed = 1;
        csvread_fail(&r->row, 0, r->err, r->errlen, "out of memory");
    }
}

/* libcsv row callback: closes the header, or checks a data row and hands it on. */
static void on_row(int c, void *data)
{
    (void) c;
    reader *r = data;
    if (r->failed)
        return;
    if (r->in_header) {
        r->in_header = 0;
        /* A UTF-8 byte order mark is not part of the first name. */
        if (r->row.nheader > 0 && strncmp(r->row.header[0], "\xEF\xBB\xBF", 3) == 0)
            memmove(r->row.header[0], r->row.header[0] + 3, strlen(r->row.header[0] + 3) + 1);
        if (r->on_header) {
            csvread_row h = r->row;
            h.field = h.header;
            h.nfield = h.nheader;
            if (r->on_header(r->ctx, &h, r->err, r->errlen) != 0)
                r->failed = 1;
        }
        return;
    }
    size_t n = r->row.nfield;
    r->row.nfield = 0;
    if (n == 1 && r->row.field[0][0] == '\0' && r->row.nheader > 1)
        return;   /* a blank line */
    if (n != r->row.nheader) {
        r->failed = 1;
        csvread_fail(&r->row, r->row.line, r->err, r->errlen, "%zu field%s, but the header has %zu columns",
                     n, n == 1 ? "" : "s", r->row.nheader);
        return;
    }
    r->row.nfield = n;
    if (r->on_row(r->ctx, &r->row, r->err, r->errlen) != 0)
        r->failed = 1;
    r->row.nfield = 0;
}

/* Opens PATH for reading when it is a regular file (without blocking on a FIFO).
 * Returns the stream, or NULL with the message in R. */
static FILE *open_regular(reader *r, const char *path)
{
    char e[1400];
    FILE *g = infile_open(path, INFILE_MAX_TRACE, e, sizeof e);
    if (!g) {
        char shown[1024];
        size_t k = strlen(errmsg_field(path, shown, sizeof shown));
        const char *m = !strncmp(e, shown, k) && !strncmp(e + k, ": ", 2) ? e + k + 2 : e;  /* csvread_fail names PATH */
        csvread_fail(&r->row, 0, r->err, r->errlen, "%s", m);
    }
    return g;
}

/* Feeds the whole of F to the parser P.  Errors are left in R. */
static void parse_all(reader *r, FILE *f, struct csv_parser *p, char *buf)
{
    long line = 0;
    size_t linelen = 0;      /* bytes of the current line so far, its newline not counted */
    int at_start = 1;        /* the next byte starts a line */
    size_t got;
    while (!r->failed && (got = fread(buf, 1, BLOCK, f)) > 0) {
        for (const char *s = buf, *end = buf + got; s < end && !r->failed;) {
            if (at_start) {
                line++;
                linelen = 0;
                at_start = 0;
                if (p->pstate == 0)
                    r->row.line = line;
            }
            const char *nl = memchr(s, '\n', (size_t) (end - s));
            size_t k = nl ? (size_t) (nl - s) + 1 : (size_t) (end - s);
            linelen += nl ? k - 1 : k;
            if (linelen > CSVREAD_MAX_LINE) {
                r->failed = 1;
                csvread_fail(&r->row, line, r->err, r->errlen, "line longer than %d bytes", CSVREAD_MAX_LINE);
                return;
            }
            if (csv_parse(p, s, k, on_field, on_row, r) != k && !r->failed) {
                r->failed = 1;
                csvread_fail(&r->row, line, r->err, r->errlen, "%s", csv_strerror(csv_error(p)));
            }
            s += k;
            at_start = nl != NULL;
        }
    }
    if (!r->failed && ferror(f)) {
        r->failed = 1;
        csvread_fail(&r->row, 0, r->err, r->errlen, "cannot read: %s", strerror(errno));
    }
    if (!r->failed && csv_fini(p, on_field, on_row, r) != 0) {
        r->failed = 1;
        csvread_fail(&r->row, line, r->err, r->errlen, "%s", csv_strerror(csv_error(p)));
    }
}

int csvread_file(const char *path, csvread_fn on_header, csvread_fn on_row_fn, void *ctx,
                 char *err, size_t errlen)
{
    reader r = { .row = { .path = path ? path : "(no path)" }, .in_header = 1, .on_header = on_header,
                 .on_row = on_row_fn, .ctx = ctx, .err = err, .errlen = errlen };
    if (err && errlen > 0)
        err[0] = '\0';
    if (!path) {
        csvread_fail(&r.row, 0, err, errlen, "no file given");
        return -1;
    }
    FILE *f = open_regular(&r, path);
    if (!f)
        r.failed = 1;
    struct csv_parser p;
    char *buf = NULL;
    if (f && csv_init(&p, CSV_APPEND_NULL) != 0) {
        r.failed = 1;
        csvread_fail(&r.row, 0, err, errlen, "cannot start the CSV parser");
        fclose(f);
        f = NULL;
    }
    if (f) {
        buf = malloc(BLOCK);
        if (!buf) {
            r.failed = 1;
            csvread_fail(&r.row, 0, err, errlen, "out of memory");
        } else {
            parse_all(&r, f, &p, buf);
        }
        if (!r.failed && r.row.nheader == 0) {
            r.failed = 1;
            csvread_fail(&r.row, 0, err, errlen, "empty file (expected a header row)");
        }
        csv_free(&p);
        free(buf);
        fclose(f);
    }
    for (size_t i = 0; i < r.cap; i++)
        free(r.row.field[i]);
    for (size_t i = 0; i < r.hcap; i++)
        free(r.row.header[i]);
    free(r.row.field);
    free(r.row.header);
    if (r.failed && err && errlen > 0) {
        /* One printable line whatever a cell held (a callback may quote one raw). */
        char *raw = strdup(err);
        if (raw) {
            errmsg_field(raw, err, errlen);
            free(raw);
        }
    }
    return r.failed ? -1 : 0;
}

int csvread_col(const csvread_row *row, const char *name)
{
    for (size_t i = 0; i < row->nheader; i++)
        if (strcmp(row->header[i], name) == 0)
            return (int) i;
    return -1;
}

int csvread_need_col(const csvread_row *row, const char *name, char *err, size_t errlen)
{
    int c = csvread_col(row, name);
    if (c >= 0)
        return c;
    char cols[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < row->nheader && used < sizeof cols; i++) {
        char f[FIELD_SHOWN];
        int w = snprintf(cols + used, sizeof cols - used, "%s%s", i ? ", " : "",
                         errmsg_field(row->header[i], f, sizeof f));
        if (w < 0)
            break;
        used += (size_t) w;
    }
    csvread_fail(row, 0, err, errlen, "no column '%s' (columns: %s)", name, cols);
    return -1;
}

int csvread_real(const char *s, double *out)
{
    if (*s == '\0' || strpbrk(s, "xX"))   /* decimal only: strtod would take "0x10" (16) */
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* ---- one numeric column ------------------------------------------------------- */

typedef struct column {
    const char *name;        /* the wanted column */
    int col;                 /* its index in the header */
    double *v;               /* values read, one per data row */
    size_t n, cap;
} column;

static int column_header(void *ctx, const csvread_row *row, char *err, size_t errlen)
{
    column *c = ctx;
    c->col = csvread_need_col(row, c->name, err, errlen);
    return c->col < 0 ? -1 : 0;
}

static int column_row(void *ctx, const csvread_row *row, char *err, size_t errlen)
{
    column *c = ctx;
    const char *s = row->field[c->col];
    double v;
    if (csvread_real(s, &v) != 0) {
        char f[FIELD_SHOWN];
        return csvread_fail(row, row->line, err, errlen, "%s '%s' is not a number", c->name,
                            errmsg_field(s, f, sizeof f));
    }
    if (v < 0)
        return csvread_fail(row, row->line, err, errlen, "%s %s is negative", c->name, s);
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        double *x = realloc(c->v, cap * sizeof *x);
        if (!x)
            return csvread_fail(row, 0, err, errlen, "out of memory");
        c->v = x;
        c->cap = cap;
    }
    c->v[c->n++] = v;
    return 0;
}

int csv_read_column(const char *path, const char *column_name, double **values, size_t *n,
                    char *err, size_t errlen)
{
    *values = NULL;
    *n = 0;
    if (!path || !column_name) {
        errmsg_set(err, errlen, "%s: no %s given", path ? path : "(no path)", path ? "column" : "file");
        return -1;
    }
    column c = { .name = column_name };
    if (csvread_file(path, column_header, column_row, &c, err, errlen) != 0) {
        free(c.v);
        return -1;
    }
    if (c.n == 0) {
        free(c.v);
        errmsg_set(err, errlen, "%s: no data rows after the header", path);
        return -1;
    }
    *values = c.v;
    *n = c.n;
    return 0;
}
