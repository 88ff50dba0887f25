/* omx.c -- a run's metrics in the OpenMetrics text format (see omx.h and
 * latsim/omx.h): live cumulative state per pool, copied into a point at each
 * scrape instant, and the writer. */
#include "run/omx.h"
#include "engine/errmsg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double omx_ttft_bounds[OMX_TTFT_B] = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                             1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0 };
const double omx_tpot_bounds[OMX_TPOT_B] = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
                                             2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0 };
const double omx_e2e_bounds[OMX_E2E_B] = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0,
                                           50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

/* A histogram: counts per bucket (the last one above every bound: +Inf), not
 * cumulative; the writer accumulates. */
#define OMX_HMAX 23
typedef struct omx_hist {
    uint64_t n[OMX_HMAX];     /* observations per bucket (bound i-1, bound i] */
    double sum;               /* sum of the observations, s */
    uint64_t count;           /* observations */
} omx_hist;

/* What a scrape of one pool reads (and, in slot npools, of the whole system). */
typedef struct omx_state {
    omx_gauge g;              /* gauges at the instant */
    uint64_t prompt;          /* prompt tokens of requests served, tokens */
    uint64_t gen;             /* output tokens of requests served, tokens */
    uint64_t success;         /* requests served */
    omx_hist ttft, tpot, e2e; /* engine view for a pool; client view in the system slot (tpot unused) */
} omx_state;

struct omx {
    int npools;               /* pools; slot npools is the whole system */
    char **names, **models;   /* label values per pool (owned) */
    int *llm;                 /* 1: an LLM pool (vllm: names) */
    omx_state *live;          /* npools + 1 live states */
    double *t;                /* scrape instants, s of simulated time */
    omx_state *pts;           /* (npools + 1) states per point */
    int *nrep;                /* replicas per pool (0: gauges per pool) */
    int *roff;                /* per pool: its first replica in the flat replica arrays */
    int nr;                   /* replicas of all pools */
    omx_state *rlive;         /* nr live replica states */
    omx_state *rpts;          /* nr replica states per point */
    size_t n, cap;            /* points used, allocated */
    int failed;               /* a point could not be stored */
};

omx *omx_new(int npools, const char *const *names, const char *const *models, const int *llm,
             char *err, size_t errlen)
{
    omx *m = calloc(1, sizeof *m);
    if (!m) goto oom;
    m->npools = npools;
    m->names = calloc((size_t) npools + 1, sizeof *m->names);
    m->models = calloc((size_t) npools + 1, sizeof *m->models);
    m->llm = calloc((size_t) npools + 1, sizeof *m->llm);
    m->live = calloc((size_t) npools + 1, sizeof *m->live);
    m->nrep = calloc((size_t) npools + 1, sizeof *m->nrep);
    m->roff = calloc((size_t) npools + 1, sizeof *m->roff);
    if (!m->names || !m->models || !m->llm || !m->live || !m->nrep || !m->roff) goto oom;
    for (int i = 0; i < npools; i++) {
        m->names[i] = strdup(names[i]);
        m->models[i] = strdup(models && models[i] ? models[i] : names[i]);
        if (!m->names[i] || !m->models[i]) goto oom;
        m->llm[i] = llm[i] != 0;
    }
    return m;
oom:
    omx_free(m);
    errmsg_set(err, errlen, "out of memory (metrics)");
    return NULL;
}

void omx_free(omx *m)
{
    if (!m) return;
    for (int i = 0; m->names && i < m->npools; i++) free(m->names[i]);
    for (int i = 0; m->models && i < m->npools; i++) free(m->models[i]);
    free(m->names);
    free(m->models);
    free(m->llm);
    free(m->live);
    free(m->nrep);
    free(m->roff);
    free(m->rlive);
    free(m->rpts);
    free(m->t);
    free(m->pts);
    free(m);
}

/* Index of the bucket of V among the NB ascending BOUNDS: the first bound >= V
 * (Prometheus buckets are "le"), NB above them all. */
