/* scenario.c -- the scenario schema, typed parsing and validation.
 *
 * The schema table below lists every key of every section kind with its default
 * and meaning; it drives unknown-key detection (with a suggestion), and
 * `latsim keys`.  Each key is then read by a typed getter that reports a bad
 * value as "FILE:LINE: [section] key: message".
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <strings.h>
#include <gsl/gsl_errno.h>
#include <sys/resource.h>
#include <unistd.h>
#include "engine/errmsg.h"
#include "run/scenario.h"
#include "fleet/fleetcfg.h"
#include "core/kind.h"
#include "run/kinds.h"
#include "engine/evq.h"
#include "fleet/fleet.h"
#include "workload/gwattr.h"
#include "core/zipf.h"
#include "engine/request.h"
#include "engine/simtime.h"

enum { K_SIM = 1, K_WL = 2, K_POOL = 4, K_GPU = 16, K_MODEL = 32, K_CLASS = 64, K_CLIENT = 128 };

typedef struct key_spec {
    const char *key;
    unsigned where;           /* K_* mask of the section kinds that accept it */
    const char *def;          /* default, as text ("" = required or derived) */
    const char *help;
} key_spec;

static const key_spec KEYS[] = {
    { "requests", K_SIM, "200000", "measured requests after warm-up" },
    { "warmup", K_SIM, "automatic", "requests discarded before measuring (default: at least requests/10, the old fixed rule, then until the system has filled and every cache's hit rate has settled, at most 10 x (requests/10 + requests): a fixed share either wastes a short run or measures a filling system, sim/run/warmup.h; 0 for a finite trace replay)" },
    { "seed", K_SIM, "1", "run seed (every entity's stream derives from it)" },
    { "cost_db", K_SIM, "the --db database", "calibration database where LLM pools' cost = auto, fitted and profile look their models up (relative to the scenario file; latsim run --cost-db FILE sets it)" },
    { "electricity_usd_per_kwh", K_SIM, "0", "price of electricity, $ per kWh; > 0 adds the GPUs' energy x pue x price to the $ costs (0: not counted)" },
    { "pue", K_SIM, "1", "power usage effectiveness (facility energy / IT energy, >= 1) the electricity cost is multiplied by" },
    { "title", K_SIM, "the file name", "the design's name in a review (latsim compare, report --html): one line of text" },
    { "description", K_SIM, "none", "one line saying what the design is, shown under its title in a review" },

    { "arrival", K_WL, "poisson", "poisson | gamma | constant | trace" },
    { "rate", K_WL, "", "requests/s: X, schedule(0s:R, T:R...), ramp(0s:R, T:R...) or diurnal(mean=, peak_to_trough=, period=, peak_at=); times in s|m|h (required unless trace or users)" },
    { "cv", K_WL, "1.0", "gamma: coefficient of variation of inter-arrival times" },
    { "users", K_WL, "", "closed loop: N users, each waits for its answer, thinks, asks again (instead of rate)" },
    { "think_ms", K_WL, "const(0)", "closed loop: think time between an answer and the next request, ms (distribution)" },
    { "ramp_users_s", K_WL, "0", "closed loop: user u starts at u x ramp_users_s / users, s" },
    { "trace", K_WL, "", "CSV or JSON-lines file (relative to the scenario file): arrival = trace replays its times; with poisson/gamma/constant/users its rows give each request's attributes" },
    { "trace_format", K_WL, "by extension", "csv | jsonl (default: jsonl for *.jsonl, else csv)" },
    { "trace_order", K_WL, "sequential", "attribute traces: sequential (file order) | shuffle (seeded permutation, new each pass)" },
    { "hash_block_tokens", K_WL, "512", "jsonl traces with hash ids: prompt tokens each id stands for (default 512: the block size of the Mooncake traces' hash_ids; synthetic prompts are hashed per KV block, block_tokens)" },
    { "class_column", K_WL, "none", "trace column (CSV header / JSON field) naming each row's [class NAME]" },
    { "adapter_column", K_WL, "none", "trace column (CSV header / JSON field) giving each row's LoRA adapter on pools with adapters: 1..adapters, 0 the base model (empty / null: the class's or a draw); wins over the class's `adapter`" },
    { "complexity_column", K_WL, "none", "trace column (CSV header / JSON field) giving each row's complexity score in [0, 1] (empty / null: none); wins over `complexity`" },
    { "time_column", K_WL, "TIMESTAMP", "trace: header of the arrival-time column" },
    { "time_format", K_WL, "datetime", "trace: seconds | milliseconds | datetime" },
    { "speedup", K_WL, "1", "trace: arrival-rate multiplier" },
    { "trace_start_s", K_WL, "0", "arrival = trace: replay only the rows from this time of the trace's clock on, s (plan --trace sets it to the peak window's start)" },
    { "trace_length_s", K_WL, "0", "arrival = trace: replay only this long a window from trace_start_s, s (0: to the end)" },
    { "loop", K_WL, "no", "trace: replay from the start when it runs out (no: a replay of every row is finite, measured to its end)" },
    { "prompt_column", K_WL, "ContextTokens", "trace: header of the prompt-token column (none = not used)" },
    { "output_column", K_WL, "GeneratedTokens", "trace: header of the output-token column (none = not used)" },
    { "prompt_tokens", K_WL, "const(512)", "prompt tokens per request (distribution; trace column wins)" },
    { "output_tokens", K_WL, "const(128)", "output tokens per request (distribution; trace column wins)" },
    { "target", K_WL, "first pool", "pool the requests enter" },

    { "share", K_CLASS, "1", "mixture weight of the class (normalised over the classes)" },
    { "prompt_tokens", K_CLASS, "workload's", "prompt tokens per request of the class (distribution; trace column wins)" },
    { "output_tokens", K_CLASS, "workload's", "output tokens per request of the class (distribution; trace column wins)" },
    { "target", K_CLASS, "workload's", "pool the class's requests enter" },
    { "adapter", K_CLASS, "drawn", "LoRA: adapter (1..adapters) the class's requests use on pools with adapters; 0: the base model (default: drawn by the pool's adapter_zipf_s)" },
    { "spec_acceptance", K_CLASS, "the pool's", "speculative decoding: probability each token proposed for the class's requests is accepted, on every speculating pool" },
    { "complexity", K_WL | K_CLASS, "", "complexity score per request in [0, 1] (distribution; for complexity routers)" },
    { "intents", K_WL | K_CLASS, "", "intents the requests ask a result cache (Zipf popularity; default: the cache's own)" },
    { "intent_zipf", K_WL | K_CLASS, "1", "Zipf exponent of intent popularity, > 0" },
    { "patience_s", K_WL | K_CLASS, "none", "how long a client waits for its answer to begin, s (distribution): a request still queued then leaves, abandoned; one in service too (patience_in_service)" },
    { "patience_in_service", K_WL | K_CLASS, "yes", "with patience_s: a client whose answer has not begun leaves a request in service too, and its work is cancelled (no: only a queued one leaves, Erlang-A)" },
    { "cache_ttl_s", K_WL | K_CLASS, "the cache's", "how long a result cache keeps their answers, s (0 = never cached, inf = forever)" },
    { "system_prompt_tokens", K_WL | K_CLASS, "0", "a system prompt of this many tokens put before every prompt (of the class; before the first turn of a session), the same for all: prefix caches share its blocks" },
    { "turns", K_WL | K_CLASS, "", "turns per multi-turn session (distribution, rounded, >= 1): each turn's prompt extends the previous turn's prompt and answer" },
    { "sessions", K_WL | K_CLASS, "1", "open loop with turns: conversations open at once; each arrival is the next turn of one drawn at random (closed loop: each user holds its own)" },

    { "timeout_ms", K_CLIENT, "0", "the client gives up on an attempt after this long, ms (0 = never)" },
    { "retries", K_CLIENT, "0", "further attempts after a timeout or an error (needs timeout_ms)" },
    { "backoff_ms", K_CLIENT, "100", "wait before the first retry, ms" },
    { "backoff_multiplier", K_CLIENT, "2", "growth of the wait per retry" },
    { "backoff_max_ms", K_CLIENT, "10000", "cap on the wait, ms" },
    { "jitter", K_CLIENT, "full", "full (uniform on [0, wait], AWS's full jitter) | none" },

    { "kind", K_POOL, "generic", "" },      /* help: the kind table's names */
    { "queue_limit", K_POOL, "0", "0 = unbounded; else arrivals finding this many waiting are rejected" },
    { "timeout_ms", K_POOL, "0", "0 = none; else requests still waiting after it are dropped" },
    { "next", K_POOL, "none", "where a served request goes next: a pool, or a list for kinds with several out-edges" },

    { "full_name", K_GPU, "NAME", "display name" },
    { "bf16_tflops", K_GPU, "", "dense BF16 TFLOP/s" },
    { "fp8_tflops", K_GPU, "bf16_tflops", "dense FP8/INT8 TFLOP/s" },
    { "mem_gib", K_GPU, "", "memory, GiB" },
    { "mem_usable_gib", K_GPU, "0", "memory the driver reports as the device total, GiB (what gpu_memory_utilization multiplies; 0: mem_gib x 0.98)" },
    { "mem_bw_gbs", K_GPU, "", "memory bandwidth, GB/s" },
    { "link_gbs", K_GPU, "32", "interconnect bandwidth per GPU, GB/s" },
    { "price_hr", K_GPU, "0", "on-demand $ per GPU-hour" },
    { "fp4_tflops", K_GPU, "0", "dense FP4 TFLOP/s (0: no FP4)" },
    { "idle_w", K_GPU, "0", "board power of an idle GPU holding a model, W (0: unknown)" },
    { "max_w", K_GPU, "0", "maximum board power, W (0: unknown)" },
    { "gpus_per_node", K_GPU, "8", "GPUs sharing link_gbs (a node or NVLink domain)" },
    { "node_link_gbs", K_GPU, "50", "per-GPU bandwidth between nodes, GB/s (InfiniBand NDR 400 Gb/s = 50)" },
    { "node_link_latency_us", K_GPU, "5", "latency of a message between nodes, us" },
    { "source", K_GPU | K_MODEL, "scenario file", "where the figures come from" },
    { "layers", K_MODEL, "", "transformer layers" },
    { "hidden", K_MODEL, "", "hidden size" },
    { "heads", K_MODEL, "", "query heads" },
    { "kv_heads", K_MODEL, "heads", "key/value heads" },
    { "head_dim", K_MODEL, "hidden/heads", "per-head dimension" },
    { "intermediate", K_MODEL, "4*hidden", "MLP intermediate size" },
    { "vocab", K_MODEL, "32000", "vocabulary size" },
    { "params", K_MODEL, "", "parameter count (e.g. 8.03e9)" },
    { "context", K_MODEL, "4096", "maximum context length, tokens" },
    { "weights", K_MODEL, "bf16", "precision the weights are published in (a pool's default weights)" },
    { "experts", K_MODEL, "0", "MoE: routed experts per MoE layer (0: dense)" },
    { "experts_per_token", K_MODEL, "", "MoE: routed experts each token uses (required with experts)" },
    { "shared_experts", K_MODEL, "0", "MoE: always-used experts per MoE layer" },
    { "moe_intermediate", K_MODEL, "intermediate", "MoE: intermediate size of one expert" },
    { "first_dense_layers", K_MODEL, "0", "MoE: dense layers before the MoE ones" },
    { "expert_params", K_MODEL, "3*hidden*moe_intermediate", "MoE: parameters of one expert of one layer" },
    { "kv_lora_rank", K_MODEL, "0", "MLA: compressed KV latent a token caches per layer (0: no MLA)" },
    { "qk_rope_head_dim", K_MODEL, "0", "MLA: RoPE key width cached beside it per layer" },
    { "encoder", K_MODEL, "no", "yes: an encoder (BERT-style: embeddings, classifiers, rerankers) for kind = encoder, "
      "embed_model and classifier_model; no: a decoder (an LLM)" },
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

/* The loader's context: the kinds' part (core/scn.h) and the scenario being built. */
typedef struct ctx {
    scn_ctx c;                /* the file, its overrides, the error buffer (what kinds see) */
    scenario *s;              /* the scenario being built */
} ctx;

/* ---- suggestions ---------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = malloc((lb + 1) * sizeof *row);
    if (!row) return (size_t) -1;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (tolower((unsigned char) a[i - 1]) != tolower((unsigned char) b[j - 1]));
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

static const char *closest_key(const char *key, unsigned where)
{
    const char *best = NULL;
    size_t bd = (size_t) -1;
    for (size_t i = 0; i < NKEYS; i++) {
        if (!(KEYS[i].where & where)) continue;
        size_t d = edit_distance(key, KEYS[i].key);
        if (d < bd) { bd = d; best = KEYS[i].key; }
    }
    return (bd <= 3 || (best && bd <= strlen(key) / 2)) ? best : NULL;
}

static const key_spec *find_key(const char *key, unsigned where)
{
    for (size_t i = 0; i < NKEYS; i++)
        if ((KEYS[i].where & where) && strcmp(KEYS[i].key, key) == 0) return &KEYS[i];
    return NULL;
}

/* ---- typed getters (core/scn.h) ------------------------------------------ */

#define fail(x, e, sec, key, ...) scn_fail_at(&(x)->c, (e), (sec), (key), __VA_ARGS__)
#define val(x, sec, key, e) scn_entry(&(x)->c, (sec), (key), (e))
#define get_i64(x, ...) scn_i64(&(x)->c, __VA_ARGS__)
#define get_int(x, ...) scn_int(&(x)->c, __VA_ARGS__)
#define get_num(x, ...) scn_num(&(x)->c, __VA_ARGS__)
#define get_bool(x, ...) scn_bool(&(x)->c, __VA_ARGS__)
#define get_enum(x, ...) scn_enum(&(x)->c, __VA_ARGS__)
#define get_str(x, ...) scn_str(&(x)->c, __VA_ARGS__)
#define get_dist(x, ...) scn_dist(&(x)->c, __VA_ARGS__)

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
static int pool_index(const scenario *s, const char *name)
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
static const station_kind *section_kind(const scenario *s, const char *sec)
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
        if (!(p->kind->flags & KIND_FLEET)) {
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

/* Checks every key of every section against the schema (a pool's: the common
 * pool keys and its kind's). */
static int check_keys(ctx *x)
{
    scenario *s = x->s;
    for (size_t i = 0; i < s->raw.n; i++) {
        const cfg_entry *e = &s->raw.e[i];
        unsigned where = 0;
        const char *sec = e->section;
        if (!strcmp(sec, "sim")) where = K_SIM;
        else if (!strcmp(sec, "workload")) where = K_WL;
        else if (!strcmp(sec, "client")) where = K_CLIENT;
        else if (!strncmp(sec, "gpu ", 4)) where = K_GPU;
        else if (!strncmp(sec, "model ", 6)) where = K_MODEL;
        else if (!strncmp(sec, "class ", 6)) where = K_CLASS;
        else if (!strncmp(sec, "pool ", 5)) where = K_POOL;
        else if (!strncmp(sec, "node ", 5)) {   /* [node NAME]: fleet/cpunode.h */
            if (cpucfg_node_key(e->key)) continue;
            return fail(x, e, sec, e->key, "unknown key (valid: cores, background_cpu, background_period_ms)");
        }
        else continue;             /* [slo]: slo.c; unknown sections: check_sections */
        if (find_key(e->key, where)) continue;
        if (where == K_POOL && fleetcfg_find(e->key)) continue;   /* checked by build_pool */
        if (where != K_POOL) {
            const char *near = closest_key(e->key, where);
            if (near) return fail(x, e, sec, e->key, "unknown key (did you mean '%s'?)", near);
            return fail(x, e, sec, e->key, "unknown key (see latsim keys)");
        }
        const station_kind *k = section_kind(s, sec);
        if (station_kind_key(k, e->key)) continue;
        for (int j = 0; j < station_kind_count(); j++)
            if (station_kind_key(station_kind_at(j), e->key))
                return fail(x, e, sec, e->key, "not valid for kind = %s pools (only for kind = %s)",
                            k->name, station_kind_at(j)->name);
        const char *near = closest_key(e->key, where);
        size_t bd = near ? edit_distance(e->key, near) : (size_t) -1;
        for (int set = -1; set < 0 || (k->more_keys && k->more_keys(set)); set++)
            for (const scn_key *q = set < 0 ? k->keys : k->more_keys(set); q && q->key; q++) {
                size_t d = edit_distance(e->key, q->key);
                if (d < bd && (d <= 3 || d <= strlen(e->key) / 2)) { bd = d; near = q->key; }
            }
        if (near) return fail(x, e, sec, e->key, "unknown key (did you mean '%s'?)", near);
        return fail(x, e, sec, e->key, "unknown key (see latsim keys)");
    }
    return 0;
}

/* 1 when VALUE, a comma-separated list (a `next` or `target`), names POOL. */
static int names_pool(const char *value, const char *pool)
{
    size_t n = strlen(pool);
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == ',') p++;
        size_t l = strcspn(p, ", ");
        if (l == n && !strncmp(p, pool, n)) return 1;
        p += l;
    }
    return 0;
}

