/* col_seednoise.c -- the run collector of a single run's seed noise by batch
 * means (collect.h; docs/bands.md): how far the run's mean and P99 of E2E,
 * TTFT and TPOT, and its throughput, would move with another seed, measured
 * from the run itself, so that a prediction band of one replication holds its
 * seed noise too (`run --band`; scenario_set_batch_means).
 *
 * Method (batch means; Law and Kelton, "Simulation Modeling and Analysis",
 * ch. 9.5): the measured served requests' values, in the order they leave,
 * are cut into consecutive batches of b values; the batches' means are nearly
 * independent when b spans the queues' memory, so the mean's standard error is
 * sd(batch means) / sqrt(K) over K batches, and its 90 % half-width that x the
 * Student t quantile with K - 1 degrees of freedom.  b doubles whenever the
 * batches reach SN_MAX (pairs merge), so K stays within SN_MAX / 2 .. SN_MAX
 * whatever the run's length (the last, partial batch is left out).
 * A quantile's half-width is the order statistics' binomial interval with the
 * sample size divided by the variance inflation the batches measure, phi = b x
 * var(batch means) / var(values) (at least 1): ranks n q -+ z sqrt(n q (1 - q)
 * phi), read off the run's quantiles (stat_summary's cdf and tail points,
 * linearly between them).  Throughput: the window cut into SN_MAX / 2 .. SN_MAX
 * equal spans, its batch means the spans' completions per second.  The
 * results are the system's rows seed_noise.* (sn_emit; docs/bands.md).
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "run/collect.h"

#define SN_MAX 32              /* batches kept at most (pairs merge beyond) */
#define SN_MIN 10              /* fewer complete batches: no estimate (NAN) */

/* Batch means of one metric. */
typedef struct bmeans {
    double sum[SN_MAX];       /* each complete batch's sum of values */
    int k;                    /* complete batches */
    uint64_t b;               /* values per batch */
    double cur;               /* the open batch's sum */
    uint64_t ncur;            /* its values */
} bmeans;

static void bm_add(bmeans *m, double v)
{
    if (!isfinite(v)) return;
    if (m->b == 0) m->b = 1;
    m->cur += v;
    if (++m->ncur < m->b) return;
    m->sum[m->k++] = m->cur;
    m->cur = 0;
    m->ncur = 0;
    if (m->k == SN_MAX) {   /* pairs merge: half as many batches, twice as long */
        for (int i = 0; i < SN_MAX / 2; i++) m->sum[i] = m->sum[2 * i] + m->sum[2 * i + 1];
        m->k = SN_MAX / 2;
        m->b *= 2;
    }
}

/* The 90 % half-width of the mean of M (NAN: fewer than SN_MIN batches), and the
 * variance inflation phi against values of standard deviation SD into *PHI. */
static double bm_half90(const bmeans *m, double sd, double *phi)
{
    *phi = 1;
    if (m->k < SN_MIN) return NAN;
    double mean[SN_MAX];
    for (int i = 0; i < m->k; i++) mean[i] = m->sum[i] / (double) m->b;
    double s = gsl_stats_sd(mean, 1, (size_t) m->k);
    if (sd > 0) *phi = fmax(1, (double) m->b * s * s / (sd * sd));
    return gsl_cdf_tdist_Pinv(0.95, m->k - 1) * s / sqrt(m->k);
}

/* Quantile P of summary S, linearly between its cdf and tail points (sorted
 * together), its largest point beyond them. */
static double quantile_at(const stat_summary *s, double p)
{
    double q[STAT_NCDF + STAT_NTAIL], v[STAT_NCDF + STAT_NTAIL];
    int n = 0;
    for (int i = 0; i < STAT_NCDF + STAT_NTAIL; i++) {
        double qi = i < STAT_NCDF ? stat_cdf_probs[i] : stat_tail_probs[i - STAT_NCDF];
        double vi = i < STAT_NCDF ? s->cdf[i] : s->tail[i - STAT_NCDF];
        int j = n++;
        while (j > 0 && q[j - 1] > qi) q[j] = q[j - 1], v[j] = v[j - 1], j--;
        q[j] = qi, v[j] = vi;
    }
    if (p <= q[0]) return v[0];
    for (int i = 1; i < n; i++)
        if (p <= q[i]) return v[i - 1] + (v[i] - v[i - 1]) * (p - q[i - 1]) / (q[i] - q[i - 1]);
    return s->max;
}

/* The 90 % half-width of quantile P of S whose batches inflate the variance by PHI:
 * half the distance between the quantiles at the interval's two ranks. */
static double quantile_half90(const stat_summary *s, double p, double phi)
{
    if (s->n < 2) return NAN;
    double d = gsl_cdf_ugaussian_Pinv(0.95) * sqrt(p * (1 - p) * phi / (double) s->n);
    double lo = quantile_at(s, fmax(0, p - d)), hi = quantile_at(s, fmin(1, p + d));
    return (hi - lo) / 2;
}

enum { SN_E2E, SN_TTFT, SN_TPOT, SN_N };

