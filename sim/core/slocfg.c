/* slocfg.c -- [slo] sections: parsing and the per-request checks (goodput)
 * (see slocfg.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine/errmsg.h"
#include "core/slocfg.h"

/* The latency metrics a report holds (system scope), and whether they need an LLM pool. */
static const struct { const char *name; int llm; } METRICS[] = {
    { "e2e", 0 }, { "queue", 0 }, { "service", 0 }, { "overhead", 1 }, { "ttft", 1 }, { "tpot", 1 },
    { "network", 0 },         /* reported when a gateway kind (net, api, result_cache) is in the scenario */
    { "itl", 1 },             /* inter-token latency, per token (LLM pools) */
};
#define NMETRICS (sizeof METRICS / sizeof METRICS[0])

/* Stats in increasing tail order (mean and max apart). */
static const char *STATS[] = { "mean", "p50", "p90", "p95", "p99", "p999", "max" };
#define NSTATS (sizeof STATS / sizeof STATS[0])

static int fail(const cfg *c, const cfg_entry *e, const char *sec, char *err, size_t errlen, const char *msg)
{
    char where[600];
    cfg_where(c, e, where, sizeof where);
    errmsg_set(err, errlen, "%s: [%s] %s: %s", where, sec, e->key, msg);
    return -1;
}

static int number(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

static int stat_rank(const char *stat)
{
    for (size_t i = 0; i < NSTATS; i++)
        if (!strcmp(STATS[i], stat)) return (int) i;
    return -1;
}

/* The LLM pool metric a "<metric>_max" SLO term limits (SLO_POOL_MAX), or NULL. */
static const char *pool_max_metric(const char *key)
{
    static const char *const M[] = { "mfu", "mbu", "mfu_busy", "mbu_busy", "kv_occupancy", "kv_peak" };
    size_t len = strlen(key);
    if (len < 5 || strcmp(key + len - 4, "_max")) return NULL;
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++)
        if (strlen(M[i]) == len - 4 && !strncmp(key, M[i], len - 4)) return M[i];
    return NULL;
}

/* Parses "<metric>_<stat>_ms" into T.  Returns 0, or -1 with MSG set. */
static int latency_term(const char *key, int has_llm, slo_term *t, char *msg, size_t n)
{
    size_t len = strlen(key);
    if (len < 4 || strcmp(key + len - 3, "_ms")) {
        snprintf(msg, n, "unknown SLO term (expected <metric>_<stat>_ms, e.g. ttft_p99_ms, or error_rate, "
                 "error_5xx_rate, timeout_rate, "
                 "utilization_max, mfu_max, mbu_max, kv_occupancy_max, headroom)");
        return -1;
    }
    char body[64];
    snprintf(body, sizeof body, "%.*s", (int) (len - 3), key);
    char *us = strrchr(body, '_');
    if (!us || us == body) {
        snprintf(msg, n, "expected <metric>_<stat>_ms with a stat of p50, p90, p95, p99, p999, mean, max");
        return -1;
    }
    *us = '\0';
    const char *stat = us + 1;
    if (stat_rank(stat) < 0) {
        snprintf(msg, n, "unknown stat '%s' (valid: p50, p90, p95, p99, p999, mean, max)", stat);
        return -1;
    }
    size_t m = 0;
    while (m < NMETRICS && strcmp(METRICS[m].name, body)) m++;
    if (m == NMETRICS) {
        snprintf(msg, n, "unknown metric '%s' (reported latency metrics: e2e, queue, service%s)", body,
                 has_llm ? ", overhead, ttft, tpot, itl, network" : ", network; with an LLM pool also overhead, ttft, tpot, itl");
        return -1;
    }
    if (METRICS[m].llm && !has_llm) {
        snprintf(msg, n, "metric '%s' is reported only for scenarios with an LLM pool", body);
        return -1;
    }
    t->kind = SLO_LATENCY;
    snprintf(t->metric, sizeof t->metric, "%.31s", body);
    snprintf(t->stat, sizeof t->stat, "%s", stat);
    return 0;
}

