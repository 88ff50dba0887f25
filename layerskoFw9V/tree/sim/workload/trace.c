/* trace.c -- arrival traces and numeric columns read from CSV files (see trace.h).
 *
 * Both trace_load() and csv_read_column() run one reader: the file is read a line
 * at a time with getline() and each line is handed to libcsv's csv_parse(), so the
 * reader always knows the 1-based line number of what libcsv is reporting (the
 * header is line 1; a row whose quoted field spans lines is reported at the line
 * where the row starts).  The first row names the columns; the reader looks up the wanted
 * ones there and converts only those fields of each data row, as they arrive, into
 * growing arrays.  libcsv trims unquoted spaces and tabs, skips empty lines and
 * takes "\r\n" as one line end.
 */
#include "workload/trace.h"
#include "engine/simtime.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "engine/errmsg.h"

#define MAX_WANTED 5   /* time, prompt, output, complexity and class columns of a trace */
#define FIELD_SHOWN 64 /* bytes of a field quoted in a message (escaped, cut with "...") */
#define MAX_LINE (1 << 20)  /* longest line accepted, bytes: a trace row is a few dozen */

/* How a wanted column's fields are converted. */
typedef enum {
    COL_SECONDS,       /* real number of seconds */
    COL_MILLISECONDS,  /* real number of milliseconds */
    COL_DATETIME,      /* "YYYY-MM-DD HH:MM:SS[.fraction]", UTC */
    COL_TOKENS,        /* whole number in [0, INT32_MAX] */
    COL_NONNEG,        /* finite real number >= 0 */
    COL_LABEL,         /* any text: a class name, interned into the trace's labels */
    COL_SCORE          /* a complexity score: a real number in [0, 1], or an empty field (none: NAN) */
} col_kind;

/* One column the caller asked for. */
typedef struct wanted_col {
    const char *name;  /* header name (caller's string) */
    col_kind kind;     /* conversion of its fields */
    long index;        /* 0-based position in the header, or -1 before the header is read */
    bool seen;         /* a field of this column was converted in the current row */
} wanted_col;

/* The state of one pass over a CSV file. */
typedef struct csv_reader {
    const char *path;            /* file name, for messages */
    char *err;                   /* caller's message buffer */
    size_t errlen;               /* its size in bytes */
    bool failed;                 /* an error was written; later callbacks do nothing */
    long line;                   /* 1-based number of the line being parsed */
    long row_line;               /* 1-based line the current row starts on (rows are named by it) */

    bool in_header;              /* still reading the first row */
    char **header;               /* column names (owned), while the header is read */
    size_t nheader;              /* columns in the header */
    size_t header_cap;           /* allocated entries of header */

    wanted_col want[MAX_WANTED]; /* the columns to convert */
    size_t nwant;                /* how many */
    size_t field;                /* 0-based index of the next field in the current row */

    /* Current row, converted.  Seconds for times, relative to the first row. */
    double row_time;             /* seconds since the first row (time column) */
    int32_t row_tokens[MAX_WANTED]; /* token counts, by wanted index */
    double row_value;            /* COL_NONNEG value */
    int32_t row_label;           /* COL_LABEL: index into labels */
    double row_score;            /* COL_SCORE: the score, NAN for none */
    bool want_score;             /* a COL_SCORE column is wanted */

    bool have_first;             /* the first data row's time has been seen */
    double first_real;           /* seconds or milliseconds: first row's raw number */
    int64_t first_sec;           /* datetime: first row's whole seconds since 1970 (UTC) */
    double first_frac;           /* datetime: first row's fraction of a second, in [0, 1) */

    /* Output, one entry per data row. */
    size_t n;                    /* rows stored */
    size_t cap;                  /* allocated rows of each array */
    double *t;                   /* time (seconds since the first row) or the column's value */
    int32_t *tok[MAX_WANTED];    /* token counts per wanted column that is COL_TOKENS, else NULL */
    int32_t *lab;                /* label index per row (COL_LABEL column), else NULL */
    double *score;               /* complexity score per row (COL_SCORE column; NAN = none), else NULL */
    trace labels;                /* distinct labels (only its labels/nlabels are used) */
} csv_reader;

