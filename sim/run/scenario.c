/* scenario.c -- typed parsing of a scenario's sections: [sim], [workload],
 * [client], [class NAME], [gpu NAME], [model NAME] and [pool NAME] into the
 * typed scenario.
 *
 * Each key is read by a typed getter that reports a bad value as
 * "FILE:LINE: [section] key: message".  The key schema and the checks of
 * unknown keys and sections are in scnkeys.c, the checks of the pools as a
 * whole in scncheck.c, resolving and the memory estimate in scnresolve.c
 * (scnbuild.h: what they share).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <strings.h>
#include <gsl/gsl_errno.h>
#include "engine/errmsg.h"
#include "run/scenario.h"
#include "run/scnbuild.h"
#include "fleet/fleetcfg.h"
#include "core/kind.h"
#include "run/kinds.h"
#include "workload/gwattr.h"
#include "core/zipf.h"
#include "engine/simtime.h"

/* ---- sections ------------------------------------------------------------- */

/* The gateway keys of class NAME (NULL: the implicit class), each defaulting to
 * the [workload] value.  Returns 0 or -1. */
static int gateway_class_keys(ctx *x, const char *name, wl_class *c)
{
    char sec[80];
    snprintf(sec, sizeof sec, "class %s", name ? name : "");
    const cfg_entry *e;
    /* The class's value if it has one, else the workload's. */
#define SEC_OF(key) (name && val(x, sec, key, &e) ? sec : "workload")
    const char *cs = SEC_OF("complexity");
    if (val(x, cs, "complexity", &e)) {
        if (get_dist(x, cs, "complexity", NULL, &c->complexity)) return -1;
        c->has_complexity = 1;
    }
    const char *is = SEC_OF("intents");
    if (get_i64(x, is, "intents", 0, 1, INT64_C(1) << 30, &c->intents)) return -1;
    const char *zs = SEC_OF("intent_zipf");
    if (get_num(x, zs, "intent_zipf", 1, 0, 1, 100, &c->intent_zipf)) return -1;
    const char *ts = SEC_OF("cache_ttl_s");
    const char *tv = val(x, ts, "cache_ttl_s", &e);
    c->cache_ttl_s = -1;
    if (tv && !strcmp(tv, "inf")) c->cache_ttl_s = INFINITY;
    else if (tv && get_num(x, ts, "cache_ttl_s", 0, 0, 0, 1e12, &c->cache_ttl_s)) return -1;
    const char *ss = SEC_OF("system_prompt_tokens");
    if (get_i64(x, ss, "system_prompt_tokens", 0, 0, INT64_C(1) << 40, &c->system_prompt_tokens)) return -1;
    const char *us = SEC_OF("turns");
    if (val(x, us, "turns", &e)) {
        if (get_dist(x, us, "turns", NULL, &c->turns)) return -1;
        c->has_turns = 1;
    }
    const char *ps = SEC_OF("patience_s");
    if (val(x, ps, "patience_s", &e)) {   /* the client leaves a queue when it runs out (station.c) */
        if (get_dist(x, ps, "patience_s", NULL, &c->patience)) return -1;
        const dist *p = &c->patience;
        int neg = p->family == DIST_UNIFORM ? p->a < 0 : p->mean < 0;
        for (size_t i = 0; p->family == DIST_EMPIRICAL && i < p->nvalues; i++) neg |= p->values[i] < 0;
        if (neg) return fail(x, e, ps, "patience_s", "a patience is a time: no negative values");
        c->has_patience = 1;
    }
    const char *qs = SEC_OF("patience_in_service");
    if (get_bool(x, qs, "patience_in_service", 1, &c->patience_in_service)) return -1;
    const char *ns = SEC_OF("sessions");
    if (get_int(x, ns, "sessions", 1, 1, 10000000, &c->sessions)) return -1;
    if (val(x, ns, "sessions", &e)) {
        if (!c->has_turns) return fail(x, e, ns, "sessions", "needs turns (the conversations' lengths)");
        if (x->s->wl.arrival == ARRIVAL_USERS)
            return fail(x, e, ns, "sessions", "closed loop: each user holds its own conversation (set users instead)");
    }
#undef SEC_OF
    return 0;
}

/* The index of pool NAME, or -1 (a hash lookup of its section: build()
 * records each pool's index in its section). */
int pool_index(const scenario *s, const char *name)
{
    char sec[96];
    if (strlen(name) >= sizeof sec - 5) return -1;
    snprintf(sec, sizeof sec, "pool %s", name);
    const cfg_section *cs = cfg_section_get(&s->raw, sec);
    return cs && cs->pool >= 0 && cs->pool < s->npools ? cs->pool : -1;
}

