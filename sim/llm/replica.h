/* replica.h -- the LLM replica interface: the replica and pool structures and
 * the operations the llm files share (and a scheduler defined elsewhere, such
 * as a test's, calls).  Internal to the LLM pool: the rest of the simulator
 * sees llm.h only.
 *
 * Step bookkeeping (llm.h lists the schedulers).  A replica counts its
 * completed steps in `steps`.  Every decoding sequence advances one token in
 * every step, so its state is a function of the step index: a sequence that
 * entered decoding with c0 tokens cached, first decoding in step f, writes
 * cache position base + s in step s, where base = c0 - f.  Hence, per step:
 *   KV tokens read         = sum(base) + ndec * (s + 1)
 *   new KV blocks needed   = #{ decoding sequences with (base + s) % B == 0 }
 *                            (kept as counts of base % B: O(1) per step)
 *   finishing sequences    = heap entries whose finish_step == s.
 * No step touches a sequence that does not start, finish, or get preempted in it.
 *
 * Who does what:
 *   seqrec.c            the pool's sequence records (seqrec.h): one per request inside the pool
 *   seq.c               the running list, the finish heap, phase counts, a sequence leaving
 *   kv.c                KV blocks and the prefix-cache glue (prefix.c is the cache)
 *   admit.c             admission and preemption
 *   step.c              stepping: planning, timing and ending steps; the idle stack; sanity checks
 *   spec.c              speculative decoding: KV reserved for k + 1 tokens, acceptance draws, drafting cost
 *   lora.c              LoRA adapters: a request's adapter, resident slots (LRU), loads, a step's LoRA cost
 *   queue.c             arrivals and routing to the replicas' queues
 *   units.c             replicas as fleet units (failures, autoscaling, pauses)
 *   cpu.c               the CPU side: tokenisation and the steps' CPU parts in cgroups (fleet/cpunode.h)
 *   sched.c, sched_*.c  the scheduler table and its rows (sched.h)
 *   llm.c               the kind's row, building and destroying a pool, its report
 */
#ifndef LATSIM_LLM_REPLICA_H
#define LATSIM_LLM_REPLICA_H

#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "engine/check.h"
#include "core/route.h"
#include "core/station.h"
#include "core/zipf.h"
#include "engine/evq.h"
#include "engine/lru.h"
#include "engine/request.h"
#include "fleet/fleet.h"
#include "llm/cost.h"
#include "llm/llmcfg.h"
#include "llm/prefix.h"
#include "llm/sched.h"
#include "llm/seqrec.h"

typedef struct llm llm;

/* A replica's view of one LoRA adapter (lora.c). */
typedef struct lora_slot {
    lru_link link;            /* on the replica's evictable list (resident, unused) when listed */
    int32_t ref;              /* running sequences using it */
    uint8_t resident;         /* 1: loaded in one of the replica's max_loras slots */
    uint8_t listed;           /* 1: on the evictable list */
} lora_slot;

