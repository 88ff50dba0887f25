/* cobscsv.c -- the CSV readers of observed runs (libcsv, a line at a time so
 * that every row is named by its line): the generic per-request columns and the
 * sweep summaries of concurrency or rate levels. */
#include "cobserved.h"
#include "cobsrd.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "engine/errmsg.h"

void on_field(void *s, size_t len, void *data)
{
    csv_rows *c = data;
    if (c->failed) return;
    if (c->n == c->cap) {
        size_t k = c->cap ? 2 * c->cap : 16;
        char **p = realloc(c->f, k * sizeof *p);
        if (!p) { c->failed = 1; oom(c->r); return; }
        c->f = p;
        c->cap = k;
    }
    char *v = malloc(len + 1);
    if (!v) { c->failed = 1; oom(c->r); return; }
    memcpy(v, s, len);
    v[len] = '\0';
    c->f[c->n++] = v;
}

static void on_row(int ch, void *data)
{
    (void) ch;
    csv_rows *c = data;
    if (!c->failed && c->row(c) != 0) c->failed = 1;
    for (size_t i = 0; i < c->n; i++) free(c->f[i]);
    c->n = 0;
}

/* Feeds F to libcsv line by line, calling C->row per row.  Returns 0 or -1. */
int read_csv(csv_rows *c, FILE *f)
{
    struct csv_parser p;
    rd *r = c->r;
    if (csv_init(&p, CSV_APPEND_NULL) != 0) return oom(r);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    errno = 0;
    while (!c->failed && (len = getline(&buf, &cap, f)) != -1) {
        c->line++;
        if (len > MAX_LINE) { bad(r, c->line, "line longer than %d bytes", MAX_LINE); c->failed = 1; break; }
        if ((size_t) len != strlen(buf)) { bad(r, c->line, "a NUL byte: not text"); c->failed = 1; break; }
        if (p.pstate == 0) c->row_line = c->line;   /* libcsv's ROW_NOT_BEGUN: a row starts here */
        if (csv_parse(&p, buf, (size_t) len, on_field, on_row, c) != (size_t) len && !c->failed) {
            bad(r, c->line, "%s", csv_strerror(csv_error(&p)));
            c->failed = 1;
        }
    }
    if (!c->failed && ferror(f)) { bad(r, 0, "cannot read: %s", strerror(errno ? errno : EIO)); c->failed = 1; }
    if (!c->failed && csv_fini(&p, on_field, on_row, c) != 0) { bad(r, c->line, "%s", csv_strerror(csv_error(&p))); c->failed = 1; }
    csv_free(&p);
    for (size_t i = 0; i < c->n; i++) free(c->f[i]);
    free(c->f);
    free(buf);
    return c->failed ? -1 : 0;
}

/* Resolves the header row: COLS[i] (NULL-terminated, the first NREQ required)
 * to column indices in C->col.  Returns 0 or -1. */
static int csv_header(csv_rows *c, const char *const *cols, int nreq)
{
    for (int i = 0; cols[i]; i++) {
        c->col[i] = -1;
        for (size_t k = 0; k < c->n; k++)
            if (!strcmp(c->f[k], cols[i])) {
                if (c->col[i] >= 0) return bad(c->r, c->row_line, "column %s appears twice in the header", cols[i]);
                c->col[i] = (int) k;
            }
        if (i < nreq && c->col[i] < 0) return bad(c->r, c->row_line, "no column %s in the header", cols[i]);
    }
    c->ncols = c->n;
    c->header_done = 1;
    return 0;
}

/* Field of column I of the current row ("" when the column is absent). */
static const char *cf(const csv_rows *c, int i)
{
    return c->col[i] >= 0 && (size_t) c->col[i] < c->n ? c->f[c->col[i]] : "";
}