static int build_sim(ctx *x)
{
    scenario *s = x->s;
    int64_t v;
    if (get_i64(x, "sim", "requests", 200000, 1, 1000000000000000LL, &v)) return -1;
    s->requests = (uint64_t) v;
    if (get_i64(x, "sim", "warmup", (int64_t) (s->requests / 10), 0, 1000000000000000LL, &v)) return -1;
    s->warmup = (uint64_t) v;
    s->warmup_auto = cfg_get(&s->raw, "sim", "warmup") == NULL;
    if (get_i64(x, "sim", "seed", 1, 0, INT64_MAX, &v)) return -1;
    s->seed = (uint64_t) v;
    char db[1024];
    if (get_str(x, "sim", "cost_db", "", db, sizeof db)) return -1;
    if (db[0] == '/' || !db[0]) snprintf(s->cost_db, sizeof s->cost_db, "%s", db);
    else snprintf(s->cost_db, sizeof s->cost_db, "%s%s", s->raw.dir, db);
    if (get_num(x, "sim", "electricity_usd_per_kwh", 0, 0, 0, 1e6, &s->electricity_usd_per_kwh)) return -1;
    if (get_num(x, "sim", "pue", 1, 1, 0, 100, &s->pue)) return -1;
    return 0;
}

/* Loads the trace named by [workload] trace (E is its entry): CSV or JSON
 * lines; arrival times only when they drive the arrivals. */
static int load_trace(ctx *x, const cfg_entry *e, const char *path)
{
    scenario *s = x->s;
    workload_cfg *w = &s->wl;
    const char *W = "workload";
    char col[128], fmt[32], pcol[128], ocol[128], ccol[128], xcol[128], acol[128], full[1024];
    if (get_str(x, W, "time_column", "TIMESTAMP", col, sizeof col)) return -1;
    if (get_str(x, W, "time_format", "datetime", fmt, sizeof fmt)) return -1;
    if (get_str(x, W, "prompt_column", "ContextTokens", pcol, sizeof pcol)) return -1;
    if (get_str(x, W, "output_column", "GeneratedTokens", ocol, sizeof ocol)) return -1;
    if (get_str(x, W, "class_column", "none", ccol, sizeof ccol)) return -1;
    if (get_str(x, W, "complexity_column", "none", xcol, sizeof xcol)) return -1;
    if (get_str(x, W, "adapter_column", "none", acol, sizeof acol)) return -1;
    size_t pl = strlen(path);
    int jsonl = pl >= 6 && !strcmp(path + pl - 6, ".jsonl");
    int k;
    if (get_enum(x, W, "trace_format", "csv|jsonl", jsonl, &k)) return -1;
    jsonl = k;
    trace_opts o = { 0 };
    o.jsonl = jsonl;
    o.class_column = strcmp(ccol, "none") ? ccol : NULL;
    o.complexity_column = strcmp(xcol, "none") ? xcol : NULL;
    o.adapter_column = strcmp(acol, "none") ? acol : NULL;
    const cfg_entry *fe;
    val(x, W, "time_format", &fe);
    if (trace_format_parse(fmt, &o.format) != 0)
        return fail(x, fe, W, "time_format", "unknown value '%s' (valid: seconds, milliseconds, datetime)", fmt);
    if (path[0] == '/') snprintf(full, sizeof full, "%s", path);
    else snprintf(full, sizeof full, "%s%s", s->raw.dir, path);
    o.path = full;
    /* Attribute traces need no time column. */
    o.time_column = w->arrival == ARRIVAL_TRACE ? col : NULL;
    /* Token columns default to the Azure names; they are used only when present
     * unless named explicitly. */
    const cfg_entry *pe, *oe;
    val(x, W, "prompt_column", &pe);
    val(x, W, "output_column", &oe);
    o.prompt_column = strcmp(pcol, "none") ? pcol : NULL;
    o.output_column = strcmp(ocol, "none") ? ocol : NULL;
    char msg[1024];
    if (trace_load(&w->tr, &o, msg, sizeof msg) != 0) {
        /* A default token column the file lacks is not an error: load without it.
         * Any other error (a bad value, a bad line) is reported as it is. */
        char want[300];
        trace_opts o2 = o;
        int retry = 0;
        snprintf(want, sizeof want, "no column '%s'", pcol);
        if (!jsonl && !pe && o.prompt_column && strstr(msg, want)) { o2.prompt_column = NULL; retry = 1; }
        snprintf(want, sizeof want, "no column '%s'", ocol);
        if (!jsonl && !oe && o.output_column && strstr(msg, want)) { o2.output_column = NULL; retry = 1; }
        if (retry) {
            /* Both defaults may be missing: drop each that the file lacks. */
            if (!pe && !oe) { o2.prompt_column = NULL; o2.output_column = NULL; }
            if (trace_load(&w->tr, &o2, msg, sizeof msg) == 0) goto loaded;
        }
        /* A bad score is the complexity column's error: named at that key. */
        char *tag = strstr(msg, " (complexity_column)");
        if (tag && o.complexity_column) {
            const cfg_entry *xe;
            val(x, W, "complexity_column", &xe);
            *tag = '\0';
            return fail(x, xe, W, "complexity_column", "%s", msg);
        }
        return fail(x, e, W, "trace", "%s", msg);
    }
loaded:
    w->has_trace = 1;
    w->trace_tokens = w->tr.prompt != NULL && w->tr.output != NULL;
    if (w->arrival == ARRIVAL_TRACE) {
        /* A window of the trace (plan --trace replays its peak minutes). */
        double from, len;
        if (get_num(x, W, "trace_start_s", 0, 0, 0, 1e15, &from)) return -1;
        if (get_num(x, W, "trace_length_s", 0, 0, 0, 1e15, &len)) return -1;
        if (from > 0 || len > 0) {
            trace_window(&w->tr, from, len > 0 ? len : INFINITY);
            const cfg_entry *we;
            val(x, W, len > 0 ? "trace_length_s" : "trace_start_s", &we);
            if (w->tr.n < 2)
                return fail(x, we, W, len > 0 ? "trace_length_s" : "trace_start_s", "%s: the window [%g s, %g s) holds %zu rows: needs at least 2",
                            full, from, len > 0 ? from + len : INFINITY, w->tr.n);
        }
        if (w->tr.n < 2) return fail(x, e, W, "trace", "%s: needs at least 2 rows", full);
        if (!(w->tr.t[w->tr.n - 1] > 0))
            return fail(x, e, W, "trace", "%s: all rows arrive at the same time", full);
    }
    return 0;
}

