/* cenglog.c -- an engine's periodic metrics read, and its steady windows as
 * step times (see cenglog.h for the shapes and the rules). */
#include "cenglog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccsv.h"
#include "core/catalog.h"
#include "engine/errmsg.h"
#include "latsim/infile.h"

const char *celog_format_name(celog_format f)
{
    return f == CELOG_CSV ? "csv" : f == CELOG_VLLM ? "vllm" : "prom";
}

void celog_free(celog *log)
{
    free(log->row);
    log->row = NULL;
    log->n = 0;
}

/* Appends an empty row to LOG.  Returns it, or NULL when out of memory. */
static celog_row *grow(celog *log, size_t *cap)
{
    if (log->n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        celog_row *r = realloc(log->row, c * sizeof *r);
        if (!r) return NULL;
        log->row = r;
        *cap = c;
    }
    celog_row *r = &log->row[log->n++];
    memset(r, 0, sizeof *r);
    return r;
}

/* ---- csv ------------------------------------------------------------------ */

static const char *const CSV_COLS[] = { "t", "prompt_throughput", "gen_throughput", "running", "waiting", "kv_cache_pct" };
#define NCSV 6

typedef struct csv_ctx {
    celog *log;
    size_t cap;
    int col[NCSV];
    int resolved;
    int oom;
} csv_ctx;

static int csv_row(void *vctx, const ccsv_row *row, char *err, size_t errlen)
{
    csv_ctx *c = vctx;
    if (!c->resolved) {
        for (int k = 0; k < NCSV; k++)
            if ((c->col[k] = ccsv_col(row, CSV_COLS[k])) < 0) {
                snprintf(err, errlen, "%s:1: column %s: missing (expected t,prompt_throughput,gen_throughput,running,"
                         "waiting,kv_cache_pct)", row->path, CSV_COLS[k]);
                return -1;
            }
        c->resolved = 1;
    }
    double v[NCSV];
    long whole;
    if (ccsv_range(row, c->col[0], 0, 1e12, "s", &v[0], err, errlen) ||
        ccsv_range(row, c->col[1], 0, 1e9, "tokens/s", &v[1], err, errlen) ||
        ccsv_range(row, c->col[2], 0, 1e9, "tokens/s", &v[2], err, errlen) ||
        ccsv_int(row, c->col[3], 0, 100000000, &whole, err, errlen))
        return -1;
    v[3] = (double) whole;
    if (ccsv_int(row, c->col[4], 0, 100000000, &whole, err, errlen) ||
        ccsv_range(row, c->col[5], 0, 100, "%", &v[5], err, errlen))
        return -1;
    v[4] = (double) whole;
    if (c->log->n && !(v[0] > c->log->row[c->log->n - 1].t)) {
        snprintf(err, errlen, "%s:%ld: column t: %g s is not after the previous row's %g s", row->path, row->line, v[0],
                 c->log->row[c->log->n - 1].t);
        return -1;
    }
    celog_row *r = grow(c->log, &c->cap);
    if (!r) {
        c->oom = 1;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *r = (celog_row) { .t = v[0], .prompt_tps = v[1], .gen_tps = v[2], .running = v[3], .waiting = v[4],
                       .kv = v[5] / 100, .line = row->line };
    return 0;
}

/* ---- vLLM log lines ------------------------------------------------------- */

/* The number after KEY in LINE into *V.  Returns 0, or -1 when KEY is absent or
 * not followed by a finite number. */
static int after(const char *line, const char *key, double *v)
{
    const char *p = strstr(line, key);
    if (!p) return -1;
    p += strlen(key);
    while (*p == ' ') p++;
    char *end;
    errno = 0;
    *v = strtod(p, &end);
    return end == p || errno || !isfinite(*v) ? -1 : 0;
}

/* The logger's "MM-DD HH:MM:SS" in LINE before MSG into *T (s, from the start
 * of the year, 31-day months: only differences are used).  Returns 0 or -1. */
static int log_time(const char *line, const char *msg, double *t)
{
    for (const char *p = line; p + 14 <= msg; p++) {
        int mo, d, h, mi, s, n = 0;
        if (!isdigit((unsigned char) p[0]) || (p > line && isdigit((unsigned char) p[-1]))) continue;
        if (sscanf(p, "%2d-%2d %2d:%2d:%2d%n", &mo, &d, &h, &mi, &s, &n) == 5 && n == 14 && mo >= 1 && mo <= 12 && d >= 1 &&
            d <= 31 && h < 24 && mi < 60 && s < 61) {
            *t = (((mo - 1) * 31.0 + (d - 1)) * 24 + h) * 3600 + mi * 60 + s;
            return 0;
        }
    }
    return -1;
}

static int read_vllm(FILE *f, const char *path, celog *log, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t bn = 0, cap = 0;
    long ln = 0, other = 0;
    ssize_t len;
    int rc = 0;
    double year = 0;   /* a year's seconds added after the log passes new year's eve */
    while (rc == 0 && (len = getline(&buf, &bn, f)) >= 0) {
        ln++;
        const char *msg = strstr(buf, "Avg prompt throughput:");
        if (!msg) continue;
        const char *eng = strstr(buf, "Engine ");
        if (eng && eng < msg && strtol(eng + 7, NULL, 10) != 0) {
            other++;
            continue;
        }
        double t, v[5];
        static const char *const key[5] = { "Avg prompt throughput:", "Avg generation throughput:", "Running:", "Waiting:",
                                            "GPU KV cache usage:" };
        if (log_time(buf, msg, &t) != 0) {
            errmsg_set(err, errlen, "%s:%ld: time: no MM-DD HH:MM:SS timestamp before the message", path, ln);
            rc = 2;
            break;
        }
        for (int k = 0; k < 5 && rc == 0; k++)
            if (after(msg, key[k], &v[k]) != 0 && !(k == 3 && after(msg, "Pending:", &v[k]) == 0)) {
                errmsg_set(err, errlen, "%s:%ld: %.*s: missing or not a number", path, ln, (int) strlen(key[k]) - 1, key[k]);
                rc = 2;
            }
        if (rc) break;
        if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[4] < 0 || v[4] > 100) {
            int k = v[0] < 0 ? 0 : v[1] < 0 ? 1 : v[2] < 0 ? 2 : v[3] < 0 ? 3 : 4;
            errmsg_set(err, errlen, "%s:%ld: %.*s: %g is out of range", path, ln, (int) strlen(key[k]) - 1, key[k], v[k]);
            rc = 2;
            break;
        }
        t += year;
        if (log->n && !(t > log->row[log->n - 1].t)) {
            if (log->row[log->n - 1].t - t > 300 * 86400.0) {
                year += 372 * 86400.0;
                t += 372 * 86400.0;
            } else {
                errmsg_set(err, errlen, "%s:%ld: time: not after the previous line's (one line per interval, in order)", path, ln);
                rc = 2;
                break;
            }
        }
        celog_row *r = grow(log, &cap);
        if (!r) {
            errmsg_set(err, errlen, "out of memory");
            rc = 1;
            break;
        }
        *r = (celog_row) { .t = t, .prompt_tps = v[0], .gen_tps = v[1], .running = v[2], .waiting = v[3], .kv = v[4] / 100,
                           .line = ln };
    }
    free(buf);
    if (rc == 0 && other)
        snprintf(log->note, sizeof log->note, "%ld lines of data-parallel engines other than 000 left out", other);
    return rc;
}

