/* stats.c -- streaming statistics of one metric (see stats.h).
 *
 * Count, mean, sd, min and max are kept as running moments (Welford's update):
 * gsl_rstat would give the same numbers but also maintains a P^2 median estimate
 * on every add, which tripled the cost of this hot-path call.
 *
 * Quantiles come from a histogram whose bins split every octave [2^e, 2^(e+1))
 * of milliseconds into 1024 equal parts, from STAT_MIN_MS = 2^-20 up to
 * STAT_MAX_MS = 2^34 (55 296 bins).  The counts of an octave are allocated when
 * the first value falls in it (8 KB each): a metric whose values span a few
 * octaves costs a few tens of KB, not the 0.9 MB a gsl_histogram of all the
 * bins (with its range array) took, so a scenario of 1000 pools no longer needs
 * gigabytes for statistics it barely fills.  A value's
 * bin is read straight off its IEEE-754 bits (exponent and top 10 mantissa bits):
 * exact, no logarithm, no rounding.  Consecutive edges differ by a factor of at
 * most 1 + 1/1024, and a quantile is reported at the geometric middle of the bin
 * holding the sample of that rank, so it is within a factor sqrt(1 + 1/1024)
 * (0.049 %) of the exact sample quantile; it is then clamped to the exact
 * [min, max].  Values below STAT_MIN_MS are only counted, and reported as 0;
 * values at or above STAT_MAX_MS share the top bin (their quantiles are bounded
 * by the exact max).
 */
#include "engine/stats.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB_BITS 10                       /* 2^10 bins per octave */
#define EXP_MIN (-20)                     /* STAT_MIN_MS = 2^EXP_MIN */
#define EXP_MAX 34                        /* STAT_MAX_MS = 2^EXP_MAX */
#define NOCT (EXP_MAX - EXP_MIN)           /* octaves */
#define OCT_BINS ((size_t) 1 << SUB_BITS)

typedef struct moments {
    size_t n;                 /* values added */
    double mean;              /* running mean, ms */
    double m2;                /* sum of squared deviations from the mean, ms^2 */
    double min, max;          /* extremes, ms (+inf and -inf before the first value, so
                                 that stat_add compares without testing the count) */
} moments;

struct stat_acc {
    moments m;                /* exact count, mean, sd, min, max of all values (ms) */
    uint64_t *oct[NOCT];      /* per octave, OCT_BINS counts of values in it (NULL until one
                                 falls there); values >= STAT_MAX_MS count in the last bin */
    double nlow;              /* count of values below STAT_MIN_MS (reported as 0) */
    int oom;                  /* an octave could not be allocated: its values are lost to
                                 the quantiles (moments stay exact) */
};

stat_acc *stat_new(void)
{
    stat_acc *s = calloc(1, sizeof(stat_acc));
    if (s) {
        s->m.min = INFINITY;
        s->m.max = -INFINITY;
    }
    return s;
}

void stat_free(stat_acc *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < NOCT; i++)
        free(s->oct[i]);
    free(s);
}

/* The lower edge of bin I of octave O, ms: exact (a 10-bit fraction times a power of 2). */
static double edge(int o, size_t i)
{
    return ldexp(1.0 + (double) i / (double) OCT_BINS, EXP_MIN + o);
}

/* Octave O's counts, allocated on first use, and the address of bin I in it.
 * Out of memory: s->oom set, and a scratch count that no statistic reads.  Out
 * of line and cold: the hot path (bin_of) then needs no saved registers. */
static uint64_t *__attribute__((noinline, cold)) new_octave(stat_acc *s, int o, size_t i)
{
    if ((s->oct[o] = calloc(OCT_BINS, sizeof **s->oct)) == NULL) {
        static uint64_t lost;         /* out of memory: counts go nowhere (s->oom says so) */
        s->oom = 1;
        return &lost;
    }
    return &s->oct[o][i];
}

/* The count of the bin that holds V (STAT_MIN_MS <= V, or +inf), its octave
 * allocated on first use (new_octave).  The bin from the bits: (exponent -
 * EXP_MIN) octaves of 2^SUB_BITS bins, plus the top SUB_BITS bits of the
 * mantissa; this is exactly the bin whose edges (edge()) hold V. */
static inline uint64_t *bin_of(stat_acc *s, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int64_t e = (int64_t) ((bits >> 52) & 0x7ff) - 1023;
    int o = (int) (e - EXP_MIN);
    size_t i = (size_t) ((bits >> (52 - SUB_BITS)) & (OCT_BINS - 1));
    if (e >= EXP_MAX) {                     /* at or above STAT_MAX_MS (or infinite): the top bin */
        o = NOCT - 1;
        i = OCT_BINS - 1;
    }
    if (s->oct[o] == NULL) return new_octave(s, o, i);
    return &s->oct[o][i];
}