/* A number from CSV field S of column NAME.  Returns 0, 1 (empty: none), -1 (bad). */
static int csv_num(csv_rows *c, const char *s, const char *name, double *out)
{
    if (!*s) return 1;
    char *end, shown[64];
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || strpbrk(s, "xX"))   /* decimal only: strtod would take "0x10" (16) */
        return bad(c->r, c->row_line, "%s: '%s' is not a number", name, errmsg_field(s, shown, sizeof shown));
    if (!isfinite(v)) return bad(c->r, c->row_line, "%s: not a finite number ('%s')", name, errmsg_field(s, shown, sizeof shown));
    *out = v;
    return 0;
}

/* A required number (missing: an error).  Returns 0 or -1. */
static int csv_need(csv_rows *c, const char *s, const char *name, double *out)
{
    int k = csv_num(c, s, name, out);
    return k == 1 ? bad(c->r, c->row_line, "%s: missing", name) : k;
}

/* A required whole token count >= 0 from S.  Returns 0 or -1. */
static int csv_tokens(csv_rows *c, const char *s, const char *name, int32_t *out)
{
    double v;
    if (csv_need(c, s, name, &v)) return -1;
    if (v != floor(v)) return bad(c->r, c->row_line, "%s: %.6g is not a whole number", name, v);
    if (v < 0 || v > COBS_MAX_TOKENS) return bad(c->r, c->row_line, "%s: %.6g is outside 0..%d", name, v, COBS_MAX_TOKENS);
    *out = (int32_t) v;
    return 0;
}

/* Every row has the header's width.  Returns 0 or -1. */
static int csv_width(csv_rows *c)
{
    if (c->n != c->ncols)
        return bad(c->r, c->row_line, "%zu field%s, but the header has %zu columns", c->n, c->n == 1 ? "" : "s", c->ncols);
    return 0;
}

enum { G_ARR, G_IN, G_OUT, G_TTFT, G_E2E, G_ITL, G_QUEUE, G_CLASS };

int generic_csv_row(csv_rows *c)
{
    static const char *const cols[] = { "arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms",
                                        "itl_ms", "queue_ms", "class", NULL };
    if (!c->header_done) return csv_header(c, cols, 5);
    if (csv_width(c)) return -1;
    rd *r = c->r;
    cobs_req *q = new_req(r, c->row_line);
    if (!q) return -1;
    if (csv_need(c, cf(c, G_ARR), "arrival_s", &q->arrival_s) || csv_tokens(c, cf(c, G_IN), "input_tokens", &q->input_tokens) ||
        csv_tokens(c, cf(c, G_OUT), "output_tokens", &q->output_tokens) || csv_need(c, cf(c, G_TTFT), "ttft_ms", &q->ttft_ms) ||
        csv_need(c, cf(c, G_E2E), "e2e_ms", &q->e2e_ms) || csv_num(c, cf(c, G_QUEUE), "queue_ms", &q->queue_ms) < 0)
        return -1;
    const char *itl = cf(c, G_ITL);
    if (*itl) {   /* a JSON array in the field, e.g. "[12.5, 11.9]" */
        json_error_t je;
        json_t *a = json_loads(itl, 0, &je);
        if (!a) return bad(r, c->row_line, "itl_ms: not a JSON list of numbers: %s", je.text);
        int s = j_gaps(r, c->row_line, a, "itl_ms", 1, q);
        json_decref(a);
        if (s) return -1;
    }
    const char *cls = cf(c, G_CLASS);
    if (strlen(cls) >= sizeof q->cls) return bad(r, c->row_line, "class: longer than %zu bytes", sizeof q->cls - 1);
    snprintf(q->cls, sizeof q->cls, "%s", cls);
    if (q->arrival_s < 0) return bad(r, c->row_line, "arrival_s: negative (%.6g s)", q->arrival_s);
    return check_req(r, q, &GENERIC_NAMES, -1);
}

enum { S_CONC, S_RATE, S_IN, S_OUT, S_TTFT, S_ITL, S_TPOT, S_E2E, S_TTFT99, S_TPS, S_NCOLS };