static int build_workload(ctx *x)
{
    scenario *s = x->s;
    workload_cfg *w = &s->wl;
    const char *W = "workload";
    int k;
    const cfg_entry *e, *ue, *re;
    if (get_enum(x, W, "arrival", "poisson|gamma|constant|trace", 0, &k)) return -1;
    w->arrival = (arrival_kind) k;
    const char *users = val(x, W, "users", &ue);
    const char *rate = val(x, W, "rate", &re);
    if (users) {
        if (rate) return fail(x, ue, W, "users", "users (closed loop) and rate (open loop) exclude each other: give one");
        if (w->arrival == ARRIVAL_TRACE)
            return fail(x, ue, W, "users", "users (closed loop) cannot be combined with arrival = trace (the trace's times)");
        if (get_int(x, W, "users", 0, 1, 100000000, &w->users)) return -1;
        w->arrival = ARRIVAL_USERS;
        if (get_dist(x, W, "think_ms", "const(0)", &w->think)) return -1;
        if (get_num(x, W, "ramp_users_s", 0, 0, 0, 1e12, &w->ramp_users_s)) return -1;
    } else if (w->arrival != ARRIVAL_TRACE) {
        /* Keys of other arrival kinds (cv, time_column...) may stay in the file:
         * they are ignored, so --set workload.arrival=... can switch between kinds. */
        if (!rate) return fail(x, NULL, W, "rate", "missing (requests per second, or users = N for a closed loop)");
        char msg[512];
        if (wl_rate_parse(rate, &w->sched, msg, sizeof msg) != 0) return fail(x, re, W, "rate", "%s", msg);
        w->rate = w->sched.kind == RATE_FIXED ? w->sched.fixed : w->sched.avg;
        if (get_num(x, W, "cv", 1.0, DIST_GAMMA_CV_MIN, 0, DIST_CV_MAX, &w->cv)) return -1;
    }
    const char *path = val(x, W, "trace", &e);
    if (w->arrival == ARRIVAL_TRACE && !path) return fail(x, NULL, W, "trace", "missing: arrival = trace needs trace = FILE");
    const cfg_entry *xe;
    const char *xcol = val(x, W, "complexity_column", &xe);
    if (!path && xcol && strcmp(xcol, "none"))
        return fail(x, xe, W, "complexity_column", "needs a trace (trace = FILE) to read the scores from");
    if (path) {
        if (load_trace(x, e, path)) return -1;
        int o;
        if (get_enum(x, W, "trace_order", "sequential|shuffle", 0, &o)) return -1;
        w->order = (trace_order) o;
        if (w->order == TRACE_ORDER_SHUFFLE && w->arrival == ARRIVAL_TRACE) {
            const cfg_entry *oe;
            val(x, W, "trace_order", &oe);
            return fail(x, oe, W, "trace_order", "shuffle needs arrival = poisson, gamma or constant (or users): with arrival = trace the rows keep their times");
        }
        if (get_int(x, W, "hash_block_tokens", 512, 1, 1 << 30, &w->hash_block_tokens)) return -1;
    } else {
        const cfg_entry *he;
        if (val(x, W, "hash_block_tokens", &he))
            return fail(x, he, W, "hash_block_tokens", "applies to a trace's hash ids only: synthetic prompts (system "
                        "prompts, session turns) are hashed per KV block, the pool's block_tokens");
    }
    if (w->arrival == ARRIVAL_TRACE) {
        if (get_bool(x, W, "loop", 0, &w->loop)) return -1;
        if (!w->loop) {
            /* A finite workload replays every row (docs/workloads.md, "Finite workloads"): without a
             * `warmup` key nothing is discarded. */
            if (s->warmup_auto && s->requests >= w->tr.n) s->warmup = 0;
            s->finite = s->warmup + s->requests >= w->tr.n;
        }
        if (!w->loop && w->tr.n <= s->warmup) {
            const cfg_entry *we;
            val(x, "sim", "warmup", &we);
            return fail(x, e, W, "trace", "%s has %zu rows, not more than [sim] warmup = %llu (set loop = yes or a smaller warmup)",
                        path, w->tr.n, (unsigned long long) s->warmup);
        }
        if (get_num(x, W, "speedup", 1.0, 0, 1, 1e9, &w->speedup)) return -1;
    }
    if (get_dist(x, W, "prompt_tokens", "const(512)", &w->prompt)) return -1;
    if (get_dist(x, W, "output_tokens", "const(128)", &w->output)) return -1;
    if (val(x, W, "output_tokens", &e) && dist_max(&w->output) < 1)
        return fail(x, e, W, "output_tokens", "must allow at least 1 token");
    return 0;
}

