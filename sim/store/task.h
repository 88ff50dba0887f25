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
#include <sys/types.h>
#include "report/report.h"
#include "latsim/store.h"   /* task, task_out, task_run_all: public */

/* Runs T in this process, reading the catalog from DBPATH (NULL or a missing
 * file: the built-in catalog).  Always fills OUT (status says how it went);
 * returns OUT->status. */
int task_run(const task *t, const char *dbpath, task_out *out);

/* Serialises O into a malloc'd buffer (*BUF, *LEN).  Returns 0 or -1 (memory). */
int task_out_encode(const task_out *o, char **buf, size_t *len);
/* Rebuilds O from BUF.  Returns 0 or -1 (truncated or corrupt: O->status 1). */
int task_out_decode(const char *buf, size_t len, task_out *o);

/* Forks a worker that runs T and writes its encoded result to *FD (the read
 * end, the caller's to close), *PID its process.  Returns 0 or -1 (no pipe or fork). */
int task_child_start(const task *t, const char *dbpath, pid_t *pid, int *fd);

/* How long an MPI rank may stay silent while it holds a task before it is
 * declared lost: $LATSIM_MPI_TIMEOUT_S, else 10 s. */
double task_rank_timeout_s(void);

#endif