int sweep_csv_row(csv_rows *c)
{
    static const char *const cols[] = { "concurrency", "rate", "input_tokens", "output_tokens", "ttft_ms", "itl_ms",
                                        "tpot_ms", "e2e_ms", "ttft_p99_ms", "output_tokens_per_s", NULL };
    rd *r = c->r;
    if (!c->header_done) {
        if (csv_header(c, cols, 0)) return -1;
        if ((c->col[S_CONC] >= 0) == (c->col[S_RATE] >= 0))
            return bad(r, c->row_line, "the header needs one column concurrency (closed loop) or rate (open loop)%s",
                       c->col[S_CONC] >= 0 ? ", not both" : "");
        if (c->col[S_IN] < 0) return bad(r, c->row_line, "no column input_tokens in the header");
        if (c->col[S_OUT] < 0) return bad(r, c->row_line, "no column output_tokens in the header");
        int any = 0;
        for (int i = S_TTFT; i < S_NCOLS; i++) any |= c->col[i] >= 0;
        if (!any)
            return bad(r, c->row_line, "no measured column in the header (any of ttft_ms, itl_ms, tpot_ms, e2e_ms, "
                       "ttft_p99_ms, output_tokens_per_s)");
        return 0;
    }
    if (csv_width(c)) return -1;
    cobs_run *run = r->run;
    if (run->nlvl >= 100000) return bad(r, c->row_line, "more than 100000 levels");
    if (run->nlvl == r->cap) {
        size_t k = r->cap ? 2 * r->cap : 16;
        cobs_level *p = realloc(run->lvl, k * sizeof *p);
        if (!p) return oom(r);
        run->lvl = p;
        r->cap = k;
    }
    cobs_level *L = &run->lvl[run->nlvl++];
    L->line = c->row_line;
    L->closed = c->col[S_CONC] >= 0;
    const char *lname = L->closed ? "concurrency" : "rate";
    if (csv_need(c, cf(c, L->closed ? S_CONC : S_RATE), lname, &L->load)) return -1;
    if (L->closed && (L->load < 1 || L->load != floor(L->load) || L->load > 1e6))
        return bad(r, c->row_line, "concurrency: %.6g is not a whole number of users in 1..1000000", L->load);
    if (!L->closed && !(L->load > 0 && L->load <= 1e7))
        return bad(r, c->row_line, "rate: %.6g requests/s is outside (0, 1e7]", L->load);
    if (csv_tokens(c, cf(c, S_IN), "input_tokens", &L->input_tokens) ||
        csv_tokens(c, cf(c, S_OUT), "output_tokens", &L->output_tokens))
        return -1;
    if (L->input_tokens < 1) return bad(r, c->row_line, "input_tokens: 0: a request has at least 1 prompt token");
    if (L->output_tokens < 1) return bad(r, c->row_line, "output_tokens: 0: a request has at least 1 output token");
    double *dst[] = { &L->ttft_ms, &L->itl_ms, &L->tpot_ms, &L->e2e_ms, &L->ttft_p99_ms, &L->output_tps };
    int given = 0;
    for (int i = S_TTFT; i < S_NCOLS; i++) {
        double *d = dst[i - S_TTFT];
        *d = NAN;
        int k = csv_num(c, cf(c, i), cols[i], d);
        if (k < 0) return -1;
        if (k == 1) continue;
        given++;
        if (i == S_TPS) {
            if (*d < 0) return bad(r, c->row_line, "output_tokens_per_s: negative (%.6g)", *d);
        } else if (check_ms(r, c->row_line, cols[i], -1, *d, "ms")) {
            return -1;
        }
    }
    if (!given) return bad(r, c->row_line, "no measured value in this level (every measured column is empty)");
    if (!isnan(L->e2e_ms) && !isnan(L->ttft_ms) && L->e2e_ms < L->ttft_ms)
        return bad(r, c->row_line, "e2e_ms: %.6g ms is below ttft_ms %.6g ms", L->e2e_ms, L->ttft_ms);
    return 0;
}
