/* plan.c -- the capacity planner's computations (latsim/plan.h): queueing
 * estimates, the bisection of a monotone value, how close a missing run came.
 * The search around them (configurations, simulations, verdicts, output) is
 * cli/plan.c's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "latsim/plan.h"

double plan_erlang_c(int c, double a)
{
    double b = 1;                           /* Erlang B by recursion */
    for (int k = 1; k <= c; k++) b = a * b / (k + a * b);
    double rho = a / c;
    return b / (1 - rho + rho * b);
}

double plan_erlang_servers(const slo_spec *s, double lambda, double svc_ms, double cv, int c0, int cmax)
{
    double ac = (1 + cv * cv) / 2;
    int any = 0;
    for (int i = 0; i < s->n; i++) any |= s->t[i].kind == SLO_LATENCY && !strcmp(s->t[i].metric, "queue") && !s->t[i].cls[0];
    if (!any) return NAN;
    double mu = 1000.0 / svc_ms, a = lambda / mu;
    for (int c = c0 < 1 ? 1 : c0; c <= cmax; c++) {
        if (a >= c) continue;
        double pw = plan_erlang_c(c, a), rate = c * mu - lambda;   /* P(W > t) = pw exp(-rate t) */
        int ok = 1;
        for (int i = 0; i < s->n && ok; i++) {
            const slo_term *t = &s->t[i];
            if (t->kind != SLO_LATENCY || strcmp(t->metric, "queue") || t->cls[0]) continue;
            double w;
            if (!strcmp(t->stat, "mean")) w = pw / rate;
            else if (!strcmp(t->stat, "max")) continue;
            else {
                double p = !strcmp(t->stat, "p50") ? 0.5 : !strcmp(t->stat, "p90") ? 0.9 : !strcmp(t->stat, "p95") ? 0.95
                         : !strcmp(t->stat, "p99") ? 0.99 : 0.999;
                w = pw <= 1 - p ? 0 : log(pw / (1 - p)) / rate;
            }
            ok = w * ac * 1000 <= t->limit;
        }
        if (ok) return c;
    }
    return cmax;
}

double plan_capacity_need(const report *rep, double rate, int m, const char *pool)
{
    double thru = report_get(rep, "", "throughput_rps", "value");
    if (report_get(rep, "", "saturated", "value") > 0 && thru > 0) return ceil(m * rate / thru / 0.85);
    double u = report_get(rep, pool, REPORT_BUSY_SHARE, "value");
    return u > 0 ? ceil(m * u / 0.75) : NAN;
}

double plan_closeness(const slo_result *slo, const report *rep, double rate)
{
    double w = slo_worst_margin(slo);
    if (isfinite(w)) return w;
    double thru = report_get(rep, "", "throughput_rps", "value");
    return -1000 + (rate > 0 && thru >= 0 ? thru / rate : 0);
}

void plan_worst_term(const slo_result *slo, const report *rep, double rate, char *out, size_t n)
{
    const slo_check *worst = NULL;
    for (int i = 0; i < slo->n; i++) {
        const slo_check *k = &slo->c[i];
        double rel = isnan(k->value) ? -INFINITY : k->margin / k->t->limit;
        if (!worst || rel < (isnan(worst->value) ? -INFINITY : worst->margin / worst->t->limit)) worst = k;
    }
    if (report_get(rep, "", "saturated", "value") > 0 || !worst || isnan(worst->value))
        snprintf(out, n, "saturated (throughput %.4g of %.4g req/s)", report_get(rep, "", "throughput_rps", "value"), rate);
    else
        snprintf(out, n, "%s %.4g %s %.4g", worst->t->key, worst->value,
                 worst->met ? "within" : worst->value > worst->t->limit ? ">" : "<", worst->t->limit);
}

int plan_mono_next(plan_mono *b, const plan_mono_ctx *x)
{
    if (b->hi <= x->range_hi && b->hi - b->lo <= 1) {
        b->done = 1;
        b->answer = b->hi;
        return 0;
    }
    if (b->lo >= x->range_hi) { b->done = 1; return 0; }       /* even the largest misses */
    if (x->may_prune && x->fixed + x->unit * (b->lo + 1) >= x->best_cost && !(x->finishing && b->hi <= x->range_hi)) {
        b->pruned = 1;
        return 0;
    }
    if (b->hi > x->range_hi) {                                  /* nothing meets yet */
        if (!b->hint_used && !isnan(b->hint)) {
            b->hint_used = 1;
            int h = (int) b->hint;
            if (h > b->lo && h <= x->range_hi) return h;
        }
        int v = b->lo < 1 ? x->range_lo : b->lo * 2;
        if (v <= b->lo) v = b->lo + 1;
        return v > x->range_hi ? x->range_hi : v;
    }
    if (!b->lo_known && !b->below_tried) {                      /* the estimate met it: check one below */
        b->below_tried = 1;
        return b->hi - 1;
    }
    return b->lo + (b->hi - b->lo) / 2;
}