int slo_parse(const cfg *c, int has_llm, const char *const *classes, int nclasses,
              slo_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->headroom = 1;
    out->req_ttft_ms = out->req_tpot_ms = out->req_e2e_ms = INFINITY;
    int rank_ttft = -1, rank_tpot = -1, rank_e2e = -1;
    int *rank_cls = NULL;
    if (nclasses > 0) {
        out->cls_req = malloc((size_t) nclasses * 3 * sizeof *out->cls_req);
        out->cls_rank = rank_cls = malloc((size_t) nclasses * 3 * sizeof *rank_cls);
        if (!out->cls_req || !rank_cls) {
            errmsg_set(err, errlen, "out of memory");
            return -1;
        }
        out->ncls = nclasses;
        for (int k = 0; k < 3 * nclasses; k++) {
            out->cls_req[k] = INFINITY;
            rank_cls[k] = -1;
        }
    }
    /* A [slo CLASS] must name a class of the workload. */
    for (size_t i = 0; i < c->ns; i++) {
        const char *n = c->s[i].name;
        if (strncmp(n, "slo ", 4)) continue;
        int found = 0;
        for (int k = 0; k < nclasses; k++) found |= !strcmp(classes[k], n + 4);
        if (!found) {
            char where[600];
            if (c->s[i].line > 0) snprintf(where, sizeof where, "%s:%d", c->path, c->s[i].line);
            else snprintf(where, sizeof where, "--set");
            errmsg_set(err, errlen, "%s: [%s]: no request class '%s' in the workload%s", where, n, n + 4,
                       nclasses ? "" : " (it defines no classes)");
            return -1;
        }
    }
    for (size_t i = 0; i < c->n; i++) {
        const cfg_entry *e = &c->e[i];
        const char *sec = e->section;
        if (strcmp(sec, "slo") && strncmp(sec, "slo ", 4)) continue;
        const char *cls = sec[3] ? sec + 4 : "";
        double v;
        if (number(e->value, &v) != 0)
            return fail(c, e, sec, err, errlen, "expected a number");
        if (!strcmp(e->key, "headroom")) {
            if (cls[0]) return fail(c, e, sec, err, errlen, "headroom belongs in [slo] (it scales the whole workload)");
            if (v < 1) return fail(c, e, sec, err, errlen, "must be >= 1 (1.2 = meet the SLO at 120 % of the rate)");
            out->headroom = v;
            continue;
        }
        slo_term t = { 0 };
        snprintf(t.key, sizeof t.key, "%s", e->key);
        snprintf(t.cls, sizeof t.cls, "%s", cls);
        t.line = e->line;
        t.limit = v;
        char msg[300];
        if (!strcmp(e->key, "error_rate") || !strcmp(e->key, "error_5xx_rate") || !strcmp(e->key, "timeout_rate")) {
            if (v < 0 || v > 1) return fail(c, e, sec, err, errlen, "must be a fraction in [0, 1]");
            t.kind = !strcmp(e->key, "error_rate") ? SLO_ERROR_RATE
                   : !strcmp(e->key, "timeout_rate") ? SLO_TIMEOUT_RATE : SLO_5XX_RATE;
        } else if (pool_max_metric(e->key)) {
            /* mfu_max, mbu_max, kv_occupancy_max...: a limit on every LLM pool's figure */
            char why[200];
            snprintf(why, sizeof why, cls[0] ? "%s belongs in [slo] (pools are shared by the classes)"
                                             : "%s is reported only for LLM pools (the scenario has none)", e->key);
            if (cls[0] || !has_llm) return fail(c, e, sec, err, errlen, why);
            if (v <= 0 || v > 1) return fail(c, e, sec, err, errlen, "must be a share in (0, 1]");
            t.kind = SLO_POOL_MAX;
            snprintf(t.metric, sizeof t.metric, "%s", pool_max_metric(e->key));
        } else if (strstr(e->key, "_over_")) {
            /* e2e_over_3000ms = 0.01: at most 1 % of the served requests slower than 3 s */
            char metric[16], tail;
            double ms;
            if (sscanf(e->key, "%15[a-z2]_over_%lfm%c", metric, &ms, &tail) != 3 || tail != 's'
                || strcmp(e->key + strlen(e->key) - 2, "ms") || !(ms > 0) || !isfinite(ms)
                || (strcmp(metric, "e2e") && strcmp(metric, "ttft")))
                return fail(c, e, sec, err, errlen, "expected e2e_over_<T>ms or ttft_over_<T>ms with T > 0, e.g. e2e_over_3000ms");
            if (!strcmp(metric, "ttft") && !has_llm)
                return fail(c, e, sec, err, errlen, "ttft is reported only with an LLM pool (the scenario has none)");
            if (v < 0 || v > 1) return fail(c, e, sec, err, errlen, "must be a share in [0, 1]");
            int nover = 0;
            for (int k = 0; k < out->n; k++) nover += out->t[k].kind == SLO_OVER;
            if (nover >= SLO_MAX_OVER) return fail(c, e, sec, err, errlen, "at most 16 *_over_<T>ms terms in a scenario");
            t.kind = SLO_OVER;
            t.over_ms = ms;
            snprintf(t.metric, sizeof t.metric, "%s", metric);
        } else if (!strcmp(e->key, "utilization_max")) {
            if (cls[0]) return fail(c, e, sec, err, errlen, "utilization_max belongs in [slo] (pools are shared by the classes)");
            if (v <= 0 || v > 1) return fail(c, e, sec, err, errlen, "must be a share in (0, 1]");
            t.kind = SLO_UTIL_MAX;
        } else {
            if (latency_term(e->key, has_llm, &t, msg, sizeof msg) != 0) return fail(c, e, sec, err, errlen, msg);
            if (cls[0] && !strcmp(t.metric, "overhead"))
                return fail(c, e, sec, err, errlen, "overhead is not reported per class (e2e, queue, service, ttft, tpot are)");
            if (v <= 0) return fail(c, e, sec, err, errlen, "must be > 0 ms");
        }
        slo_term *x = realloc(out->t, (size_t) (out->n + 1) * sizeof *x);
        if (!x) { errmsg_set(err, errlen, "out of memory"); return -1; }
        out->t = x;
        out->t[out->n++] = t;
        /* Per-request limits: the tail-most stat of each metric (mean excluded). */
        if (t.kind == SLO_LATENCY && !cls[0] && strcmp(t.stat, "mean")) {
            int r = stat_rank(t.stat);
            if (!strcmp(t.metric, "ttft") && r > rank_ttft) { rank_ttft = r; out->req_ttft_ms = v; }
            if (!strcmp(t.metric, "tpot") && r > rank_tpot) { rank_tpot = r; out->req_tpot_ms = v; }
            if (!strcmp(t.metric, "e2e") && r > rank_e2e) { rank_e2e = r; out->req_e2e_ms = v; }
        } else if (t.kind == SLO_LATENCY && strcmp(t.stat, "mean")) {
            int k = 0, m = !strcmp(t.metric, "ttft") ? 0 : !strcmp(t.metric, "tpot") ? 1 : !strcmp(t.metric, "e2e") ? 2 : -1;
            while (k < out->ncls && strcmp(classes[k], cls)) k++;
            int r = stat_rank(t.stat);
            if (m >= 0 && k < out->ncls && r > rank_cls[3 * k + m]) {
                rank_cls[3 * k + m] = r;
                out->cls_req[3 * k + m] = v;
            }
        }
    }
    out->per_request = rank_ttft >= 0 || rank_tpot >= 0 || rank_e2e >= 0;
    /* A class without its own limit on a metric is held to [slo]'s. */
    const double overall[3] = { out->req_ttft_ms, out->req_tpot_ms, out->req_e2e_ms };
    for (int k = 0; k < 3 * out->ncls; k++) {
        if (rank_cls[k] >= 0) out->per_request = 1;
        else out->cls_req[k] = overall[k % 3];
    }
    return 0;
}

