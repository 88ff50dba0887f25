/* taskmpi.c -- simulation tasks over MPI (task.h, the MPI part); compiled by make MPI=1 only. */
#include <errno.h>
#include <stdio.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "store/task.h"

enum { TAG_TASK = 1, TAG_RESULT = 2, TAG_BEAT = 3 };

static int g_on, g_rank, g_size = 1, g_lost;
static char *g_dead;       /* per rank: 1 lost (rank 0) */
static const char *g_cmd = "explore";   /* named in the warnings */

int taskmpi_built(void) { return 1; }
int taskmpi_rank(void) { return g_rank; }
int taskmpi_size(void) { return g_size; }

int taskmpi_init(int *argc, char ***argv)
{
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK")) return 1;
    if (g_on) return g_size;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) return 1;
    /* Errors are returned, not fatal: a lost rank must not end the run. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_dead = calloc((size_t) g_size, 1);
    g_on = 1;
    return g_size;
}

void taskmpi_mark_lost(int rank)
{
    if (g_dead && rank > 0 && rank < g_size) g_dead[rank] = 1;
    g_lost = 1;
}

int taskmpi_send(int rank, int idx)
{
    if (!g_on) return -1;
    return MPI_Send(&idx, (int) sizeof idx, MPI_BYTE, rank, TAG_TASK, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

int taskmpi_send_task(int rank, int idx, const char *b, size_t len)
{
    if (!g_on || len > (size_t) 1 << 30) return -1;
    char *m = malloc(sizeof idx + len);
    if (!m) return -1;
    memcpy(m, &idx, sizeof idx);
    memcpy(m + sizeof idx, b, len);
    int rc = MPI_Send(m, (int) (sizeof idx + len), MPI_BYTE, rank, TAG_TASK, MPI_COMM_WORLD);
    free(m);
    return rc == MPI_SUCCESS ? 0 : -1;
}

int taskmpi_is_lost(int rank)
{
    return g_dead && rank > 0 && rank < g_size && g_dead[rank];
}

int taskmpi_lost(char *buf, size_t len)
{
    int n = 0;
    if (buf && len) buf[0] = '\0';
    for (int r = 1; g_dead && r < g_size; r++)
        if (g_dead[r]) {
            if (buf && len) {
                size_t l = strlen(buf);
                snprintf(buf + l, len - l, "%s%d", n ? ", " : "", r);
            }
            n++;
        }
    return n;
}

void taskmpi_set_command(const char *name)
{
    if (name) g_cmd = name;
}

static void nap_ms(int ms)
{
    struct timespec t = { ms / 1000, (long) (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

int taskmpi_recv(int *rank, int *idx, char **buf, size_t *len, int timeout_ms)
{
    *rank = -1;
    *buf = NULL;
    *len = 0;
    if (!g_on) return 0;
    for (int waited = 0;; waited++) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) return -1;
        if (flag) {
            int n = 0;
            *rank = st.MPI_SOURCE;
            if (MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < (int) sizeof(int)) return -1;
            char *b = malloc((size_t) n);
            if (!b) return -1;
            /* Not MPI_Recv: a rank that dies part-way through a large
             * message would leave it waiting for ever. */
            MPI_Request rq;
            if (MPI_Irecv(b, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &rq) != MPI_SUCCESS) {
                free(b);
                return -1;
            }
            double limit = task_rank_timeout_s() * 1000;
            for (double ms = 0;; ms += 1) {
                int ok = 0;
                if (MPI_Test(&rq, &ok, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;   /* B may still be written: kept */
                if (ok) break;
                if (ms > limit) { MPI_Cancel(&rq); return -1; }
                nap_ms(1);
            }
            memcpy(idx, b, sizeof(int));
            if (st.MPI_TAG != TAG_RESULT) { free(b); return 2; }
            *len = (size_t) n - sizeof(int);
            memmove(b, b + sizeof(int), *len);
            *buf = b;
            return 1;
        }
        if (waited >= timeout_ms) return 0;
        nap_ms(1);
    }
}

/* Sends BUF (LEN bytes) tagged TAG, prefixed by task index IDX.  Returns 0 or -1. */
static int send_msg(int tag, int idx, const char *b, size_t len)
{
    char *m = malloc(sizeof(int) + len);
    if (!m) return -1;
    memcpy(m, &idx, sizeof(int));
    if (len) memcpy(m + sizeof(int), b, len);
    int rc = MPI_Send(m, (int) (sizeof(int) + len), MPI_BYTE, 0, tag, MPI_COMM_WORLD);
    free(m);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* Runs task T in a forked child, sending a heartbeat every second, then its
 * encoded result.  Returns 0 or -1 (MPI failed). */
static int serve_one(const task *t, int idx, const char *dbpath)
{
    pid_t pid;
    int fd;
    char *b = NULL;
    size_t n = 0, cap = 0;
    if (task_child_start(t, dbpath, &pid, &fd) != 0) {
        task_out o;
        task_run(t, dbpath, &o);
        int bad = task_out_encode(&o, &b, &n) != 0;
        task_out_free(&o);
        int rc = bad ? -1 : send_msg(TAG_RESULT, idx, b, n);
        free(b);
        return rc;
    }
    int oom = 0;
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        int r = poll(&p, 1, 1000);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            if (send_msg(TAG_BEAT, idx, NULL, 0) != 0) { kill(pid, SIGKILL); break; }
            continue;
        }
        char chunk[65536];
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        if (n + (size_t) k > cap) {
            size_t c2 = cap ? cap : 65536;
            while (c2 < n + (size_t) k) c2 *= 2;
            char *q = realloc(b, c2);
            if (!q) { oom = 1; break; }
            b = q;
            cap = c2;
        }
        memcpy(b + n, chunk, (size_t) k);
        n += (size_t) k;
    }
    close(fd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    int rc;
    if (oom || n == 0) {
        /* The worker died: the failure travels as a result, as locally. */
        task_out o;
        memset(&o, 0, sizeof o);
        o.status = 1;
        snprintf(o.err, sizeof o.err, "worker for task %d returned no result", idx);
        free(b);
        b = NULL;
        rc = task_out_encode(&o, &b, &n) != 0 ? -1 : send_msg(TAG_RESULT, idx, b, n);
    } else {
        rc = send_msg(TAG_RESULT, idx, b, n);
    }
    free(b);
    return rc;
}