int plan_mono_record(plan_mono *b, int m, int met)
{
    if (met) {
        if (m < b->hi) { b->hi = m; return 1; }
    } else if (m > b->lo) {
        b->lo = m;
        b->lo_known = 1;
        return 1;
    }
    return 0;
}

int plan_goodput_factors(int round, double lo, double hi, double *f)
{
    static const double coarse[] = { 1.1, 1.25, 1.5, 2, 3, 4 };
    int nf = 0;
    if (round == 0) for (size_t i = 0; i < sizeof coarse / sizeof coarse[0]; i++) f[nf++] = coarse[i];
    else if (round == 1 && !isnan(hi)) for (int i = 1; i <= 4; i++) f[nf++] = lo + (hi - lo) * i / 5.0;
    return nf;
}

void plan_goodput_bracket(const double *f, const int *met, int n, double *lo, double *hi)
{
    for (int i = 0; i < n; i++)
        if (!met[i] && (isnan(*hi) || f[i] < *hi)) *hi = f[i];
    for (int i = 0; i < n; i++)
        if (met[i] && f[i] > *lo && (isnan(*hi) || f[i] < *hi)) *lo = f[i];
}

const char *plan_verdict(const plan_verdict_in *v, int *value, char *why, size_t n)
{
    const plan_mono *b = v->b;
    *value = 0;
    if (v->refused) { snprintf(why, n, "ruled out: %s", v->refused); return "ruled_out"; }
    if (v->bound[0]) { snprintf(why, n, "cannot carry the load: %s", v->bound); return "below_bound"; }
    if (v->failed_confirmation) {
        snprintf(why, n, "met with seed %llu but not with every one of %d seeds up to %s=%d", (unsigned long long) v->seed0,
                 v->seeds, v->mono_name, b->answer);
        return "failed_confirmation";
    }
    if (!v->has_mono) {
        if (v->met) { snprintf(why, n, "meets the SLO: $%.2f/h", v->fixed); return "meets"; }
        snprintf(why, n, "SLO missed: %s", v->term_closest ? v->term_closest : "not simulated");
        return "missed";
    }
    if (b->answer > 0) {
        *value = b->answer;
        /* Why one fewer does not do: a missing evaluation there (any seed). */
        size_t l = (size_t) snprintf(why, n, "meets the SLO at %s=%d: $%.2f/h", v->mono_name, b->answer,
                                     v->fixed + v->unit * b->answer);
        if (v->term_below && l < n) {
            l += (size_t) snprintf(why + l, n - l, " (at %d: %s", b->answer - 1, v->term_below);
            if (l < n && v->below_seed != v->seed0)
                l += (size_t) snprintf(why + l, n - l, " with seed %llu", (unsigned long long) v->below_seed);
            if (l < n) snprintf(why + l, n - l, ")");
        } else if (b->answer - 1 < v->range_lo && l < n)
            snprintf(why + l, n - l, " (the smallest searched)");
        return "meets";
    }
    if (b->pruned) {
        int lb = b->lo + 1 > v->range_lo ? b->lo + 1 : v->range_lo;
        double wc = v->winner_cost, lbc = v->fixed + v->unit * lb;
        if (lbc >= wc)
            snprintf(why, n, "pruned: the cheapest possible (%s=%d, its lower bound) costs $%.2f/h, more than the best found ($%.2f/h)",
                     v->mono_name, lb, lbc, wc);
        else
            snprintf(why, n, "pruned: the cheapest possible (%s=%d, its lower bound) costs $%.2f/h, more than the best found with "
                     "the first seed ($%.2f/h), which confirmation raised to $%.2f/h", v->mono_name, lb, lbc, v->best_cost, wc);
        return "pruned";
    }
    if (v->term_lo)
        snprintf(why, n, "SLO missed at %s=%d%s: %s", v->mono_name, b->lo, b->lo >= v->range_hi ? " (the largest searched)" : "",
                 v->term_lo);
    else snprintf(why, n, "not simulated");
    return "missed";
}