/* [class NAME] sections (after the workload and the pools): the request
 * classes, or one implicit class holding the workload's distributions. */
/* [client]: timeouts and retries (retry.h). */
static int build_client(ctx *x)
{
    scenario *s = x->s;
    retry_cfg *c = &s->client;
    const char *C = "client";
    int jitter;
    s->has_client = 0;
    for (size_t i = 0; i < s->raw.ns; i++)
        if (!strcmp(s->raw.s[i].name, C)) s->has_client = 1;
    if (!s->has_client) return 0;
    if (get_num(x, C, "timeout_ms", 0, 0, 0, SIMTIME_HORIZON_MS, &c->timeout_ms) ||
        get_int(x, C, "retries", 0, -1000, 1000, &c->retries) ||
        get_num(x, C, "backoff_ms", 100, -1e300, 0, SIMTIME_HORIZON_MS, &c->backoff_ms) ||
        get_num(x, C, "backoff_multiplier", 2, -1e300, 0, 1e6, &c->multiplier) ||
        get_num(x, C, "backoff_max_ms", c->backoff_ms > 10000 ? c->backoff_ms : 10000, -1e300, 0, SIMTIME_HORIZON_MS, &c->backoff_max_ms) ||
        get_enum(x, C, "jitter", "full|none", 0, &jitter))
        return -1;
    c->jitter = jitter == 0;
    const char *key;
    char msg[256];
    if (retry_check(c, &key, msg, sizeof msg) != 0) {
        const cfg_entry *e;
        val(x, C, key, &e);
        return fail(x, e, C, key, "%s", msg);
    }
    return 0;
}

