/* scnresolve.c -- resolving a loaded scenario (the kinds' look-ups in the
 * catalog and the calibration database) and the estimate of the memory its run
 * needs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "run/scenario.h"
#include "run/scnbuild.h"
#include "core/kind.h"
#include "engine/evq.h"
#include "fleet/fleet.h"
#include "workload/gwattr.h"
#include "core/zipf.h"
#include "engine/request.h"

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
