/* taskmpi.h -- simulation tasks over MPI: rank 0 hands out task indices, the
 * other ranks (taskmpi_serve) run them and send back the encoded result, the
 * same bytes a forked worker writes (task_out_encode).  Every rank builds the
 * same task list itself, so only indices and results travel.
 *
 * taskmpi.c holds the MPI code and is compiled only by `make MPI=1` (mpicc);
 * otherwise taskmpi_none.c stands in: one process, world size 1.  Whether
 * MPI is used is decided at run time: only when the process was started by
 * mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE in the environment).
 *
 * A worker rank sends a heartbeat every second while it simulates; rank 0
 * declares a rank lost when it has been silent for task_rank_timeout_s() with
 * a task, or when MPI returns an error about it (MPI_ERRORS_RETURN), and hands
 * its task to another.  Open MPI 4 ends the whole job when a rank dies unless
 * mpirun is given --enable-recovery (docs/explore.md).
 */
#ifndef LATSIM_TASKMPI_H
#define LATSIM_TASKMPI_H

#include <stddef.h>
#include "latsim/store.h"   /* taskmpi_init, _rank, _size, _serve, _finalize: public */

#define TASKMPI_STOP  (-1)  /* task index meaning: the end: answer (a heartbeat) and wait for FIN or QUIT */
#define TASKMPI_QUIT  (-2)  /* finish without MPI_Finalize (a rank was lost) */
#define TASKMPI_PING  (-3)  /* rank 0 is alive; answer with a heartbeat */
#define TASKMPI_FIN   (-4)  /* finish with MPI_Finalize (every rank answered STOP) */

/* Rank 0: hands task IDX (or one of the codes above) to RANK.  Returns 0 or -1. */
int taskmpi_send(int rank, int idx);

/* Rank 0: the next message, waiting up to TIMEOUT_MS: 1 the result of task
 * *IDX from *RANK in *BUF (*LEN bytes, malloc'd: the caller frees it), 2 a
 * heartbeat of *RANK, 0 none, -1 an MPI error (*RANK the rank it is about, or -1). */
int taskmpi_recv(int *rank, int *idx, char **buf, size_t *len, int timeout_ms);

/* Rank 0: RANK is lost; taskmpi_finalize will not wait for it. */
void taskmpi_mark_lost(int rank);

#endif