static int build_classes(ctx *x)
{
    scenario *s = x->s;
    workload_cfg *w = &s->wl;
    int n = 0;
    for (size_t i = 0; i < s->raw.ns; i++) n += !strncmp(s->raw.s[i].name, "class ", 6);
    w->explicit_classes = n > 0;
    w->classes = calloc((size_t) (n ? n : 1), sizeof *w->classes);
    if (!w->classes) return fail(x, NULL, "workload", NULL, "out of memory");
    const cfg_entry *pe, *oe;
    const char *pdef = val(x, "workload", "prompt_tokens", &pe);
    const char *odef = val(x, "workload", "output_tokens", &oe);
    if (!pdef) pdef = "const(512)";
    if (!odef) odef = "const(128)";
    double total = 0;
    for (size_t i = 0; i < s->raw.ns; i++) {
        const char *sec = s->raw.s[i].name;
        if (n && strncmp(sec, "class ", 6)) continue;
        if (!n && i > 0) break;
        wl_class *c = &w->classes[w->nclasses++];
        if (n) {
            if (strlen(sec + 6) >= sizeof c->name) return fail(x, NULL, sec, NULL, "class name too long");
            snprintf(c->name, sizeof c->name, "%s", sec + 6);
            c->line = s->raw.s[i].line;
        } else sec = "workload";
        const cfg_entry *e;
        /* A class without its own distribution parses the workload's text again
         * (each class owns its dist). */
        const char *pv = n ? val(x, sec, "prompt_tokens", &e) : NULL;
        char msg[512];
        if (dist_parse(&c->prompt, pv ? pv : pdef, s->raw.dir, msg, sizeof msg) != 0)
            return pv ? fail(x, e, sec, "prompt_tokens", "%s", msg) : fail(x, pe, "workload", "prompt_tokens", "%s", msg);
        const char *ov = n ? val(x, sec, "output_tokens", &e) : NULL;
        if (dist_parse(&c->output, ov ? ov : odef, s->raw.dir, msg, sizeof msg) != 0)
            return ov ? fail(x, e, sec, "output_tokens", "%s", msg) : fail(x, oe, "workload", "output_tokens", "%s", msg);
        if (ov && dist_max(&c->output) < 1) return fail(x, e, sec, "output_tokens", "must allow at least 1 token");
        c->target = w->target;
        c->share = 1;
        if (!n) break;
        const char *t = val(x, sec, "target", &e);
        if (t) {
            c->target = pool_index(s, t);
            if (c->target < 0) return fail(x, e, sec, "target", "no pool named '%s'", t);
        }
        if (get_num(x, sec, "share", 1, 0, 0, 1e12, &c->share)) return -1;
        total += c->share;
    }
    for (int i = 0; i < w->nclasses; i++)
        if (gateway_class_keys(x, n ? w->classes[i].name : NULL, &w->classes[i])) return -1;
    if (n) {
        if (!(total > 0) && !w->tr.label) {
            for (size_t i = 0; i < s->raw.ns; i++)
                if (!strncmp(s->raw.s[i].name, "class ", 6))
                    return fail(x, NULL, s->raw.s[i].name, "share", "every class's share is 0: at least one must be > 0");
        }
        for (int i = 0; i < w->nclasses; i++) w->classes[i].share = total > 0 ? w->classes[i].share / total : 0;
    }
    if (w->tr.label) {
        const cfg_entry *ce;
        val(x, "workload", "class_column", &ce);
        if (!n) return fail(x, ce, "workload", "class_column", "the trace names classes, but the scenario has no [class NAME] section");
        w->trace_class = malloc(w->tr.nlabels * sizeof *w->trace_class);
        if (!w->trace_class) return fail(x, ce, "workload", "class_column", "out of memory");
        for (size_t l = 0; l < w->tr.nlabels; l++) {
            int found = -1;
            for (int i = 0; i < w->nclasses; i++)
                if (!strcmp(w->classes[i].name, w->tr.labels[l])) found = i;
            if (found < 0) {
                size_t row = 0;
                while (w->tr.label[row] != (int32_t) l) row++;
                char lab[64], tp[256];
                const cfg_entry *te;
                errmsg_field(w->tr.labels[l], lab, sizeof lab);
                errmsg_field(val(x, "workload", "trace", &te), tp, sizeof tp);
                return fail(x, ce, "workload", "class_column", "%s: data row %zu names class '%s', which has no [class %s] section",
                            tp, row + 1, lab, lab);
            }
            w->trace_class[l] = (int32_t) found;
        }
        /* Shares are the trace's: the fraction of its rows of each class. */
        for (int i = 0; i < w->nclasses; i++) w->classes[i].share = 0;
        for (size_t r = 0; r < w->tr.n; r++) w->classes[w->trace_class[w->tr.label[r]]].share += 1.0 / (double) w->tr.n;
    }
    return 0;
}

static int build_gpu(ctx *x, const char *sec, const char *name, gpu_spec *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    for (char *p = g->name; *p; p++) *p = (char) tolower((unsigned char) *p);
    if (get_str(x, sec, "full_name", name, g->full_name, sizeof g->full_name)) return -1;
    const cfg_entry *e;
    if (!val(x, sec, "bf16_tflops", &e)) return fail(x, NULL, sec, "bf16_tflops", "missing (required)");
    if (!val(x, sec, "mem_gib", &e)) return fail(x, NULL, sec, "mem_gib", "missing (required)");
    if (!val(x, sec, "mem_bw_gbs", &e)) return fail(x, NULL, sec, "mem_bw_gbs", "missing (required)");
    if (get_num(x, sec, "bf16_tflops", 0, 0, 1, 1e9, &g->bf16_tflops)) return -1;
    if (get_num(x, sec, "fp8_tflops", g->bf16_tflops, 0, 1, 1e9, &g->fp8_tflops)) return -1;
    if (get_num(x, sec, "mem_gib", 0, 0, 1, 1e9, &g->mem_gib)) return -1;
    if (get_num(x, sec, "mem_bw_gbs", 0, 0, 1, 1e9, &g->mem_bw_gbs)) return -1;
    if (get_num(x, sec, "link_gbs", 32, 0, 1, 1e9, &g->link_gbs)) return -1;
    if (get_num(x, sec, "price_hr", 0, 0, 0, 1e9, &g->price_hr)) return -1;
    if (get_num(x, sec, "fp4_tflops", 0, 0, 0, 1e9, &g->fp4_tflops)) return -1;
    if (get_num(x, sec, "idle_w", 0, 0, 0, 1e6, &g->idle_w)) return -1;
    if (get_num(x, sec, "max_w", 0, 0, 0, 1e6, &g->max_w)) return -1;
    if (get_int(x, sec, "gpus_per_node", 8, 1, 1000000, &g->gpus_per_node)) return -1;
    if (get_num(x, sec, "node_link_gbs", 50, 0, 0, 1e9, &g->node_link_gbs)) return -1;
    if (get_num(x, sec, "node_link_latency_us", 5, 0, 0, 1e9, &g->node_link_latency_us)) return -1;
    if (get_num(x, sec, "mem_usable_gib", 0, 0, 0, 1e9, &g->mem_usable_gib)) return -1;
    char src[200], msg[512];
    snprintf(src, sizeof src, "scenario %s", x->s->raw.path);
    if (get_str(x, sec, "source", src, g->source, sizeof g->source)) return -1;
    if (catalog_check_gpu(g, msg, sizeof msg) != 0) return fail(x, NULL, sec, NULL, "%s", msg);
    return 0;
}