/* Writes "PATH:LINE: message" (LINE omitted when LINE <= 0) into the reader's
 * buffer and marks the pass failed.  Only the first error is kept. */
static void rd_error(csv_reader *r, long line, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    if (r->err == NULL || r->errlen == 0)
        return;
    int k = line > 0 ? snprintf(r->err, r->errlen, "%s:%ld: ", r->path, line)
                     : snprintf(r->err, r->errlen, "%s: ", r->path);
    if (k < 0 || (size_t) k >= r->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, r->errlen - (size_t) k, fmt, ap);
    va_end(ap);
}

/* Parses all of S as a finite real number.  Returns 0, or -1 when S is empty,
 * has trailing text or is out of range. */
static int parse_real(const char *s, double *out)
{
    if (*s == '\0')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Parses exactly N decimal digits at *P into *OUT and advances *P.  Returns 0, or
 * -1 when a non-digit comes first. */
static int take_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

/* Parses "YYYY-MM-DD HH:MM:SS[.fraction]" (a 'T' may replace the space, a 'Z'
 * may follow) as UTC into whole seconds since 1970 and a fraction in [0, 1) that
 * keeps every digit a double can hold.  Returns 0, or -1 on any other text. */
static int parse_datetime(const char *s, int64_t *sec, double *frac)
{
    const char *p = s;
    int y, mo, d, h, mi, se;
    if (take_digits(&p, 4, &y) || *p++ != '-' || take_digits(&p, 2, &mo) || *p++ != '-'
        || take_digits(&p, 2, &d))
        return -1;
    if (*p != ' ' && *p != 'T')
        return -1;
    p++;
    if (take_digits(&p, 2, &h) || *p++ != ':' || take_digits(&p, 2, &mi) || *p++ != ':'
        || take_digits(&p, 2, &se))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    double f = 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        /* Up to 18 digits are summed exactly as an integer; more cannot change a double. */
        uint64_t num = 0, den = 1;
        int ndig = 0;
        for (; *p >= '0' && *p <= '9'; p++, ndig++) {
            if (ndig < 18) {
                num = num * 10 + (uint64_t) (*p - '0');
                den *= 10;
            }
        }
        f = (double) num / (double) den;
    }
    if (*p == 'Z')
        p++;
    if (*p != '\0')
        return -1;
    struct tm tm = {0};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    time_t tt = timegm(&tm);
    /* timegm normalises out-of-range days (Feb 30 -> Mar 2); reject those. */
    if (tm.tm_mday != d || tm.tm_mon != mo - 1)
        return -1;
    *sec = (int64_t) tt;
    *frac = f;
    return 0;
}

/* Checks that the current row's time lies within the simulated clock's range
 * (simtime.h) counted from the first row.  Returns 0, or -1 after writing an error. */
static int check_range(csv_reader *r, const wanted_col *w)
{
    if (fabs(r->row_time) <= SIMTIME_HORIZON_S)
        return 0;
    rd_error(r, r->row_line, "%s is %.3g s from the first row, beyond the simulated clock's range (%.3g s, about 146 years)",
             w->name, r->row_time, SIMTIME_HORIZON_S);
    return -1;
}

/* Converts the time field S of the current data row into r->row_time.  Returns 0,
 * or -1 after writing an error. */
static int convert_time(csv_reader *r, const wanted_col *w, const char *s)
{
    if (w->kind == COL_DATETIME) {
        int64_t sec;
        double frac;
        if (parse_datetime(s, &sec, &frac) != 0) {
            char f[FIELD_SHOWN];
            rd_error(r, r->row_line, "%s '%s' is not a datetime like 2023-11-16 18:15:46.6805900",
                     w->name, errmsg_field(s, f, sizeof f));
            return -1;
        }
        if (!r->have_first) {
            r->have_first = true;
            r->first_sec = sec;
            r->first_frac = frac;
        }
        /* Whole seconds are subtracted as integers, so no precision is lost to
         * the ~1.7e9 s since 1970. */
        r->row_time = (double) (sec - r->first_sec) + (frac - r->first_frac);
        return check_range(r, w);
    }
    double v;
    if (parse_real(s, &v) != 0) {
        char f[FIELD_SHOWN];
        rd_error(r, r->row_line, "%s '%s' is not a number", w->name, errmsg_field(s, f, sizeof f));
        return -1;
    }
    if (!r->have_first) {
        r->have_first = true;
        r->first_real = v;
    }
    r->row_time = w->kind == COL_MILLISECONDS ? (v - r->first_real) / 1000.0 : v - r->first_real;
    return check_range(r, w);
}