static int bucket_of(const double *bounds, int nb, double v)
{
    int lo = 0, hi = nb;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v <= bounds[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static void hist_add(omx_hist *h, const double *bounds, int nb, double v)
{
    if (!(v >= 0)) return;   /* NAN: nothing to observe */
    h->n[bucket_of(bounds, nb, v)]++;
    h->sum += v;
    h->count++;
}

void omx_served(omx *m, int pool, const omx_req *r)
{
    if (pool < 0 || pool >= m->npools) return;
    omx_state *p = &m->live[pool], *s = &m->live[m->npools];
    if (r->replica >= 0 && r->replica < m->nrep[pool]) {
        omx_state *q = &m->rlive[m->roff[pool] + r->replica];
        q->success++;
        if (r->prompt > 0) q->prompt += (uint64_t) r->prompt;
        if (r->output > 0) q->gen += (uint64_t) r->output;
        hist_add(&q->e2e, omx_e2e_bounds, OMX_E2E_B, r->eng_e2e_s);
        hist_add(&q->ttft, omx_ttft_bounds, OMX_TTFT_B, r->eng_ttft_s);
        hist_add(&q->tpot, omx_tpot_bounds, OMX_TPOT_B, r->tpot_s);
    }
    p->success++;
    s->success++;
    if (r->prompt > 0) { p->prompt += (uint64_t) r->prompt; s->prompt += (uint64_t) r->prompt; }
    if (r->output > 0) { p->gen += (uint64_t) r->output; s->gen += (uint64_t) r->output; }
    hist_add(&p->e2e, omx_e2e_bounds, OMX_E2E_B, r->eng_e2e_s);
    hist_add(&p->ttft, omx_ttft_bounds, OMX_TTFT_B, r->eng_ttft_s);
    hist_add(&p->tpot, omx_tpot_bounds, OMX_TPOT_B, r->tpot_s);
    hist_add(&s->e2e, omx_e2e_bounds, OMX_E2E_B, r->e2e_s);
    hist_add(&s->ttft, omx_ttft_bounds, OMX_TTFT_B, r->ttft_s);
}

int omx_set_replicas(omx *m, int pool, int nrep)
{
    if (pool < 0 || pool >= m->npools || nrep < 0 || m->n > 0) return -1;
    int nr = m->nr - m->nrep[pool] + nrep;
    omx_state *g = realloc(m->rlive, ((size_t) nr + 1) * sizeof *g);
    if (!g) return -1;
    m->rlive = g;
    m->nrep[pool] = nrep;
    m->nr = nr;
    for (int i = 0, off = 0; i < m->npools; off += m->nrep[i], i++) m->roff[i] = off;
    for (int k = 0; k < nr; k++) m->rlive[k] = (omx_state) { .g = { 0, 0, NAN } };
    return 0;
}

void omx_replica_gauges(omx *m, int pool, const omx_gauge *rg)
{
    if (pool < 0 || pool >= m->npools || m->nrep[pool] == 0) return;
    for (int k = 0; k < m->nrep[pool]; k++) m->rlive[m->roff[pool] + k].g = rg[k];
}

int omx_point(omx *m, double t_s, const omx_gauge *g)
{
    size_t w = (size_t) m->npools + 1, nr = (size_t) m->nr;
    size_t k = m->n;
    if (m->n > 0 && t_s <= m->t[m->n - 1]) {   /* the same instant again (the run ended on an interval's end) */
        k = m->n - 1;
    } else if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        double *t = realloc(m->t, cap * sizeof *t);
        if (t) m->t = t;
        omx_state *p = t ? realloc(m->pts, cap * w * sizeof *p) : NULL;
        if (p) m->pts = p;
        omx_state *rp = p && nr ? realloc(m->rpts, cap * nr * sizeof *rp) : m->rpts;
        if (!t || !p || (nr && !rp)) { m->failed = 1; return -1; }
        m->rpts = rp;
        m->cap = cap;
    }
    for (int i = 0; i < m->npools; i++) m->live[i].g = g[i];
    memcpy(&m->pts[k * w], m->live, w * sizeof *m->live);
    if (nr) memcpy(&m->rpts[k * nr], m->rlive, nr * sizeof *m->rlive);
    if (k == m->n) {
        m->t[m->n] = t_s;
        m->n++;
    }
    return 0;
}

int omx_failed(const omx *m) { return m->failed; }
size_t omx_points(const omx *m) { return m ? m->n : 0; }

int omx_check(double duration_s, double interval_s, int npools, int nreplicas, char *err, size_t errlen)
{
    double cells = (floor(duration_s / interval_s) + 2) * ((double) npools + 1 + (double) nreplicas);
    if (cells > OMX_MAX_CELLS) {
        errmsg_set(err, errlen, "the metrics would hold %.3g points x series (%.0f s in intervals of %g s, %d pools, "
                   "%d replicas), more than %.0f: use a longer --interval", cells, duration_s, interval_s, npools,
                   nreplicas, OMX_MAX_CELLS);
        return -1;
    }
    return 0;
}

/* ---- the writer ------------------------------------------------------------ */

/* Writes one label value, escaped as OpenMetrics asks (\\, \" and \n). */
static void put_label(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') fputc('\\', f), fputc(*v, f);
        else if (*v == '\n') fputs("\\n", f);
        else fputc(*v, f);
    }
}