typedef struct replica {
    llm *pool;                /* owner */
    int index;                /* replica number (with dp > 1: rank; replica index / dp) */
    int stepping;             /* a step is in flight */
    int dummy;                /* dp lockstep: in the group's step in flight with nothing of its own (a
                                 dummy batch: its experts' share of the others' tokens) */
    int idle_listed;          /* on the pool's idle stack */
    int idle_pos;             /* its place there (when idle_listed) */
    int ix_dirty;             /* routed with an index: its load may have changed since the index last read it */
    squeue *wq;               /* the queue it takes requests from: the pool's, or its own */
    squeue own;               /* its own queue (routed pools) */
    evq_id wait_ev;           /* pending wake-up its scheduler's plan asked for (dynamic: a batch's wait) */
    int64_t steps;            /* completed steps */
    int64_t free_blocks;      /* KV blocks not held (with a prefix cache: free + cached, all evictable) */
    prefix_cache *pc;         /* prefix_cache = yes: content blocks kept for later hits (prefix.h), else NULL */

    request *run_head;        /* running sequences, oldest first (prefilling and decoding) */
    request *run_tail;
    int nrun;                 /* running sequences */
    int nleaving;             /* of those, the ones whose client left (llm_seq.leaving): they leave at the
                                 end of the step in flight */
    request **pf;             /* sequences still prefilling, admission order */
    int npf;
    int32_t *chunk;           /* tokens each pf[] sequence prefills in the step in flight */

    llm_seq **heap;           /* decoding sequences, min-heap on finish_step (their records: the
                                 comparisons read no request) */
    int ndec;
    int64_t base_sum;         /* sum of decoding sequences' phase_base */
    int64_t *phase_cnt;       /* decoding sequences by phase_base mod block_tokens */
    int32_t *ndec_cls;        /* measured decoding sequences per class (NULL: no [class] sections) */
    int ndec_meas;            /* of the decoding sequences (heap), the measured ones */
    double dec_sum;           /* cost accounting: decode time of the steps so far per decoding
                                 sequence, summed over steps (each sequence takes its increase
                                 between joining and leaving the decodes), ns */

    /* static / dynamic batches */
    int batch_n;              /* sequences in the batch in flight (0: none) */
    int batch_live;           /* of those, not yet finished */
    int64_t batch_first;      /* step index of the batch's prefill */
    int64_t batch_last;       /* step index of its last decode */
    int64_t batch_blocks;     /* KV blocks reserved by the batch (freed when it ends) */
    int32_t batch_maxp;       /* longest prompt (padding), tokens */

    cost_step cur;            /* the step in flight */
    simtime_t step_start;     /* ns */
    simtime_t step_dur;       /* ns */
    int64_t step_used;        /* KV blocks held during the step in flight */
    double step_flops;        /* its FLOPs */
    double step_bytes;        /* its HBM bytes */
    simtime_t step_fw;        /* of step_dur, the cost model's framework overhead (fixed, launches,
                                 per-sequence CPU: cost_fast_overhead_ms), scaled as the step, ns */
    simtime_t fw_cum;         /* step_fw of its completed steps, summed, ns: a sequence takes its
                                 increase between joining and leaving (request.fw.ns) */
    /* fleet (fleet.h) */
    int down;                 /* 1: takes no new requests (failed, off, or draining what it holds) */
    evq_id step_ev;           /* the step-end event in flight, or 0 */
    uint64_t since;           /* requests it finished since it last came up (cold factor) */
    simtime_t up_at;          /* when it last came up after a start, ns (0: up from the beginning) */
    int slow;                 /* 1: one of the slow replicas (slow_fraction) */
    simtime_t paused_to;      /* end of its pause in progress, ns (0: none): a step begun before it waits */
    /* role = decode (kvlink.c) */
    int nxfer;                /* sequences whose KV is on its way here (reserved, not yet running) */
    int64_t xfer_blocks;      /* KV blocks reserved for them */
    request **ready;          /* of those, the ones whose KV has arrived: they join at the next plan */
    int nready;
    request **joined;         /* sequences that joined the decodes in the step in flight (their first
                                 inter-token gap is since their first token, in the prefill pool) */
    int njoined;
    /* kv_offload (offload.c) */
    prefix_cache *tier[2];    /* its offload tiers (LLM_TIER_CPU, LLM_TIER_SSD; the pool's when shared), or NULL */
    simtime_t load_pending;   /* loads from the tiers the step being planned waits for, ns */
    /* speculative decoding (spec.c) */
    int spec;                 /* 1: the step in flight verifies spec_tokens + 1 tokens per decoding sequence */
    int64_t spec_res;         /* KV blocks it reserved for them beyond one token per sequence, blocks */
    /* LoRA adapters (lora.c; NULL / 0 without adapters) */
    lora_slot *lora;          /* one per adapter */
    lru_list lora_lru;        /* resident adapters no running sequence uses, least recently used last */
    int lora_resident;        /* adapters loaded (<= max_loras) */
    int lora_active;          /* distinct adapters of its running sequences */
    double lora_load_ms;      /* loads the step being planned waits for, ms */
    request *lora_prev;       /* while a plan admits: the last waiting request it passed over (its adapter
                                 had no slot; it keeps its place), the one admitted being the next; NULL:
                                 the head is admitted */
    /* the CPU side (cpu.c; P->cpun set) */
    int cpu_g;                /* its pod's cgroup on P->cpun (dp ranks share their replica's); -1: none */
    uint64_t cpu_job;         /* the CPU job of the step in flight (before or after its GPU part), or 0 */
    simtime_t cpu_gpu;        /* the GPU part of the step in flight, ns */
    simtime_t cpu_from;       /* when the CPU job in flight started, ns */
    simtime_t cpu_ns;         /* time the step in flight spent in its CPU parts so far (throttled waits
                                 included), ns */
    int ntok;                 /* routed: requests bound to it being tokenised in its cgroup */
} replica;