/* [NAME] (a "pool X" section) was created by --set alone.  Unless its
 * overrides give its `kind` or some `next` or `target` names it (a pool added
 * on the command line), that is a pool the file lacks (a typo of a pool's
 * name, which would otherwise surface as a key "not valid" for a generic
 * pool): the error names it, with the file's closest pool or its pools.
 * Returns 1 with the error set, 0 when the section is meant as a new pool. */
static int set_pool_unknown(ctx *x, const char *name)
{
    const cfg *c = &x->s->raw;
    if (cfg_get(c, name, "kind")) return 0;
    for (size_t j = 0; j < c->n; j++)
        if ((!strcmp(c->e[j].key, "next") || !strcmp(c->e[j].key, "target")) && names_pool(c->e[j].value, name + 5))
            return 0;
    const char *best = NULL;
    size_t bd = (size_t) -1, nfile = 0;
    char list[256] = "";
    for (size_t j = 0; j < c->ns; j++) {
        const char *m = c->s[j].name;
        if (c->s[j].line <= 0 || strncmp(m, "pool ", 5)) continue;
        nfile++;
        size_t d = edit_distance(name + 5, m + 5);
        if (d < bd) { bd = d; best = m + 5; }
        size_t l = strlen(list);
        if (l < sizeof list - 1) snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", m + 5);
    }
    if (nfile == 0) return 0;
    if (best && (bd <= 2 || bd <= strlen(name + 5) / 2))
        snprintf(x->c.err, x->c.errlen, "--set: [%s]: %s has no pool %s (did you mean [pool %s]?)", name,
                 ERRMSG_SHOWN(c->path), name + 5, best);
    else
        snprintf(x->c.err, x->c.errlen, "--set: [%s]: %s has no pool %s (its pools: %s; to add one, give its kind or name it in a next)",
                 name, ERRMSG_SHOWN(c->path), name + 5, list);
    return 1;
}

