/* tasksave.c -- a simulation task's result stored as a run (latsim/store.h,
 * task_save_run): its configuration read again from the task's file and
 * overrides, its report as JSON, its SLO terms and sweep or plan point.  What
 * sweep, check, explore and the planner (sim/plan/) store each simulation with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "engine/errmsg.h"
#include "latsim/report.h"
#include "latsim/store.h"

#ifndef LATSIM_VERSION
#define LATSIM_VERSION "0.1"
#endif

int task_save_run(sqlite3 *db, const task *t, const task_out *o, const slo_result *slo, planstore_extra *x,
                  int64_t *id, char *err, size_t errlen)
{
    store_config c;
    int ret = -1;
    char *json = NULL;
    size_t jlen = 0;
    if (store_config_read(t->path, t->sets, t->nsets, &c, err, errlen) != 0) goto done;
    FILE *mem = open_memstream(&json, &jlen);
    if (!mem) { errmsg_set(err, errlen, "out of memory"); goto done; }
    fputs("\"scenario\": ", mem);
    report_json_str(mem, t->path);
    fprintf(mem, ", \"scenario_hash\": \"%016llx\", \"seed\": %llu, \"version\": ", (unsigned long long) c.hash,
            (unsigned long long) o->seed);
    report_json_str(mem, LATSIM_VERSION);
    if (slo && slo->n > 0) { fputs(", \"slo\": ", mem); slo_json(slo, mem); }
    fclose(mem);
    char *full = NULL;
    size_t flen = 0;
    mem = open_memstream(&full, &flen);
    if (!mem) { errmsg_set(err, errlen, "out of memory"); goto done; }
    report_json(&o->rep, json, mem);
    fclose(mem);
    char started[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int saturated = report_get(&o->rep, "", "saturated", "value") > 0;
    planstore_extra dflt = { .slo = slo, .rep = &o->rep };
    if (!x) x = &dflt;
    x->slo = slo && slo->n > 0 ? slo : NULL;
    x->rep = &o->rep;
    store_run r = {
        .scenario_path = t->path, .scenario_text = c.text, .scenario_hash = c.hash, .seed = o->seed,
        .replications = 1, .version = LATSIM_VERSION, .started_at = started, .wall_s = o->wall_s,
        .status = saturated ? "saturated" : "ok", .json = full,
        .config = c.kv, .nconfig = c.n, .stats = o->rep.rows, .nstats = o->rep.n,
        .extra = planstore_run_extra, .extra_arg = x,
    };
    ret = store_save_run(db, &r, id, err, errlen);
    free(full);
done:
    free(json);
    store_config_free(&c);
    return ret;
}