void slo_free(slo_spec *s)
{
    free(s->t);
    free(s->cls_req);
    free(s->cls_rank);
    memset(s, 0, sizeof *s);
    s->headroom = 1;
}

int slo_request_ok(const slo_spec *s, int cls, double e2e_ms, double ttft_ms, double tpot_ms)
{
    const double *lim = cls >= 0 && cls < s->ncls ? &s->cls_req[3 * cls] : NULL;
    if (!(e2e_ms <= (lim ? lim[2] : s->req_e2e_ms))) return 0;
    if (!isnan(ttft_ms) && !(ttft_ms <= (lim ? lim[0] : s->req_ttft_ms))) return 0;
    if (!isnan(tpot_ms) && !(tpot_ms <= (lim ? lim[1] : s->req_tpot_ms))) return 0;
    return 1;
}

void slo_keys(void (*row)(void *ctx, const char *key, const char *def, const char *help), void *ctx)
{
    row(ctx, "<metric>_<stat>_ms", "",
        "limit, ms: metric e2e|queue|service|network (LLM: overhead|ttft|tpot|itl), stat p50|p90|p95|p99|p999|mean|max");
    row(ctx, "error_rate", "", "limit on (rejected + timed out + failed) / requests");
    row(ctx, "error_5xx_rate", "", "limit on (rejected + failed) / requests: the golden signals' 5xx share");
    row(ctx, "timeout_rate", "", "limit on timed out / requests: the golden signals' timeout share");
    row(ctx, "<metric>_over_<T>ms", "", "limit on the share of served requests slower than T ms, metric e2e (LLM: ttft), e.g. e2e_over_3000ms = 0.01");
    row(ctx, "utilization_max", "", "[slo] only: limit on every pool's utilisation (busy share; LLM: stepping share)");
    row(ctx, "mfu_max", "", "[slo] only: limit on every LLM pool's MFU (also mbu_max, mfu_busy_max, mbu_busy_max)");
    row(ctx, "kv_occupancy_max", "", "[slo] only: limit on every LLM pool's time-mean KV occupancy (kv_peak_max: its peak)");
    row(ctx, "headroom", "1", "[slo] only: plan and check run the workload at this x its rate");
}
