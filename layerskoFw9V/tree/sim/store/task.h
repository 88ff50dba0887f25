/* task.h -- the unit of work of sweeps, plans and checks: one simulation task
 * (scenario file, --set overrides, seed) -> report rows, and a runner that
 * executes many tasks in forked worker processes.
 *
 * A task is self-contained: a worker loads the scenario, applies the overrides,
 * resolves the catalog from the database file (read only), simulates and
 * flattens the results.  Its outcome travels back as a byte string
 * (task_out_encode / task_out_decode), so the same tasks could be shipped to
 * other machines (e.g. by MPI) without changing the callers.  The result
 * depends only on the task: not on the number of workers or their order.
 */
#ifndef LATSIM_TASK_H
#define LATSIM_TASK_H

#include <stddef.h>
#include <stdint.h>
#include "report/report.h"

#define TASK_MAX_SETS 64

typedef struct task {
    const char *path;             /* scenario file */
    const char *sets[TASK_MAX_SETS]; /* overrides "section.key=value" (not owned) */
    int nsets;
    uint64_t seed;                /* run seed (0: the scenario's [sim] seed) */
} task;

typedef struct task_out {
    int status;                   /* 0 done, 1 runtime failure, 2 bad input */
    char err[512];                /* the one-line message when status != 0 */
    report rep;                   /* rows and CDF points (status 0) */
    uint64_t seed;                /* the seed used */
    double rate;                  /* the workload's mean arrival rate, req/s */
    double usd_per_hour;          /* cost of the configuration, $/h: GPUs x price + generic servers x usd_per_hour */
    double wall_s;                /* wall-clock seconds of the simulation */
} task_out;

/* Runs T in this process, reading the catalog from DBPATH (NULL or a missing
 * file: the built-in catalog).  Always fills OUT (status says how it went);
 * returns OUT->status. */
int task_run(const task *t, const char *dbpath, task_out *out);

/* Serialises O into a malloc'd buffer (*BUF, *LEN).  Returns 0 or -1 (memory). */
int task_out_encode(const task_out *o, char **buf, size_t *len);
/* Rebuilds O from BUF.  Returns 0 or -1 (truncated or corrupt: O->status 1). */
int task_out_decode(const char *buf, size_t len, task_out *o);

void task_out_free(task_out *o);

/* Progress callback of task_run_all: DONE of N tasks finished. */
typedef void (*task_progress)(int done, int n, void *arg);

/* Runs N tasks on up to JOBS worker processes (JOBS <= 0: one per online
 * CPU), each task in its own forked child; fills OUTS[i] for TS[i].  Returns 0,
 * or -1 when workers could not be started (then the tasks run here, one by one). */
int task_run_all(const task *ts, int n, int jobs, const char *dbpath, task_out *outs,
                 task_progress progress, void *arg);

struct scenario;
/* $ per hour of a resolved scenario's configuration: every LLM pool's GPUs x
 * their catalog price, plus every generic pool's servers x usd_per_hour. */
double task_config_cost(const struct scenario *sc);

/* The number of online CPUs (at least 1). */
int task_cpus(void);

#endif
