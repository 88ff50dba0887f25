/* taskmpi_none.c -- the build without MPI (task.h): one process, world size 1. */
#include "store/task.h"

int taskmpi_init(int *argc, char ***argv) { (void) argc; (void) argv; return 1; }
int taskmpi_rank(void) { return 0; }
int taskmpi_size(void) { return 1; }
int taskmpi_built(void) { return 0; }
void taskmpi_finalize(int status) { (void) status; }
int taskmpi_serve(void) { return -1; }
int taskmpi_send_task(int rank, int idx, const char *buf, size_t len) { (void) rank; (void) idx; (void) buf; (void) len; return -1; }
int taskmpi_is_lost(int rank) { (void) rank; return 0; }
int taskmpi_lost(char *buf, size_t len) { if (buf && len) buf[0] = '\0'; return 0; }
void taskmpi_set_command(const char *name) { (void) name; }
int taskmpi_send(int rank, int idx) { (void) rank; (void) idx; return -1; }
int taskmpi_recv(int *rank, int *idx, char **buf, size_t *len, int timeout_ms)
{
    (void) rank; (void) idx; (void) buf; (void) len; (void) timeout_ms;
    return 0;
}
void taskmpi_mark_lost(int rank) { (void) rank; }