/* ---- Prometheus scrapes ----------------------------------------------------- */

enum { P_RUN, P_WAIT, P_PROMPT, P_GEN, P_KV, NPROM };
static const char *const PROM_NAMES[NPROM] = { "vllm:num_requests_running", "vllm:num_requests_waiting",
                                               "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
                                               "vllm:gpu_cache_usage_perc" };

/* One scrape being gathered. */
typedef struct scrape {
    double ts;                /* its timestamp, ms */
    double v[NPROM];          /* sums (KV: sum of shares) */
    int n[NPROM];             /* samples of each */
    long line;                /* its first sample's line */
} scrape;

/* Closes scrape S into LOG (a row, rates against PREV, or the base when PREV
 * has none).  Returns 0, 2 (ERR) or 1. */
static int close_scrape(const char *path, scrape *s, scrape *prev, int *have_prev, celog *log, size_t *cap, char *err,
                        size_t errlen)
{
    for (int k = 0; k < NPROM; k++)
        if (!s->n[k]) {
            errmsg_set(err, errlen, "%s:%ld: %s: missing from the scrape at %.0f ms%s", path, s->line, PROM_NAMES[k], s->ts,
                       k == P_KV ? " (or vllm:kv_cache_usage_perc)" : "");
            return 2;
        }
    if (*have_prev) {
        double dt = (s->ts - prev->ts) / 1000;
        for (int k = P_PROMPT; k <= P_GEN; k++)
            if (s->v[k] < prev->v[k]) {
                errmsg_set(err, errlen, "%s:%ld: %s: the counter went down from %.17g to %.17g (a restart: split the series)",
                           path, s->line, PROM_NAMES[k], prev->v[k], s->v[k]);
                return 2;
            }
        celog_row *r = grow(log, cap);
        if (!r) {
            errmsg_set(err, errlen, "out of memory");
            return 1;
        }
        *r = (celog_row) { .t = s->ts / 1000, .prompt_tps = (s->v[P_PROMPT] - prev->v[P_PROMPT]) / dt,
                           .gen_tps = (s->v[P_GEN] - prev->v[P_GEN]) / dt, .running = s->v[P_RUN], .waiting = s->v[P_WAIT],
                           .kv = s->v[P_KV] / s->n[P_KV], .line = s->line };
    }
    *prev = *s;
    *have_prev = 1;
    return 0;
}