/* The KV link of a role = decode pool (kvlink.c): transfers in flight share its
 * bandwidth equally (processor sharing), at most kv_link_streams at once; the
 * others wait in FIFO order. */
typedef struct kv_xfer {
    request *r;               /* the sequence whose prompt KV is crossing */
    double rem;               /* bytes still to send (with kv_link_profile: ns of the link alone) */
} kv_xfer;

typedef struct kv_link {
    double bpns;              /* bandwidth, bytes per ns (with kv_link_profile: 1, ns of work per ns) */
    simtime_t lat;            /* latency added to each transfer, ns */
    int streams;              /* most transfers in flight at once */
    kv_xfer *act;             /* the transfers in flight */
    int nact;
    request *wait_head;       /* waiting for a stream, FIFO (linked through request.next) */
    request *wait_tail;
    simtime_t last;           /* when the in-flight transfers' rem were last brought up to date, ns */
    evq_id ev;                /* the next transfer-end event, or 0 */
    /* measured window */
    double busy_ns;           /* time with a transfer in flight, ns */
    uint64_t n;               /* measured transfers arrived */
    double sum_ms;            /* their kv.xfer_ns, ms */
    double max_ms;            /* the longest, ms */
    uint64_t nstart;          /* measured transfers started */
    double wait_ms;           /* their waits for a stream, ms */
    double bytes;             /* their bytes */
} kv_link;

