/* scnkeys.c -- the scenario schema: every key of every section kind with its
 * default and meaning, the checks of every section and key against it, and
 * `latsim keys`.
 *
 * The schema table drives unknown-key detection (with a suggestion: the
 * closest valid key or section by edit distance), `latsim keys` (a list, or
 * the Markdown of docs/scenarios.md) and the defaults a run prints.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "engine/errmsg.h"
#include "run/scenario.h"
#include "run/scnbuild.h"
#include "fleet/fleetcfg.h"
#include "core/kind.h"
#include "run/kinds.h"

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

/* Checks every key of every section against the schema (a pool's: the common
 * pool keys and its kind's). */
int check_keys(ctx *x)
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

int check_sections(ctx *x)
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