/* The label set of slot I (the system slot has none), with replica="REP"
 * when REP >= 0, and EXTRA (e.g. le="0.5") appended. */
static void put_labels_r(FILE *f, const omx *m, int i, int rep, const char *extra)
{
    if (i == m->npools && !extra) return;
    fputc('{', f);
    if (i < m->npools) {
        fputs("model_name=\"", f);
        put_label(f, m->models[i]);
        fputs("\",pool=\"", f);
        put_label(f, m->names[i]);
        fputc('"', f);
        if (rep >= 0) fprintf(f, ",replica=\"%d\"", rep);
        if (extra) fputc(',', f);
    }
    if (extra) fputs(extra, f);
    fputc('}', f);
}

/* A number as OpenMetrics reads it (integers without exponent; NaN). */
static void put_num(FILE *f, double v)
{
    if (isnan(v)) fputs("NaN", f);
    else if (v == floor(v) && fabs(v) < 1e15) fprintf(f, "%.0f", v);
    else fprintf(f, "%.9g", v);
}

static void put_ts(FILE *f, double epoch_s)
{
    fprintf(f, " %.3f\n", epoch_s);
}

typedef enum { F_RUNNING, F_WAITING, F_KV, F_PROMPT, F_GEN, F_SUCCESS } omx_field;

static double gauge_of(const omx_gauge *g, omx_field fld)
{
    return fld == F_RUNNING ? g->running : fld == F_WAITING ? g->waiting : g->kv_usage;
}

/* One gauge or counter family over the slots WHICH selects (1: LLM pools, 0:
 * other pools, 2: the system).  A pool with replicas (omx_set_replicas) has one
 * series per replica in the LLM families (1), and its pool-wide gauges in the
 * others' (0: latsim's names, the KV one only for such pools). */