void stat_add(stat_acc *s, double v)
{
    /* Negative values (rounding noise) and NaN count as 0, so that every call is
     * counted once and the mean stays a number. */
    if (!(v >= 0))
        v = 0;
    moments *m = &s->m;
    m->n++;
    double d = v - m->mean;
    /* n < 2^63: the signed conversion is exact and one instruction (the
     * unsigned one is a branch and several). */
    m->mean += d / (double) (int64_t) m->n;
    m->m2 += d * (v - m->mean);
    if (v < m->min) m->min = v;       /* the first value too: min starts at +inf (an infinite */
    if (v > m->max) m->max = v;       /* first value leaves it at +inf, as it would set it) */
    if (v < STAT_MIN_MS) {
        s->nlow += 1;
        return;
    }
    (*bin_of(s, v))++;
}

int stat_merge(stat_acc *dst, const stat_acc *src)
{
    const moments *b = &src->m;
    if (b->n == 0)
        return 0;
    moments *a = &dst->m;
    if (a->n == 0) {
        *a = *b;
    } else {
        double na = (double) (int64_t) a->n, nb = (double) (int64_t) b->n, n = na + nb;
        double d = b->mean - a->mean;
        a->mean += d * nb / n;
        a->m2 += b->m2 + d * d * na * nb / n;
        a->n += b->n;
        if (b->min < a->min) a->min = b->min;
        if (b->max > a->max) a->max = b->max;
    }
    dst->nlow += src->nlow;
    dst->oom |= src->oom;
    for (int o = 0; o < NOCT; o++) {
        if (!src->oct[o]) continue;
        if (!dst->oct[o] && !(dst->oct[o] = calloc(OCT_BINS, sizeof **dst->oct))) {
            dst->oom = 1;
            return -1;
        }
        for (size_t i = 0; i < OCT_BINS; i++) dst->oct[o][i] += src->oct[o][i];
    }
    return 0;
}

void stat_add_n(stat_acc *s, double v, uint64_t n)
{
    if (n == 0)
        return;
    if (n == 1) {
        stat_add(s, v);
        return;
    }
    if (!(v >= 0))
        v = 0;
    /* Weighted Welford update (West 1979): N values equal to v at once.  The
     * counts are below 2^63: their signed conversions are exact (and one
     * instruction each); min and max start at +/-inf, so the first value sets
     * them without a test. */
    moments *m = &s->m;
    m->n += (size_t) n;
    double d = v - m->mean;
    double w = (double) (int64_t) n;
    m->mean += d * w / (double) (int64_t) m->n;
    m->m2 += d * (v - m->mean) * w;
    if (v < m->min) m->min = v;
    if (v > m->max) m->max = v;
    if (v < STAT_MIN_MS) {
        s->nlow += w;
        return;
    }
    *bin_of(s, v) += n;
}

void stat_reset(stat_acc *s)
{
    s->m = (moments) { .min = INFINITY, .max = -INFINITY };
    for (int i = 0; i < NOCT; i++)
        if (s->oct[i] != NULL)
            memset(s->oct[i], 0, OCT_BINS * sizeof **s->oct);
    s->nlow = 0;
}

int stat_failed(const stat_acc *s)
{
    return s != NULL && s->oom;
}

uint64_t stat_count(const stat_acc *s)
{
    return (uint64_t) s->m.n;
}

double stat_mean(const stat_acc *s)
{
    return s->m.n > 0 ? s->m.mean : 0;
}

/* Fills OUT[i] with the quantile QS[i] for M probabilities given in increasing
 * order, in one scan of the bins.  Every OUT[i] is 0 when S is empty. */
