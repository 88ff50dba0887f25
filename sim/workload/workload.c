/* workload.c -- the workload source: arrival times (Poisson, gamma, constant
 * at a fixed or time-varying rate, trace replay, closed-loop users), request
 * attributes (trace rows or class distributions), and the repeat-token count
 * of traces with block hash ids.  See workload.h. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include "engine/rng.h"
#include "workload/workload.h"

/* ---- rate over time ----------------------------------------------------------- */

/* A time "12", "12s", "10m", "1.5h" in seconds.  Returns 0 or -1. */
static int parse_time(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || strpbrk(s, "xX")) return -1;   /* decimal only, not "0x10" */
    while (isspace((unsigned char) *end)) end++;
    double mul = 1;
    if (*end == 's') { end++; }
    else if (*end == 'm') { mul = 60; end++; }
    else if (*end == 'h') { mul = 3600; end++; }
    while (isspace((unsigned char) *end)) end++;
    if (*end) return -1;
    *out = v * mul;
    return 0;
}

/* A number: 0 or -1. */
static int parse_number(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || strpbrk(s, "xX")) return -1;   /* decimal only, not "0x10" */
    while (isspace((unsigned char) *end)) end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

/* Trims S in place; returns it. */
static char *trim(char *s)
{
    while (isspace((unsigned char) *s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char) s[n - 1])) s[--n] = '\0';
    return s;
}

/* Fills the cumulative expected arrivals at each point. */
static void rate_cum_points(wl_rate *r)
{
    r->cum[0] = 0;
    for (int i = 1; i < r->n; i++) {
        double h = r->t[i] - r->t[i - 1];
        r->cum[i] = r->cum[i - 1] + (r->kind == RATE_STEPS ? r->r[i - 1] * h : 0.5 * (r->r[i - 1] + r->r[i]) * h);
    }
}