static int serve(void);

int taskmpi_serve(void)
{
    if (!g_on || g_rank == 0) return -1;
    int rc = serve();
    if (rc != 0) g_lost = 1;          /* rank 0 is gone or MPI failed: no MPI_Finalize */
    return rc;
}

/* Runs the task message B (N bytes: index, task_encode).  Returns 0 or -1. */
static int serve_task(const char *b, int n)
{
    int idx;
    task_wire w;
    memcpy(&idx, b, sizeof idx);
    if (idx < 0 || task_decode(b + sizeof idx, (size_t) n - sizeof idx, &w) != 0) return -1;
    int rc = serve_one(&w.t, idx, w.dbpath);
    task_wire_free(&w);
    return rc;
}

static int serve(void)
{
    /* Rank 0 pings idle ranks during a batch, not between a plan's rounds:
     * the limit allows for that. */
    double quiet = 0, limit = 3 * task_rank_timeout_s();
    if (limit < 120) limit = 120;
    for (;;) {
        int flag = 0, n = 0;
        MPI_Status st;
        if (MPI_Iprobe(0, TAG_TASK, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) return -1;
        if (!flag) {
            nap_ms(2);
            quiet += 0.002;
            if (quiet > limit) return -1;         /* rank 0 is gone */
            continue;
        }
        quiet = 0;
        if (MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < (int) sizeof(int)) return -1;
        char *b = malloc((size_t) n);
        if (!b) return -1;
        if (MPI_Recv(b, n, MPI_BYTE, 0, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) { free(b); return -1; }
        int idx;
        memcpy(&idx, b, sizeof idx);
        int rc = 0;
        if (n > (int) sizeof idx) rc = serve_task(b, n) != 0 ? -1 : 0;
        else if (idx == TASKMPI_PING || idx == TASKMPI_STOP) rc = send_msg(TAG_BEAT, idx, NULL, 0);  /* answered: rank 0 sees this rank alive */
        else if (idx == TASKMPI_QUIT) { g_lost = 1; rc = 1; }
        else if (idx == TASKMPI_FIN) rc = 1;
        else rc = -1;
        free(b);
        if (rc) return rc < 0 ? -1 : 0;
    }
}

/* Rank 0: STOP to every live rank, and their answers: a rank that does not
 * answer within task_rank_timeout_s() is lost (MPI_Finalize would wait for it). */
static void stop_all(void)
{
    char *acked = calloc((size_t) g_size, 1);
    int want = 0;
    for (int r = 1; r < g_size; r++)
        if ((!g_dead || !g_dead[r]) && taskmpi_send(r, TASKMPI_STOP) == 0) want++;
        else if (g_dead) g_dead[r] = 1;
    double limit = task_rank_timeout_s() * 1000;
    for (double ms = 0; want > 0 && ms < limit && acked;) {
        int r, idx;
        char *b;
        size_t n;
        int got = taskmpi_recv(&r, &idx, &b, &n, 10);
        free(b);
        if (got == 2 && idx == TASKMPI_STOP && r > 0 && r < g_size && !acked[r]) { acked[r] = 1; want--; }
        if (got == 0) ms += 10;
    }
    for (int r = 1; r < g_size; r++) {
        if (g_dead && g_dead[r]) continue;
        if (!acked || !acked[r]) {
            g_lost = 1;
            if (g_dead) g_dead[r] = 1;
            fprintf(stderr, "latsim: warning: %s: lost MPI rank %d: it did not answer at the end (after the last task)\n", g_cmd, r);
        }
    }
    static const int quit = TASKMPI_QUIT;
    for (int r = 1; r < g_size; r++) {
        if (!g_dead || !g_dead[r]) {
            taskmpi_send(r, g_lost ? TASKMPI_QUIT : TASKMPI_FIN);
            continue;
        }
        /* A rank given up for silence may still be alive (slow, or its
         * messages stalled): QUIT it too, or mpirun would wait for it.  Not
         * waited on: the rank may be dead. */
        MPI_Request rq;
        if (MPI_Isend(&quit, (int) sizeof quit, MPI_BYTE, r, TAG_TASK, MPI_COMM_WORLD, &rq) == MPI_SUCCESS)
            MPI_Request_free(&rq);
    }
    free(acked);
}

void taskmpi_finalize(int status)
{
    if (!g_on) return;
    if (g_rank == 0) stop_all();
    g_on = 0;
    fflush(NULL);
    /* With a lost rank MPI_Finalize would wait for it: leave without. */
    if (g_lost) _exit(status);
    free(g_dead);
    g_dead = NULL;
    MPI_Finalize();
}