static int build_model(ctx *x, const char *sec, const char *name, model_spec *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    for (char *p = m->name; *p; p++) *p = (char) tolower((unsigned char) *p);
    const char *req[] = { "layers", "hidden", "heads", "params" };
    for (size_t i = 0; i < 4; i++) {
        const cfg_entry *e;
        if (!val(x, sec, req[i], &e)) return fail(x, NULL, sec, req[i], "missing (required)");
    }
    if (get_int(x, sec, "layers", 0, 1, 100000, &m->layers)) return -1;
    if (get_int(x, sec, "hidden", 0, 1, 10000000, &m->hidden)) return -1;
    if (get_int(x, sec, "heads", 0, 1, 100000, &m->heads)) return -1;
    if (get_int(x, sec, "kv_heads", m->heads, 1, m->heads, &m->kv_heads)) return -1;
    const cfg_entry *hd;
    if (!val(x, sec, "head_dim", &hd) && m->hidden < m->heads)
        return fail(x, NULL, sec, "head_dim", "missing: required when hidden (%d) < heads (%d)", m->hidden, m->heads);
    if (get_int(x, sec, "head_dim", m->hidden / m->heads, 1, 100000, &m->head_dim)) return -1;
    if (!hd && m->hidden % m->heads != 0) {
        const cfg_entry *he;
        val(x, sec, "heads", &he);
        return fail(x, he, sec, "heads", "heads (%d) must divide hidden (%d), or give head_dim", m->heads, m->hidden);
    }
    /* An explicit head_dim may differ from hidden / heads: some models do (Gemma-7B: 16 x 256 != 3072). */
    if (get_int(x, sec, "intermediate", 4 * m->hidden, 1, 100000000, &m->intermediate)) return -1;
    if (get_int(x, sec, "vocab", 32000, 1, 100000000, &m->vocab)) return -1;
    if (get_num(x, sec, "params", 0, 0, 1, 1e16, &m->params)) return -1;
    if (get_int(x, sec, "context", 4096, 1, 100000000, &m->context)) return -1;
    int wk;
    static const char *MW[] = { "bf16", "fp16", "fp8", "int8", "int4", "fp4" };
    if (get_enum(x, sec, "weights", "bf16|fp16|fp8|int8|int4|fp4", 0, &wk)) return -1;
    snprintf(m->weights, sizeof m->weights, "%s", MW[wk]);
    if (get_int(x, sec, "experts", 0, 0, 1000000, &m->experts)) return -1;
    if (m->experts) {   /* the MoE keys (catalog_check_model checks they fit together) */
        const cfg_entry *e;
        if (!val(x, sec, "experts_per_token", &e)) return fail(x, NULL, sec, "experts_per_token", "missing (required with experts)");
        if (get_int(x, sec, "experts_per_token", 0, 1, m->experts, &m->experts_per_token)) return -1;
        if (get_int(x, sec, "shared_experts", 0, 0, 1000000, &m->shared_experts)) return -1;
        if (get_int(x, sec, "moe_intermediate", m->intermediate, 1, 100000000, &m->moe_intermediate)) return -1;
        if (get_int(x, sec, "first_dense_layers", 0, 0, m->layers - 1, &m->first_dense_layers)) return -1;
        if (get_num(x, sec, "expert_params", 3.0 * m->hidden * m->moe_intermediate, 0, 1, 1e16, &m->expert_params)) return -1;
    } else {
        static const char *moe_keys[] = { "experts_per_token", "shared_experts", "moe_intermediate", "first_dense_layers", "expert_params" };
        for (size_t i = 0; i < sizeof moe_keys / sizeof moe_keys[0]; i++) {
            const cfg_entry *e;
            if (val(x, sec, moe_keys[i], &e)) return fail(x, e, sec, moe_keys[i], "needs experts (a mixture-of-experts model)");
        }
    }
    if (get_int(x, sec, "kv_lora_rank", 0, 0, 100000000, &m->kv_lora_rank)) return -1;
    const cfg_entry *re;
    if (!m->kv_lora_rank && val(x, sec, "qk_rope_head_dim", &re)) return fail(x, re, sec, "qk_rope_head_dim", "needs kv_lora_rank (MLA)");
    if (get_int(x, sec, "qk_rope_head_dim", 0, 0, 100000000, &m->qk_rope_head_dim)) return -1;
    if (get_bool(x, sec, "encoder", 0, &m->encoder)) return -1;
    if (m->heads % m->kv_heads != 0) {
        const cfg_entry *e;
        val(x, sec, "kv_heads", &e);
        return fail(x, e, sec, "kv_heads", "heads (%d) must be a multiple of kv_heads (%d)", m->heads, m->kv_heads);
    }
    char src[200], msg[512];
    snprintf(src, sizeof src, "scenario %s", x->s->raw.path);
    if (get_str(x, sec, "source", src, m->source, sizeof m->source)) return -1;
    if (catalog_check_model(m, msg, sizeof msg) != 0) return fail(x, NULL, sec, NULL, "%s", msg);
    return 0;
}