static int read_prom(FILE *f, const char *path, celog *log, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t bn = 0, cap = 0;
    long ln = 0;
    ssize_t len;
    int rc = 0, have_prev = 0, open = 0;
    scrape cur, prev;
    memset(&cur, 0, sizeof cur);
    memset(&prev, 0, sizeof prev);
    while (rc == 0 && (len = getline(&buf, &bn, f)) >= 0) {
        ln++;
        char *p = buf;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p) continue;
        size_t nl = strcspn(p, "{ \t");
        int k = -1;
        for (int i = 0; i < NPROM; i++)
            if (strlen(PROM_NAMES[i]) == nl && !strncmp(p, PROM_NAMES[i], nl)) k = i;
        if (nl == strlen("vllm:kv_cache_usage_perc") && !strncmp(p, "vllm:kv_cache_usage_perc", nl)) k = P_KV;
        if (k < 0) continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int) nl, p);
        p += nl;
        if (*p == '{') {   /* labels: quoted values may hold braces */
            int q = 0;
            for (p++; *p && (q || *p != '}'); p++) {
                if (*p == '\\' && q && p[1]) p++;
                else if (*p == '"') q = !q;
            }
            if (*p != '}') {
                errmsg_set(err, errlen, "%s:%ld: %s: unterminated labels", path, ln, name);
                rc = 2;
                break;
            }
            p++;
        }
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || v < 0) {
            errmsg_set(err, errlen, "%s:%ld: %s: value missing, negative or not a finite number", path, ln, name);
            rc = 2;
            break;
        }
        p = end;
        double ts = strtod(p, &end);
        if (end == p || !isfinite(ts)) {
            errmsg_set(err, errlen, "%s:%ld: %s: no timestamp (a scrape series needs every sample's timestamp, ms)", path, ln,
                       name);
            rc = 2;
            break;
        }
        if (k == P_KV && v > 1) {
            errmsg_set(err, errlen, "%s:%ld: %s: %g is above 1 (a share of the blocks, 0..1)", path, ln, name, v);
            rc = 2;
            break;
        }
        if (open && ts != cur.ts) {
            if (ts < cur.ts) {
                errmsg_set(err, errlen, "%s:%ld: %s: timestamp %.0f ms is before the previous scrape's %.0f ms", path, ln, name,
                           ts, cur.ts);
                rc = 2;
                break;
            }
            if ((rc = close_scrape(path, &cur, &prev, &have_prev, log, &cap, err, errlen)) != 0) break;
            open = 0;
        }
        if (!open) {
            memset(&cur, 0, sizeof cur);
            cur.ts = ts;
            cur.line = ln;
            open = 1;
        }
        cur.v[k] += v;
        cur.n[k]++;
    }
    if (rc == 0 && open) rc = close_scrape(path, &cur, &prev, &have_prev, log, &cap, err, errlen);
    free(buf);
    return rc;
}

/* ---- reading -------------------------------------------------------------- */

int celog_read(const char *path, celog *log, char *err, size_t errlen)
{
    memset(log, 0, sizeof *log);
    /* A regular file within the observed-run bound (a FIFO would block). */
    FILE *f = infile_open(path, INFILE_MAX_OBSERVED, err, errlen);
    if (!f) return 2;
    /* The shape, from the first lines that say. */
    char *buf = NULL;
    size_t bn = 0;
    int seen = 0, shape = -1;
    while (shape < 0 && seen < 200 && getline(&buf, &bn, f) >= 0) {
        seen++;
        if (strstr(buf, "Avg prompt throughput:")) shape = CELOG_VLLM;
        else if (!strncmp(buf, "vllm:", 5) || !strncmp(buf, "# HELP vllm:", 12) || !strncmp(buf, "# TYPE vllm:", 12))
            shape = CELOG_PROM;
        else if (seen == 1 && strstr(buf, "prompt_throughput") && strchr(buf, ','))
            shape = CELOG_CSV;
    }
    free(buf);
    int rc;
    if (shape < 0) {
        fclose(f);
        errmsg_set(err, errlen, "%s: not an engine log: no CSV header t,prompt_throughput,..., no vLLM \"Avg prompt "
                   "throughput\" line, no Prometheus vllm: sample", path);
        return 2;
    }
    log->format = (celog_format) shape;
    if (shape == CELOG_CSV) {
        fclose(f);
        csv_ctx c = { .log = log };
        rc = ccsv_read(path, csv_row, &c, err, errlen) == 0 ? 0 : c.oom ? 1 : 2;
    } else {
        rewind(f);
        rc = shape == CELOG_VLLM ? read_vllm(f, path, log, err, errlen) : read_prom(f, path, log, err, errlen);
        fclose(f);
    }
    if (rc == 0 && log->n < 2) {
        errmsg_set(err, errlen, "%s: %zu interval%s: an engine log needs at least %d to hold a window", path, log->n,
                   log->n == 1 ? "" : "s", CELOG_MIN_ROWS + 1);
        rc = 2;
    }
    if (rc) celog_free(log);
    return rc;
}

