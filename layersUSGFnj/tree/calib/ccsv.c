/* ccsv.c -- row-at-a-time CSV reading with libcsv (see ccsv.h).
 *
 * The file is read a line at a time with getline() and each line handed to
 * csv_parse(), so a row's callback knows the line it starts on (a quoted cell may
 * span lines: the row is named by its first line).  The first row is the header.
 * Fields are kept in growable arrays reused from row to row.  A cell holding a
 * NUL byte is refused (it is not text, and C strings would cut it short), and
 * every message is made one printable line (errmsg_field).
 */
#include "ccsv.h"

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

#define FIELD_SHOWN 64  /* bytes of a cell quoted in a message (escaped, cut with "...") */

typedef struct rd {
    ccsv_row row;            /* the row being built (field/nfield) and the header */
    size_t cap;              /* allocated entries of row.field */
    size_t hcap;             /* allocated entries of row.header */
    int in_header;           /* 1 while reading the first row */
    size_t col;              /* 0-based index of the next cell in the row being read */
    int failed;              /* an error is in err */
    int oom;                 /* out of memory */
    ccsv_fn fn;              /* the caller's row function */
    void *ctx;               /* its context */
    char *err;               /* message buffer */
    size_t errlen;           /* its size */
} rd;

static void rd_fail(rd *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    int k = snprintf(r->err, r->errlen, "%s:%ld: ", r->row.path, r->row.line);
    if (k < 0 || (size_t)k >= r->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, r->errlen - (size_t)k, fmt, ap);
    va_end(ap);
}

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

static void on_field(void *s, size_t len, void *data)
{
    rd *r = data;
    if (r->failed)
        return;
    size_t col = r->col++;
    const char *nul = s ? memchr(s, '\0', len) : NULL;
    if (nul) {
        char name[FIELD_SHOWN], shown[FIELD_SHOWN];
        size_t k = (size_t)(nul - (const char *)s);
        char *pre = strndup(s, k);   /* the text before the NUL */
        if (!pre) {
            r->oom = 1;
            rd_fail(r, "out of memory");
            return;
        }
        if (r->in_header || col >= r->row.nheader)
            snprintf(name, sizeof name, "%s%zu", r->in_header ? "header " : "", col + 1);
        else
            errmsg_field(r->row.header[col], name, sizeof name);
        rd_fail(r, "column %s: a NUL byte (byte %zu of the cell, after '%s'): not text", name, k + 1,
                errmsg_field(pre, shown, sizeof shown));
        free(pre);
        return;
    }
    int bad = r->in_header ? push(&r->row.header, &r->row.nheader, &r->hcap, s ? s : "", s ? len : 0)
                           : push(&r->row.field, &r->row.nfield, &r->cap, s ? s : "", s ? len : 0);
    if (bad) {
        r->oom = 1;
        rd_fail(r, "out of memory");
    }
}

static void on_row(int c, void *data)
{
    (void)c;
    rd *r = data;
    if (r->failed)
        return;
    if (r->in_header) {
        r->in_header = 0;
        r->col = 0;
        /* A column named twice would be read from one of them silently. */
        for (size_t j = 1; j < r->row.nheader; j++)
            for (size_t i = 0; i < j; i++)
                if (r->row.header[j][0] && strcmp(r->row.header[i], r->row.header[j]) == 0) {
                    char name[FIELD_SHOWN];
                    rd_fail(r, "column %s: named twice in the header (columns %zu and %zu)",
                            errmsg_field(r->row.header[j], name, sizeof name), i + 1, j + 1);
                    return;
                }
        return;
    }
    size_t n = r->row.nfield;
    r->row.nfield = 0;
    r->col = 0;
    if (n == 1 && r->row.field[0][0] == '\0')
        return;   /* a blank line */
    if (n != r->row.nheader) {
        rd_fail(r, "%zu fields, but the header has %zu columns", n, r->row.nheader);
        return;
    }
    r->row.nfield = n;
    if (r->fn(r->ctx, &r->row, r->err, r->errlen) != 0)
        r->failed = 1;
    r->row.nfield = 0;
}

