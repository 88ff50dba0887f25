/* trace.c -- arrival traces read from CSV files (see trace.h).
 *
 * The file is read by the CSV reader (core/csvread.h), a row at a time, each row
 * named by the line it starts on.  The header names the columns; the wanted ones
 * are looked up there, and only those cells of each data row are converted, in
 * column order, into growing arrays.
 */
#include "workload/trace.h"
#include "core/csvread.h"
#include "engine/simtime.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine/errmsg.h"

#define MAX_WANTED 6   /* time, prompt, output, complexity, adapter and class columns of a trace */
#define FIELD_SHOWN 64 /* bytes of a field quoted in a message (escaped, cut with "...") */

/* How a wanted column's fields are converted. */
typedef enum {
    COL_SECONDS,       /* real number of seconds */
    COL_MILLISECONDS,  /* real number of milliseconds */
    COL_DATETIME,      /* "YYYY-MM-DD HH:MM:SS[.fraction]", UTC */
    COL_TOKENS,        /* whole number in [0, INT32_MAX] */
    COL_LABEL,         /* any text: a class name, interned into the trace's labels */
    COL_SCORE,         /* a complexity score: a real number in [0, 1], or an empty field (none: NAN) */
    COL_ADAPTER        /* a LoRA adapter number: 0 (the base model) or 1..N, or an empty field (none: -1) */
} col_kind;

/* One column the caller asked for. */
typedef struct wanted_col {
    const char *name;  /* header name (caller's string) */
    col_kind kind;     /* conversion of its fields */
    long index;        /* 0-based position in the header, or -1 before the header is read */
} wanted_col;