/* ---- windows -------------------------------------------------------------- */

double celog_floor_ms(const model_spec *m, const gpu_spec *g, double weight_bytes, int tp, double tokens)
{
    catalog_counts c;
    catalog_model_counts(m, &c);
    int w8 = weight_bytes <= 1.0 && g->fp8_tflops > 0;
    double peak = (w8 ? g->fp8_tflops : g->bf16_tflops) * 1e12, bw = g->mem_bw_gbs * 1e9;
    double t = tp >= 1 ? tp : 1;
    double mem = c.active * weight_bytes / t / bw, flops = 2 * c.active * tokens / t / peak;
    return 1000 * fmax(mem, flops);
}

/* 1 when interval I (> 0) of LOG is pure decode, 2 prefill-saturated, 0 neither. */
static int kind_of(const celog *log, size_t i, int can_prefill)
{
    const celog_row *a = &log->row[i - 1], *b = &log->row[i];
    if (b->prompt_tps == 0 && b->gen_tps > 0 && a->running > 0 && b->running > 0) return 1;
    if (can_prefill && b->prompt_tps > 0 && a->waiting > 0 && b->waiting > 0 && (a->kv + b->kv) / 2 < CELOG_KV_FREE) return 2;
    return 0;
}

int celog_windows(const celog *log, const celog_server *srv, celog_window **w, size_t *n, int *below)
{
    *w = NULL;
    *n = 0;
    *below = 0;
    celog_window *out = calloc(log->n + 1, sizeof *out);
    if (!out) return 1;
    double blocks_tokens = (double) srv->kv_blocks * srv->block_tokens, wb = catalog_weight_bytes(srv->weights);
    if (!(wb > 0)) wb = 2;
    size_t i = 1;
    while (i < log->n) {
        int k = kind_of(log, i, srv->budget > 0);
        if (!k) {
            i++;
            continue;
        }
        /* The run of intervals of kind K from I, at most CELOG_MAX_ROWS, a decode
         * run cut where the mean batch moves by more than a quarter. */
        size_t j = i;
        double r0 = (log->row[i - 1].running + log->row[i].running) / 2;
        while (j < log->n && j - i < CELOG_MAX_ROWS && kind_of(log, j, srv->budget > 0) == k) {
            double r = (log->row[j - 1].running + log->row[j].running) / 2;
            if (k == 1 && fabs(r - r0) > 0.25 * r0) break;
            j++;
        }
        if (j - i >= CELOG_MIN_ROWS) {
            double sdt = 0, srd = 0, sgd = 0, skd = 0, std = 0, s1 = 0, s2 = 0;
            for (size_t q = i; q < j; q++) {
                const celog_row *a = &log->row[q - 1], *b = &log->row[q];
                double dt = b->t - a->t, r = (a->running + b->running) / 2, kv = (a->kv + b->kv) / 2;
                double tok = k == 1 ? b->gen_tps : b->prompt_tps + b->gen_tps;
                double one = k == 1 ? 1000 * r / b->gen_tps : 1000 * (double) srv->budget / tok;
                sdt += dt, srd += r * dt, sgd += b->gen_tps * dt, skd += kv * dt, std += tok * dt;
                s1 += one, s2 += one * one;
            }
            celog_window *x = &out[*n];
            int m = (int) (j - i);
            x->prefill = k == 2;
            x->t0 = log->row[i - 1].t;
            x->t1 = log->row[j - 1].t;
            x->line0 = log->row[i].line;
            x->line1 = log->row[j - 1].line;
            x->rows = m;
            double var = (s2 - s1 * s1 / m) / (m - 1);
            x->sd_ms = sqrt(var > 0 ? var : 0);
            if (k == 1) {
                x->batch = srd / sdt;
                x->context = skd * blocks_tokens / srd;
                x->step_ms = 1000 * srd / sgd;
                x->floor_ms = celog_floor_ms(srv->model, srv->gpu, wb, srv->tp, x->batch);
            } else {
                x->batch = 1;
                x->tokens = (double) srv->budget;
                x->step_ms = 1000 * (double) srv->budget * sdt / std;
                x->floor_ms = celog_floor_ms(srv->model, srv->gpu, wb, srv->tp, x->tokens);
            }
            if (x->step_ms < x->floor_ms) (*below)++;
            else (*n)++;
        }
        i = j > i ? j : i + 1;
    }
    *w = out;
    return 0;
}