/* Converts field S of wanted column K of the current data row.  Returns 0, or -1
 * after writing an error. */
static int convert_field(csv_reader *r, size_t k, const char *s)
{
    const wanted_col *w = &r->want[k];
    switch (w->kind) {
    case COL_SECONDS:
    case COL_MILLISECONDS:
    case COL_DATETIME:
        return convert_time(r, w, s);
    case COL_TOKENS: {
        const char *p = s;
        if (*p == '+' || *p == '-')
            p++;
        bool digits = *p != '\0';
        for (; *p != '\0'; p++)
            if (*p < '0' || *p > '9')
                digits = false;
        char f[FIELD_SHOWN];
        if (!digits) {
            rd_error(r, r->row_line, "%s '%s' is not a whole number", w->name, errmsg_field(s, f, sizeof f));
            return -1;
        }
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (v < 0) {
            rd_error(r, r->row_line, "%s %s is negative", w->name, s);
            return -1;
        }
        if (errno == ERANGE || v > INT32_MAX) {
            rd_error(r, r->row_line, "%s %s is too large (at most %ld)", w->name, errmsg_field(s, f, sizeof f),
                     (long) INT32_MAX);
            return -1;
        }
        r->row_tokens[k] = (int32_t) v;
        return 0;
    }
    case COL_LABEL: {
        int32_t i = trace_intern_label(&r->labels, s);
        if (i < 0) {
            rd_error(r, 0, "out of memory");
            return -1;
        }
        r->row_label = i;
        return 0;
    }
    case COL_NONNEG: {
        double v;
        if (parse_real(s, &v) != 0) {
            char f[FIELD_SHOWN];
            rd_error(r, r->row_line, "%s '%s' is not a number", w->name, errmsg_field(s, f, sizeof f));
            return -1;
        }
        if (v < 0) {
            rd_error(r, r->row_line, "%s %s is negative", w->name, s);
            return -1;
        }
        r->row_value = v;
        return 0;
    }
    case COL_SCORE: {
        double v;
        char f[FIELD_SHOWN];
        if (*s == '\0') {           /* no score for this row: drawn as without the column */
            r->row_score = NAN;
            return 0;
        }
        if (parse_real(s, &v) != 0) {
            rd_error(r, r->row_line, "%s '%s' is not a number (complexity_column)", w->name, errmsg_field(s, f, sizeof f));
            return -1;
        }
        if (v < 0 || v > 1) {
            rd_error(r, r->row_line, "%s %s is outside [0, 1] (complexity_column)", w->name, errmsg_field(s, f, sizeof f));
            return -1;
        }
        r->row_score = v;
        return 0;
    }
    }
    return -1;
}

/* libcsv field callback: records a header name, or converts a data field of a
 * wanted column.  Errors are left in the reader. */
static void on_field(void *s, size_t len, void *data)
{
    csv_reader *r = data;
    if (r->failed)
        return;
    const char *text = s != NULL ? (const char *) s : "";
    if (r->in_header) {
        if (r->nheader == r->header_cap) {
            size_t cap = r->header_cap ? 2 * r->header_cap : 16;
            char **h = realloc(r->header, cap * sizeof *h);
            if (h == NULL) {
                rd_error(r, 0, "out of memory");
                return;
            }
            r->header = h;
            r->header_cap = cap;
        }
        char *name = malloc(len + 1);
        if (name == NULL) {
            rd_error(r, 0, "out of memory");
            return;
        }
        memcpy(name, text, len);
        name[len] = '\0';
        r->header[r->nheader++] = name;
        return;
    }
    size_t col = r->field++;
    for (size_t k = 0; k < r->nwant; k++) {
        if ((size_t) r->want[k].index == col) {
            if (convert_field(r, k, text) != 0)
                return;
            r->want[k].seen = true;
        }
    }
}

