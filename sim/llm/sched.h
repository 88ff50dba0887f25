/* sched.h -- the table of LLM schedulers (`scheduler = NAME` of an LLM pool).
 *
 * A scheduler is a row: its name, flags saying what it supports, its own keys
 * with the hook that reads them, and the two hooks a replica calls at step
 * boundaries (plan the next step, complete the one that ended), over the
 * replica interface (llm/replica.h), as Vidur's scheduler classes.  The
 * built-in rows live one family to a file (sched_batch.c: static, dynamic;
 * sched_continuous.c: continuous; sched_chunked.c: chunked) and are listed in
 * sched.c; a scheduler defined elsewhere (a test) is added with
 * llm_sched_register().  Adding a scheduler is one file plus one row
 * (docs/architecture.md, "Adding a scheduler").
 */
#ifndef LATSIM_LLM_SCHED_H
#define LATSIM_LLM_SCHED_H

#include <stddef.h>
#include "core/scn.h"
#include "engine/simtime.h"

typedef struct llm_cfg llm_cfg;   /* an LLM pool's configuration (llmcfg.h) */
struct replica;                   /* one LLM replica (replica.h) */

/* What a scheduler supports (llm_sched.flags). */
enum {
    LLM_SCHED_BATCHES = 1,        /* whole batches: a batch's sequences start together, decode
                                     padded to its longest, and hold their KV blocks until it
                                     ends (static, dynamic); else iteration-level */
    LLM_SCHED_SPLITS_PROMPTS = 2, /* prompts are prefilled in chunks, so a prompt may be longer
                                     than max_batch_tokens (chunked) */
    LLM_SCHED_FLEET = 4,          /* its replicas can fail, be autoscaled and start cold (the
                                     fleet keys) */
    LLM_SCHED_PREFIX_CACHE = 8,   /* it works with prefix_cache = yes */
};

/* A plan's answer when it has planned a step to run now. */
#define PLAN_STEP ((simtime_t) -1)

/* A row of the scheduler table. */
typedef struct llm_sched {
    const char *name;             /* the value of `scheduler =` */
    const char *help;             /* one line: what it does */
    unsigned flags;               /* LLM_SCHED_* */
    const scn_key *keys;          /* its own keys in the pool section, ended by a NULL key
                                     (NULL: none); listed by `latsim keys` */
    /* Reads its keys of section SEC into L->sched_cfg (which it allocates;
     * freed with L by free()).  Returns 0, or -1 with the error set in X
     * (scn_fail).  NULL: it has no keys. */
    int (*parse)(scn_ctx *x, const char *sec, llm_cfg *l);
    /* Plans R's next step into R->cur.  Returns PLAN_STEP when there is a step
     * to run now; else the replica idles until a request arrives
     * (SIMTIME_NEVER) or until the time returned, when it plans again. */
    simtime_t (*plan)(struct replica *r);
    /* The step in flight has ended: advance its sequences (R->steps is still
     * the index of that step). */
    void (*complete)(struct replica *r);
    /* Tokens of its largest step for L (its keys read): what the KV derivation's
     * profiling pass computes, as vLLM profiles max_num_batched_tokens.  NULL:
     * L->max_batch_tokens. */
    int64_t (*step_tokens)(const llm_cfg *l);
} llm_sched;

/* The built-in rows (sched_*.c). */
extern const llm_sched llm_sched_static, llm_sched_dynamic, llm_sched_continuous, llm_sched_chunked;

/* The table: built-in rows first, then the registered ones.  Rows by name
 * (case-insensitive; NULL when none), by index (NULL out of range), and the
 * names joined by '|'. */
const llm_sched *llm_sched_find(const char *name);
int llm_sched_count(void);
const llm_sched *llm_sched_at(int i);
int llm_sched_index(const llm_sched *s);   /* -1 when not in the table */
void llm_sched_choices(char *buf, size_t n);
const char *llm_sched_name(const llm_sched *s);

/* The names of the rows that have every flag of FLAGS, as "a, b or c", into
 * BUF (N bytes; "" when none): for messages naming the schedulers that
 * support something. */
void llm_sched_names_with(unsigned flags, char *buf, size_t n);
/* The same for the rows that have none of FLAGS (the iteration-level ones:
 * LLM_SCHED_BATCHES). */
void llm_sched_names_without(unsigned flags, char *buf, size_t n);

/* Adds ROW (which must outlive every use) after the rows there.  Returns 0
 * (also when ROW is in the table already), or -1 when another row has its
 * name, the table is full, or ROW lacks a plan or complete hook.  Not
 * thread-safe: register before anything loads a scenario. */
int llm_sched_register(const llm_sched *row);

#endif