static int check_sections(ctx *x)
{
    scenario *s = x->s;
    static const char *valid[] = { "sim", "workload", "pool", "gpu", "model", "class" };
    for (size_t i = 0; i < s->raw.ns; i++) {
        const char *n = s->raw.s[i].name;
        char head[64];
        snprintf(head, sizeof head, "%.*s", (int) strcspn(n, " "), n);
        int named = strchr(n, ' ') != NULL;
        int ok = (!strcmp(n, "sim") || !strcmp(n, "explore") || !strcmp(n, "workload") || !strcmp(n, "client") || !strcmp(n, "slo") || !strcmp(head, "slo")) ||
                 (named && (!strcmp(head, "pool") || !strcmp(head, "node") || !strcmp(head, "gpu") || !strcmp(head, "model") || !strcmp(head, "class")));
        if (ok && named && !strcmp(head, "pool") && s->raw.s[i].line <= 0 && set_pool_unknown(x, n)) return -1;
        if (ok) continue;
        const cfg_entry *e = NULL;
        for (size_t j = 0; j < s->raw.n && !e; j++)
            if (!strcmp(s->raw.e[j].section, n)) e = &s->raw.e[j];
        char where[512];
        if (s->raw.s[i].line > 0) snprintf(where, sizeof where, "%s:%d", s->raw.path, s->raw.s[i].line);
        else cfg_where(&s->raw, e, where, sizeof where);
        if (!named && (!strcmp(head, "pool") || !strcmp(head, "gpu") || !strcmp(head, "model") || !strcmp(head, "class"))) {
            snprintf(x->c.err, x->c.errlen, "%s: [%s]: needs a name, e.g. [%s NAME]", where, n, head);
            return -1;
        }
        const char *best = NULL;
        size_t bd = (size_t) -1;
        for (size_t j = 0; j < 6; j++) {
            size_t d = edit_distance(head, valid[j]);
            if (d < bd) { bd = d; best = valid[j]; }
        }
        if (bd <= 2)
            snprintf(x->c.err, x->c.errlen, "%s: [%s]: unknown section (did you mean [%s%s]?)", where, n, best,
                     (!strcmp(best, "sim") || !strcmp(best, "workload")) ? "" : " NAME");
        else
            snprintf(x->c.err, x->c.errlen, "%s: [%s]: unknown section (valid: [sim], [workload], [pool NAME], [gpu NAME], [model NAME], [class NAME], [slo], [slo CLASS])", where, n);
        return -1;
    }
    return 0;
}

