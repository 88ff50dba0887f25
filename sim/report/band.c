/* band.c -- prediction bands (see latsim/band.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "latsim/band.h"

/* sigma of a normal law whose median absolute deviation is ln(1 + PCT / 100):
 * the median of |N(0, s)| is 0.6745 s. */
static double sigma_from_median(double pct) { return log1p(pct / 100) / 0.6744897501960817; }

/* sigma of a normal law whose mean absolute deviation is ln(1 + PCT / 100):
 * E|N(0, s)| = s sqrt(2 / pi). */
static double sigma_from_mean(double pct) { return log1p(pct / 100) * sqrt(M_PI / 2); }

void band_of_model(const char *kind, double mape, int extrapolated, band_model *out)
{
    memset(out, 0, sizeof *out);
    int model = kind && strcmp(kind, "roofline") && strcmp(kind, "linear");
    if (model && isfinite(mape) && mape > 0) {
        out->sigma = sigma_from_mean(mape);
        out->validated = 1;
        if (extrapolated) out->sigma *= BAND_CARRY_WIDEN;
        snprintf(out->basis, sizeof out->basis, "%s model's cross-validated error %.3g %%%s", kind, mape,
                 extrapolated ? ", widened x1.5: carried outside its measurements" : "");
    } else {
        out->sigma = sigma_from_median(BAND_DEFAULT_MEDIAN_PCT);
        snprintf(out->basis, sizeof out->basis, "%s: no validated error, the default (median step-time error %.0f %%, "
                 "the roofline's on real runs)", kind && kind[0] ? kind : "unknown model", BAND_DEFAULT_MEDIAN_PCT);
    }
    out->lo = exp(-BAND_Z90 * out->sigma);
    out->hi = exp(BAND_Z90 * out->sigma);
}

int band_of_report(const report *r, band_model *out)
{
    memset(out, 0, sizeof *out);
    out->lo = out->hi = 1;
    snprintf(out->basis, sizeof out->basis, "no step-time model (no LLM pool)");
    int pools = 0;
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *st = &r->rows[i];
        if (strcmp(st->metric, "cost_model.kind") || !st->text) continue;
        band_model b;
        band_of_model(st->text, report_get(r, st->scope, "cost_model.mape", "value"),
                      report_get(r, st->scope, "cost_model.extrapolated", "value") > 0, &b);
        if (pools++ == 0 || b.sigma > out->sigma) *out = b;
    }
    return pools;
}

void band_interval(double value, double v1, double v2, double seed90, double *lo, double *hi)
{
    if (!isfinite(value)) { *lo = *hi = NAN; return; }
    double s = isfinite(seed90) && seed90 > 0 ? seed90 : 0;
    double dlo = 0, dhi = 0;
    int unknown = 0;
    const double v[2] = { v1, v2 };
    for (int k = 0; k < 2; k++) {
        if (!isfinite(v[k])) { unknown = 1; continue; }
        if (v[k] < value && value - v[k] > dlo) dlo = value - v[k];
        if (v[k] > value && v[k] - value > dhi) dhi = v[k] - value;
    }
    *lo = value - sqrt(dlo * dlo + s * s);
    *hi = value + sqrt(dhi * dhi + s * s);
    if (unknown) {
        /* A saturated end: the metric grows without bound (latency) or falls (throughput) there. */
        if (isfinite(v1) || isfinite(v2)) {
            double known = isfinite(v1) ? v1 : v2;
            if (known <= value) *hi = INFINITY;
            else *lo = 0;
        } else *hi = INFINITY;
    }
    if (*lo < 0) *lo = 0;
}

double band_seed90(const report *r, const char *scope, const char *metric, const char *stat)
{
    if (r->replications < 2) return NAN;
    for (size_t i = 0; i < r->n; i++) {
        const store_stat *st = &r->rows[i];
        if (!strcmp(st->scope, scope) && !strcmp(st->metric, metric) && !strcmp(st->stat, stat))
            return isfinite(st->ci95) ? st->ci95 * BAND_Z90 / BAND_Z95 : NAN;
    }
    return NAN;
}

int band_covers(double lo, double hi, double x)
{
    return !isnan(lo) && !isnan(hi) && x >= lo && x <= hi;
}