static void quantiles(const stat_acc *s, const double *qs, double *out, size_t m)
{
    size_t n = s->m.n;
    if (n == 0) {
        for (size_t i = 0; i < m; i++)
            out[i] = 0;
        return;
    }
    double vmin = s->m.min, vmax = s->m.max;
    double cum = s->nlow;   /* values below the current bin */
    int o = 0;              /* current octave */
    size_t b = 0;           /* current bin in it */
    for (size_t i = 0; i < m; i++) {
        double q = qs[i] < 0 ? 0 : qs[i] > 1 ? 1 : qs[i];
        /* The 1-based rank ceil(q n), in [1, n].  q n is shrunk by a few ulps first
         * so that a product that should be whole (0.9 * 10^6) but rounded up does
         * not move to the next rank.  Counts are whole numbers below 2^53, so
         * comparing them as doubles is exact. */
        double rank = ceil(q * (double) n * (1 - 4 * DBL_EPSILON));
        if (rank < 1)
            rank = 1;
        if (rank > (double) n)
            rank = (double) n;
        if (rank <= s->nlow) {
            out[i] = 0;
            continue;
        }
        if (rank == (double) n) {   /* the largest sample is known exactly */
            out[i] = vmax;
            continue;
        }
        if (rank == 1) {            /* and so is the smallest (nlow is 0 here) */
            out[i] = vmin;
            continue;
        }
        /* Advance to the bin holding the sample of that rank (empty octaves are
         * skipped whole); the last bin catches what rounding leaves over. */
        while (o < NOCT) {
            if (s->oct[o] == NULL) {
                o++;
                b = 0;
                continue;
            }
            if (cum + (double) s->oct[o][b] >= rank)
                break;
            cum += (double) s->oct[o][b];
            if (++b == OCT_BINS) {
                o++;
                b = 0;
            }
        }
        if (o == NOCT) {
            o = NOCT - 1;
            b = OCT_BINS - 1;
        }
        double v = sqrt(edge(o, b) * (b + 1 < OCT_BINS ? edge(o, b + 1) : ldexp(1.0, EXP_MIN + o + 1)));
        out[i] = v < vmin ? vmin : v > vmax ? vmax : v;
    }
}

double stat_share_above(const stat_acc *s, double x)
{
    size_t n = s->m.n;
    if (n == 0) return NAN;
    if (x >= s->m.max) return 0;
    if (x < s->m.min) return 1;
    double above = 0;
    for (int o = 0; o < NOCT; o++) {
        if (!s->oct[o] || edge(o + 1, 0) <= x) continue;   /* octave wholly at or below x */
        for (size_t i = 0; i < OCT_BINS; i++)
            if (edge(o, i) > x) above += (double) s->oct[o][i];
    }
    return above / (double) n;
}

double stat_quantile(const stat_acc *s, double q)
{
    double v;
    quantiles(s, &q, &v, 1);
    return v;
}

const double stat_cdf_probs[STAT_NCDF] = {
    0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12, 0.13, 0.14, 0.15, 0.16, 0.17,
    0.18, 0.19, 0.20, 0.21, 0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28, 0.29, 0.30, 0.31, 0.32, 0.33, 0.34,
    0.35, 0.36, 0.37, 0.38, 0.39, 0.40, 0.41, 0.42, 0.43, 0.44, 0.45, 0.46, 0.47, 0.48, 0.49, 0.50, 0.51,
    0.52, 0.53, 0.54, 0.55, 0.56, 0.57, 0.58, 0.59, 0.60, 0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.68,
    0.69, 0.70, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77, 0.78, 0.79, 0.80, 0.81, 0.82, 0.83, 0.84, 0.85,
    0.86, 0.87, 0.88, 0.89, 0.90, 0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995, 0.999,
};

/* 1 - 0.01 x 10^(-k/8), k = 1 .. 24, to 17 digits. */
const double stat_tail_probs[STAT_NTAIL] = {
    0.99250105790667542, 0.99437658674809648, 0.99578303496571419, 0.99683772233983159,
    0.99762862629433835, 0.99822172058996106, 0.99866647856783664, 0.999,
    0.99925010579066753, 0.9994376586748096, 0.9995783034965714, 0.99968377223398319,
    0.99976286262943381, 0.99982217205899615, 0.9998666478567837, 0.99990000000000001,
    0.9999250105790668, 0.99994376586748102, 0.99995783034965713, 0.99996837722339826,
    0.99997628626294344, 0.99998221720589964, 0.99998666478567833, 0.99999000000000005,
};

void stat_summarize(const stat_acc *s, stat_summary *out)
{
    quantiles(s, stat_cdf_probs, out->cdf, STAT_NCDF);
    quantiles(s, stat_tail_probs, out->tail, STAT_NTAIL);
    static const double qs[5] = {0.50, 0.90, 0.95, 0.99, 0.999};
    double v[5];
    quantiles(s, qs, v, 5);
    size_t n = s->m.n;
    out->n = (uint64_t) n;
    out->mean = n > 0 ? s->m.mean : 0;
    out->sd = n > 1 ? sqrt(s->m.m2 / (double) (n - 1)) : 0;
    out->p50 = v[0];
    out->p90 = v[1];
    out->p95 = v[2];
    out->p99 = v[3];
    out->p999 = v[4];
    out->max = n > 0 ? s->m.max : 0;
}