/* Splits a `next` value at commas into pool indices.  Returns 0 or -1. */
static int parse_next(ctx *x, const char *sec, pool_cfg *p)
{
    const cfg_entry *e;
    const char *v = val(x, sec, "next", &e);
    if (!v || !strcmp(v, "none")) return 0;
    int n = 1;
    for (const char *c = v; *c; c++) n += *c == ',';
    p->next = calloc((size_t) n, sizeof *p->next);
    if (!p->next) return fail(x, e, sec, "next", "out of memory");
    const char *c = v;
    for (;;) {
        while (*c == ' ' || *c == '\t') c++;
        size_t len = strcspn(c, ",");
        while (len > 0 && (c[len - 1] == ' ' || c[len - 1] == '\t')) len--;
        char name[80];
        if (len == 0) return fail(x, e, sec, "next", "empty name in the list '%s'", v);
        snprintf(name, sizeof name, "%.*s", (int) (len < sizeof name ? len : sizeof name - 1), c);
        int j = pool_index(x->s, name);
        if (j < 0 || len >= sizeof name) return fail(x, e, sec, "next", "no pool named '%s'", name);
        for (int i = 0; i < p->nnext; i++)
            if (p->next[i] == j) return fail(x, e, sec, "next", "'%s' is named twice", name);
        p->next[p->nnext++] = j;
        c += strcspn(c, ",");
        if (!*c) break;
        c++;
    }
    return 0;
}

/* Depth-first search for a cycle through pool ROOT; STATE: 0 unseen, 1 on the
 * path, 2 done.  Iterative (a chain of 500 000 pools is as deep): STK and POS
 * (npools each) hold the path and each pool's next out-edge.  Returns the pool
 * that closes a cycle, or -1. */
static int find_cycle(const scenario *s, int root, unsigned char *state, int *stk, int *pos)
{
    int top = 0;
    stk[0] = root;
    pos[0] = 0;
    state[root] = 1;
    while (top >= 0) {
        int i = stk[top];
        if (pos[top] < s->pools[i].nnext) {
            int j = s->pools[i].next[pos[top]++];
            if (state[j] == 1) return i;
            if (state[j] == 0) {
                state[j] = 1;
                stk[++top] = j;
                pos[top] = 0;
            }
        } else {
            state[i] = 2;
            top--;
        }
    }
    return -1;
}