int ccsv_read(const char *path, ccsv_fn fn, void *ctx, char *err, size_t errlen)
{
    rd r = { .row = { .path = path }, .in_header = 1, .fn = fn, .ctx = ctx, .err = err,
             .errlen = errlen };
    /* Opened without blocking (a FIFO without a writer would wait forever), then
     * refused unless it is a regular file once symbolic links are followed. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        const char *what = S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO"
                           : S_ISCHR(sb.st_mode) ? "a character device" : S_ISBLK(sb.st_mode)
                           ? "a block device" : S_ISSOCK(sb.st_mode) ? "a socket" : "of another kind";
        close(fd);
        snprintf(err, errlen, "%s: not a regular file (%s)", path, what);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0) {
        fclose(f);
        snprintf(err, errlen, "%s: cannot start the CSV parser", path);
        return -1;
    }
    char *buf = NULL;
    size_t bufcap = 0;
    ssize_t len;
    long line = 0;
    while (!r.failed && (len = getline(&buf, &bufcap, f)) >= 0) {
        line++;
        /* A row begins on this line unless one is still open (a quoted cell went
         * on past the previous line's end): libcsv's state 0 is ROW_NOT_BEGUN. */
        if (p.pstate == 0)
            r.row.line = line;
        if (csv_parse(&p, buf, (size_t)len, on_field, on_row, &r) != (size_t)len && !r.failed)
            rd_fail(&r, "%s", csv_strerror(csv_error(&p)));
    }
    if (!r.failed && ferror(f))
        rd_fail(&r, "cannot read: %s", strerror(errno));
    if (!r.failed && csv_fini(&p, on_field, on_row, &r) != 0)
        rd_fail(&r, "%s", csv_strerror(csv_error(&p)));
    if (!r.failed && r.row.nheader == 0) {
        r.failed = 1;
        snprintf(err, errlen, "%s: empty file (expected a header row)", path);
    }
    csv_free(&p);
    free(buf);
    fclose(f);
    for (size_t i = 0; i < r.cap; i++)
        free(r.row.field[i]);
    for (size_t i = 0; i < r.hcap; i++)
        free(r.row.header[i]);
    free(r.row.field);
    free(r.row.header);
    if (r.failed && err && errlen > 0) {
        /* One printable line whatever a cell held (a row function may quote one raw). */
        char *raw = strdup(err);
        if (raw) {
            errmsg_field(raw, err, errlen);
            free(raw);
        }
    }
    return r.failed ? -1 : 0;
}

int ccsv_col(const ccsv_row *row, const char *name)
{
    for (size_t i = 0; i < row->nheader; i++)
        if (strcmp(row->header[i], name) == 0)
            return (int)i;
    return -1;
}

/* 1 when S is a decimal number: [+-]digits[.digits] or [+-].digits, then an
 * optional exponent e[+-]digits; nothing else (no spaces, hexadecimal, inf, nan). */
static int decimal(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (s[i] == '.')
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (!digits)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        if (!(s[i] >= '0' && s[i] <= '9'))
            return 0;
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return s[i] == '\0';
}

/* Parses the decimal cell S.  Returns 0 with *OUT set, 1 when it is not a decimal
 * number, 2 when a double cannot hold it (overflow, or underflow to a subnormal or
 * 0 of a nonzero number: *OUT is then +-inf or +-0, for a range check). */
static int parse_decimal(const char *s, double *out)
{
    if (!decimal(s))
        return 1;
    errno = 0;
    double v = strtod(s, NULL);
    int neg = s[0] == '-';
    if (errno == ERANGE || !isfinite(v) || (v != 0 && !isnormal(v))) {
        *out = fabs(v) >= 1 ? (neg ? -INFINITY : INFINITY) : (neg ? -0.0 : 0.0);
        return 2;
    }
    *out = v;
    return 0;
}

int ccsv_num(const ccsv_row *row, int col, double *out, char *err, size_t errlen)
{
    const char *s = row->field[col];
    double v;
    int k = parse_decimal(s, &v);
    if (k != 0) {
        char shown[FIELD_SHOWN];
        snprintf(err, errlen, "%s:%ld: column %s: '%s' is %s", row->path, row->line,
                 row->header[col], errmsg_field(s, shown, sizeof shown),
                 k == 1 ? "not a number" : "out of range (beyond what a double holds)");
        return -1;
    }
    *out = v;
    return 0;
}

int ccsv_range(const ccsv_row *row, int col, double lo, double hi, const char *unit, double *out,
               char *err, size_t errlen)
{
    const char *s = row->field[col];
    double v;
    int k = parse_decimal(s, &v);
    if (k == 1)
        return ccsv_num(row, col, out, err, errlen);
    if (k == 2 || v < lo || v > hi) {
        char shown[FIELD_SHOWN];
        snprintf(err, errlen, "%s:%ld: column %s: '%s' is out of range (expected %g to %g%s%s)",
                 row->path, row->line, row->header[col], errmsg_field(s, shown, sizeof shown), lo,
                 hi, unit && unit[0] ? " " : "", unit ? unit : "");
        return -1;
    }
    *out = v;
    return 0;
}

int ccsv_int(const ccsv_row *row, int col, long lo, long hi, long *out, char *err, size_t errlen)
{
    const char *s = row->field[col];
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        char shown[FIELD_SHOWN];
        snprintf(err, errlen, "%s:%ld: column %s: '%s' is not a whole number in %ld..%ld",
                 row->path, row->line, row->header[col], errmsg_field(s, shown, sizeof shown), lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}