/* The kind a pool section names (the first row when it names none or an
 * unknown one: build_pool reports the latter). */
const station_kind *section_kind(const scenario *s, const char *sec)
{
    const cfg_entry *ke = cfg_get(&s->raw, sec, "kind");
    const station_kind *k = ke ? station_kind_find(ke->value) : NULL;
    return k ? k : station_kind_at(0);
}

/* A pool section's value of KEY (fleetcfg's lookup). */
typedef struct fleet_get_ctx { ctx *x; const char *sec; const station_kind *kind; } fleet_get_ctx;
static const char *fleet_get(void *c, const char *key)
{
    const fleet_get_ctx *g = c;
    const cfg_entry *e;
    /* A key the kind reads itself (a router's pause_every_s) is not a fleet key there. */
    for (const scn_key *k = g->kind->keys; k && k->key; k++)
        if (!strcmp(k->key, key)) return NULL;
    return val(g->x, g->sec, key, &e);
}

/* The pool's fleet keys (fleetcfg.h): P->fleet stays NULL when none is given,
 * so that a pool without them runs exactly as before. */
static int build_fleet(ctx *x, const char *sec, pool_cfg *p)
{
    fleet_get_ctx g = { x, sec, p->kind };
    fleet_cfg f;
    int any;
    const char *key;
    char msg[512];
    int units = p->units > 0 ? p->units : p->servers;
    if (fleetcfg_parse(&f, fleet_get, &g, x->s->raw.dir, units, &any, &key, msg, sizeof msg) != 0) {
        fleetcfg_free(&f);
        const cfg_entry *e;
        val(x, sec, key, &e);
        return fail(x, e, sec, key, "%s", msg);
    }
    if (!any) return 0;
    if (cpucfg_read_node(&x->c, sec, &f.cpu) != 0) {   /* its [node NAME] (fleet/cpunode.h) */
        fleetcfg_free(&f);
        return -1;
    }
    for (const fleetcfg_key *k = FLEETCFG_KEYS; k->key; k++) {
        const cfg_entry *e;
        if (!fleet_get(&g, k->key) || !val(x, sec, k->key, &e)) continue;
        if (!(p->kind->flags & KIND_FLEET) && !((p->kind->flags & KIND_CPU) && cpucfg_pool_key(k->key))) {
            fleetcfg_free(&f);
            return fail(x, e, sec, k->key, "not supported by kind = %s pools", p->kind->name);
        }
        if (!strcmp(k->key, "autoscale") && f.as.metric == AS_KV && !(p->kind->flags & KIND_TOKENS)) {
            fleetcfg_free(&f);
            return fail(x, e, sec, k->key, "kv needs a pool with a KV cache (kind = llm)");
        }
    }
    if (p->kind->check_fleet) {   /* the fleet keys the kind does not model */
        const char *keys[64];
        int n = 0;
        for (const fleetcfg_key *k = FLEETCFG_KEYS; k->key && n < 64; k++)
            if (fleet_get(&g, k->key)) keys[n++] = k->key;
        if (p->kind->check_fleet(&x->c, sec, p, keys, n) != 0) {
            fleetcfg_free(&f);
            return -1;
        }
    }
    if (!(p->fleet = malloc(sizeof *p->fleet))) {
        fleetcfg_free(&f);
        return fail(x, NULL, sec, NULL, "out of memory");
    }
    *p->fleet = f;
    return 0;
}

static int build_pool(ctx *x, const char *sec, const char *name, int line, pool_cfg *p)
{
    memset(p, 0, sizeof *p);
    if (strlen(name) >= sizeof p->name) return fail(x, NULL, sec, NULL, "pool name too long");
    snprintf(p->name, sizeof p->name, "%s", name);
    p->line = line;
    char choices[256];
    station_kind_choices(choices, sizeof choices);
    int k;
    if (get_enum(x, sec, "kind", choices, 0, &k)) return -1;
    p->kind = station_kind_at(k);
    int64_t v;
    if (get_i64(x, sec, "queue_limit", 0, 0, INT64_MAX, &v)) return -1;
    p->queue_limit = (uint64_t) v;
    if (get_num(x, sec, "timeout_ms", 0, 0, 0, SIMTIME_HORIZON_MS, &p->timeout_ms)) return -1;
    if (p->kind->parse && p->kind->parse(&x->c, sec, p) != 0) return -1;
    return build_fleet(x, sec, p);
}

