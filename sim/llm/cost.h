/* cost.h -- how long one forward step of an LLM replica takes.
 *
 * The scheduler describes a step by what it computes (cost_step: prompt tokens
 * and the (query, key) pairs they attend, decoding sequences and the tokens
 * each computes, KV-cache tokens read, tokens emitted) and asks the cost model
 * for its duration; that is the whole interface, so a calibrated model can
 * replace the built-in ones without touching any scheduler, and a scheduler
 * that computes more tokens per decoding sequence (speculative verification)
 * is priced by every model without touching any.  Models are rows of a table
 * (cost_ops), chosen by name, each owning its state: the built-in rows (linear,
 * roofline) are here; a model defined elsewhere adds its row with
 * cost_register() (calib/ccost.c registers the calibrated auto, fitted and
 * profile).
 *
 * Built-in models (D = decode tokens = decode_seqs x decode_tokens_per_seq):
 *   linear    step_ms = step_base_ms + prefill_ms_per_token * prefill_tokens
 *                       + decode_ms_per_seq * D
 *                       + kv_ms_per_1k_tokens * kv_tokens / 1000
 *   roofline  from the catalog's GPU and model: the step takes the longer of
 *             its FLOPs at (peak * compute_eff) and its bytes at
 *             (bandwidth * memory_eff), plus the tensor-parallel all-reduces,
 *             plus step_overhead_ms.  FLOPs: 2 * params per token computed
 *             (prompt and decode), plus attention 4 * layers * heads * head_dim
 *             per (query, key) pair (the prompt's, and the decode tokens' over
 *             their contexts).  Bytes: the weights once per step, plus the KV
 *             cache read (once per decoding sequence) and written.
 */
#ifndef LATSIM_COST_H
#define LATSIM_COST_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "core/catalog.h"

/* One forward step, by what it computes.  A zeroed step is empty; a decoding
 * sequence that computes one token (plain decoding) may leave
 * decode_tokens_per_seq 0: it counts as 1. */
typedef struct cost_step {
    int64_t prefill_tokens;   /* prompt tokens computed in this step, all sequences, tokens */
    double  prefill_pairs;    /* (query, key) pairs attended by those prompt tokens, pairs:
                                 for a chunk of c tokens after k cached ones,
                                 c*k + c*(c+1)/2 */
    int32_t prefill_seqs;     /* sequences with prompt tokens in this step */
    int32_t decode_seqs;      /* decoding sequences in this step */
    int32_t decode_tokens_per_seq; /* tokens each decoding sequence computes, tokens: 1 for
                                 plain decoding (0 counts as 1), k + 1 to verify k
                                 speculated tokens */
    int64_t kv_tokens;        /* KV-cache tokens read by the decoding sequences, tokens:
                                 the sum of their context lengths, the tokens computed
                                 in this step included (each context is read once) */
    int64_t emitted_tokens;   /* output tokens the step emits, tokens: one per decoding
                                 sequence per accepted token, and one per sequence whose
                                 prompt completes in it.  A description of the step: no
                                 built-in model prices it */
} cost_step;

/* Tokens each decoding sequence of S computes (decode_tokens_per_seq, at least 1). */
static inline int64_t cost_step_per_seq(const cost_step *s)
{
    return s->decode_tokens_per_seq > 1 ? s->decode_tokens_per_seq : 1;
}

/* Decode tokens S computes: decode_seqs x tokens per decoding sequence.  (The
 * common case, one token per sequence, is the branch expected on the hot path.) */
static inline int64_t cost_step_decode_tokens(const cost_step *s)
{
    if (__builtin_expect(s->decode_tokens_per_seq <= 1, 1)) return s->decode_seqs;
    return (int64_t) s->decode_seqs * s->decode_tokens_per_seq;
}

/* (query, key) pairs the decode tokens of S attend: a sequence with context C
 * (its t new tokens included) computing t tokens attends t*C - t(t-1)/2 pairs
 * (its new tokens attend each other causally); kv_tokens itself for t = 1. */
static inline double cost_step_decode_pairs(const cost_step *s)
{
    if (__builtin_expect(s->decode_tokens_per_seq <= 1, 1)) return (double) s->kv_tokens;
    int64_t t = s->decode_tokens_per_seq;
    return (double) t * (double) s->kv_tokens - (double) s->decode_seqs * (double) (t * (t - 1) / 2);
}

/* The hardware of one replica, as the pool resolved it: what the roofline
 * model computes from, and what MFU/MBU accounting uses for every model. */
