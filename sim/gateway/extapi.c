/* extapi.c -- the external model API station, `kind = api` (see extapi.h). */
#include "gateway/extapi.h"
#include "core/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct extapi {
    station st;               /* common part; must be first */
    const api_cfg *api;       /* the API's model */
    api_bucket req, tok;      /* rate limits: requests and tokens per minute */
    int wake_pending;         /* a wake-up for the queue head is scheduled */
    uint64_t limited;         /* measured requests rejected with 429, count */
    uint64_t errors;          /* measured requests that failed, count */
    double usd;               /* charges for measured served requests, $ */
    double in_tokens, out_tokens;   /* their prompt and output tokens */
} extapi;

static uint64_t tokens_of(const request *r)
{
    return (uint64_t) r->prompt + (uint64_t) r->output;
}

/* Nanoseconds until both buckets admit R (0 = now; SIMTIME_NEVER = never). */
static simtime_t wait_for(extapi *a, const request *r, simtime_t now)
{
    simtime_t w1 = api_bucket_wait(&a->req, now, 1);
    simtime_t w2 = api_bucket_wait(&a->tok, now, tokens_of(r));
    return w1 > w2 ? w1 : w2;
}

static void on_done(evq *q, void *subject, int64_t arg)
{
    (void) q;
    extapi *a = subject;
    station *st = &a->st;
    request *r = (request *) (intptr_t) arg;
    simtime_t took = evq_now(st->q) - r->start;
    r->service_ns += took;
    if (r->measured) {
        stat_add(st->service_ms, simtime_to_ms(took));
        double usd = api_price(a->api, (uint64_t) r->prompt, (uint64_t) r->output);
        a->usd += usd;
        if (st->cls_usd) st->cls_usd[r->cls] += usd;
        a->in_tokens += r->prompt;
        a->out_tokens += r->output;
    }
    station_forward(st, r, 0);
}

static void on_failed(evq *q, void *subject, int64_t arg)
{
    (void) q;
    extapi *a = subject;
    request *r = (request *) (intptr_t) arg;
    if (r->measured) a->errors++;
    station_reject(&a->st, r);
}

/* Sends R now (the buckets admit it). */
static void send(extapi *a, request *r)
{
    station *st = &a->st;
    simtime_t now = evq_now(st->q);
    api_bucket_take(&a->req, now, 1);
    api_bucket_take(&a->tok, now, tokens_of(r));
    station_start(st, r);
    double first, last;
    if (api_sample(a->api, (uint64_t) r->output, st->rng, &first, &last)) {
        station_after(st, simtime_from_ms(first), on_failed, a, (int64_t) (intptr_t) r);
        return;
    }
    req_first_token(r, now + simtime_from_ms(first), st->index);
    r->last_token = now + simtime_from_ms(last);
    station_at(st, r->last_token, on_done, a, (int64_t) (intptr_t) r);
}

static void drain(extapi *a);

static void on_wake(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    extapi *a = subject;
    a->wake_pending = 0;
    drain(a);
}

/* Sends queued requests while the buckets allow; schedules a wake-up for the head. */
static void drain(extapi *a)
{
    station *st = &a->st;
    for (;;) {
        request *r = station_peek(st);
        if (!r) return;
        simtime_t w = wait_for(a, r, evq_now(st->q));
        if (w == 0) {
            send(a, station_dequeue(st));
            continue;
        }
        if (!a->wake_pending && station_after(st, w, on_wake, a, 0)) a->wake_pending = 1;
        return;
    }
}

static void reject(extapi *a, request *r)
{
    if (r->measured) a->limited++;
    station_reject(&a->st, r);
}

static void arrive(station *st, request *r)
{
    extapi *a = (extapi *) st;
    r->enq = evq_now(st->q);
    simtime_t w = wait_for(a, r, r->enq);
    if (w == SIMTIME_NEVER) {            /* more tokens than a minute's allowance */
        reject(a, r);
        return;
    }
    if (w == 0 && station_peek(st) == NULL) {
        send(a, r);
        return;
    }
    if (a->api->on_limit == API_LIMIT_REJECT) {
        reject(a, r);
        return;
    }
    if (station_enqueue(st, r) == 0) drain(a);
}