static void family(FILE *f, const omx *m, double start, int which, const char *name, const char *type,
                   const char *help, omx_field fld)
{
    int any = 0;
    int gauge = fld == F_RUNNING || fld == F_WAITING || fld == F_KV;
    size_t w = (size_t) m->npools + 1, nr = (size_t) m->nr;
    for (int i = 0; i <= m->npools; i++) {
        int cls = i == m->npools ? 2 : m->llm[i];
        int reps = i < m->npools ? m->nrep[i] : 0;
        int whole = which == 0 && gauge && cls == 1 && reps > 0;   /* an LLM pool's pool-wide gauge */
        if (which == 0 && fld == F_KV && !whole) continue;
        if (cls != which && !whole) continue;
        if (!any) {
            fprintf(f, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
            any = 1;
        }
        int per_rep = !whole && reps > 0;   /* one series per replica, else one for the pool */
        for (int r = per_rep ? 0 : -1; r < (per_rep ? reps : 0); r++) {
            for (size_t k = 0; k < m->n; k++) {
                const omx_state *s = r >= 0 ? &m->rpts[k * nr + (size_t) (m->roff[i] + r)] : &m->pts[k * w + (size_t) i];
                double v = gauge ? gauge_of(&s->g, fld)
                         : fld == F_PROMPT ? (double) s->prompt : fld == F_GEN ? (double) s->gen : (double) s->success;
                fputs(name, f);
                if (strcmp(type, "counter") == 0) fputs("_total", f);
                put_labels_r(f, m, i, r, NULL);
                fputc(' ', f);
                put_num(f, v);
                put_ts(f, start + m->t[k]);
            }
        }
    }
}

typedef enum { H_TTFT, H_TPOT, H_E2E } omx_hfield;

/* One histogram family over the slots WHICH selects (as family(): a pool
 * with replicas has one series per replica). */
static void hfamily(FILE *f, const omx *m, double start, int which, const char *name, const char *help, omx_hfield hf)
{
    const double *b = hf == H_TTFT ? omx_ttft_bounds : hf == H_TPOT ? omx_tpot_bounds : omx_e2e_bounds;
    int nb = hf == H_TTFT ? OMX_TTFT_B : hf == H_TPOT ? OMX_TPOT_B : OMX_E2E_B;
    int any = 0;
    size_t w = (size_t) m->npools + 1, nr = (size_t) m->nr;
    for (int i = 0; i <= m->npools; i++) {
        int cls = i == m->npools ? 2 : m->llm[i];
        if (cls != which) continue;
        if (!any) {
            fprintf(f, "# TYPE %s histogram\n# HELP %s %s\n# UNIT %s seconds\n", name, name, help, name);
            any = 1;
        }
        int reps = i < m->npools ? m->nrep[i] : 0;
        for (int r = reps > 0 ? 0 : -1; r < reps; r++) {
            for (size_t k = 0; k < m->n; k++) {
                const omx_state *s = r >= 0 ? &m->rpts[k * nr + (size_t) (m->roff[i] + r)] : &m->pts[k * w + (size_t) i];
                const omx_hist *h = hf == H_TTFT ? &s->ttft : hf == H_TPOT ? &s->tpot : &s->e2e;
                uint64_t cum = 0;
                char le[48];
                for (int j = 0; j <= nb; j++) {
                    cum += h->n[j];
                    if (j < nb) snprintf(le, sizeof le, "le=\"%.9g\"", b[j]);
                    else snprintf(le, sizeof le, "le=\"+Inf\"");
                    fprintf(f, "%s_bucket", name);
                    put_labels_r(f, m, i, r, le);
                    fprintf(f, " %llu", (unsigned long long) cum);
                    put_ts(f, start + m->t[k]);
                }
                fprintf(f, "%s_sum", name);
                put_labels_r(f, m, i, r, NULL);
                fputc(' ', f);
                put_num(f, h->sum);
                put_ts(f, start + m->t[k]);
                fprintf(f, "%s_count", name);
                put_labels_r(f, m, i, r, NULL);
                fprintf(f, " %llu", (unsigned long long) h->count);
                put_ts(f, start + m->t[k]);
            }
        }
    }
}

int omx_write(const omx *m, FILE *f, double start, char *err, size_t errlen)
{
    /* LLM pools: vLLM's names. */
    family(f, m, start, 1, "vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", F_RUNNING);
    family(f, m, start, 1, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", F_WAITING);
    family(f, m, start, 1, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", F_KV);
    family(f, m, start, 1, "vllm:prompt_tokens", "counter", "Number of prefill tokens processed.", F_PROMPT);
    family(f, m, start, 1, "vllm:generation_tokens", "counter", "Number of generation tokens processed.", F_GEN);
    family(f, m, start, 1, "vllm:request_success", "counter", "Count of successfully processed requests.", F_SUCCESS);
    hfamily(f, m, start, 1, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", H_TTFT);
    hfamily(f, m, start, 1, "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.", H_TPOT);
    hfamily(f, m, start, 1, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", H_E2E);
    /* Other pools: latsim's names. */
    family(f, m, start, 0, "latsim_pool_requests_running", "gauge", "Requests in service in the pool.", F_RUNNING);
    family(f, m, start, 0, "latsim_pool_requests_waiting", "gauge", "Requests waiting in the pool's queue.", F_WAITING);
    family(f, m, start, 0, "latsim_pool_kv_cache_usage_perc", "gauge", "Share of the pool's KV blocks in use.", F_KV);
    family(f, m, start, 0, "latsim_pool_request_success", "counter", "Requests served, attributed to the pool.", F_SUCCESS);
    hfamily(f, m, start, 0, "latsim_pool_request_latency_seconds",
            "Queueing and service time of the requests attributed to the pool.", H_E2E);
    /* The whole system, as its clients see it. */
    family(f, m, start, 2, "latsim_request_success", "counter", "Requests served, all pools.", F_SUCCESS);
    hfamily(f, m, start, 2, "latsim_e2e_request_latency_seconds",
            "End-to-end latency as the client sees it (network and gateways included).", H_E2E);
    hfamily(f, m, start, 2, "latsim_time_to_first_token_seconds", "Time to first token as the client sees it.", H_TTFT);
    fputs("# EOF\n", f);
    if (fflush(f) != 0 || ferror(f)) {
        errmsg_set(err, errlen, "write error");
        return -1;
    }
    return 0;
}