/* next = lists: each names pools, as many as the kind takes; no cycles. */
static int build_next(ctx *x)
{
    scenario *s = x->s;
    for (int i = 0; i < s->npools; i++) {
        pool_cfg *p = &s->pools[i];
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (parse_next(x, sec, p)) return -1;
        const station_kind *k = p->kind;
        const cfg_entry *e;
        val(x, sec, "next", &e);
        if (p->nnext < k->min_next)
            return fail(x, e, sec, "next", "kind = %s needs at least %d pool%s in next", k->name, k->min_next,
                        k->min_next > 1 ? "s" : "");
        if (k->max_next > 0 && p->nnext > k->max_next)
            return fail(x, e, sec, "next", "kind = %s takes %d pool%s in next, not %d (a list is for routers)",
                        k->name, k->max_next, k->max_next > 1 ? "s" : "", p->nnext);
    }
    size_t np = s->npools > 0 ? (size_t) s->npools : 1;
    unsigned char *state = calloc(np, 1);
    int *stk = malloc(np * sizeof *stk), *pos = malloc(np * sizeof *pos);
    if (!state || !stk || !pos) {
        free(state); free(stk); free(pos);
        snprintf(x->c.err, x->c.errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < s->npools; i++) {
        if (state[i]) continue;
        int c = find_cycle(s, i, state, stk, pos);
        if (c >= 0) {
            free(state); free(stk); free(pos);
            char sec[80];
            snprintf(sec, sizeof sec, "pool %s", s->pools[c].name);
            const cfg_entry *ne;
            val(x, sec, "next", &ne);
            return fail(x, ne, sec, "next", "pools form a cycle");
        }
    }
    free(state); free(stk); free(pos);
    return 0;
}

static int build(scenario *s, const char *path, const char *const *sets, int nsets, char *err, size_t errlen);

/* The kinds' checks of a pool among the others (check_graph: an LLM pool's
 * disaggregated roles).  Returns 0 or -1 with a message naming the key. */
static int check_graph(ctx *x)
{
    scenario *s = x->s;
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *p = &s->pools[i];
        if (!p->kind->check_graph) continue;
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (p->kind->check_graph(&x->c, sec, s->pools, s->npools, i)) return -1;
    }
    return 0;
}

/* Rejects scenarios certain to pass the clock's range (simtime.h): arrivals whose
 * mean gaps alone outlast it, or a generic pool on the requests' path (before any
 * pool that can lose or split requests) whose expected total service, spread over
 * its servers, exceeds it.  Returns 0 or -1 with a message naming the key. */
static int check_clock(ctx *x)
{
    scenario *s = x->s;
    const double years = SIMTIME_HORIZON_S / (365.25 * 86400);
    double n = (double) s->warmup + (double) s->requests;   /* arrivals the run needs at least */
    const cfg_entry *e;
    if (s->wl.arrival != ARRIVAL_TRACE && s->wl.arrival != ARRIVAL_USERS && n / s->wl.rate > SIMTIME_HORIZON_S) {
        val(x, "workload", "rate", &e);
        return fail(x, e, "workload", "rate", "%g requests at %g per second take %.3g s, beyond the simulated clock's range "
                    "(%.3g s, %.0f years)", n, s->wl.rate, n / s->wl.rate, SIMTIME_HORIZON_S, years);
    }
    if (s->wl.arrival == ARRIVAL_TRACE && s->wl.tr.n > 0 && s->wl.tr.t[s->wl.tr.n - 1] / s->wl.speedup > SIMTIME_HORIZON_S) {
        const char *k = val(x, "workload", "speedup", &e) ? "speedup" : "trace";
        if (!e) val(x, "workload", "trace", &e);
        return fail(x, e, "workload", k, "the trace spans %.3g s at speedup %g, beyond the simulated clock's range "
                    "(%.3g s, %.0f years)", s->wl.tr.t[s->wl.tr.n - 1] / s->wl.speedup, s->wl.speedup,
                    SIMTIME_HORIZON_S, years);
    }
    for (int j = s->wl.target, hops = 0; j >= 0 && hops <= s->npools; hops++) {
        const pool_cfg *p = &s->pools[j];
        if (!(p->kind->flags & KIND_SERVICE_DIST) || p->queue_limit > 0 || p->timeout_ms > 0)
            break;   /* other kinds' service times are not known here; a lossy pool may not serve them all */
        double busy_ms = n * p->service.mean / p->servers;
        if (busy_ms > SIMTIME_HORIZON_MS) {
            char sec[80];
            snprintf(sec, sizeof sec, "pool %s", p->name);
            val(x, sec, "service_ms", &e);
            return fail(x, e, sec, "service_ms", "mean %g ms x %g requests / %d servers = %.3g s of service, beyond the "
                        "simulated clock's range (%.3g s, %.0f years)", p->service.mean, n, p->servers, busy_ms / 1e3,
                        SIMTIME_HORIZON_S, years);
        }
        if (p->nnext != 1) break;   /* leaves, or is split among several pools */
        j = p->next[0];
    }
    return 0;
}

double scenario_expected_duration_s(const scenario *s)
{
    const workload_cfg *w = &s->wl;
    double n = (double) s->warmup + (double) s->requests;   /* arrivals the run needs at least */
    if (w->arrival == ARRIVAL_USERS)   /* each user's requests follow one another, a think time apart at least */
        return w->users > 0 ? n / w->users * (w->think.mean > 0 ? w->think.mean / 1e3 : 0) + w->ramp_users_s : 0;
    if (w->arrival == ARRIVAL_TRACE) {
        if (w->tr.n == 0 || !(w->speedup > 0)) return 0;
        if (!w->loop || n <= (double) w->tr.n)   /* the time of the last row the run needs */
            return w->tr.t[(n < (double) w->tr.n ? (size_t) n : w->tr.n) - 1] / w->speedup;
        double rate = scenario_arrival_rate(s);
        return rate > 0 && isfinite(rate) ? n / rate : 0;
    }
    return w->rate > 0 ? n / w->rate : 0;
}

