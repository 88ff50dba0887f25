/* poolcfg.h -- the typed configuration of one [pool NAME] section: what every
 * kind shares (name, kind row, limits, out-edges, fleet keys), and the kind's
 * own configuration behind `ext`.  Built by the scenario loader through the
 * kind's parse hook (kind.h); read by the station the kind makes.
 */
#ifndef LATSIM_POOLCFG_H
#define LATSIM_POOLCFG_H

#include <stdint.h>
#include "core/dist.h"

struct station_kind;
struct fleet_cfg;

typedef struct pool_cfg {
    char name[64];            /* the NAME of [pool NAME] */
    int line;                 /* line of its header */
    const struct station_kind *kind;   /* its row in the kind table (kind.h) */
    int servers;              /* generic: parallel servers */
    dist service;             /* generic: service time, ms */
    double usd_per_hour;      /* generic: $ per server-hour (0 = free) */
    double error_rate;        /* generic: probability a service ends in an error (5xx), [0, 1] */
    uint64_t queue_limit;     /* 0 = unbounded; else arrivals finding this many waiting are rejected */
    double timeout_ms;        /* 0 = none; else requests waiting longer are dropped, ms */
    int *next;                /* out-edges: pool indices of the `next` list, in order */
    int nnext;                /* their number; 0: served requests leave the system */
    void *ext;                /* the kind's own configuration (an LLM pool's llm_cfg), owned by the
                                 kind: its parse hook allocates it, its free_cfg frees it */
    int units;                /* what a fleet controls, set by the kind's parse: replicas (LLM);
                                 0: the servers */
    struct fleet_cfg *fleet;  /* failures, autoscaling, cold starts (fleetcfg.h); NULL: none configured */
    int gateway;              /* 1: this pool adds network or overhead time (set by its kind's parse;
                                 kinds flagged KIND_GATEWAY always do) */
    int tokens;               /* 1: this pool reads requests' prompt tokens (set by its kind's parse: a
                                 result cache or router pricing an encoder); kinds flagged KIND_TOKENS
                                 always do */
} pool_cfg;

#endif