/* At the end of the header row: finds every wanted column.  Returns 0, or -1
 * after writing "PATH: no column 'X' (columns: a, b, c)". */
static int resolve_header(csv_reader *r)
{
    /* A UTF-8 byte order mark is not part of the first name. */
    if (r->nheader > 0 && strncmp(r->header[0], "\xEF\xBB\xBF", 3) == 0)
        memmove(r->header[0], r->header[0] + 3, strlen(r->header[0] + 3) + 1);
    for (size_t k = 0; k < r->nwant; k++) {
        r->want[k].index = -1;
        for (size_t c = 0; c < r->nheader; c++) {
            if (strcmp(r->header[c], r->want[k].name) == 0) {
                r->want[k].index = (long) c;
                break;
            }
        }
        if (r->want[k].index < 0) {
            char cols[512] = "";
            size_t used = 0;
            for (size_t c = 0; c < r->nheader && used < sizeof cols; c++) {
                char f[FIELD_SHOWN];
                int w = snprintf(cols + used, sizeof cols - used, "%s%s", c ? ", " : "",
                                 errmsg_field(r->header[c], f, sizeof f));
                if (w < 0)
                    break;
                used += (size_t) w;
            }
            rd_error(r, 0, "no column '%s' (columns: %s)", r->want[k].name, cols);
            return -1;
        }
    }
    return 0;
}

/* Appends the current row to the output arrays.  Returns 0, or -1 after writing
 * an error. */
static int store_row(csv_reader *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        double *t = realloc(r->t, cap * sizeof *t);
        if (t == NULL) {
            rd_error(r, 0, "out of memory");
            return -1;
        }
        r->t = t;
        for (size_t k = 0; k < r->nwant; k++) {
            if (r->want[k].kind != COL_TOKENS)
                continue;
            int32_t *p = realloc(r->tok[k], cap * sizeof *p);
            if (p == NULL) {
                rd_error(r, 0, "out of memory");
                return -1;
            }
            r->tok[k] = p;
        }
        if (r->nwant > 0 && r->want[r->nwant - 1].kind == COL_LABEL) {
            int32_t *p = realloc(r->lab, cap * sizeof *p);
            if (p == NULL) {
                rd_error(r, 0, "out of memory");
                return -1;
            }
            r->lab = p;
        }
        if (r->want_score) {
            double *p = realloc(r->score, cap * sizeof *p);
            if (p == NULL) {
                rd_error(r, 0, "out of memory");
                return -1;
            }
            r->score = p;
        }
        r->cap = cap;
    }
    bool is_time = r->nwant > 0 && r->want[0].kind != COL_NONNEG
                   && r->want[0].kind != COL_TOKENS;
    if (is_time) {
        if (r->n > 0 && r->row_time < r->t[r->n - 1]) {
            rd_error(r, r->row_line, "time goes backwards (%.9g s after the first row, "
                     "previous row %.9g s)", r->row_time, r->t[r->n - 1]);
            return -1;
        }
        r->t[r->n] = r->row_time;
    } else {
        r->t[r->n] = r->row_value;
    }
    for (size_t k = 0; k < r->nwant; k++)
        if (r->want[k].kind == COL_TOKENS)
            r->tok[k][r->n] = r->row_tokens[k];
    if (r->lab != NULL)
        r->lab[r->n] = r->row_label;
    if (r->score != NULL)
        r->score[r->n] = r->row_score;
    r->n++;
    return 0;
}

/* libcsv row callback: closes the header, or checks and stores a data row.
 * Errors are left in the reader. */
static void on_row(int c, void *data)
{
    (void) c;
    csv_reader *r = data;
    if (r->failed)
        return;
    if (r->in_header) {
        r->in_header = false;
        resolve_header(r);
        return;
    }
    size_t nfields = r->field;
    r->field = 0;
    bool all_seen = true;
    for (size_t k = 0; k < r->nwant; k++) {
        all_seen = all_seen && r->want[k].seen;
        r->want[k].seen = false;
    }
    if (nfields != r->nheader) {
        rd_error(r, r->row_line, "%zu field%s, but the header has %zu columns", nfields,
                 nfields == 1 ? "" : "s", r->nheader);
        return;
    }
    if (!all_seen)   /* cannot happen when the count matches; kept as a guard */
        return;
    store_row(r);
}