struct llm {
    station st;               /* common part; must be first */
    const llm_cfg *cfg;
    cost_fast cf;             /* cfg->cost resolved for the steps (cost.h) */
    replica *r;               /* replicas */
    int nrep;
    replica **idle;           /* stack of replicas not stepping */
    int nidle;
    int routed;               /* 1: a routing policy sends each request to a replica's own queue */
    route_ctx rc;             /* routed: the policy's view and state */
    station_snap *snaps;      /* routed: one per replica, taken when the policy asks */
    /* routed by a least-loaded policy (its key, route.h): the replicas' loads */
    route_key_kind ix_key;    /* what the index orders by; ROUTE_KEY_NONE: no index */
    route_index ix;           /* every replica's key, as of its last refresh */
    int *dirty;               /* replicas whose load may have changed since (ix_dirty set) */
    int ndirty;
    int route_pfx;            /* 1 while a request is routed by prefix_affinity over the caches */
    int64_t route_nids;       /* then its prompt's content ids in ids (prompt_ids: -1 out of memory) */
    int dp;                   /* ranks per replica (cfg dp, >= 1): r[] holds replicas x dp ranks,
                                 each with its own queue, fed by the balancer (queue.c) */
    int lock;                 /* 1: a replica's dp ranks step in lockstep (MoE: llm_dp_lockstep) */
    int check;                /* LATSIM_CHECK's period (engine/check.h): the whole-structure sanity checks
                                 at every step (1) or every Nth of each replica (N); 0: off (abort on failure) */
    int acct;                 /* 1: per-class cost accounting (classes and a price): each step's
                                 time is charged to its sequences (charge_step) */
    llm_seq_pool seqs;        /* the sequence records of the requests inside (seqrec.h) */
    /* The run's taps (core/tap.h), taken when the pool is made; NULL: nobody records it. */
    stat_acc *itl_run;        /* "itl" of the run: inter-token gaps of measured requests, ms */
    stat_acc *itl_pool;       /* "itl" of this pool (several decoding pools), ms */
    stat_acc *const *cls_itl; /* "cls_itl": the gaps per class (request.cls), ms */
    double *cls_pfx;          /* "cls_pfx": per class, prompt tokens at first admission and those found cached */
    const tap_step *step;     /* "step": its replicas' forward steps (run --trace-events) */
    int B;                    /* tokens per KV block */
    int64_t Bmask;            /* B - 1 when B is a power of two (a modulo is a mask), else -1 */
    /* measured-window counters */
    int window_open;          /* between window_open() and window_close() */
    simtime_t window_start;   /* ns */
    uint64_t steps;           /* steps of all replicas */
    double seqs_in_steps;     /* sum over steps of sequences in the step */
    double kv_area;           /* integral of used blocks over the window, block-ns */
    double kv_peak;           /* most blocks used by one replica / blocks */
    double flops, bytes;      /* work done */
    double *ops;              /* op_shares: the steps' time by operator in the window, ms (OP_N; opshare.h), or NULL */
    uint64_t preemptions;
    uint64_t truncated;
    uint64_t too_long;        /* measured requests rejected for exceeding max_seq_len */
    double cancelled_tokens;  /* measured requests whose client left in service (patience_s): the prompt
                                 tokens their completed steps prefilled, wasted, tokens */
    fleet *fl;                /* failures, autoscaling, cold starts (NULL: none configured) */
    cpu_node *cpun;           /* CPU keys: the node its front end and replicas run on (fleet/cpunode.h;
                                 cpu.c), else NULL */
    int cpu_g;                /* the front end's cgroup on cpun (tokenisation with routing = shared), or -1 */
    int cpu_steps;            /* 1: the replicas' steps have CPU parts (cpu_step_ms, cpu_sample_us_per_seq; cpu.c) */
    double cpu_part_ms;       /* measured: the CPU parts of the steps ended in the window, ms */
    double cpu_steps_ms;      /* measured: those steps' whole time (CPU and GPU parts), ms */
    uint64_t cpu_nsteps;      /* measured: those steps */
    double cpu;               /* cpu_contention: stepping share of the replicas up, averaged over about 10 s */
    simtime_t cpu_t;          /* when cpu was last updated, ns */
    double as_area;           /* busy_area at the last autoscaler evaluation, replica-ns */
    simtime_t as_t;           /* its time, ns */
    uint64_t cold;            /* measured requests finished by a cold replica */
    /* prefix cache (measured requests, first admission) */
    uint64_t *ids;            /* scratch: a prompt's content ids */
    uint32_t nids;            /* its size */
    uint64_t pfx_requests;    /* requests admitted */
    uint64_t pfx_hit_requests;/* of which found any cached block */
    double pfx_prompt;        /* their prompt tokens */
    double pfx_found;         /* prompt tokens found cached: min(prompt, hit ids x id tokens) */
    double pfx_skipped;       /* prompt tokens not prefilled (at least the last one always is) */
    double pfx_saved_ms;      /* isolated-prefill time of the skipped tokens (cost model), ms */
    double cs_fill[3];        /* all requests' first admissions since the run began: count, sum of
                                 the prompt shares found (GPU and tiers), sum of their squares
                                 (the warm-up's settling test, run/warmup.h) */
    kv_link link;             /* role = decode: the link prompts' KV arrives over */
    /* kv_offload: measured requests, first admission (as pfx_*) */
    double off_tokens[2];     /* prompt tokens loaded from each tier */
    double off_gpu_tokens;    /* prompt tokens found on the GPU, the leading run and after it */
    uint64_t off_requests[2]; /* requests that loaded from each tier */
    uint64_t off_loads;       /* requests that loaded from any tier */
    double off_load_ms;       /* their load time, ms */
    uint64_t off_stored[2];   /* content blocks put into each tier (evicted from the level above) */
    /* speculative decoding (spec.c; measured window) */
    gsl_rng *spec_rng;        /* acceptance draws: a stream of its own (NULL: spec_method = none) */
    uint64_t spec_steps;      /* steps that speculated */
    double spec_verifs;       /* sequence verifications (one per decoding sequence per such step) */
    double spec_accepted;     /* proposed tokens accepted (before the cap at the output length), tokens */
    double spec_tried;        /* proposed tokens judged: the accepted ones and the first rejected one of
                                 each verification (later proposals are never looked at), tokens */
    double spec_emitted;      /* tokens the verifications emitted (accepted + bonus, capped), tokens */
    double spec_draft_ms;     /* drafting time added to the steps, ms */
    /* LoRA adapters (lora.c) */
    gsl_rng *lora_rng;        /* adapter draws: a stream of its own (NULL: no adapters) */
    zipf *lora_zipf;          /* popularity of the adapters */
    double lora_load_one_ms;  /* loading one adapter: bytes / lora_load_gbs, ms */
    double lora_read_ms;      /* one distinct adapter's weights read from HBM in a step, ms */
    uint64_t lora_hits;       /* measured: admissions whose adapter was resident */
    uint64_t lora_loads;      /* measured: admissions that loaded their adapter */
    double lora_load_total_ms;/* measured: time steps spent loading adapters, ms */
    double lora_steps_ms;     /* measured: LoRA compute added to the steps (overhead and reads), ms */
    uint64_t lora_waits;      /* measured: requests passed over (once or more) as no adapter slot was free */
};