/* Rejects self-renewing events too many to run: failures, pauses and
 * autoscaler evaluations whose expected number over the run's expected
 * simulated time (scenario_expected_duration_s) exceeds
 * SCENARIO_MAX_PERIODIC_EVENTS.  (Periods below the clock's resolution are
 * refused where they are parsed.)  Returns 0 or -1 with a message naming the key. */
static int check_periods(ctx *x)
{
    scenario *s = x->s;
    double t = scenario_expected_duration_s(s);
    if (!(t > 0)) return 0;   /* unknown beforehand: the stall guard (evq.h) still bounds a stall */
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *p = &s->pools[i];
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (p->kind->check_periods) {   /* the kind's own self-renewing events (a router's pauses) */
            if (p->kind->check_periods(&x->c, sec, p, t)) return -1;
            continue;
        }
        const fleet_cfg *f = p->fleet;
        if (!f) continue;
        double units = f->autoscale ? f->as.max_replicas : f->units;
        /* A failure is three events (the failure, the repair, the unit coming
         * up); a pause one; an evaluation one. */
        if (f->fault.failures &&
            scn_check_period(&x->c, sec, "fail_after_s", units, t, f->fault.fail_after_s.mean + f->fault.repair_s.mean,
                         "fail_after_s + repair_s", 3))
            return -1;
        if (f->fault.pauses &&
            scn_check_period(&x->c, sec, "pause_every_s", units, t, f->fault.pause_every_s.mean + f->fault.pause_s.mean,
                         "pause_every_s + pause_s", 1))
            return -1;
        if (f->autoscale && scn_check_period(&x->c, sec, "autoscale_interval_s", 1, t, f->as.interval_s,
                                         "autoscale_interval_s", 1))
            return -1;
    }
    return 0;
}

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

double scenario_arrival_rate(const scenario *s)
{
    const workload_cfg *w = &s->wl;
    if (w->arrival == ARRIVAL_USERS) return NAN;
    if (w->arrival != ARRIVAL_TRACE) return w->rate;
    return (double) (w->tr.n - 1) / w->tr.t[w->tr.n - 1] * w->speedup;
}

int scenario_trace_peak(const scenario *s, double len_s, double *from_s, size_t *rows, double *span_s)
{
    const workload_cfg *w = &s->wl;
    if (w->arrival != ARRIVAL_TRACE || trace_peak(&w->tr, len_s, from_s, rows) != 0) return -1;
    *span_s = w->tr.t[w->tr.n - 1];
    return 0;
}

/* What the kinds' resolve and footprint hooks may know of S (core/scn.h). */
static scn_facts facts_of(const scenario *s)
{
    return (scn_facts) { s->models, s->nmodels, s->gpus, s->ngpus, &s->wl.prompt, &s->wl.output,
                         s->wl.trace_tokens, s->wl.tr.hash ? s->wl.hash_block_tokens : 0, (double) s->requests + (double) s->warmup, NULL,
                         s->wl.tr.adapter ? s->wl.tr.adapter_max : -1, s->wl.tr.adapter_at };
}