/* The state of one pass over a trace file. */
typedef struct csv_reader {
    const char *path;            /* file name, for messages */
    char *err;                   /* caller's message buffer */
    size_t errlen;               /* its size in bytes */
    bool failed;                 /* an error was written */
    long row_line;               /* 1-based line the current row starts on (rows are named by it) */

    wanted_col want[MAX_WANTED]; /* the columns to convert */
    size_t nwant;                /* how many */

    /* Current row, converted.  Seconds for times, relative to the first row. */
    double row_time;             /* seconds since the first row (time column) */
    int32_t row_tokens[MAX_WANTED]; /* token counts, by wanted index */
    int32_t row_label;           /* COL_LABEL: index into labels */
    double row_score;            /* COL_SCORE: the score, NAN for none */
    bool want_score;             /* a COL_SCORE column is wanted */
    int32_t row_adapter;         /* COL_ADAPTER: the number, -1 for none */
    bool want_adapter;           /* a COL_ADAPTER column is wanted */
    const char *adapter_name;    /* its header name */
    int32_t adapter_max;         /* the largest number seen (-1: none yet) */
    long adapter_line;           /* the line of the first row naming it */

    bool have_first;             /* the first data row's time has been seen */
    double first_real;           /* seconds or milliseconds: first row's raw number */
    int64_t first_sec;           /* datetime: first row's whole seconds since 1970 (UTC) */
    double first_frac;           /* datetime: first row's fraction of a second, in [0, 1) */

    /* Output, one entry per data row. */
    size_t n;                    /* rows stored */
    size_t cap;                  /* allocated rows of each array */
    double *t;                   /* time (seconds since the first row), 0 without a time column */
    int32_t *tok[MAX_WANTED];    /* token counts per wanted column that is COL_TOKENS, else NULL */
    int32_t *lab;                /* label index per row (COL_LABEL column), else NULL */
    double *score;               /* complexity score per row (COL_SCORE column; NAN = none), else NULL */
    int32_t *adp;                /* adapter per row (COL_ADAPTER column; -1 = none), else NULL */
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
    if (csvread_real(s, &v) != 0) {
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
    case COL_SCORE: {
        double v;
        char f[FIELD_SHOWN];
        if (*s == '\0') {           /* no score for this row: drawn as without the column */
            r->row_score = NAN;
            return 0;
        }
        if (csvread_real(s, &v) != 0) {
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
    case COL_ADAPTER: {
        char f[FIELD_SHOWN];
        const char *p = s;
        if (*p == '\0') {           /* none for this row: the class's or a draw */
            r->row_adapter = -1;
            return 0;
        }
        if (*p == '+')
            p++;
        bool digits = *p != '\0';
        for (const char *q = p; *q != '\0'; q++)
            if (*q < '0' || *q > '9')
                digits = false;
        errno = 0;
        long long v = digits ? strtoll(p, NULL, 10) : -1;
        if (!digits || errno == ERANGE || v > INT32_MAX - 2) {
            rd_error(r, r->row_line, "column '%s': '%s' is not an adapter number (0: the base model, 1..adapters)",
                     w->name, errmsg_field(s, f, sizeof f));
            return -1;
        }
        r->row_adapter = (int32_t) v;
        if (r->row_adapter > r->adapter_max) {
            r->adapter_max = r->row_adapter;
            r->adapter_line = r->row_line;
        }
        return 0;
    }
    }
    return -1;
}

/* Reader callback for the header row: finds every wanted column.  Returns 0, or
 * -1 after writing "PATH: no column 'X' (columns: a, b, c)". */
static int on_header(void *data, const csvread_row *row, char *err, size_t errlen)
{
    csv_reader *r = data;
    for (size_t k = 0; k < r->nwant; k++) {
        r->want[k].index = csvread_need_col(row, r->want[k].name, err, errlen);
        if (r->want[k].index < 0) {
            r->failed = true;
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
        if (r->want_adapter) {
            int32_t *p = realloc(r->adp, cap * sizeof *p);
            if (p == NULL) {
                rd_error(r, 0, "out of memory");
                return -1;
            }
            r->adp = p;
        }
        r->cap = cap;
    }
    bool is_time = r->nwant > 0 && r->want[0].kind != COL_TOKENS && r->want[0].kind != COL_LABEL
                   && r->want[0].kind != COL_SCORE && r->want[0].kind != COL_ADAPTER;
    if (is_time) {
        if (r->n > 0 && r->row_time < r->t[r->n - 1]) {
            rd_error(r, r->row_line, "time goes backwards (%.9g s after the first row, "
                     "previous row %.9g s)", r->row_time, r->t[r->n - 1]);
            return -1;
        }
        r->t[r->n] = r->row_time;
    } else {
        r->t[r->n] = 0;
    }
    for (size_t k = 0; k < r->nwant; k++)
        if (r->want[k].kind == COL_TOKENS)
            r->tok[k][r->n] = r->row_tokens[k];
    if (r->lab != NULL)
        r->lab[r->n] = r->row_label;
    if (r->score != NULL)
        r->score[r->n] = r->row_score;
    if (r->adp != NULL)
        r->adp[r->n] = r->row_adapter;
    r->n++;
    return 0;
}

/* Reader callback for a data row: converts its wanted cells, in column order
 * (the first bad one is reported), and stores the row.  Returns 0, or -1 after
 * writing an error. */
static int on_row(void *data, const csvread_row *row, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;                   /* rd_error writes into the same buffer */
    csv_reader *r = data;
    r->row_line = row->line;
    for (size_t col = 0; col < row->nfield; col++)
        for (size_t k = 0; k < r->nwant; k++)
            if ((size_t) r->want[k].index == col && convert_field(r, k, row->field[col]) != 0)
                return -1;
    return store_row(r) != 0 ? -1 : 0;
}

/* Releases everything the reader owns (its output arrays). */
static void rd_free(csv_reader *r)
{
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
    free(r->adp);
    r->adp = NULL;
    trace_free(&r->labels);
}

/* Reads the whole file into the reader's arrays.  Returns 0, or -1 with an error
 * written (the caller still calls rd_free). */
static int rd_run(csv_reader *r)
{
    if (csvread_file(r->path, on_header, on_row, r, r->err, r->errlen) != 0) {
        r->failed = true;
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
    if (kind == COL_ADAPTER) {
        r->want_adapter = true;
        r->adapter_name = name;
        r->adapter_max = -1;
    }
}

int trace_note_adapter(trace *t, const char *path, long line, const char *column)
{
    char buf[1400];
    if (line > 0) snprintf(buf, sizeof buf, "%s:%ld: column '%s'", path, line, column);
    else snprintf(buf, sizeof buf, "%s: column '%s'", path, column);
    free(t->adapter_at);
    t->adapter_at = malloc(strlen(buf) + 1);
    if (t->adapter_at == NULL)
        return -1;
    strcpy(t->adapter_at, buf);
    return 0;
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
    if (o->adapter_column != NULL)
        rd_want(&r, o->adapter_column, COL_ADAPTER);
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
    if (r.want_adapter) {
        t->adapter = r.adp;
        r.adp = NULL;
        t->adapter_max = r.adapter_max;
        if (r.adapter_max >= 0 && trace_note_adapter(t, r.path, r.adapter_line, r.adapter_name) != 0) {
            rd_error(&r, 0, "out of memory");
            rd_free(&r);
            trace_free(t);
            return -1;
        }
    }
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
    free(t->adapter);
    free(t->adapter_at);
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

void trace_window(trace *t, double from_s, double len_s)
{
    size_t a = 0, b;
    while (a < t->n && t->t[a] < from_s) a++;
    for (b = a; b < t->n && t->t[b] - from_s < len_s; b++) {}
    size_t n = b - a;
    double t0 = n > 0 ? t->t[a] : 0;
    for (size_t i = 0; i < n; i++) t->t[i] = t->t[a + i] - t0;
    if (t->prompt) memmove(t->prompt, t->prompt + a, n * sizeof *t->prompt);
    if (t->output) memmove(t->output, t->output + a, n * sizeof *t->output);
    if (t->label) memmove(t->label, t->label + a, n * sizeof *t->label);
    if (t->score) memmove(t->score, t->score + a, n * sizeof *t->score);
    if (t->hash && t->hash_off) {
        size_t h0 = t->hash_off[a], h1 = t->hash_off[b];
        memmove(t->hash, t->hash + h0, (h1 - h0) * sizeof *t->hash);
        for (size_t i = 0; i <= n; i++) t->hash_off[i] = t->hash_off[a + i] - h0;
    }
    t->n = n;
}

int trace_peak(const trace *t, double len_s, double *from_s, size_t *rows)
{
    if (t->n == 0) return -1;
    size_t best = 0, at = 0;
    for (size_t i = 0, j = 0; i < t->n; i++) {   /* rows i..j-1 arrive in [t_i, t_i + len) */
        if (j < i) j = i;
        while (j < t->n && t->t[j] - t->t[i] < len_s) j++;
        if (j - i > best) {
            best = j - i;
            at = i;
        }
    }
    *from_s = t->t[at];
    *rows = best;
    return 0;
}