/* ---- small helpers every file uses -------------------------------------------- */

/* R's requests inside (KEY ROUTE_KEY_INSIDE) or its free KV blocks (ROUTE_KEY_KV)
 * have just changed: if the pool's routing index orders by that, R is refreshed
 * there before the next request is routed (queue.c). */
static inline void load_changed(replica *R, route_key_kind key)
{
    llm *P = R->pool;
    if (P->ix_key != key || R->ix_dirty) return;
    R->ix_dirty = 1;
    P->dirty[P->ndirty++] = R->index;
}

static inline int64_t pmod(int64_t a, int64_t b) { int64_t r = a % b; return r < 0 ? r + b : r; }

/* pmod(A, P->B): for a power of two the low bits of A (two's complement: the
 * same value for negative A), without a division. */
static inline int64_t bmod(const llm *P, int64_t a) { return P->Bmask >= 0 ? a & P->Bmask : pmod(a, P->B); }

/* KV blocks that hold TOKENS tokens. */
static inline int64_t blocks_for(const llm *P, int64_t tokens) { return (tokens + P->B - 1) / P->B; }

/* Prompt tokens a sequence of LEN context tokens skips when FOUND of them are
 * cached: whole KV blocks only, and never its last token, whose logits must be
 * computed (vLLM: the hit is capped at len - 1 tokens, in whole blocks). */
static inline int64_t rep_skip_tokens(const llm *P, int64_t found, int64_t len)
{
    int64_t s = found < len - 1 ? found : len - 1;
    return s > 0 ? s - s % P->B : 0;
}

/* Content KV blocks R holds (shared through the prefix cache). */
static inline int64_t content_blocks(const llm *P, const request *r)
{
    (void) P;
    return seq_of(r)->pfx.blocks;
}

/* ---- seq.c: the running list, the finish heap, phase counts ------------------- */

/* The station's leave operation (station.h): R's sequence record goes back to P. */
void llm_leave(station *st, request *r);

void rep_run_append(replica *R, request *r);
void rep_run_remove(replica *R, request *r);
/* Adds R's sequence r (its finish_step set) to the finish heap, as decoding. */
void rep_heap_push(replica *R, request *r);
/* Takes the first sequence to finish off the finish heap (charging its decodes)
 * and returns it; a batch's sequences, which keep no phase counts. */
