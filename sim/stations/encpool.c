/* encpool.c -- an encoder pool with dynamic batching (encpool.h). */
#include "stations/encpool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/result.h"

typedef struct encpool {
    station st;               /* common part; must be first */
    const encpool_cfg *c;
    int idle;                 /* replicas not in a pass */
    int *free_stack;          /* idle replicas, the next to serve on top */
    request **held;           /* per replica: the requests of its pass (max_batch slots each) */
    int *nheld;               /* per replica: how many */
    evq_id timer;             /* the wake-up for the oldest request's max_wait_ms, 0: none */
    simtime_t timer_at;       /* when it fires, ns */
    /* Measured in the window: */
    uint64_t passes;          /* passes started */
    uint64_t seqs;            /* requests in them (measured or not) */
    uint64_t truncated;       /* measured requests whose prompt exceeded max_seq_len */
    double tokens;            /* tokens computed (padded), all passes */
    double real_tokens;       /* of those, the sequences' own (not padding) */
    double op_ms[ENC_OP_N + 1]; /* pass time by operator, ms (the last: fixed overhead) */
} encpool;

static void dispatch(encpool *p);

/* Splits one pass of BATCH x LEN into P->op_ms: the busy time over the operators
 * by their own times under the pool's cost model (enc_pass_ops), the fixed
 * overhead last. */
static void add_ops(encpool *p, int batch, int64_t len, double busy, double fixed)
{
    enc_pass_ops(&p->c->enc, batch, len, busy, p->op_ms);
    p->op_ms[ENC_OP_N] += fixed;
}

static void on_pass_end(evq *q, void *subject, int64_t arg)
{
    encpool *p = subject;
    station *st = &p->st;
    int u = (int) arg, n = p->nheld[u];
    request **b = &p->held[(size_t) u * (size_t) p->c->max_batch];
    simtime_t now = evq_now(q);
    p->nheld[u] = 0;
    station_busy(st, -1);
    for (int i = 0; i < n; i++) {
        request *r = b[i];
        simtime_t took = now - r->start;
        r->service_ns += took;
        station_charge(st, r, (double) took / n);   /* the replica's time, shared by the pass */
        if (r->measured) stat_add(st->service_ms, simtime_to_ms(took));
    }
    /* The batch leaves before U is free again: its slots are then U's next pass's. */
    for (int i = 0; i < n; i++) station_forward(st, b[i], 0);
    p->free_stack[p->idle++] = u;
    dispatch(p);
}

/* Replica U takes up to max_batch waiting requests into one pass. */
static void start_pass(encpool *p, int u)
{
    station *st = &p->st;
    const encpool_cfg *c = p->c;
    request **b = &p->held[(size_t) u * (size_t) c->max_batch];
    int n = 0;
    int64_t len = 1, real = 0;
    request *r;
    while (n < c->max_batch && (r = station_dequeue(st))) {
        station_start(st, r);
        int64_t l = enc_len(&c->enc, r->prompt);
        if (r->measured && r->prompt > l) p->truncated++;
        if (l > len) len = l;
        real += l;
        b[n++] = r;
    }
    p->nheld[u] = n;
    station_busy(st, +1);
    double busy, fixed;
    enc_pass_parts(&c->enc, n, len, &busy, &fixed);
    if (st->sink->measuring && *st->sink->measuring) {
        p->passes++;
        p->seqs += (uint64_t) n;
        p->tokens += (double) n * (double) len;
        p->real_tokens += (double) real;
        add_ops(p, n, len, busy, fixed);
    }
    station_after(st, simtime_from_ms(busy + fixed), on_pass_end, p, u);
}

static void on_timer(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    encpool *p = subject;
    p->timer = 0;
    dispatch(p);
}

/* Free replicas take batches: a full one now, else the waiting requests once
 * the oldest has waited max_wait_ms (a wake-up is set for then). */
static void dispatch(encpool *p)
{
    station *st = &p->st;
    simtime_t now = evq_now(st->q);
    while (p->idle > 0 && st->qlen > 0) {
        request *head = station_peek(st);
        if (!head) return;
        simtime_t due = head->enq + simtime_from_ms(p->c->max_wait_ms);
        if (st->qlen < (uint64_t) p->c->max_batch && due > now) {
            if (p->timer && p->timer_at == due) return;
            if (p->timer) evq_cancel(st->q, p->timer);
            p->timer_at = due;
            p->timer = station_at(st, due, on_timer, p, 0);
            return;
        }
        start_pass(p, p->free_stack[--p->idle]);
    }
}

static void arrive(station *st, request *r)
{
    encpool *p = (encpool *) st;
    r->enq = evq_now(st->q);
    if (station_enqueue(st, r) == 0) dispatch(p);
}

