/* kind.h -- the table of station kinds.
 *
 * One row per kind of station (`kind = NAME` in a [pool NAME] section).  The
 * scenario loader reads a kind's keys through its row (key checking, parsing,
 * catalog resolution), and the engine builds its stations through it.  Adding
 * a kind is one file (its station_ops and these hooks) plus one row: a built-in
 * row in run/kinds.c, or station_kind_register() for a kind defined elsewhere
 * (a test).  This file holds the table, not the kinds: it includes none.
 */
#ifndef LATSIM_KIND_H
#define LATSIM_KIND_H

#include <stdio.h>
#include <sqlite3.h>
#include "core/poolcfg.h"
#include "core/scn.h"
#include "core/station.h"

enum {
    KIND_TOKENS = 1,          /* requests need prompt/output token counts (drawn only when some kind needs them) */
    KIND_SOLE_STATS = 2,      /* when it is the only station, its queue and service statistics are the system's */
    KIND_GATEWAY = 4,         /* adds network or overhead time: the report shows those components */
    KIND_FLEET = 8,           /* its replicas or servers can fail, be autoscaled, start cold (fleet.h) */
    KIND_SERVICE_DIST = 16,   /* its service time is pool_cfg.service over pool_cfg.servers (a generic
                                 pool): the loader can bound the busy time a run asks of it */
    KIND_EMITS = 32,          /* emits the tokens of an answer (an LLM pool, an external API): per-pool
                                 and per-route TTFT and TPOT are reported */
    KIND_DECODES = 64,        /* decodes token by token on replicas holding a KV cache (an LLM pool):
                                 inter-token gaps, the KV-cache usage gauge and a model name */
    KIND_PLAIN = 128,         /* reads nothing of a request beyond its core record (not its tail,
                                 request.h) and adds no time but queueing and service (a generic
                                 pool): a run of such pools only takes the engine's lean path */
    KIND_CPU = 256,           /* not a fleet, but its per-request work can run as CPU jobs on a node with
                                 the CPU keys (a router's, a result cache's: fleet/cputier.h); its
                                 check_fleet hook refuses the fleet's other keys */
};

typedef struct station_kind {
    const char *name;         /* the value of `kind =` */
    const char *help;         /* one line for `latsim keys` */
    const scn_key *keys;      /* its own keys, ended by a row with key NULL (NULL: none) */
    /* More key tables, SET = 0, 1, ... until NULL (e.g. an LLM pool's cost
     * models' keys); NULL: none. */
    const scn_key *(*more_keys)(int set);
    /* Reads the kind's keys of section SEC into P.  Returns 0 or -1 (scn_fail). */
    int (*parse)(scn_ctx *x, const char *sec, pool_cfg *p);
    /* Resolves catalog names and derives what follows (NULL: nothing).  Returns 0 or -1. */
    int (*resolve)(scn_ctx *x, const char *sec, pool_cfg *p, sqlite3 *db);
    /* Builds the station.  Returns NULL when out of memory. */
    station *(*make)(const pool_cfg *cfg, const station_env *env);
    /* Frees what parse allocated in P (NULL: nothing). */
    void (*free_cfg)(pool_cfg *p);
    /* Memory a station of the kind needs beyond the common part for what its
     * keys size (a result cache's intents), bytes, for scenario_check_memory:
     * *KEY gets the key that asks the most and WHAT (N bytes) a phrase saying
     * what it is ("1e+09 intents (48 bytes each...)").  NULL: nothing. */
    double (*footprint)(scn_ctx *x, const pool_cfg *p, const char **key, char *what, size_t n);
    /* Refuses fleet keys the kind does not model: KEYS (N of them) are the pool's
     * fleet keys present, in fleetcfg's table order.  Returns 0, or -1 with the
     * error at the key (scn_fail).  NULL: every fleet key is fine (KIND_FLEET). */
    int (*check_fleet)(scn_ctx *x, const char *sec, const pool_cfg *p, const char *const *keys, int n);
    /* Refuses the kind's own self-renewing events when too many are expected
     * over DURATION_S of simulated time (scn_check_period).  Returns 0 or -1.
     * NULL: it has none beyond the fleet keys'. */
    int (*check_periods)(scn_ctx *x, const char *sec, const pool_cfg *p, double duration_s);
    /* $ per hour the pool costs at its configured size (NULL: free). */
    double (*usd_per_hour)(const pool_cfg *p);
    const char *units_key;    /* the key that counts its units ("replicas"; NULL: "servers") */
    int min_next;             /* fewest out-edges (`next` names) it needs */
    int max_next;             /* most out-edges it can use (0: any number) */
    unsigned flags;           /* KIND_* */
    /* Refuses what pool SELF of POOLS (N of them, their next edges built) cannot
     * serve given the pools around it (an LLM pool's disaggregated roles).
     * Returns 0 or -1 (scn_fail at the key).  NULL: nothing to check. */
    int (*check_graph)(scn_ctx *x, const char *sec, const pool_cfg *pools, int n, int self);
    /* The name of the model pool P serves (run --metrics' model_name label), or
     * NULL.  NULL hook: none. */
    const char *(*model_name)(const pool_cfg *p);
    /* The values its key KEY takes, '|'-joined ("a|b|c"), into BUF (N bytes),
     * from the rows of their table: what "{choices}" in that key's help stands
     * for (station_kind_help).  Returns 0, or -1 when KEY has no such list.
     * NULL: none. */
    int (*key_choices)(const char *key, char *buf, size_t n);
    /* Prints on OUT the lines `run --verbose` gives, under "settings that change
     * answers", for the resolved pool P of section SEC of file RAW in a run of
     * REQUESTS measured requests: the keys whose defaults matter
     * (station_kind_default_line writes one) and what it derived from them
     * (an LLM pool's KV capacity, a result cache's expected hit rate).  NULL: none. */
    void (*defaults)(const pool_cfg *p, const cfg *raw, const char *sec, double requests, FILE *out);
} station_kind;

/* The kind named NAME (case-insensitive), or NULL. */
const station_kind *station_kind_find(const char *name);

/* Kinds in table order: built-in rows first, then registered ones. */
int station_kind_count(void);
const station_kind *station_kind_at(int i);
int station_kind_index(const station_kind *k);   /* -1 when not in the table */

/* Adds kind K (which must outlive every use).  Returns 0, or -1 when the name
 * is taken or the table is full.  Not thread-safe: register before loading. */
int station_kind_register(const station_kind *k);

/* Sets the built-in rows (N of them, the first the default kind), which come
 * before every registered one; run/kinds.c calls it with the built-in table. */
void station_kind_set_builtin(const station_kind *const *rows, int n);

/* The row of KEY in kind K's own keys or in its more_keys sets, or NULL. */
const scn_key *station_kind_key(const station_kind *k, const char *key);

/* HELP, the help of kind K's key KEY, with "{choices}" replaced by the values
 * K's key_choices gives, ' | '-separated, in BUF (N bytes).  Returns HELP
 * itself when it holds no "{choices}", else BUF. */
const char *station_kind_help(const station_kind *k, const char *key, const char *help, char *buf, size_t n);

/* One line "  [SEC] KEY = VALUE (set|default): WHY" on OUT: the value of KEY in
 * section SEC of RAW, or its default in kind K's keys; WHY NULL: KEY's help in
 * K's keys.  Prints nothing when K has no key KEY. */
void station_kind_default_line(FILE *out, const station_kind *k, const cfg *raw, const char *sec, const char *key,
                               const char *why);

/* The kinds' names joined by '|' ("generic|llm|router"), in table order. */
void station_kind_choices(char *buf, size_t n);

#endif