request *rep_heap_pop(replica *R);
/* R's sequence r has just produced its first (or, after recompute, next) token
 * at the end of step S with C0 tokens cached: it decodes from step S + 1. */
void rep_decode_join(replica *R, request *r, int64_t s, int64_t c0);
/* R's decoding sequence r stops decoding (finished or preempted). */
void rep_decode_leave(replica *R, request *r);
/* Cost accounting: R's decoding sequence r is charged its share of the decode
 * steps since it began decoding. */
void rep_charge_decode(replica *R, request *r);
/* R's sequence r is done: its times are recorded and it goes on (station_forward). */
void rep_finish(replica *R, request *r);
/* Inter-token latency: each measured decoding sequence of the step in flight got
 * a token now, one step (back to back) after its previous one. */
void rep_itl_decodes(replica *R);

/* ---- cpu.c: the CPU side (tokenisation, the steps' CPU parts) ------------------ */

/* Builds the pool's cgroups on the node of C (NODES: the run's): the front
 * end's (tokenisation with routing = shared) and one per replica (pod).
 * Returns 0, or -1 when out of memory. */
int llm_cpu_init(llm *P, const cpu_cfg *c, cpu_nodes *nodes);
/* R's step has been planned and its GPU part priced at GPU ns (step_start and
 * step_dur set): with CPU parts (P->cpu_steps) it runs them around the GPU
 * part and ends the step itself (rep_on_step_end); returns 1 then, else 0. */
int rep_cpu_step(replica *R, simtime_t gpu);
/* R failed: the CPU job of its step in flight is dropped. */
void rep_cpu_cancel(replica *R);
/* The cgroup R's tokenisation runs in: its replica's (routed), else the front end's. */
int llm_cpu_tok_group(const llm *P, const replica *R);
/* The pool's CPU metrics (throttling of its cgroups, node load, the steps' CPU
 * share) into OUT.  Returns 0, or -1 when out of memory. */
int llm_cpu_report(const llm *P, pool_result *out);

/* ---- kv.c: KV blocks and the prefix-cache glue -------------------------------- */

/* The content ids of r's first TOKENS context tokens into P->ids; *LAST_COST
 * (may be NULL) gets the KV blocks of the last id.  Returns their number, or
 * -1 when out of memory. */
int64_t rep_context_ids(llm *P, const request *r, int64_t tokens, uint32_t *last_cost);
/* The same for r's prompt. */
int64_t rep_prompt_ids(llm *P, const request *r, uint32_t *last_cost);
/* R's sequence r gives back its TOTAL blocks: anonymous ones become free, its
 * content blocks cached (or stay held by others). */
void rep_release_blocks(replica *R, request *r, int64_t total);
/* As rep_release_blocks, for a finished sequence: a session turn's context stays
 * cached under the session's keys for its next turn. */
void rep_release_context(replica *R, request *r, int64_t total);
/* Takes N anonymous blocks (decode growth); the caller checked they are available. */
void rep_take_blocks(replica *R, int64_t n);
/* Gives back N anonymous blocks. */
void rep_give_blocks(replica *R, int64_t n);

/* ---- admit.c: admission and preemption ----------------------------------------- */

/* Starts R's sequence r, the head of its queue: it is dequeued, holds BLOCKS
 * blocks (with a prefix cache, its cached prefix shared and not prefilled) and
 * joins the running list and the prefills. */
void rep_admit(replica *R, request *r, int64_t blocks);
/* Takes the newest running sequence out of R and puts it back at the head of
 * the queue; it will be recomputed (prompt + tokens generated so far). */
void rep_preempt_newest(replica *R);
/* The station's cancel (station.h): r's client left before its first token.  When
 * every sequence of its replica's step in flight has been left so, the step stops
 * now (its time so far is spent, its work lost) and the replica plans its next;
 * else r leaves when the step ends (rep_drop_leaving). */
