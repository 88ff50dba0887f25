/* gwattr.h -- the gateway attributes of a request, drawn from its class:
 * complexity score (for complexity routers), intent and answer lifetime (for
 * result caches), a shared system prompt (put before the prompt: its length
 * added) and multi-turn sessions (for prefix caches).
 *
 * Sessions (`turns`): a request is the next turn of an open session of its
 * class, whose prompts each extend the previous turn's prompt and answer: in
 * closed loop each user keeps its own session per class, so a turn is sent
 * after the previous answer came back; in open loop the class keeps `sessions`
 * conversations open and each arrival continues one drawn at random (the
 * stream "workload turns"; with 1, consecutive arrivals are one session's).
 * Each kind of draw has its own stream ("workload complexity", "workload
 * intents"), and a class without the key draws nothing, so scenarios without
 * these keys give the numbers they gave before.  Intent keys are unique per
 * class: (class index + 1) x 2^40 + intent number (from 1).
 */
#ifndef LATSIM_GWATTR_H
#define LATSIM_GWATTR_H

#include <stdint.h>
#include "engine/request.h"
#include "workload/workload.h"

typedef struct gwattr gwattr;

/* Memory one open session of a class with turns takes, bytes (one per
 * closed-loop user, or per `sessions` in open loop); for scenario_check_memory. */
size_t gwattr_session_bytes(void);

/* The attribute source for W's classes under run seed SEED.  NULL when out of
 * memory; a workload without any of the keys gives a source that does nothing. */
gwattr *gwattr_new(const workload_cfg *w, uint64_t seed);

/* Sets R's attributes from its class (R->cls).  Cannot fail. */
void gwattr_fill(gwattr *g, request *r);

/* 1 when no class draws or sets anything (every request gets the same: cache
 * TTL -1, no intent, complexity, system prompt or session), else 0. */
int gwattr_plain(const gwattr *g);

void gwattr_free(gwattr *g);

#endif