static int parse_points(char *body, wl_rate *out, char *err, size_t errlen)
{
    int cap = 8;
    out->t = malloc((size_t) cap * sizeof *out->t);
    out->r = malloc((size_t) cap * sizeof *out->r);
    if (!out->t || !out->r) { snprintf(err, errlen, "out of memory"); return -1; }
    char *save = NULL;
    for (char *item = strtok_r(body, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        item = trim(item);
        char *colon = strchr(item, ':');
        if (!colon) {
            snprintf(err, errlen, "'%s' is not TIME:RATE (e.g. 10m:60)", item);
            return -1;
        }
        *colon = '\0';
        double t, v;
        if (parse_time(trim(item), &t) != 0 || t < 0) {
            snprintf(err, errlen, "time '%s' is not a time >= 0 with unit s, m or h", trim(item));
            return -1;
        }
        if (parse_number(trim(colon + 1), &v) != 0) {
            snprintf(err, errlen, "rate '%s' at %s is not a number", trim(colon + 1), trim(item));
            return -1;
        }
        if (v < 0) {
            snprintf(err, errlen, "rate %g at %s is negative", v, trim(item));
            return -1;
        }
        if (out->n > 0 && !(t > out->t[out->n - 1])) {
            snprintf(err, errlen, "times out of order: %s (%g s) does not come after %g s", trim(item), t, out->t[out->n - 1]);
            return -1;
        }
        if (out->n == 0 && t != 0) {
            snprintf(err, errlen, "the first time must be 0s, got %s", trim(item));
            return -1;
        }
        if (out->n == cap) {
            cap *= 2;
            double *a = realloc(out->t, (size_t) cap * sizeof *a);
            if (a) out->t = a;
            double *b = realloc(out->r, (size_t) cap * sizeof *b);
            if (b) out->r = b;
            if (!a || !b) { snprintf(err, errlen, "out of memory"); return -1; }
        }
        out->t[out->n] = t;
        out->r[out->n] = v;
        out->n++;
    }
    if (out->n == 0) { snprintf(err, errlen, "no TIME:RATE points"); return -1; }
    out->max = 0;
    out->min = out->r[0];
    for (int i = 0; i < out->n; i++) {
        if (out->r[i] > out->max) out->max = out->r[i];
        if (out->r[i] < out->min) out->min = out->r[i];
    }
    if (!(out->max > 0)) { snprintf(err, errlen, "every rate is 0"); return -1; }
    if (!(out->r[out->n - 1] > 0)) {
        snprintf(err, errlen, "the last rate must be > 0 (it holds for the rest of the run)");
        return -1;
    }
    out->avg = out->r[out->n - 1];
    out->cum = malloc((size_t) out->n * sizeof *out->cum);
    if (!out->cum) { snprintf(err, errlen, "out of memory"); return -1; }
    rate_cum_points(out);
    return 0;
}

static int parse_diurnal(char *body, wl_rate *out, char *err, size_t errlen)
{
    double mean = NAN, p2t = NAN, period = 86400, peak = 0;
    char *save = NULL;
    for (char *item = strtok_r(body, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        item = trim(item);
        char *eq = strchr(item, '=');
        if (!eq) { snprintf(err, errlen, "'%s' is not KEY=VALUE", item); return -1; }
        *eq = '\0';
        char *k = trim(item), *v = trim(eq + 1);
        int bad;
        if (!strcmp(k, "mean")) bad = parse_number(v, &mean) || !(mean > 0);
        else if (!strcmp(k, "peak_to_trough")) bad = parse_number(v, &p2t) || !(p2t >= 1);
        else if (!strcmp(k, "period")) bad = parse_time(v, &period) || !(period > 0);
        else if (!strcmp(k, "peak_at")) bad = parse_time(v, &peak) || peak < 0;
        else { snprintf(err, errlen, "unknown diurnal key '%s' (valid: mean, peak_to_trough, period, peak_at)", k); return -1; }
        if (bad) {
            snprintf(err, errlen, "diurnal %s = '%s': %s", k, v,
                     !strcmp(k, "mean") ? "must be a rate > 0" : !strcmp(k, "peak_to_trough") ? "must be a number >= 1"
                     : !strcmp(k, "period") ? "must be a time > 0 (unit s, m or h)" : "must be a time >= 0 (unit s, m or h)");
            return -1;
        }
    }
    if (isnan(mean)) { snprintf(err, errlen, "diurnal needs mean=RATE"); return -1; }
    if (isnan(p2t)) { snprintf(err, errlen, "diurnal needs peak_to_trough=RATIO"); return -1; }
    out->mean = mean;
    out->amp = (p2t - 1) / (p2t + 1);
    out->period = period;
    out->peak_at = fmod(peak, period);
    out->max = mean * (1 + out->amp);
    out->min = mean * (1 - out->amp);
    out->omega = 2 * M_PI / period;
    out->avg = mean;
    return 0;
}

int wl_rate_parse(const char *text, wl_rate *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double v;
    if (parse_number(text, &v) == 0) {
        if (!(v > 0)) { snprintf(err, errlen, "must be > 0, got '%s'", text); return -1; }
        out->kind = RATE_FIXED;
        out->fixed = out->max = out->min = out->avg = v;
        return 0;
    }
    const char *open = strchr(text, '(');
    size_t len = strlen(text);
    while (len > 0 && isspace((unsigned char) text[len - 1])) len--;
    if (!open || len == 0 || text[len - 1] != ')') {
        snprintf(err, errlen, "expected a rate (requests/s), schedule(T:R, ...), ramp(T:R, ...) or diurnal(mean=..., peak_to_trough=..., period=..., peak_at=...), got '%s'", text);
        return -1;
    }
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int) (open - text), text);
    char *body = malloc(len);
    if (!body) { snprintf(err, errlen, "out of memory"); return -1; }
    size_t blen = (size_t) (text + len - 1 - (open + 1));
    memcpy(body, open + 1, blen);
    body[blen] = '\0';
    int rc;
    char *nm = trim(name);
    if (!strcmp(nm, "schedule")) { out->kind = RATE_STEPS; rc = parse_points(body, out, err, errlen); }
    else if (!strcmp(nm, "ramp")) { out->kind = RATE_RAMP; rc = parse_points(body, out, err, errlen); }
    else if (!strcmp(nm, "diurnal")) { out->kind = RATE_DIURNAL; rc = parse_diurnal(body, out, err, errlen); }
    else {
        snprintf(err, errlen, "unknown rate function '%s' (valid: schedule, ramp, diurnal)", nm);
        rc = -1;
    }
    free(body);
    if (rc != 0) { wl_rate_free(out); return -1; }
    /* One value throughout: exactly a plain rate (same draws, same numbers). */
    int constant = out->kind == RATE_DIURNAL ? out->amp == 0 : 1;
    for (int i = 1; i < out->n; i++) constant &= out->r[i] == out->r[0];
    if (constant) {
        double r = out->kind == RATE_DIURNAL ? out->mean : out->r[0];
        wl_rate_free(out);
        out->kind = RATE_FIXED;
        out->fixed = out->max = out->min = out->avg = r;
    }
    return 0;
}