void llm_cancel(station *st, request *r);
/* R's sequences whose client left leave R now (at the end of its step, before the
 * scheduler completes it; STEP_DONE 1: that step's chunks were computed, 0: it
 * was stopped): their KV blocks freed (a static batch's stay reserved until the
 * batch ends), their time charged, each dropped abandoned. */
void rep_drop_leaving(replica *R, int step_done);

/* ---- iteration-level scheduling (sched_continuous.c), for its variants -------- */

/* Plans R's next step the iteration-level way: the decodes first (preempting
 * the newest sequences until their new KV blocks fit), then the prompts
 * already prefilling, then newcomers first come first served, within
 * max_batch sequences, STEP_TOKENS tokens of the step (capped by
 * max_batch_tokens; decodes count), at most MAX_NEW newcomers (0: no limit),
 * and the free KV blocks.  SPLIT: a prompt may be prefilled in chunks over several steps; else
 * a newcomer's whole prompt must fit the step.  Returns PLAN_STEP, or
 * SIMTIME_NEVER when there is nothing to run. */
simtime_t rep_plan_iteration(replica *R, int64_t step_tokens, int split, int max_new);
/* Completes an iteration-level step: finished decodes leave, completed prompts
 * emit their first token and start decoding. */
void rep_complete_iteration(replica *R);

/* ---- spec.c: speculative decoding ----------------------------------------------- */

/* Whether R's next step speculates (spec_method set, decodes, running sequences
 * within spec_max_batch). */
int rep_spec_wanted(const replica *R);
/* Plans the KV of a speculating step: every decoding sequence may write k + 1
 * tokens; the newest running sequences are preempted until those blocks fit,
 * which are then taken (R->spec_res: beyond the one-token need).  Returns the
 * blocks taken. */
int64_t rep_spec_reserve(replica *R);
/* Draws how many tokens each decoding sequence emits in the speculating step
 * being planned (seq_of(r)->spec.m: 1 + accepted proposals, a truncated geometric, at
 * most its remaining output); returns their sum. */
int64_t rep_spec_draw(replica *R);
/* The drafting time of R's speculating step being planned (k passes of the
 * draft model or the MTP layer over its decoding sequences; 0 for ngram), ms. */
double rep_spec_draft_ms(const replica *R);
/* The speculating step has ended: each decoding sequence advances by its
 * spec_m tokens (phase, finish step, heap), gives back the blocks of the
 * rejected ones, and its extra tokens count as inter-token gaps of 0. */
void rep_spec_advance(replica *R);
/* Rebuilds R's finish heap after its keys changed (seq.c). */
void rep_heap_rebuild(replica *R);

/* ---- lora.c: LoRA adapters ------------------------------------------------------ */

/* The adapter of a request entering pool P: its trace row's, else its class's,
 * else a Zipf draw. */
void llm_lora_pick(llm *P, request *r);
/* Before R admits r: its adapter resident (a hit), or loaded into a free slot or
 * the least recently used unused one (the step waits for the load).  Returns 0,
 * or -1 when every slot holds an adapter in use: r waits, in its place, and the
 * plan goes on with the requests behind it (vLLM), whose adapters may be in the
 * batch already. */
int rep_lora_take(replica *R, request *r);
/* r, passed over for want of an adapter slot, has waited lora_max_wait_ms or
 * more (when set): the requests behind it are not to pass it. */
int rep_lora_starved(const replica *R, const request *r);
/* r starts (+1) or stops (-1) running on R: its adapter's use count. */
void rep_lora_use(replica *R, const request *r, int d);
/* The LoRA time of R's step being started: the loads it waits for, plus, when
 * it runs adapters, lora_step_overhead_ms and each distinct adapter's weight
 * read, ms. */
double rep_lora_step_ms(replica *R);
/* R lost its GPU memory (a failure): no adapter resident. */
void rep_lora_reset(replica *R);

/* ---- step.c: stepping ----------------------------------------------------------- */