static void window_open(station *st)
{
    encpool *p = (encpool *) st;
    p->passes = p->seqs = p->truncated = 0;
    p->tokens = p->real_tokens = 0;
    memset(p->op_ms, 0, sizeof p->op_ms);
}

/* Its rows: passes, the mean batch, truncated prompts, padding, the pass time by operator. */
static int report(station *st, pool_result *out)
{
    encpool *p = (encpool *) st;
    out->cost_per_hour = st->cfg->servers * p->c->usd_per_hour;
    double sum = 0;
    for (int k = 0; k <= ENC_OP_N; k++) sum += p->op_ms[k];
    static const char *const NAMES[ENC_OP_N + 1] = {
        "enc_share_attention", "enc_share_qkv", "enc_share_out_proj", "enc_share_mlp", "enc_share_norm_elementwise",
        "enc_share_head", "enc_share_framework" };
    int rc = pool_result_add(out, "passes", (double) p->passes);
    rc |= pool_result_add(out, "batch_mean", p->passes ? (double) p->seqs / (double) p->passes : 0);
    rc |= pool_result_add(out, "truncated", (double) p->truncated);
    rc |= pool_result_add(out, "padding_share", p->tokens > 0 ? 1 - p->real_tokens / p->tokens : 0);
    rc |= pool_result_add(out, "max_seq_len", p->c->enc.max_seq_len);
    for (int k = 0; k <= ENC_OP_N; k++) rc |= pool_result_add(out, NAMES[k], sum > 0 ? p->op_ms[k] / sum : 0);
    /* Which cost model priced the passes, as an LLM pool's (report.c prints them
     * as one object): learned on decoder steps, an encoder pass is outside its
     * measurements (extrapolated, no validated error of its own). */
    char coeffs[640];
    const enc_cfg *e = &p->c->enc;
    const char *kind = enc_cost_describe(e, coeffs, sizeof coeffs);
    int learned = e->cost == ENC_COST_LEARNED;
    rc |= pool_result_add_name(out, "cost_model.kind", kind);
    rc |= pool_result_add(out, "cost_model.id", NAN);
    rc |= pool_result_add_name(out, "cost_model.source", learned ? "learned" : e->gpu_name[0] ? "datasheet" : "scenario");
    rc |= pool_result_add(out, "cost_model.mape", NAN);
    rc |= pool_result_add(out, "cost_model.extrapolated", learned);
    rc |= pool_result_add_name(out, "cost_model.range", learned ? "extrapolated" : "");
    rc |= pool_result_add_name(out, "cost_model.coefficients", coeffs);
    return rc ? -1 : 0;
}

static void destroy(station *st)
{
    encpool *p = (encpool *) st;
    free(p->free_stack);
    free(p->held);
    free(p->nheld);
    station_fini(st);
    free(st);
}

static const station_ops OPS = { .arrive = arrive, .window_open = window_open, .report = report, .destroy = destroy };

static station *encpool_new(const pool_cfg *cfg, const station_env *env)
{
    encpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (station_init(&p->st, &OPS, cfg, env) != 0) {
        free(p);
        return NULL;
    }
    p->c = cfg->ext;
    size_t n = (size_t) cfg->servers;
    p->free_stack = calloc(n, sizeof *p->free_stack);
    p->held = calloc(n * (size_t) p->c->max_batch, sizeof *p->held);
    p->nheld = calloc(n, sizeof *p->nheld);
    if (!p->free_stack || !p->held || !p->nheld) {
        destroy(&p->st);
        return NULL;
    }
    for (int u = cfg->servers - 1; u >= 0; u--) p->free_stack[p->idle++] = u;   /* replica 0 serves first */
    p->st.capacity = cfg->servers;
    return &p->st;
}