/* Releases everything the reader owns (header names and output arrays). */
static void rd_free(csv_reader *r)
{
    for (size_t c = 0; c < r->nheader; c++)
        free(r->header[c]);
    free(r->header);
    r->header = NULL;
    r->nheader = 0;
    free(r->t);
    r->t = NULL;
    for (size_t k = 0; k < MAX_WANTED; k++) {
        free(r->tok[k]);
        r->tok[k] = NULL;
    }
    free(r->lab);
    r->lab = NULL;
    free(r->score);
    r->score = NULL;
    trace_free(&r->labels);
}

/* Reads one line (with its '\n', if any) into BUF of size MAX_LINE + 1.  Returns
 * its length, 0 at the end of the file, -1 when the line is longer than MAX_LINE
 * bytes, or -2 when it holds a NUL byte (not text; *NUL = its 1-based column). */
static ssize_t read_line(FILE *f, char *buf, size_t *nul)
{
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        if (c == '\0') {
            *nul = n + 1;
            return -2;
        }
        if (n == MAX_LINE)
            return -1;
        buf[n++] = (char) c;
        if (c == '\n')
            break;
    }
    buf[n] = '\0';
    return (ssize_t) n;
}

/* Reads the whole file into the reader's arrays.  Returns 0, or -1 with an error
 * written (the caller still calls rd_free). */