typedef struct cost_hw {
    int have_hw;                  /* gpu and model below are filled */
    gpu_spec gpu;
    model_spec model;
    int tp;                       /* tensor-parallel degree, GPUs per replica */
    double weight_bytes;          /* bytes per weight (bf16 2, fp8/int8 1, int4 0.5) */
    double kv_bytes;              /* bytes per KV element (bf16 2, fp8 1) */
    int use_fp8_compute;          /* 1: peak is gpu.fp8_tflops (fp8/int8 W8A8) */
    char weights[8];              /* weight precision name (bf16, fp8, ...): calibrated
                                     models are looked up by it */
} cost_hw;

/* Which model produced a replica's step times (for the report and database). */
typedef struct cost_info {
    const char *kind;             /* the row in use: "roofline", "linear", "fitted", "profile" */
    int64_t id;                   /* stored calibrated model id, 0 for none */
    const char *source;           /* "datasheet", "scenario", "steps-csv", "vidur", "cuda", "cpu" */
    double mape;                  /* its cross-validated MAPE, %, NAN for none */
    int extrapolated;             /* 1: carried from another GPU or outside its measured TP */
} cost_info;

struct cost_ops;
typedef struct scn_ctx scn_ctx;   /* core/scn.h: reading a section's keys */
typedef struct scn_key scn_key;

/* A step-time model: its row in the table, its hardware, and its own state
 * (owned: cost_free() releases it; a model may keep anything there, e.g.
 * interpolation tables).  Zero-initialise before cost_init/cost_parse. */
typedef struct cost_model {
    const struct cost_ops *ops;   /* its row in the cost-model table; NULL: none yet */
    void *state;                  /* the model's own state, NULL when none */
    cost_hw hw;                   /* filled by the pool's derivation (llmcfg.c) */
} cost_model;

/* One row of the cost-model table: `cost = NAME` of an LLM pool.  Adding a
 * model is its functions plus one row: a built-in one in cost.c, or
 * cost_register() for a model defined elsewhere (calib/ccost.c). */
typedef struct cost_ops {
    const char *name;             /* the value of `cost =` */
    const char *help;             /* one line for `latsim keys` */
    const scn_key *keys;          /* its keys in the pool section, ended by a NULL key (NULL: none) */
    /* Reads its keys of section SEC into M->state.  Returns 0, or -1 with the
     * error set in X (scn_fail).  Runs when the scenario is loaded. */
    int (*parse)(cost_model *m, scn_ctx *x, const char *sec);
    /* Runs once M->hw is resolved, with the catalog database DB (may be NULL
     * outside a scenario): loads or fits what the model needs.  NULL: nothing.
     * Returns 0 or -1 (error set in X). */
    int (*build)(cost_model *m, scn_ctx *x, const char *sec, sqlite3 *db);
    /* Sets M->state from PARAMS (the model's parameter struct), for tools and
     * tests.  NULL: the model cannot be made that way.  Returns 0 or -1. */
    int (*init)(cost_model *m, const void *params);
    /* Duration of a non-empty step, ms. */
    double (*step_ms)(const cost_model *m, const cost_step *s);
    void (*free)(cost_model *m);  /* releases M->state (NULL: free(M->state)) */
    /* Fills OUT: which model produces the step times (NULL: the row itself,
     * with source "scenario" and no id or error). */
    void (*describe)(const cost_model *m, cost_info *out);
    /* The model whose step times M's are, exactly (a calibrated row that fell
     * back to the roofline: its roofline), so that the hot path can call that
     * one directly (cost_fast); NULL (or a NULL hook): M's own. */
    const cost_model *(*delegate)(const cost_model *m);
} cost_ops;

/* Parameters of the built-in models (their states are copies of these). */
typedef struct cost_linear {
    double step_base_ms;          /* ms per step */
    double prefill_ms_per_token;  /* ms per prompt token */
    double decode_ms_per_seq;     /* ms per decoding sequence per token it computes */
    double kv_ms_per_1k_tokens;   /* ms per 1000 KV tokens read */
} cost_linear;

typedef struct cost_roofline {
    double compute_eff;           /* fraction of peak FLOP/s reached, (0,1] */
    double memory_eff;            /* fraction of peak bandwidth reached, (0,1] */
    double step_overhead_ms;      /* fixed CPU/launch overhead per step, ms */
    double allreduce_latency_us;  /* fixed latency per all-reduce, microseconds */
    double launch_us_per_layer;   /* fixed kernel-launch cost per layer per step, microseconds */
} cost_roofline;

/* Default roofline parameters (the `roofline` keys' defaults). */
extern const cost_roofline cost_roofline_defaults;

/* The table: rows by name (case-insensitive; NULL when none), in order (the
 * built-in rows linear and roofline, then the registered ones in the order of
 * registration), and the names joined by '|'. */
