/* seqrec.h -- an LLM pool's record of each request while the request is at
 * the pool (its sequence: the replica's scratch, with the prefix-cache,
 * speculative-decoding, LoRA and disaggregation parts in their own
 * sub-structs), from the pool's free list.  (seq.c keeps the running list, the
 * finish heap and the phase counts: replica.h.)
 *
 * The pool owns these records: they come from its free list, refilled a slab
 * at a time (no allocation per request once the list holds as many as the pool
 * ever has inside at once).  One is attached to a request when it enters the
 * pool (request.scratch, llm_seq_attach) and goes back to the list when it
 * leaves the pool (station_ops.leave: served, passed on, dropped or timed out
 * of a queue); a request that goes on to another LLM pool (disaggregated
 * serving: prefill, then decode) gets a record of that pool's there.  The few
 * things an LLM pool keeps for a request beyond its stay are on the request:
 * the output tokens produced (request.emitted) and the once-per-request marks
 * below (request.marks). */
#ifndef LATSIM_LLM_SEQREC_H
#define LATSIM_LLM_SEQREC_H

#include <stdint.h>
#include "engine/request.h"

/* request.marks: counted once per request over every LLM pool it passes. */
#define LLM_MARK_PFX_SEEN   1u   /* prefix cache: its first admission has been counted */
#define LLM_MARK_LORA_WAITED 2u  /* LoRA: it has been passed over for want of an adapter slot */

typedef struct llm_seq {
    struct llm_seq *free_next;/* the pool's free list (while not attached) */
    struct request *req;      /* the request it is the record of (while attached) */
    int32_t generated;        /* output tokens produced so far (in this pool; 1 on arrival at a decode
                                 pool: the prefill pool's first token), tokens */
    int32_t prefill_len;      /* tokens to prefill: the prompt, or prompt + generated after preemption */
    int32_t prefilled;        /* of those, already computed, tokens */
    uint32_t heap_pos;        /* index in the replica's finish heap */
    int64_t blocks;           /* KV blocks held, blocks */
    int64_t phase_base;       /* cache length minus the replica's decode-step count when it joined, tokens */
    int64_t finish_step;      /* decode step at which it produces its last token */
    struct request *rprev;    /* replica's running list, in admission order */
    struct request *rnext;
    int32_t run_rep;          /* the replica (index in the pool's r[]) it was last admitted to */
    uint8_t leaving;          /* patience: its client left while it shared the step in flight with others; it
                                 leaves the replica when that step ends (llm_cancel) */
    double cost_mark;         /* cost accounting: the replica's decode time per sequence (dec_sum) when it
                                 began decoding, ns */
    simtime_t fw_mark;        /* the replica's fw_cum when it joined its running sequences, ns */
    simtime_t fw0;            /* request.fw.ns when it entered the pool, ns */
    simtime_t queue0;         /* request.queue_ns when it entered the pool, ns */
    simtime_t service0;       /* request.service_ns when it entered the pool, ns */
    struct {                  /* prefix cache (prefix_cache = yes) */
        uint32_t *h;          /* handles of the content blocks it holds (malloc'd), or NULL */
        int32_t n;            /* how many */
        int32_t blocks;       /* the KV blocks they occupy, blocks */
        uint8_t seen;         /* its first admission has been counted (LLM_MARK_PFX_SEEN) */
    } pfx;
    struct {                  /* speculative decoding */
        int32_t m;            /* tokens it emits in the step in flight (1 + accepted, capped), tokens */
    } spec;
    struct {                  /* LoRA adapters */
        int32_t adapter;      /* the adapter it runs with (0-based), or -1 for the base model */
        uint8_t waited;       /* passed over at least once for want of an adapter slot (LLM_MARK_LORA_WAITED) */
    } lora;
    struct {                  /* disaggregated serving, in a decode pool */
        uint8_t state;        /* 0 none, 1 prefilled elsewhere (its KV still to cross the link), 2 its KV
                                 has arrived (joins the decodes) */
        int32_t rep;          /* the replica its KV is transferred to */
    } pd;
} llm_seq;

/* The records of one pool: a free list over slabs freed together. */
typedef struct llm_seq_slab llm_seq_slab;
typedef struct llm_seq_pool {
    llm_seq *free;            /* records not attached */
    llm_seq_slab *slabs;      /* every slab allocated */
} llm_seq_pool;

/* R's sequence at the LLM pool it is in. */
static inline llm_seq *seq_of(const request *r) { return (llm_seq *) r->scratch; }

/* Attaches a zeroed record of P to R (its marks taken from request.marks).
 * Returns it, or NULL when out of memory (R's scratch is then NULL). */
llm_seq *llm_seq_attach(llm_seq_pool *p, request *r);
/* R leaves the pool: its output tokens and marks go to the request, its record
 * back to P's free list (R's scratch NULL).  Nothing when R has none. */
void llm_seq_detach(llm_seq_pool *p, request *r);
/* Frees every record of P, attached or not. */
void llm_seq_pool_free(llm_seq_pool *p);

#endif