static int rd_run(csv_reader *r)
{
    /* Regular files only: a FIFO with no writer would block, and a device such
     * as /dev/zero never ends. */
    struct stat sb;
    if (stat(r->path, &sb) != 0) {
        rd_error(r, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        rd_error(r, 0, "not a regular file");
        return -1;
    }
    FILE *f = fopen(r->path, "r");
    if (f == NULL) {
        rd_error(r, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0) {
        fclose(f);
        rd_error(r, 0, "cannot start the CSV parser");
        return -1;
    }
    r->in_header = true;
    char *buf = malloc(MAX_LINE + 1);
    if (buf == NULL) {
        csv_free(&p);
        fclose(f);
        rd_error(r, 0, "out of memory");
        return -1;
    }
    ssize_t len;
    errno = 0;
    size_t nul = 0;
    while (!r->failed && (len = read_line(f, buf, &nul)) != 0) {
        r->line++;
        if (len == -2) {
            rd_error(r, r->line, "column %zu: a NUL byte: not text", nul);
            break;
        }
        if (len < 0) {
            rd_error(r, r->line, "line longer than %d bytes", MAX_LINE);
            break;
        }
        /* A row starts on this line unless one is still open (a quoted field went
         * on past the previous line's end): libcsv's state 0 is ROW_NOT_BEGUN. */
        if (p.pstate == 0)
            r->row_line = r->line;
        if (csv_parse(&p, buf, (size_t) len, on_field, on_row, r) != (size_t) len && !r->failed)
            rd_error(r, r->line, "%s", csv_strerror(csv_error(&p)));
    }
    if (!r->failed && ferror(f))
        rd_error(r, 0, "cannot read: %s", strerror(errno));
    if (!r->failed && csv_fini(&p, on_field, on_row, r) != 0)
        rd_error(r, r->line, "%s", csv_strerror(csv_error(&p)));
    csv_free(&p);
    free(buf);
    fclose(f);
    if (r->failed)
        return -1;
    if (r->in_header && r->nheader == 0) {
        rd_error(r, 0, "empty file (expected a header row)");
        return -1;
    }
    if (r->n == 0) {
        rd_error(r, 0, "no data rows after the header");
        return -1;
    }
    return 0;
}

/* Starts a reader for PATH that writes errors into ERR. */
static void rd_init(csv_reader *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path != NULL ? path : "(no path)";
    r->err = err;
    r->errlen = errlen;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
}

/* Adds wanted column NAME of kind KIND to the reader. */
static void rd_want(csv_reader *r, const char *name, col_kind kind)
{
    r->want[r->nwant].name = name;
    r->want[r->nwant].kind = kind;
    r->want[r->nwant].index = -1;
    r->nwant++;
    if (kind == COL_SCORE)
        r->want_score = true;
}

int trace_load(trace *t, const trace_opts *o, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (o->jsonl)
        return trace_load_jsonl(t, o, err, errlen);
    csv_reader r;
    rd_init(&r, o->path, err, errlen);
    if (o->path == NULL) {
        rd_error(&r, 0, "no file given");
        return -1;
    }
    col_kind tk;
    switch (o->format) {
    case TRACE_SECONDS:      tk = COL_SECONDS; break;
    case TRACE_MILLISECONDS: tk = COL_MILLISECONDS; break;
    case TRACE_DATETIME:     tk = COL_DATETIME; break;
    default:
        rd_error(&r, 0, "unknown time format %d", (int) o->format);
        return -1;
    }
    if (o->time_column != NULL)   /* NULL: no times (a trace of attributes only); t is all 0 */
        rd_want(&r, o->time_column, tk);
    long ip = -1, io = -1;
    if (o->prompt_column != NULL) {
        ip = (long) r.nwant;
        rd_want(&r, o->prompt_column, COL_TOKENS);
    }
    if (o->output_column != NULL) {
        io = (long) r.nwant;
        rd_want(&r, o->output_column, COL_TOKENS);
    }
    if (o->complexity_column != NULL)
        rd_want(&r, o->complexity_column, COL_SCORE);
    if (o->class_column != NULL)
        rd_want(&r, o->class_column, COL_LABEL);   /* always the last wanted column */
    if (rd_run(&r) != 0) {
        rd_free(&r);
        return -1;
    }
    /* Hand the arrays over; shrinking to size is best effort. */
    t->n = r.n;
    t->t = r.t;
    r.t = NULL;
    if (ip >= 0) {
        t->prompt = r.tok[ip];
        r.tok[ip] = NULL;
    }
    if (io >= 0) {
        t->output = r.tok[io];
        r.tok[io] = NULL;
    }
    if (o->class_column != NULL) {
        t->label = r.lab;
        r.lab = NULL;
        t->labels = r.labels.labels;
        t->nlabels = r.labels.nlabels;
        r.labels.labels = NULL;
        r.labels.nlabels = 0;
    }
    t->score = r.score;
    r.score = NULL;
    rd_free(&r);
    return 0;
}

int32_t trace_intern_label(trace *t, const char *s)
{
    for (size_t i = 0; i < t->nlabels; i++)
        if (strcmp(t->labels[i], s) == 0)
            return (int32_t) i;
    if (t->nlabels >= INT32_MAX)
        return -1;
    char **l = realloc(t->labels, (t->nlabels + 1) * sizeof *l);
    if (l == NULL)
        return -1;
    t->labels = l;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d == NULL)
        return -1;
    memcpy(d, s, n);
    t->labels[t->nlabels] = d;
    return (int32_t) t->nlabels++;
}

void trace_free(trace *t)
{
    if (t == NULL)
        return;
    free(t->t);
    free(t->prompt);
    free(t->output);
    free(t->hash);
    free(t->hash_off);
    free(t->label);
    free(t->score);
    for (size_t i = 0; i < t->nlabels; i++)
        free(t->labels[i]);
    free(t->labels);
    memset(t, 0, sizeof *t);
}

int trace_format_parse(const char *s, trace_time_format *out)
{
    if (s == NULL)
        return -1;
    if (strcmp(s, "seconds") == 0)
        *out = TRACE_SECONDS;
    else if (strcmp(s, "milliseconds") == 0)
        *out = TRACE_MILLISECONDS;
    else if (strcmp(s, "datetime") == 0)
        *out = TRACE_DATETIME;
    else
        return -1;
    return 0;
}

int csv_read_column(const char *path, const char *column, double **values, size_t *n,
                    char *err, size_t errlen)
{
    *values = NULL;
    *n = 0;
    csv_reader r;
    rd_init(&r, path, err, errlen);
    if (path == NULL || column == NULL) {
        rd_error(&r, 0, "no %s given", path == NULL ? "file" : "column");
        return -1;
    }
    rd_want(&r, column, COL_NONNEG);
    if (rd_run(&r) != 0) {
        rd_free(&r);
        return -1;
    }
    *values = r.t;
    *n = r.n;
    r.t = NULL;
    rd_free(&r);
    return 0;
}
