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

/* A task as an MPI rank receives it: the task, its strings and the database
 * path owned (task_wire_free). */
typedef struct task_wire {
    task t;                       /* path and sets malloc'd */
    char *dbpath;                 /* catalog database file (malloc'd; NULL: the built-in catalog) */
} task_wire;

/* Serialises task T and the database path DBPATH (may be NULL) into a
 * malloc'd buffer (*BUF, *LEN).  Returns 0 or -1 (memory). */
int task_encode(const task *t, const char *dbpath, char **buf, size_t *len);
/* Rebuilds a task from BUF into W.  Returns 0, or -1 (truncated, corrupt or
 * out of memory: W is empty). */
int task_decode(const char *buf, size_t len, task_wire *w);
void task_wire_free(task_wire *w);

/* Forks a worker that runs T and writes its encoded result to *FD (the read
 * end, the caller's to close), *PID its process.  Returns 0 or -1 (no pipe or fork). */
int task_child_start(const task *t, const char *dbpath, pid_t *pid, int *fd);

/* How long an MPI rank may stay silent while it holds a task before it is
 * declared lost: $LATSIM_MPI_TIMEOUT_S, else 10 s. */
double task_rank_timeout_s(void);

/* ---- MPI (taskmpi.c, or taskmpi_none.c without make MPI=1) ----
 *
 * Simulation tasks over MPI: rank 0 hands out tasks (task_encode: the index,
 * scenario path, overrides, seed and database path), the other ranks
 * (taskmpi_serve) run them and send back the encoded result, the same bytes a
 * forked worker writes (task_out_encode).  The worker ranks need no task list
 * of their own, so one that serves can serve any command's batches: sweep's
 * and plan's rounds as well as an exploration (cli/latsim.c starts them).
 *
 * taskmpi.c holds the MPI code and is compiled only by `make MPI=1` (mpicc);
 * otherwise taskmpi_none.c stands in: one process, world size 1.  Whether
 * MPI is used is decided at run time: only when the process was started by
 * mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE in the environment).
 *
 * A worker rank sends a heartbeat every second while it simulates and answers
 * rank 0's pings while idle; rank 0 declares a rank lost when it has been
 * silent for task_rank_timeout_s(), or when MPI returns an error about it (MPI_ERRORS_RETURN), and hands
 * its task to another.  Open MPI 4 ends the whole job when a rank dies unless
 * mpirun is given --enable-recovery (docs/explore.md).
 */

#define TASKMPI_STOP  (-1)  /* task index meaning: the end: answer (a heartbeat) and wait for FIN or QUIT */
#define TASKMPI_QUIT  (-2)  /* finish without MPI_Finalize (a rank was lost) */
#define TASKMPI_PING  (-3)  /* rank 0 is alive; answer with a heartbeat */
#define TASKMPI_FIN   (-4)  /* finish with MPI_Finalize (every rank answered STOP) */

/* Rank 0: hands one of the codes above to RANK.  Returns 0 or -1. */
int taskmpi_send(int rank, int idx);
/* Rank 0: hands task IDX, encoded in BUF (LEN bytes, task_encode), to RANK.
 * Returns 0 or -1. */
int taskmpi_send_task(int rank, int idx, const char *buf, size_t len);
/* Rank 0: 1 when RANK was lost (taskmpi_mark_lost) in this or an earlier batch. */
int taskmpi_is_lost(int rank);

/* Rank 0: the next message, waiting up to TIMEOUT_MS: 1 the result of task
 * *IDX from *RANK in *BUF (*LEN bytes, malloc'd: the caller frees it), 2 a
 * heartbeat of *RANK, 0 none, -1 an MPI error (*RANK the rank it is about, or -1). */
int taskmpi_recv(int *rank, int *idx, char **buf, size_t *len, int timeout_ms);

/* Rank 0: RANK is lost; taskmpi_finalize will not wait for it. */
void taskmpi_mark_lost(int rank);

#endif