int scenario_resolve(scenario *s, sqlite3 *db, char *err, size_t errlen)
{
    scn_facts facts = facts_of(s);
    ctx x = { { &s->raw, &facts, err, errlen }, s };
    int rc = 0;
    if (s->cost_db[0]) {
        /* Read only, never created: a missing file is bad input. */
        sqlite3 *c = NULL;
        if (sqlite3_open_v2(s->cost_db, &c, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
            sqlite3_exec(c, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
            const cfg_entry *e;
            val(&x, "sim", "cost_db", &e);
            fail(&x, e, "sim", "cost_db", "cannot open the calibration database %s: %s", s->cost_db,
                 c ? sqlite3_errmsg(c) : "out of memory");
            sqlite3_close(c);
            return -1;
        }
        facts.cost_db = c;
    }
    for (int i = 0; i < s->npools && rc == 0; i++) {
        pool_cfg *p = &s->pools[i];
        if (!p->kind->resolve) continue;
        char sec[80];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (p->kind->resolve(&x.c, sec, p, db) != 0) rc = -1;
    }
    if (facts.cost_db) sqlite3_close(facts.cost_db);
    return rc;
}

/* Memory of a pool's common state: the station and its two histograms, taken at
 * 16 octaves of 8 KB each (stats.c allocates an octave once a value falls in it:
 * latencies spanning 2^16 are already wide). */
#define POOL_BYTES (1024.0 + 2 * 16 * 8192.0)
/* The simulation's own histograms and calendar. */
#define SIM_BYTES (6 * 16 * 8192.0 + 65536.0)

/* One part of the memory estimate: BYTES that KEY of section SEC asks for;
 * WHAT says how ("1e+09 intents (48 bytes each...)"). */
typedef struct mem_part {
    double bytes;             /* bytes */
    char sec[80];             /* the section */
    const char *key;          /* the key that sizes it */
    char what[256];           /* a phrase for the message */
    int pool;                 /* that pool's index */
} mem_part;

/* Keeps P in *WORST when it asks more than what *WORST holds. */
static void mem_keep(mem_part *worst, const mem_part *p)
{
    if (worst && p->bytes > worst->bytes) *worst = *p;
}

/* The estimate of scenario_footprint; *WORST (when not NULL) gets the part
 * that asks the most (bytes 0: none beyond the fixed state). */
static double footprint(const scenario *s, mem_part *worst)
{
    double b = SIM_BYTES;
    mem_part p;
    if (worst) memset(worst, 0, sizeof *worst);
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *c = &s->pools[i];
        b += POOL_BYTES;
        if (c->fleet) {   /* each unit's record and random stream */
            memset(&p, 0, sizeof p);
            double units = c->fleet->autoscale ? c->fleet->as.max_replicas : c->fleet->units;
            p.bytes = units * fleet_unit_bytes();
            snprintf(p.sec, sizeof p.sec, "pool %s", c->name);
            p.key = c->fleet->autoscale ? "max_replicas" : c->kind->units_key ? c->kind->units_key : "servers";
            snprintf(p.what, sizeof p.what, "%g units with failures, pauses, autoscaling or cold starts "
                     "(%.0f bytes each: a random stream and events)", units, fleet_unit_bytes());
            b += p.bytes;
            mem_keep(worst, &p);
        }
        if (c->kind->footprint) {
            memset(&p, 0, sizeof p);
            scn_facts facts = facts_of(s);
            scn_ctx x = { &s->raw, &facts, NULL, 0 };
            p.bytes = c->kind->footprint(&x, c, &p.key, p.what, sizeof p.what);
            snprintf(p.sec, sizeof p.sec, "pool %s", c->name);
            b += p.bytes;
            mem_keep(worst, &p);
        }
    }
    const workload_cfg *w = &s->wl;
    if (w->arrival == ARRIVAL_USERS) {   /* each user has an arrival pending or a request in the system */
        memset(&p, 0, sizeof p);
        double each = (double) (evq_event_bytes() + sizeof(request));
        p.bytes = (double) w->users * each;
        snprintf(p.sec, sizeof p.sec, "workload");
        p.key = "users";
        snprintf(p.what, sizeof p.what, "%d users (%.0f bytes each: a request and an event)", w->users, each);
        b += p.bytes;
        mem_keep(worst, &p);
    }
    for (int i = 0; i < w->nclasses; i++) {
        const wl_class *c = &w->classes[i];
        char sec[80];
        snprintf(sec, sizeof sec, "class %s", c->name);
        /* A key of the class's own section, else of [workload] (gateway_class_keys). */
#define SEC_OF(key) (c->name[0] && cfg_get(&s->raw, sec, key) ? sec : "workload")
        if (c->intents > 0) {
            memset(&p, 0, sizeof p);
            p.bytes = (double) c->intents * ZIPF_BYTES_PER_ITEM;
            snprintf(p.sec, sizeof p.sec, "%s", SEC_OF("intents"));
            p.key = "intents";
            snprintf(p.what, sizeof p.what, "%lld intents (%g bytes each: their popularity table)",
                     (long long) c->intents, ZIPF_BYTES_PER_ITEM);
            b += p.bytes;
            mem_keep(worst, &p);
        }
        if (c->has_turns && w->arrival != ARRIVAL_USERS) {   /* closed loop: one per user, counted with users */
            memset(&p, 0, sizeof p);
            p.bytes = (double) c->sessions * (double) gwattr_session_bytes();
            snprintf(p.sec, sizeof p.sec, "%s", SEC_OF("sessions"));
            p.key = "sessions";
            snprintf(p.what, sizeof p.what, "%d sessions (%zu bytes each)", c->sessions, gwattr_session_bytes());
            b += p.bytes;
            mem_keep(worst, &p);
        } else if (c->has_turns)
            b += (double) w->users * (double) gwattr_session_bytes();
#undef SEC_OF
    }
    return b;
}

double scenario_footprint(const scenario *s)
{
    return footprint(s, NULL);
}

int scenario_check_memory(const scenario *s, double budget, char *err, size_t errlen)
{
    mem_part worst;
    double need = footprint(s, &worst);
    if (need <= budget) return 0;
    ctx x = { { &s->raw, NULL, err, errlen }, (scenario *) s };
    const cfg_entry *e;
    /* Blame the part that asks the most when it is most of it, else the number of pools. */
    if (worst.bytes > need / 2) {
        val(&x, worst.sec, worst.key, &e);
        return fail(&x, e, worst.sec, worst.key, "%s need about %.3g GB of memory, more than the %.3g GB this process may use",
                    worst.what, need / 1e9, budget / 1e9);
    }
    snprintf(err, errlen, "%s: %d pools need about %.3g GB of memory, more than the %.3g GB this process may use",
             s->raw.path, s->npools, need / 1e9, budget / 1e9);
    return -1;
}

double scenario_memory_budget(void)
{
    double b = (double) sysconf(_SC_PHYS_PAGES) * (double) sysconf(_SC_PAGESIZE);
    if (!(b > 0)) b = INFINITY;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double) rl.rlim_cur < b) b = (double) rl.rlim_cur;
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (double) rl.rlim_cur < b) b = (double) rl.rlim_cur;
    return b;
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

/* Where `latsim keys` prints, and how: MD 1 = Markdown tables (docs/scenarios.md). */
typedef struct keys_out {
    FILE *out;
    int md;
} keys_out;

/* Prints S as Markdown table text: '|' escaped; outside code spans '<' and '*'
 * escaped and a section name ("[class NAME]": a '[' and a letter) set as code. */
static void md_text(FILE *out, const char *s)
{
    int code = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '|') fputs("\\|", out);
        else if (*c == '`') { code = !code; fputc('`', out); }
        else if (code) fputc(*c, out);
        else if (*c == '[' && isalpha((unsigned char) c[1]) && strchr(c, ']')) {
            const char *e = strchr(c, ']');
            fprintf(out, "`%.*s`", (int) (e - c + 1), c);
            c = e;
        } else if (*c == '<') fputs("&lt;", out);
        else if (*c == '*') fputs("\\*", out);
        else fputc(*c, out);
    }
}

/* One key: a line of the list, or a row of the section's table. */
static void print_key(const keys_out *o, const char *key, const char *def, const char *help)
{
    if (!o->md) {
        fprintf(o->out, "  %-24s %-14s %s\n", key, def[0] ? def : "-", help);
        return;
    }
    fprintf(o->out, "| `%s` | ", key);
    md_text(o->out, def[0] ? def : "-");
    fputs(" | ", o->out);
    md_text(o->out, help);
    fputs(" |\n", o->out);
}

static void print_key_cb(void *ctx, const char *key, const char *def, const char *help)
{
    print_key(ctx, key, def, help);
}

/* A section's title: NAME, then NOTE (NULL: none) in parentheses, or in
 * Markdown a heading and NOTE as a sentence above the table's header.  KIND: the
 * pool kind the section is of (NULL: none). */
