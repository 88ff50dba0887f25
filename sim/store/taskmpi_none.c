/* taskmpi_none.c -- the build without MPI (task.h): one process, world size 1. */
#include "store/task.h"

int taskmpi_init(int *argc, char ***argv) { (void) argc; (void) argv; return 1; }
int taskmpi_rank(void) { return 0; }
int taskmpi_size(void) { return 1; }
int taskmpi_built(void) { return 0; }
void taskmpi_finalize(int status) { (void) status; }
int taskmpi_serve(const task *ts, int n, const char *dbpath) { (void) ts; (void) n; (void) dbpath; return -1; }
int taskmpi_send(int rank, int idx) { (void) rank; (void) idx; return -1; }
int taskmpi_recv(int *rank, int *idx, char **buf, size_t *len, int timeout_ms)
{
    (void) rank; (void) idx; (void) buf; (void) len; (void) timeout_ms;
    return 0;
}
void taskmpi_mark_lost(int rank) { (void) rank; }