/* Plans and starts R's next step, or idles it (until the time the plan asks for).
 * In lockstep (P->lock) the step is its DP group's: every rank plans, the step
 * takes the slowest rank's time, the idle ranks run dummy batches. */
void rep_step(replica *R);
/* Takes R off the idle stack and tries to start it. */
void rep_wake(replica *R);
/* Gives idle replicas, most recently idled first, a chance at waiting requests. */
void llm_kick(llm *P);
/* R is not stepping: on the idle stack unless it is down. */
void rep_go_idle(replica *R);
/* The idle stack: R goes on top, or comes off it in O(1). */
void llm_idle_push(llm *P, replica *R);
void llm_idle_remove(llm *P, replica *R);
/* Adds the part of R's step in flight that lies in the window, up to now. */
void rep_account_step(replica *R);
/* The step-end event (evq handler; SUBJECT is the replica). */
void rep_on_step_end(evq *q, void *subject, int64_t arg);
/* 0 with a line on stderr when R's bookkeeping is inconsistent.  PLANNED: a
 * step is planned and in flight, else R is between steps.  O(sequences). */
int rep_sane(const replica *R, int planned);
/* Aborts when OK is 0 (a failed sanity check, which printed why): on with
 * LATSIM_CHECK or LATSIM_DEBUG whether or not NDEBUG is defined. */
void llm_check_failed(void) __attribute__((noreturn, cold));
static inline void llm_require(int ok)
{
    if (!ok) llm_check_failed();
}

/* ---- queue.c: arrivals and routing ---------------------------------------------- */

/* The station's arrive and prefix_match operations (station.h). */
void llm_arrive(station *st, request *r);
uint32_t llm_prefix_match(const station *st, const request *r, simtime_t visible, uint32_t *nids);
/* Replica R's load, as a routing policy sees it. */
void rep_snap(const replica *R, station_snap *out);
/* A timeout took a request out of a replica's own queue Q (squeue.timed_out). */
void rep_own_timed_out(squeue *q);

/* ---- kvlink.c: disaggregated prefill and decode --------------------------------- */

/* role = decode: r, prefilled elsewhere and at the head of R's queue, is
 * dequeued; BLOCKS KV blocks are reserved for it and its prompt's KV starts
 * across the link (or waits for a stream); when it has arrived, r is on
 * R->ready and R is woken. */
void rep_kv_reserve(replica *R, request *r, int64_t blocks);
/* Starts R's sequences whose KV has arrived decoding in step R->steps (at the
 * top of its plan). */
void rep_kv_join(replica *R);
/* Allocates P's link (role = decode).  Returns 0 or -1 (out of memory). */
int llm_link_init(llm *P);
/* Brings the link's busy time up to now (window close). */
void llm_link_account(llm *P);

/* ---- offload.c: KV-cache offload tiers --------------------------------------------- */

/* Creates P's offload tiers (per replica, or one set shared) and hooks them to
 * the GPU caches' evictions.  Returns 0 or -1 (out of memory). */
int llm_offload_init(llm *P);
void llm_offload_free(llm *P);
/* R admits r, whose N prompt ids are in P->ids (the last costing LAST KV blocks)
 * and whose leading HIT ids its GPU cache holds: the ids after those found on
 * the GPU or in a tier, as a leading run; the tiers' ones are loaded back (their
 * time added to the step being planned and to r->kv.load_ns).  Returns the run's
 * length (>= HIT). */
uint32_t rep_offload_find(replica *R, request *r, int64_t n, uint32_t last, uint32_t hit);
/* kv_offload_shared: the N prompt ids in P->ids that R has just taken are
 * written to the pool's first tier too (write-through), for every replica. */
void rep_offload_share(replica *R, int64_t n, uint32_t last);

/* ---- units.c: replicas as fleet units ------------------------------------------- */

/* The fleet's view of P's replicas (fleet.h), with P as its context. */
fleet_units llm_fleet_units(llm *P);

#endif