void wl_rate_free(wl_rate *r)
{
    free(r->t);
    free(r->r);
    free(r->cum);
    memset(r, 0, sizeof *r);
}

/* Index of the last point at or before T. */
static int rate_seg(const wl_rate *r, double t)
{
    int lo = 0, hi = r->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (r->t[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

double wl_rate_at(const wl_rate *r, double t)
{
    switch (r->kind) {
    case RATE_FIXED: return r->fixed;
    case RATE_STEPS: return r->r[rate_seg(r, t)];
    case RATE_RAMP: {
        int i = rate_seg(r, t);
        if (i == r->n - 1) return r->r[i];
        return r->r[i] + (r->r[i + 1] - r->r[i]) * (t - r->t[i]) / (r->t[i + 1] - r->t[i]);
    }
    case RATE_DIURNAL:
        return r->mean * (1 + r->amp * cos(r->omega * (t - r->peak_at)));
    }
    return 0;
}

double wl_rate_cum(const wl_rate *r, double t)
{
    switch (r->kind) {
    case RATE_FIXED: return r->fixed * t;
    case RATE_STEPS: {
        int i = rate_seg(r, t);
        return r->cum[i] + r->r[i] * (t - r->t[i]);
    }
    case RATE_RAMP: {
        int i = rate_seg(r, t);
        double s = t - r->t[i];
        if (i == r->n - 1) return r->cum[i] + r->r[i] * s;
        double q = (r->r[i + 1] - r->r[i]) / (r->t[i + 1] - r->t[i]);
        return r->cum[i] + r->r[i] * s + 0.5 * q * s * s;
    }
    case RATE_DIURNAL: {
        double w = r->omega;
        return r->mean * (t + r->amp / w * (sin(w * (t - r->peak_at)) - sin(-w * r->peak_at)));
    }
    }
    return 0;
}

double wl_rate_inv(const wl_rate *r, double l)
{
    if (l <= 0) return 0;
    switch (r->kind) {
    case RATE_FIXED: return l / r->fixed;
    case RATE_STEPS:
    case RATE_RAMP: {
        /* The last point whose cumulative count is below L (flat stretches of
         * rate 0 are skipped: their end has the same count). */
        int lo = 0, hi = r->n - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (r->cum[mid] < l) lo = mid;
            else hi = mid - 1;
        }
        double d = l - r->cum[lo];
        if (r->kind == RATE_STEPS || lo == r->n - 1) return r->t[lo] + d / r->r[lo];
        /* r0 s + q s^2 / 2 = d, in the form that is stable for q -> 0. */
        double r0 = r->r[lo], q = (r->r[lo + 1] - r0) / (r->t[lo + 1] - r->t[lo]);
        double disc = r0 * r0 + 2 * q * d;
        double s = 2 * d / (r0 + sqrt(disc > 0 ? disc : 0));
        double end = r->t[lo + 1];
        double t = r->t[lo] + s;
        return t < end ? t : end;
    }
    case RATE_DIURNAL: {
        /* Newton's method, kept inside a bracket that always holds the root:
         * the rate lies between mean (1 - a) and mean (1 + a) > 0. */
        double a = l / r->max, b = l / r->min;
        double t = l / r->mean;
        for (int it = 0; it < 100; it++) {
            double f = wl_rate_cum(r, t) - l;
            if (f > 0) b = t; else a = t;
            double nt = t - f / wl_rate_at(r, t);
            if (!(nt > a && nt < b)) nt = 0.5 * (a + b);
            if (fabs(nt - t) <= 1e-13 * (1 + fabs(t))) return nt;
            t = nt;
        }
        return t;
    }
    }
    return 0;
}

void wl_cfg_free(workload_cfg *w)
{
    for (int i = 0; i < w->nclasses; i++) {
        dist_free(&w->classes[i].prompt);
        dist_free(&w->classes[i].output);
        dist_free(&w->classes[i].complexity);
        dist_free(&w->classes[i].turns);
        dist_free(&w->classes[i].patience);
    }
    free(w->classes);
    free(w->trace_class);
    wl_rate_free(&w->sched);
    dist_free(&w->prompt);
    dist_free(&w->output);
    dist_free(&w->think);
    trace_free(&w->tr);
}

/* ---- the source ------------------------------------------------------------ */

struct wl_source {
    const workload_cfg *w;    /* the configuration (not owned) */
    gsl_rng *arr_rng;         /* inter-arrival times */
    gsl_rng *tok_rng;         /* token counts */
    gsl_rng *cls_rng;         /* class of each request (mixtures only) */
    gsl_rng *pat_rng;         /* clients' patience (patience_s), stream "workload patience"; NULL: none has one */
    gsl_rng *thin_rng;        /* thinning acceptance draws (time-varying Poisson) */
    gsl_rng *ord_rng;         /* trace_order = shuffle: permutations */
    gsl_rng *think_rng;       /* closed loop: think times */
    gsl_ran_discrete_t *cls_table; /* class shares, for the class draw (NULL: one class or trace classes) */
    int need_tokens;          /* 1: draw token counts (an LLM pool exists) */
    int plain;                /* no trace rows, one class, no token draws: wl_fill sets class 0 only */
    double gap_s;             /* Poisson: mean gap at the fixed rate, 1 / rate, s */
    double thin_gap_s;        /* Poisson by thinning: mean gap at the schedule's maximum, 1 / max, s */
    size_t trace_i;           /* arrival = trace: row of the next arrival */
    double trace_offset;      /* arrival = trace: s added to trace times (looping) */
    size_t pos;               /* attribute trace: rows handed out in this pass */
    size_t *perm;             /* attribute trace, shuffle: this pass's row order (n entries), else NULL */
    double op;                /* scheduled gamma: expected arrivals up to the last arrival */
    uint64_t *seen;           /* repeat tokens: open-addressing set of block ids + 1 (0 = empty) */
    size_t seen_cap;          /* its slots (a power of two) */
    size_t seen_n;            /* ids in it */
    double rep_tokens;        /* measured requests' repeated prompt tokens */
    double rep_prompt;        /* measured requests' prompt tokens */
};

wl_source *wl_new(const workload_cfg *w, uint64_t seed, int need_tokens)
{
    wl_source *src = calloc(1, sizeof *src);
    if (!src) return NULL;
    src->w = w;
    src->need_tokens = need_tokens;
    src->plain = !w->has_trace && w->nclasses <= 1 && !need_tokens && !w->classes[0].has_patience;
    src->gap_s = 1.0 / w->rate;             /* the same quotients the draws divided each time */
    src->thin_gap_s = 1.0 / w->sched.max;
    src->arr_rng = rng_stream(seed, "workload arrivals");
    src->tok_rng = rng_stream(seed, "workload tokens");
    src->cls_rng = rng_stream(seed, "workload classes");
    src->thin_rng = rng_stream(seed, "workload thinning");
    src->ord_rng = rng_stream(seed, "workload trace order");
    src->think_rng = rng_stream(seed, "workload think");
    int ok = src->arr_rng && src->tok_rng && src->cls_rng && src->thin_rng && src->ord_rng && src->think_rng;
    for (int i = 0; ok && i < w->nclasses; i++)
        if (w->classes[i].has_patience && !src->pat_rng) ok = (src->pat_rng = rng_stream(seed, "workload patience")) != NULL;
    if (ok && w->nclasses > 1 && !w->tr.label) {
        double *p = malloc((size_t) w->nclasses * sizeof *p);
        if (p) {
            for (int i = 0; i < w->nclasses; i++) p[i] = w->classes[i].share;
            src->cls_table = gsl_ran_discrete_preproc((size_t) w->nclasses, p);
            free(p);
        }
        ok = src->cls_table != NULL;
    }
    if (ok && w->has_trace && w->arrival != ARRIVAL_TRACE && w->order == TRACE_ORDER_SHUFFLE) {
        src->perm = malloc(w->tr.n * sizeof *src->perm);
        if (src->perm) {
            for (size_t i = 0; i < w->tr.n; i++) src->perm[i] = i;
            gsl_ran_shuffle(src->ord_rng, src->perm, w->tr.n, sizeof *src->perm);
        }
        ok = src->perm != NULL;
    }
    if (ok && w->tr.hash) {
        src->seen_cap = 1024;
        src->seen = calloc(src->seen_cap, sizeof *src->seen);
        ok = src->seen != NULL;
    }
    if (!ok) {
        wl_free(src);
        return NULL;
    }
    return src;
}

void wl_free(wl_source *src)
{
    if (!src) return;
    if (src->pat_rng) gsl_rng_free(src->pat_rng);
    gsl_rng *r[] = { src->arr_rng, src->tok_rng, src->cls_rng, src->thin_rng, src->ord_rng, src->think_rng };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) if (r[i]) gsl_rng_free(r[i]);
    if (src->cls_table) gsl_ran_discrete_free(src->cls_table);
    free(src->perm);
    free(src->seen);
    free(src);
}

/* Seconds to simulated time, never before NOW. */
static simtime_t at_least(double s, simtime_t now)
{
    simtime_t t = simtime_from_s(s);
    return t < now ? now : t;
}

simtime_t wl_next_time(wl_source *src, simtime_t now, uint64_t id)
{
    const workload_cfg *w = src->w;
    const wl_rate *sr = &w->sched;
    int fixed = sr->kind == RATE_FIXED;
    switch (w->arrival) {
    case ARRIVAL_POISSON:
        /* Exponential gaps by inverse transform (as dist.c's exp()). */
        if (fixed)
            return simtime_add(now, simtime_from_s(dist_exp_qinv(gsl_rng_uniform_pos(src->arr_rng), src->gap_s)));
        /* Thinning (Lewis-Shedler): candidates at the highest rate, each kept
         * with probability rate(t) / max.  Steps and ramps: where the rate is at
         * its maximum no acceptance draw is made.  Diurnal: a draw below the
         * trough's share is accepted without evaluating the sinusoid (a squeeze). */
        for (simtime_t t = now;;) {
            t = simtime_add(t, simtime_from_s(dist_exp_qinv(gsl_rng_uniform_pos(src->arr_rng), src->thin_gap_s)));
            if (sr->kind == RATE_DIURNAL) {
                double u = gsl_rng_uniform(src->thin_rng) * sr->max;
                if (u < sr->min || u < wl_rate_at(sr, simtime_to_s(t))) return t;
                continue;
            }
            double r = wl_rate_at(sr, simtime_to_s(t));
            if (r >= sr->max || gsl_rng_uniform(src->thin_rng) * sr->max < r) return t;
        }
    case ARRIVAL_GAMMA: {
        double k = 1.0 / (w->cv * w->cv);
        if (fixed) return simtime_add(now, simtime_from_s(gsl_ran_gamma(src->arr_rng, k, 1.0 / (w->rate * k))));
        /* Time-scaled: a renewal process of unit rate in operational time (the
         * expected number of arrivals), mapped back through the rate's integral. */
        src->op += gsl_ran_gamma(src->arr_rng, k, 1.0 / k);
        return at_least(wl_rate_inv(sr, src->op), now);
    }
    case ARRIVAL_CONSTANT:
        /* Computed from the id, not by adding gaps: no rounding drift. */
        if (fixed) return simtime_from_s((double) id / w->rate);
        return at_least(wl_rate_inv(sr, (double) id), now);
    case ARRIVAL_TRACE:
        if (src->trace_i >= w->tr.n) {
            if (!w->loop) return -1;
            /* Replay: the gap between two loops is the trace's mean gap. */
            double span = w->tr.t[w->tr.n - 1];
            src->trace_offset += span + span / (double) (w->tr.n - 1);
            src->trace_i = 0;
        }
        return at_least((src->trace_offset + w->tr.t[src->trace_i]) / w->speedup, now);
    case ARRIVAL_USERS:
        return -1;
    }
    return -1;
}

/* A token count drawn from D: rounded, at least 1, held well inside int32. */
static int32_t draw_tokens(const dist *d, gsl_rng *r)
{
    double v = nearbyint(dist_sample(d, r));
    if (!(v >= 1)) v = 1;          /* NaN too */
    if (v > INT32_MAX / 4) v = INT32_MAX / 4;
    return (int32_t) v;
}

/* The trace row the arrival being filled takes; moves the cursor on. */
static size_t next_row(wl_source *src)
{
    const workload_cfg *w = src->w;
    if (w->arrival == ARRIVAL_TRACE) return src->trace_i++;
    if (src->pos == w->tr.n) {
        /* A new pass over the trace; shuffled order draws a new permutation. */
        src->pos = 0;
        if (src->perm) gsl_ran_shuffle(src->ord_rng, src->perm, w->tr.n, sizeof *src->perm);
    }
    size_t i = src->pos++;
    return src->perm ? src->perm[i] : i;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* 1 when block id K is in the seen set. */
static int seen_has(const wl_source *src, uint64_t k)
{
    size_t m = src->seen_cap - 1;
    for (size_t i = mix64(k) & m;; i = (i + 1) & m) {
        if (src->seen[i] == 0) return 0;
        if (src->seen[i] == k) return 1;
    }
}

/* Adds K (an id + 1, never 0).  Returns 0, or -1 when out of memory. */
static int seen_add(wl_source *src, uint64_t k)
{
    if (2 * (src->seen_n + 1) > src->seen_cap) {
        size_t nc = 2 * src->seen_cap;
        uint64_t *ns = calloc(nc, sizeof *ns);
        if (!ns) return -1;
        for (size_t j = 0; j < src->seen_cap; j++) {
            uint64_t v = src->seen[j];
            if (!v) continue;
            size_t i = mix64(v) & (nc - 1);
            while (ns[i]) i = (i + 1) & (nc - 1);
            ns[i] = v;
        }
        free(src->seen);
        src->seen = ns;
        src->seen_cap = nc;
    }
    size_t m = src->seen_cap - 1;
    for (size_t i = mix64(k) & m;; i = (i + 1) & m) {
        if (src->seen[i] == k) return 0;
        if (src->seen[i] == 0) {
            src->seen[i] = k;
            src->seen_n++;
            return 0;
        }
    }
}

int wl_fill(wl_source *src, request *r)
{
    const workload_cfg *w = src->w;
    if (src->plain) {                       /* what the general path below does for it */
        r->cls = 0;
        r->target = w->classes[0].target;
        return 0;
    }
    size_t row = 0;
    int has_row = w->has_trace;
    if (has_row) row = next_row(src);
    int c = 0;
    if (has_row && w->tr.label) c = w->trace_class[w->tr.label[row]];
    else if (src->cls_table) c = (int) gsl_ran_discrete(src->cls_rng, src->cls_table);
    const wl_class *k = &w->classes[c];
    r->cls = c;
    r->target = k->target;
    if (k->has_patience) {   /* its client leaves if the answer has not begun by then */
        simtime_t p = simtime_from_s(dist_sample(&k->patience, src->pat_rng));
        r->give_up_at = simtime_add(r->arrival, p > 0 ? p : 1);
        r->queue_patience = !k->patience_in_service;
    }
    if (has_row && w->trace_tokens) {
        r->prompt = w->tr.prompt[row] > 0 ? w->tr.prompt[row] : 1;
        r->output = w->tr.output[row] > 0 ? w->tr.output[row] : 1;
    } else if (src->need_tokens) {
        r->prompt = draw_tokens(&k->prompt, src->tok_rng);
        r->output = draw_tokens(&k->output, src->tok_rng);
    }
    if (has_row && w->tr.adapter) r->attrs.trace_adapter = w->tr.adapter[row] + 1;   /* LoRA pools read it */
    if (has_row && w->tr.score && !isnan(w->tr.score[row])) {   /* the row's score wins over any draw */
        r->attrs.complexity = w->tr.score[row];
        r->attrs.scored = 1;
    }
    /* Token counts matter to LLM pools only: without one, no draws. */
    if (has_row && w->tr.hash) {
        const int64_t *ids = w->tr.hash + w->tr.hash_off[row];
        size_t m = w->tr.hash_off[row + 1] - w->tr.hash_off[row];
        r->attrs.hash_ids = ids;
        r->attrs.nhash = (int32_t) m;
        size_t run = 0;
        while (run < m && seen_has(src, (uint64_t) ids[run] + 1)) run++;
        for (size_t i = 0; i < m; i++)
            if (seen_add(src, (uint64_t) ids[i] + 1) != 0) return -1;
        if (r->measured) {
            double rep = (double) run * w->hash_block_tokens;
            src->rep_tokens += rep < r->prompt ? rep : r->prompt;
            src->rep_prompt += r->prompt;
        }
    }
    return 0;
}

int wl_users(const wl_source *src)
{
    return src->w->arrival == ARRIVAL_USERS ? src->w->users : 0;
}

simtime_t wl_user_start(const wl_source *src, int u)
{
    const workload_cfg *w = src->w;
    return simtime_from_s(w->ramp_users_s * (double) u / (double) w->users);
}

simtime_t wl_complete(wl_source *src, const request *r, simtime_t now)
{
    (void) r;
    if (src->w->arrival != ARRIVAL_USERS) return -1;
    return simtime_add(now, simtime_from_ms(dist_sample(&src->w->think, src->think_rng)));
}

double wl_repeat_token_share(const wl_source *src)
{
    if (!src->w->tr.hash) return NAN;
    return src->rep_prompt > 0 ? src->rep_tokens / src->rep_prompt : 0;
}