static int report(station *st, pool_result *out)
{
    extapi *a = (extapi *) st;
    double served = st->served ? (double) st->served : NAN;
    if (pool_result_add(out, "rate_limited", (double) a->limited)) return -1;
    if (pool_result_add(out, "errors", (double) a->errors)) return -1;
    if (pool_result_add(out, "api_usd", a->usd)) return -1;
    if (pool_result_add(out, "api_usd_per_request", a->usd / served)) return -1;
    if (pool_result_add(out, "input_tokens_mean", a->in_tokens / served)) return -1;
    if (pool_result_add(out, "output_tokens_mean", a->out_tokens / served)) return -1;
    return 0;
}

static void destroy(station *st)
{
    station_fini(st);
    free(st);
}

static const station_ops API_OPS = {
    .arrive = arrive,
    .report = report,
    .destroy = destroy,
};

static const scn_key KEYS[] = {
    { "ttft_ms", "", "time to first token distribution, ms (required)" },
    { "tpot_ms", "const(0)", "time per further output token, ms (one draw per request)" },
    { "token_ms", "", "per-token gap distribution, ms (one draw per token; replaces tpot_ms)" },
    { "price_in_per_1k", "0", "$ per 1000 prompt tokens" },
    { "price_out_per_1k", "0", "$ per 1000 output tokens" },
    { "rpm", "0", "rate limit, requests per minute (0 = none)" },
    { "tpm", "0", "rate limit, prompt + output tokens per minute (0 = none)" },
    { "on_limit", "reject", "over the rate limit: reject (HTTP 429) or queue" },
    { "error_rate", "0", "probability a request fails (after its TTFT, not charged)" },
    { NULL, NULL, NULL },
};

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    api_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail(x, sec, NULL, "out of memory");
    p->ext = c;
    if (scn_dist(x, sec, "ttft_ms", NULL, &c->ttft_ms)) return -1;
    if (scn_dist(x, sec, "tpot_ms", "const(0)", &c->tpot_ms)) return -1;
    if (scn_value(x, sec, "token_ms")) {
        if (scn_dist(x, sec, "token_ms", NULL, &c->token_ms)) return -1;
        c->has_token_ms = 1;
    }
    if (scn_num(x, sec, "price_in_per_1k", 0, 0, 0, 1e6, &c->price_in_per_1k)) return -1;
    if (scn_num(x, sec, "price_out_per_1k", 0, 0, 0, 1e6, &c->price_out_per_1k)) return -1;
    if (scn_num(x, sec, "rpm", 0, 0, 0, API_RATE_MAX, &c->rpm)) return -1;
    if (scn_num(x, sec, "tpm", 0, 0, 0, API_RATE_MAX, &c->tpm)) return -1;
    int lim;
    if (scn_enum(x, sec, "on_limit", "reject|queue", 0, &lim)) return -1;
    c->on_limit = lim ? API_LIMIT_QUEUE : API_LIMIT_REJECT;
    if (scn_num(x, sec, "error_rate", 0, 0, 0, 1, &c->error_rate)) return -1;
    char err[160];
    if (api_check(c, err, sizeof err) != 0) {
        char key[32];
        sscanf(err, "%31[^:]", key);
        return scn_fail(x, sec, key, "%s", err + strlen(key) + 2);
    }
    return 0;
}

static void free_cfg(pool_cfg *p)
{
    if (!p->ext) return;
    api_cfg_free(p->ext);
    free(p->ext);
    p->ext = NULL;
}

const station_kind extapi_kind = {
    .name = "api",
    .help = "an external model API: TTFT/TPOT, price per 1k tokens, rate limits, errors",
    .keys = KEYS,
    .parse = parse,
    .make = extapi_new,
    .free_cfg = free_cfg,
    .min_next = 0,
    .max_next = 1,
    .flags = KIND_TOKENS | KIND_GATEWAY | KIND_EMITS,
};

station *extapi_new(const pool_cfg *cfg, const station_env *env)
{
    extapi *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    if (station_init(&a->st, &API_OPS, cfg, env) != 0) {
        destroy(&a->st);
        return NULL;
    }
    a->api = cfg->ext;
    api_bucket_init(&a->req, a->api->rpm);
    api_bucket_init(&a->tok, a->api->tpm);
    a->st.capacity = 1;       /* the provider's capacity is not modelled: utilisation 0 */
    return &a->st;
}