static const scn_key KEYS[] = {
    { "model", "", "the encoder (BERT-style) model it runs, from the catalog (required): bert-base-uncased, "
      "all-minilm-l6-v2, bge-reranker-base, bge-m3, or catalog add --hf" },
    { "gpu", "", "the catalog GPU each replica runs on (or cpu_tflops and cpu_mem_gbs)" },
    { "cpu_tflops", "", "on a CPU: peak of a replica's cores together, TFLOP/s (with cpu_mem_gbs)" },
    { "cpu_mem_gbs", "", "on a CPU: a replica's memory bandwidth, GB/s" },
    { "max_seq_len", "", "prompt tokens a sequence is truncated to (default: the model's context; at most it)" },
    { "servers", "1", "replicas (each one GPU or CPU)" },
    { "max_batch", "32", "requests one forward pass takes, at most (dynamic batching)" },
    { "max_wait_ms", "0", "how long the oldest waiting request waits for a fuller batch, ms (0: a free replica "
      "takes what is waiting)" },
    { "usd_per_hour", "", "$ per replica-hour (default: its GPU's price in the catalog; on a CPU 0)" },
    { "cost", "auto", "how a pass is priced: learned (the learned step model's efficiencies for the GPU and engine, "
      "docs/learned.md), roofline, or auto: learned on a GPU, the roofline on a CPU or where its keys are given" },
    { "engine", "", "cost = learned: whose efficiencies (vllm, sglang, trtllm, generic; default: vllm, which serves "
      "BERT-style embedding models)" },
    { "compute_eff", "0.6", "share of peak FLOP/s reached (the roofline's)" },
    { "memory_eff", "0.8", "share of peak bandwidth reached (the roofline's)" },
    { "step_overhead_ms", "1.0", "fixed CPU/launch overhead per pass, ms (the roofline's)" },
    { "launch_us_per_layer", "20", "kernel-launch cost per layer per pass, microseconds (the roofline's)" },
    { NULL, NULL, NULL },
};

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    encpool_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    p->ext = c;
    int rc = enc_parse(x, sec, "", 1, &c->enc);
    if (rc < 0) return -1;
    if (rc == 1) return scn_fail_sec(x, sec, "model", "missing (required: the encoder model the pool runs)");
    if (scn_int(x, sec, "servers", 1, 1, 1000000, &p->servers) ||
        scn_int(x, sec, "max_batch", 32, 1, 100000, &c->max_batch) ||
        scn_num(x, sec, "max_wait_ms", 0, 0, 0, 1e9, &c->max_wait_ms))
        return -1;
    c->usd_given = scn_value(x, sec, "usd_per_hour") != NULL;
    if (scn_num(x, sec, "usd_per_hour", 0, 0, 0, 1e12, &c->usd_per_hour)) return -1;
    return 0;
}

static int resolve(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db)
{
    encpool_cfg *c = p->ext;
    if (enc_resolve(x, sec, "", &c->enc, db)) return -1;
    if (!c->usd_given && c->enc.gpu_name[0]) {
        gpu_spec g;
        char msg[256];
        int found = 0;
        for (int j = 0; j < x->facts->ngpus; j++)
            if (!strcasecmp(x->facts->gpus[j].name, c->enc.gpu_name)) { g = x->facts->gpus[j]; found = 1; }
        if (found || catalog_gpu(db, c->enc.gpu_name, &g, msg, sizeof msg) == 0) c->usd_per_hour = g.price_hr;
    }
    return 0;
}

static void free_cfg(pool_cfg *p)
{
    free(p->ext);
    p->ext = NULL;
}

static double usd_per_hour(const pool_cfg *p) { return ((const encpool_cfg *) p->ext)->usd_per_hour * p->servers; }

/* The kind's defaults hook (run --verbose): a lone sequence's pass at the
 * truncation length, and a full batch's. */
static void defaults(const pool_cfg *p, const cfg *raw, const char *sec, double requests, FILE *out)
{
    (void) raw;
    (void) requests;
    const encpool_cfg *c = p->ext;
    char coeffs[640];
    fprintf(out, "  [%s] cost = %s (%s)\n", sec, enc_cost_describe(&c->enc, coeffs, sizeof coeffs), coeffs);
    fprintf(out, "  [%s] max_seq_len = %d (%s); one pass of 1 x %d tokens = %.4g ms, of %d x %d = %.4g ms\n", sec,
            c->enc.max_seq_len, c->enc.max_seq_len == c->enc.model.context ? "the model's context" : "given",
            c->enc.max_seq_len, enc_pass_ms(&c->enc, 1, c->enc.max_seq_len), c->max_batch, c->enc.max_seq_len,
            enc_pass_ms(&c->enc, c->max_batch, c->enc.max_seq_len));
}

static const char *model_name(const pool_cfg *p) { return ((const encpool_cfg *) p->ext)->enc.model_name; }

const station_kind encpool_kind = {
    .name = "encoder",
    .help = "an encoder (BERT-style) service: embeddings, classifiers, rerankers, one forward pass per batch of "
            "requests (dynamic batching), priced by the learned model or the roofline",
    .keys = KEYS,
    .parse = parse,
    .resolve = resolve,
    .make = encpool_new,
    .free_cfg = free_cfg,
    .usd_per_hour = usd_per_hour,
    .defaults = defaults,
    .model_name = model_name,
    .min_next = 0,
    .max_next = 1,
    .flags = KIND_TOKENS,
};