static int build(scenario *s, const char *path, const char *const *sets, int nsets, char *err, size_t errlen);

int scenario_load(scenario *s, const char *path, const char *const *sets, int nsets, char *err, size_t errlen)
{
    gsl_set_error_handler_off();   /* errors come back as status codes and NULLs (checked) */
    memset(s, 0, sizeof *s);
    if (cfg_load(&s->raw, path, err, errlen) != 0) return -1;
    return build(s, path, sets, nsets, err, errlen);
}

int scenario_load_text(scenario *s, const char *name, const char *text, const char *const *sets, int nsets,
                       char *err, size_t errlen)
{
    gsl_set_error_handler_off();   /* errors come back as status codes and NULLs (checked) */
    memset(s, 0, sizeof *s);
    if (cfg_load_string(&s->raw, name, text, err, errlen) != 0) return -1;
    return build(s, name, sets, nsets, err, errlen);
}

static int build(scenario *s, const char *path, const char *const *sets, int nsets, char *err, size_t errlen)
{
    ctx x = { { &s->raw, NULL, err, errlen }, s };
    kinds_builtin();
    for (int i = 0; i < nsets; i++)
        if (cfg_set(&s->raw, sets[i], err, errlen) != 0) return -1;
    if (check_sections(&x) || check_keys(&x)) return -1;

    /* Pools first: the workload's target refers to them. */
    int npools = 0, ngpus = 0, nmodels = 0;
    for (size_t i = 0; i < s->raw.ns; i++) {
        const char *n = s->raw.s[i].name;
        npools += !strncmp(n, "pool ", 5);
        ngpus += !strncmp(n, "gpu ", 4);
        nmodels += !strncmp(n, "model ", 6);
    }
    if (npools == 0) {
        snprintf(err, errlen, "%s: no [pool NAME] section: a scenario needs at least one pool", path);
        return -1;
    }
    s->pools = calloc((size_t) npools, sizeof *s->pools);
    s->gpus = calloc((size_t) ngpus + 1, sizeof *s->gpus);
    s->models = calloc((size_t) nmodels + 1, sizeof *s->models);
    if (!s->pools || !s->gpus || !s->models) { snprintf(err, errlen, "out of memory"); return -1; }
    for (size_t i = 0; i < s->raw.ns; i++) {
        const char *n = s->raw.s[i].name;
        if (!strncmp(n, "pool ", 5)) {
            if (build_pool(&x, n, n + 5, s->raw.s[i].line, &s->pools[s->npools])) {
                /* Not counted yet, so scenario_free would miss what its kind parsed. */
                pool_cfg *p = &s->pools[s->npools];
                if (p->kind && p->kind->free_cfg) p->kind->free_cfg(p);
                return -1;
            }
            s->raw.s[i].pool = s->npools++;
        } else if (!strncmp(n, "gpu ", 4)) {
            if (build_gpu(&x, n, n + 4, &s->gpus[s->ngpus])) return -1;
            s->ngpus++;
        } else if (!strncmp(n, "model ", 6)) {
            if (build_model(&x, n, n + 6, &s->models[s->nmodels])) return -1;
            s->nmodels++;
        }
    }
    if (build_next(&x)) return -1;
    if (build_sim(&x) || build_workload(&x) || build_client(&x)) return -1;
    const cfg_entry *e;
    const char *t = val(&x, "workload", "target", &e);
    s->wl.target = 0;
    if (t) {
        s->wl.target = pool_index(s, t);
        if (s->wl.target < 0) return fail(&x, e, "workload", "target", "no pool named '%s'", t);
    }
    if (build_classes(&x)) return -1;
    if (check_clock(&x) || check_periods(&x) || check_graph(&x)) return -1;
    int has_llm = 0;
    for (int i = 0; i < s->npools; i++) has_llm |= (s->pools[i].kind->flags & KIND_TOKENS) != 0;
    /* [slo CLASS] sections name the [class NAME] sections. */
    int nc = s->wl.explicit_classes ? s->wl.nclasses : 0;
    const char **names = calloc((size_t) nc + 1, sizeof *names);
    if (!names) { snprintf(err, errlen, "out of memory"); return -1; }
    for (int i = 0; i < nc; i++) names[i] = s->wl.classes[i].name;
    int rc = slo_parse(&s->raw, has_llm, names, nc, &s->slo, err, errlen);
    free(names);
    return rc;
}

void scenario_free(scenario *s)
{
    for (int i = 0; i < s->npools; i++) {
        pool_cfg *p = &s->pools[i];
        if (p->kind && p->kind->free_cfg) p->kind->free_cfg(p);
        if (p->fleet) fleetcfg_free(p->fleet);
        free(p->fleet);
        free(p->next);
    }
    free(s->pools);
    free(s->gpus);
    free(s->models);
    wl_cfg_free(&s->wl);
    cfg_free(&s->raw);
    slo_free(&s->slo);
    memset(s, 0, sizeof *s);
}