const cost_ops *cost_find(const char *name);
int cost_row_count(void);
const cost_ops *cost_row_at(int i);
int cost_row_index(const cost_ops *row);   /* its place in the table; -1 when not there */
void cost_choices(char *buf, size_t n);

/* Adds ROW (which must outlive every use) after the rows there.  Returns 0
 * (also when ROW is in the table already: registering twice is harmless), or
 * -1 when another row has its name or the table is full.  Not thread-safe:
 * register before anything loads a scenario. */
int cost_register(const cost_ops *row);

/* The default of `cost =`: the row "auto" once registered (ccost_register in
 * calib/ccost.c: the best stored calibrated model, else the roofline), else
 * "roofline" (what auto gives when no calibrated model is stored, to the bit).
 * Never NULL. */
const cost_ops *cost_default(void);

/* Makes M the model NAME with PARAMS (cost_linear, cost_roofline...), keeping
 * M->hw.  Returns 0, or -1 (unknown name, no init, out of memory). */
int cost_init(cost_model *m, const char *name, const void *params);

/* Which model produces M's step times (cost_info). */
void cost_describe(const cost_model *m, cost_info *out);

/* A cost_info source as the report names it: SOURCE's entry in the list
 * datasheet, scenario, steps-csv, vidur, cuda, cpu, net (a static string that
 * outlives the model), "other" for any other source or NULL. */
const char *cost_source_known(const char *source);

/* Releases M's state (safe on a zeroed model and twice). */
void cost_free(cost_model *m);

/* Duration of one step, in milliseconds (> 0 for a non-empty step; 0 for an
 * empty one or a model with no row). */
double cost_step_ms(const cost_model *m, const cost_step *s);

/* FLOPs and HBM bytes of one step for the whole replica (all TP shards), from the
 * model geometry; both 0 when !m->have_hw.  Used for MFU/MBU reporting. */
void cost_step_work(const cost_model *m, const cost_step *s, double *flops, double *bytes);

/* Peak FLOP/s and bytes/s of the whole replica (tp GPUs); 0 when !hw.have_hw. */
double cost_peak_flops(const cost_model *m);
double cost_peak_bw(const cost_model *m);

/* A model resolved for the hot path (an LLM replica's every step): the row's
 * dispatch settled once, and for step times that are the roofline's (`cost =
 * roofline`, or `auto` without a calibrated model) its constants computed once
 * and the roofline called directly.  cost_fast_ms and cost_fast_ms_work give
 * exactly (to the bit) what cost_step_ms and cost_step_work give for the model. */
typedef struct cost_fast {
    const cost_model *m;          /* the model (its row's step_ms unless roofline) */
    int roofline;                 /* 1: the step times are the roofline's, from the fields below */
    int have_hw;                  /* m->hw.have_hw: FLOPs and bytes are counted */
    double two_params;            /* 2 x params: FLOPs per token computed */
    double attn_per_pair;         /* 4 x layers x heads x head_dim: FLOPs per (query, key) pair */
    double weight_bytes;          /* params x bytes per weight: read once per step */
    double kv_per_token;          /* 2 x layers x kv_heads x head_dim x KV bytes: KV bytes per token */
    int tp;                       /* tensor-parallel degree (>= 1) */
    double tp_d;                  /* the same as a double (what the divisions convert it to) */
    double peak;                  /* GPU peak FLOP/s x compute efficiency */
    double bw;                    /* GPU bandwidth (bytes/s) x memory efficiency */
    double ar_layers;             /* 2 x layers: all-reduces per step (tp > 1) */
    double ar_latency_s;          /* all-reduce latency, s */
    double ar_ring;               /* 2 (tp - 1) / tp: the ring's share of the message */
    double ar_link;               /* link bandwidth, bytes/s */
    double act_per_token;         /* hidden: activations per token (times ACT_BYTES in the message) */
    double overhead_ms;           /* step_overhead_ms */
    double launch_ms;             /* layers x launch_us_per_layer / 1000 */
} cost_fast;

/* Resolves M (built, and kept alive and unchanged while F is used) into F. */
void cost_fast_init(cost_fast *f, const cost_model *m);

/* cost_step_ms(f->m, s), exactly. */
double cost_fast_ms(const cost_fast *f, const cost_step *s);

/* cost_step_ms(f->m, s), with cost_step_work(f->m, s, flops, bytes) (FLOPS and
 * BYTES not NULL): the roofline's work computed once for both. */
double cost_fast_ms_work(const cost_fast *f, const cost_step *s, double *flops, double *bytes);

#endif
