/* scnapi.c -- the public accessors of a scenario (latsim/scenario.h): what a
 * front end reads of a loaded scenario without seeing its struct, and the
 * questions about its pools that need the struct (the planner's inflow and
 * service-time estimates).  It knows kinds only through their rows (flags and
 * names), as scenario.c does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/kind.h"
#include "fleet/fleet.h"
#include "run/scenario.h"

scenario *scenario_new(void)
{
    return calloc(1, sizeof(scenario));
}

void scenario_delete(scenario *s)
{
    if (!s) return;
    scenario_free(s);
    free(s);
}

uint64_t scenario_seed(const scenario *s) { return s->seed; }
void scenario_set_seed(scenario *s, uint64_t seed) { s->seed = seed; }
uint64_t scenario_warmup(const scenario *s) { return s->warmup; }
double scenario_ts_interval(const scenario *s) { return s->ts_interval_s; }
void scenario_set_ts_interval(scenario *s, double seconds) { s->ts_interval_s = seconds; }
void scenario_set_metrics(scenario *s, int on) { s->metrics = on != 0; }
void scenario_set_batch_means(scenario *s, int on) { s->batch_means = on != 0; }
void scenario_set_trace_events(scenario *s, const char *path, uint64_t nreq)
{
    s->trace_path = path;
    s->trace_requests = nreq;
}
const slo_spec *scenario_slo(const scenario *s) { return &s->slo; }

void scenario_take_slo(scenario *s, slo_spec *out)
{
    *out = s->slo;
    memset(&s->slo, 0, sizeof s->slo);
    s->slo.headroom = 1;
}

scenario_arrival scenario_arrival_kind(const scenario *s)
{
    if (s->wl.users > 0) return SCENARIO_ARRIVAL_USERS;
    if (s->wl.arrival == ARRIVAL_TRACE) return SCENARIO_ARRIVAL_TRACE;
    return s->wl.sched.kind == RATE_FIXED ? SCENARIO_ARRIVAL_RATE : SCENARIO_ARRIVAL_SCHEDULE;
}

double scenario_rate(const scenario *s) { return s->wl.rate; }
double scenario_speedup(const scenario *s) { return s->wl.speedup; }
int scenario_users(const scenario *s) { return s->wl.users; }

int scenario_npools(const scenario *s) { return s->npools; }
const char *scenario_pool_name(const scenario *s, int i) { return s->pools[i].name; }
int scenario_pool_line(const scenario *s, int i) { return s->pools[i].line; }
const char *scenario_pool_kind(const scenario *s, int i) { return s->pools[i].kind->name; }

int scenario_pool_takes(const scenario *s, int i, const char *key) { return station_kind_key(s->pools[i].kind, key) != NULL; }

int scenario_pool_servers(const scenario *s, int i)
{
    const pool_cfg *p = &s->pools[i];
    return p->kind->flags & KIND_SERVICE_DIST ? p->servers : 0;
}

int scenario_metric_replicas(const scenario *s)
{
    int n = 0;
    for (int i = 0; i < s->npools; i++) {
        const pool_cfg *p = &s->pools[i];
        if (!(p->kind->flags & KIND_DECODES)) continue;   /* only an LLM pool's series are per replica (col_tseries.c) */
        int u = p->units;
        if (p->fleet && p->fleet->autoscale && p->fleet->as.max_replicas > u) u = p->fleet->as.max_replicas;
        n += u;
    }
    return n;
}

const char *scenario_pool_value(const scenario *s, int i, const char *key)
{
    char sec[80];
    snprintf(sec, sizeof sec, "pool %s", s->pools[i].name);
    const cfg_entry *e = cfg_get(&s->raw, sec, key);
    return e ? e->value : NULL;
}

const char *scenario_sim_value(const scenario *s, const char *key)
{
    const cfg_entry *e = cfg_get(&s->raw, "sim", key);
    return e ? e->value : NULL;
}

int scenario_pool_service(const scenario *s, int i, double *mean_ms, double *cv)
{
    const pool_cfg *p = &s->pools[i];
    if (!(p->kind->flags & KIND_SERVICE_DIST)) return -1;
    *mean_ms = p->service.mean;
    *cv = p->service.cv;
    return 0;
}

int scenario_pool_whole_inflow(const scenario *s, int i)
{
    if (s->has_client && s->client.retries > 0) return 0;
    for (int c = 0; c < s->wl.nclasses; c++) if (s->wl.classes[c].target != s->wl.target) return 0;
    int j = s->wl.target;
    for (int hops = 0; hops <= s->npools && j >= 0 && j < s->npools; hops++) {
        if (j == i) return 1;
        const pool_cfg *x = &s->pools[j];
        if (!(x->kind->flags & KIND_SERVICE_DIST) || x->queue_limit > 0 || x->timeout_ms > 0 || x->fleet || x->nnext != 1)
            return 0;
        j = x->next[0];
    }
    return 0;
}

int scenario_has_section(const scenario *s, const char *name)
{
    return cfg_section_get(&s->raw, name) != NULL;
}

int scenario_file_has_section(const char *path, const char *section, char *err, size_t errlen)
{
    cfg c;
    int rc = cfg_load(&c, path, err, errlen) != 0 ? -1 : cfg_section_get(&c, section) != NULL;
    cfg_free(&c);
    return rc;
}

const gpu_spec *scenario_gpus(const scenario *s, int *n)
{
    *n = s->ngpus;
    return s->gpus;
}

const model_spec *scenario_models(const scenario *s, int *n)
{
    *n = s->nmodels;
    return s->models;
}

const char *scenario_file_path(const scenario *s) { return s->raw.path; }
const char *scenario_file_text(const scenario *s) { return s->raw.text; }