static void print_section(const keys_out *o, const char *name, const char *kind, const char *note)
{
    if (!o->md) {
        if (kind) fprintf(o->out, "%s  kind = %s   %s\n", name, kind, note ? note : "");
        else if (note) fprintf(o->out, "%-12s (%s)\n", name, note);
        else fprintf(o->out, "%s\n", name);
        return;
    }
    fputs("\n## ", o->out);
    md_text(o->out, name);
    if (kind) fprintf(o->out, ", `kind = %s`", kind);
    fputs("\n\n", o->out);
    if (kind) {
        fprintf(o->out, "`kind = %s`: ", kind);
        md_text(o->out, note ? note : "");
        fputs(".\n\n", o->out);
    } else if (note) {
        char first[2] = { (char) toupper((unsigned char) note[0]), 0 };
        md_text(o->out, first);
        md_text(o->out, note + 1);
        fputs(".\n\n", o->out);
    }
    fputs("| key | default | meaning |\n|---|---|---|\n", o->out);
}

/* The end of a section: a blank line in the list. */
static void end_section(const keys_out *o)
{
    if (!o->md) fputc('\n', o->out);
}

/* 1 when KEY is in kind SK's own keys or in one of its key sets before SET
 * (or earlier in SET before Q): the cost rows share keys (cost_id), each is
 * listed once. */
static int key_listed(const station_kind *sk, int set, const scn_key *q)
{
    for (const scn_key *p = sk->keys; p && p->key; p++)
        if (!strcmp(p->key, q->key)) return 1;
    for (int s = 0; s <= set; s++)
        for (const scn_key *p = sk->more_keys(s); p->key && (s < set || p != q); p++)
            if (!strcmp(p->key, q->key)) return 1;
    return 0;
}

void scenario_print_keys(FILE *out, int markdown)
{
    kinds_builtin();
    static const struct { unsigned bit; const char *name, *note; } secs[] = {
        { K_SIM, "[sim]", NULL }, { K_WL, "[workload]", NULL },
        { K_CLIENT, "[client]", "timeouts and retries of the clients; absent: they wait for any answer" },
        { K_POOL, "[pool NAME]", "any kind" },
        { K_CLASS, "[class NAME]", "a kind of request; without one, every request is of one implicit class" },
        { K_GPU, "[gpu NAME]", "adds a GPU to the catalog" }, { K_MODEL, "[model NAME]", "adds a model to the catalog" },
    };
    keys_out o = { out, markdown };
    char choices[256];
    station_kind_choices(choices, sizeof choices);
    for (char *c = choices; *c; c++)
        if (*c == '|') *c = ',';
    if (markdown)
        fputs("# Scenario reference\n\n"
              "Every section and key of a scenario file, with its default and meaning: the output of "
              "`latsim keys --markdown` (do not edit; `make test` fails when this page differs from it).\n", out);
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        print_section(&o, secs[i].name, NULL, secs[i].note);
        for (size_t k = 0; k < NKEYS; k++)
            if (KEYS[k].where & secs[i].bit)
                print_key(&o, KEYS[k].key, KEYS[k].def, strcmp(KEYS[k].key, "kind") ? KEYS[k].help : choices);
        if (secs[i].bit == K_POOL)
            for (const fleetcfg_key *q = FLEETCFG_KEYS; q->key; q++) print_key(&o, q->key, q->def, q->help);
        end_section(&o);
        if (secs[i].bit != K_POOL) continue;
        for (int j = 0; j < station_kind_count(); j++) {
            const station_kind *sk = station_kind_at(j);
            char help[1024];   /* a help text with its "{choices}" from the rows */
            print_section(&o, "[pool NAME]", sk->name, sk->help);
            for (const scn_key *q = sk->keys; q && q->key; q++)
                print_key(&o, q->key, q->def, station_kind_help(sk, q->key, q->help, help, sizeof help));
            for (int set = 0; sk->more_keys && sk->more_keys(set); set++)
                for (const scn_key *q = sk->more_keys(set); q->key; q++)
                    if (!key_listed(sk, set, q))
                        print_key(&o, q->key, q->def, station_kind_help(sk, q->key, q->help, help, sizeof help));
            end_section(&o);
        }
    }
    print_section(&o, "[node NAME]", NULL, "a host whose CPU cores the generic pools placed on it (node = NAME) share");
    for (const cpucfg_key *q = CPUCFG_NODE_KEYS; q->key; q++) print_key(&o, q->key, q->def, q->help);   /* cpunode.h */
    end_section(&o);
    print_section(&o, "[slo] and [slo CLASS]", NULL, "service-level objectives; [slo CLASS]: one [class NAME]");
    slo_keys(print_key_cb, &o);
    end_section(&o);
}

/* One line "  [SECTION] KEY = VALUE (set|default): WHY". */
static void default_line(FILE *out, const cfg *raw, const char *sec, const char *key, const char *def, const char *why)
{
    const cfg_entry *e = cfg_get(raw, sec, key);
    fprintf(out, "  [%s] %s = %s (%s): %s\n", sec, key, e ? e->value : def && *def ? def : "derived", e ? "set" : "default", why);
}

/* The help of a general key (KEYS). */
static const char *key_help(const char *key)
{
    for (size_t k = 0; k < NKEYS; k++)
        if (!strcmp(KEYS[k].key, key)) return KEYS[k].help;
    return "";
}

void scenario_print_defaults(const scenario *s, FILE *out)
{
    fputs("settings that change answers (docs/scenarios.md):\n", out);
    if (s->warmup_auto)
        fprintf(out, "  [sim] warmup = automatic (default): at least %llu requests, more until the system has filled "
                "and its caches' hit rates have settled (the report's warmup_requests, warmup_s and, with caches, "
                "warmup_cache_s say what it took)\n", (unsigned long long) s->warmup);
    else
        fprintf(out, "  [sim] warmup = %llu (set): requests discarded before measuring\n", (unsigned long long) s->warmup);
    if (s->wl.arrival == ARRIVAL_TRACE || s->wl.tr.hash)
        default_line(out, &s->raw, "workload", "hash_block_tokens", "512", key_help("hash_block_tokens"));
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *p = &s->pools[i];
        char sec[96];
        snprintf(sec, sizeof sec, "pool %s", p->name);
        if (p->kind->defaults) p->kind->defaults(p, &s->raw, sec, (double) s->requests, out);
    }
}