typedef struct seednoise {
    const run_env *env;
    bmeans m[SN_N];           /* per metric, in leaving order */
    uint64_t done;            /* measured served requests so far */
    simtime_t opened;         /* when the window opened, ns (-1: not yet) */
    simtime_t *at;            /* when each request served in the window left, ns (the throughput spans) */
    uint64_t nat, cap;
    int lost;                 /* 1: a time could not be kept (out of memory): no throughput estimate */
} seednoise;

static int sn_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    seednoise *x = self;
    x->env = env;
    x->opened = -1;
    return env->sc->batch_means ? 0 : COL_IDLE;
}

static void sn_leave(void *self, const request *r, const leave_rec *l)
{
    seednoise *x = self;
    if (r->measured) {
        bm_add(&x->m[SN_E2E], l->e2e_ms);
        bm_add(&x->m[SN_TTFT], l->ttft_ms);
        bm_add(&x->m[SN_TPOT], l->tpot_ms);
    }
    if (x->opened < 0 || x->lost) return;
    if (x->nat == x->cap) {
        uint64_t c = x->cap ? 2 * x->cap : 1024;
        simtime_t *p = realloc(x->at, c * sizeof *p);
        if (!p) {
            x->lost = 1;
            return;
        }
        x->at = p;
        x->cap = c;
    }
    x->at[x->nat++] = l->now;
}

static int sn_lost(const void *self) { return ((const seednoise *) self)->lost; }

static void sn_open(void *self)
{
    seednoise *x = self;
    x->opened = evq_now(x->env->q);
}

/* The 90 % half-width of the throughput from the completions' times: the window
 * [T0, T1] cut into spans, their rates' batch means. */
static double rps_half90(const seednoise *x, double t0, double t1)
{
    if (x->lost || x->nat < 2 * SN_MIN || !(t1 > t0)) return NAN;
    int k = SN_MAX;
    double rate[SN_MAX] = { 0 }, w = (t1 - t0) / k;
    for (uint64_t i = 0; i < x->nat; i++) {
        double t = (double) x->at[i] * 1e-9;
        int j = (int) ((t - t0) / w);
        if (j >= 0 && j < k) rate[j] += 1 / w;
    }
    return gsl_cdf_tdist_Pinv(0.95, k - 1) * gsl_stats_sd(rate, 1, (size_t) k) / sqrt(k);
}

/* Its rows, the system's, which the report leaves out (run --band reads them
 * from the result): seed_noise.batches (complete batches of the E2E values),
 * seed_noise.phi (E2E's variance inflation by autocorrelation, >= 1), the 90 %
 * half-widths seed_noise.M_mean and seed_noise.M_p99 of M = e2e, ttft, tpot
 * (ms; NAN where the run had too few batches), and seed_noise.throughput_rps
 * (requests/s). */
static int sn_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    seednoise *x = self;
    static const char *const LAT[SN_N] = { "e2e", "ttft", "tpot" };   /* the system's latency rows (col_latency) */
    static const char *const NAME[SN_N][2] = { { "seed_noise.e2e_mean", "seed_noise.e2e_p99" },
                                               { "seed_noise.ttft_mean", "seed_noise.ttft_p99" },
                                               { "seed_noise.tpot_mean", "seed_noise.tpot_p99" } };
    double mean[SN_N], p99[SN_N], phi_e2e = 1;
    for (int i = 0; i < SN_N; i++) {
        double phi;
        stat_summary s;
        if (sim_result_latency(out, "", LAT[i], &s) != 0) {   /* not reported: no LLM pool */
            mean[i] = p99[i] = NAN;
            continue;
        }
        mean[i] = bm_half90(&x->m[i], s.sd, &phi);
        p99[i] = isfinite(mean[i]) ? quantile_half90(&s, 0.99, phi) : NAN;
        if (i == SN_E2E) phi_e2e = phi;
    }
    double t1 = sim_result_value(out, "sim_time_s"), t0 = x->opened >= 0 ? (double) x->opened * 1e-9 : 0;
    double win = sim_result_value(out, "window_s");   /* the run's rows (sim.c) */
    if (win > 0) t1 = t0 + win;
    sim_rows *w = &out->rows;
    if (sim_rows_add(w, "", "seed_noise.batches", x->m[SN_E2E].k, 0) || sim_rows_add(w, "", "seed_noise.phi", phi_e2e, 0))
        return -1;
    for (int i = 0; i < SN_N; i++)
        if (sim_rows_add(w, "", NAME[i][0], mean[i], 0) || sim_rows_add(w, "", NAME[i][1], p99[i], 0)) return -1;
    return sim_rows_add(w, "", "seed_noise.throughput_rps", rps_half90(x, t0, t1), 0);
}

static void sn_free(void *self)
{
    seednoise *x = self;
    free(x->at);
}

const run_collector col_seednoise = {
    .name = "seed_noise",
    .size = sizeof(seednoise),
    .init = sn_init,
    .leave = sn_leave,
    .window_open = sn_open,
    .lost = sn_lost,
    .emit = sn_emit,
    .free = sn_free,
};
