/* task.c -- simulation tasks and the forked-worker runner (see task.h). */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "engine/errmsg.h"
#include "stations/pool.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "store/task.h"

int task_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int) n;
}

double task_config_cost(const scenario *sc)
{
    double usd = 0;
    for (int i = 0; i < sc->npools; i++) {
        const pool_cfg *p = &sc->pools[i];
        if (p->kind->usd_per_hour) usd += p->kind->usd_per_hour(p);
    }
    return usd;
}

int task_run(const task *t, const char *dbpath, task_out *out)
{
    memset(out, 0, sizeof *out);
    out->status = 2;
    scenario sc;
    sqlite3 *db = NULL;
    sim_result res;
    memset(&res, 0, sizeof res);
    if (scenario_load(&sc, t->path, t->sets, t->nsets, out->err, sizeof out->err) != 0) goto done;
    if (t->seed) sc.seed = t->seed;
    out->seed = sc.seed;
    /* Look-ups only: the database file is never written here. */
    if (store_open_lookup(dbpath, &db, out->err, sizeof out->err) != 0) goto done;
    if (scenario_resolve(&sc, db, out->err, sizeof out->err) != 0) goto done;
    /* An oversize point of a sweep, plan or check is refused as `run` refuses it. */
    if (scenario_check_memory(&sc, scenario_memory_budget(), out->err, sizeof out->err) != 0) goto done;
    store_close(db);
    db = NULL;
    out->rate = scenario_arrival_rate(&sc);
    out->usd_per_hour = task_config_cost(&sc);
    out->status = 1;
    if (sim_run(&sc, sc.seed, &res, out->err, sizeof out->err) != 0) goto done;
    out->wall_s = sim_result_value(&res, "wall_time_s");
    if (report_flatten(&res, -1, &out->rep) != 0) { errmsg_set(out->err, sizeof out->err, "out of memory"); goto done; }
    out->status = 0;
done:
    sim_result_free(&res);
    if (db) store_close(db);
    scenario_free(&sc);
    return out->status;
}

void task_out_free(task_out *o)
{
    report_free(&o->rep);
}

/* ---- encoding ------------------------------------------------------------ */

typedef struct buf { char *p; size_t n, cap; int oom; } buf;

static void put(buf *b, const void *x, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) { b->oom = 1; return; }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, x, n);
    b->n += n;
}

static void put_str(buf *b, const char *s)
{
    uint32_t n = (uint32_t) strlen(s);
    put(b, &n, sizeof n);
    put(b, s, n);
}

int task_out_encode(const task_out *o, char **out, size_t *len)
{
    buf b = { 0 };
    put(&b, &o->status, sizeof o->status);
    put_str(&b, o->err);
    put(&b, &o->seed, sizeof o->seed);
    put(&b, &o->rate, sizeof o->rate);
    put(&b, &o->usd_per_hour, sizeof o->usd_per_hour);
    put(&b, &o->wall_s, sizeof o->wall_s);
    uint64_t n = o->rep.n, nc = o->rep.ncdf;
    put(&b, &n, sizeof n);
    for (size_t i = 0; i < o->rep.n; i++) {
        const store_stat *s = &o->rep.rows[i];
        put_str(&b, s->scope);
        put_str(&b, s->metric);
        put_str(&b, s->stat);
        put(&b, &s->value, sizeof s->value);
        /* A row that is a name (the pool's kind, its cost model): the name too. */
        uint8_t has_text = s->text != NULL;
        put(&b, &has_text, sizeof has_text);
        if (has_text) put_str(&b, s->text);
    }
    put(&b, &nc, sizeof nc);
    for (size_t i = 0; i < o->rep.ncdf; i++) {
        put_str(&b, o->rep.cdf[i].metric);
        put(&b, &o->rep.cdf[i].p, sizeof(double));
        put(&b, &o->rep.cdf[i].value, sizeof(double));
    }
    uint64_t nd = o->rep.ndist;               /* the latency distributions (report.h) */
    put(&b, &nd, sizeof nd);
    for (size_t i = 0; i < o->rep.ndist; i++) {
        uint64_t row = o->rep.dist[i].row;
        put(&b, &row, sizeof row);
        put(&b, &o->rep.dist[i].d, sizeof o->rep.dist[i].d);
    }
    if (b.oom) { free(b.p); return -1; }
    *out = b.p;
    *len = b.n;
    return 0;
}

/* ---- the task itself, for MPI ranks --------------------------------------- */

static void put_opt(buf *b, const char *s)
{
    uint8_t has = s != NULL;
    put(b, &has, sizeof has);
    if (has) put_str(b, s);
}

int task_encode(const task *t, const char *dbpath, char **out, size_t *len)
{
    buf b = { 0 };
    int32_t ns = t->nsets;
    put_opt(&b, t->path);
    put_opt(&b, dbpath);
    put(&b, &t->seed, sizeof t->seed);
    put(&b, &ns, sizeof ns);
    for (int i = 0; i < t->nsets; i++) put_opt(&b, t->sets[i]);
    if (b.oom) { free(b.p); return -1; }
    *out = b.p;
    *len = b.n;
    return 0;
}

typedef struct rd { const char *p; size_t n, at; int bad; } rd;

static void get(rd *r, void *x, size_t n)
{
    if (r->bad || r->at + n > r->n) { r->bad = 1; memset(x, 0, n); return; }
    memcpy(x, r->p + r->at, n);
    r->at += n;
}

/* A malloc'd copy of the next string, or NULL (bad or out of memory). */
static char *get_str(rd *r)
{
    uint32_t n;
    get(r, &n, sizeof n);
    if (r->bad || r->at + n > r->n) { r->bad = 1; return NULL; }
    char *s = malloc(n + 1);
    if (!s) { r->bad = 1; return NULL; }
    memcpy(s, r->p + r->at, n);
    s[n] = '\0';
    r->at += n;
    return s;
}

/* Report rows hold string literals for stats and CDF metrics. */
static const char *literal(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return names[i];
    return NULL;
}
static const char *const STATS[] = { "value", "mean", "p50", "p90", "p95", "p99", "p999", "max" };
static const char *const CDFS[] = { "e2e", "queue", "ttft", "tpot" };

int task_out_decode(const char *data, size_t len, task_out *o)
{
    memset(o, 0, sizeof *o);
    rd r = { data, len, 0, 0 };
    get(&r, &o->status, sizeof o->status);
    char *e = get_str(&r);
    if (e) snprintf(o->err, sizeof o->err, "%s", e);
    free(e);
    get(&r, &o->seed, sizeof o->seed);
    get(&r, &o->rate, sizeof o->rate);
    get(&r, &o->usd_per_hour, sizeof o->usd_per_hour);
    get(&r, &o->wall_s, sizeof o->wall_s);
    uint64_t n = 0, nc = 0;
    get(&r, &n, sizeof n);
    if (!r.bad && n > len) r.bad = 1;
    o->rep.replications = 1;
    if (!r.bad && n) {
        o->rep.rows = calloc(n, sizeof *o->rep.rows);
        if (!o->rep.rows) r.bad = 1;
        else o->rep.cap = n;
    }
    for (uint64_t i = 0; i < n && !r.bad; i++) {
        store_stat *s = &o->rep.rows[i];
        s->replication = -1;
        s->scope = get_str(&r);
        s->metric = get_str(&r);
        char *st = get_str(&r);
        s->stat = st ? literal(st, STATS, sizeof STATS / sizeof STATS[0]) : NULL;
        free(st);
        get(&r, &s->value, sizeof s->value);
        uint8_t has_text = 0;
        get(&r, &has_text, sizeof has_text);
        if (has_text && !(s->text = get_str(&r))) r.bad = 1;
        s->ci95 = NAN;
        o->rep.n = i + 1;
        if (!s->scope || !s->metric || !s->stat) r.bad = 1;
    }
    get(&r, &nc, sizeof nc);
    if (!r.bad && nc > len) r.bad = 1;
    if (!r.bad && nc) {
        o->rep.cdf = calloc(nc, sizeof *o->rep.cdf);
        if (!o->rep.cdf) r.bad = 1;
    }
    for (uint64_t i = 0; i < nc && !r.bad; i++) {
        char *m = get_str(&r);
        report_cdf *c = &o->rep.cdf[i];
        c->metric = m ? literal(m, CDFS, sizeof CDFS / sizeof CDFS[0]) : NULL;
        free(m);
        get(&r, &c->p, sizeof c->p);
        get(&r, &c->value, sizeof c->value);
        if (!c->metric) r.bad = 1;
        else o->rep.ncdf = i + 1;
    }
    uint64_t nd = 0;
    get(&r, &nd, sizeof nd);
    if (!r.bad && nd > len / sizeof(repci_dist)) r.bad = 1;
    if (!r.bad && nd) {
        o->rep.dist = calloc(nd, sizeof *o->rep.dist);
        if (!o->rep.dist) r.bad = 1;
        else o->rep.capdist = nd;
    }
    for (uint64_t i = 0; i < nd && !r.bad; i++) {
        uint64_t row;
        report_dist *x = &o->rep.dist[i];
        get(&r, &row, sizeof row);
        get(&r, &x->d, sizeof x->d);
        x->row = (size_t) row;
        if (!r.bad && (row >= o->rep.n || (i > 0 && row <= o->rep.dist[i - 1].row))) r.bad = 1;
        if (!r.bad) o->rep.ndist = i + 1;
    }
    if (r.bad) {
        /* Rows decoded so far may lack their strings: keep only complete ones. */
        for (size_t i = 0; i < o->rep.n; i++)
            if (!o->rep.rows[i].scope || !o->rep.rows[i].metric || !o->rep.rows[i].stat) {
                free((char *) o->rep.rows[i].scope);
                free((char *) o->rep.rows[i].metric);
                free((char *) o->rep.rows[i].text);
                o->rep.n = i;
                break;
            }
        o->status = 1;
        snprintf(o->err, sizeof o->err, "worker result truncated or corrupt");
        return -1;
    }
    return 0;
}

static char *get_opt(rd *r)
{
    uint8_t has = 0;
    get(r, &has, sizeof has);
    return has && !r->bad ? get_str(r) : NULL;
}

void task_wire_free(task_wire *w)
{
    free((char *) w->t.path);
    for (int i = 0; i < w->t.nsets; i++) free((char *) w->t.sets[i]);
    free(w->dbpath);
    memset(w, 0, sizeof *w);
}

int task_decode(const char *data, size_t len, task_wire *w)
{
    memset(w, 0, sizeof *w);
    rd r = { data, len, 0, 0 };
    int32_t ns = 0;
    w->t.path = get_opt(&r);
    w->dbpath = get_opt(&r);
    get(&r, &w->t.seed, sizeof w->t.seed);
    get(&r, &ns, sizeof ns);
    if (!r.bad && (ns < 0 || ns > TASK_MAX_SETS)) r.bad = 1;
    for (int i = 0; i < ns && !r.bad; i++) {
        w->t.sets[i] = get_opt(&r);
        w->t.nsets = i + 1;
        if (!w->t.sets[i]) r.bad = 1;
    }
    if (r.bad || !w->t.path || r.at != r.n) { task_wire_free(w); return -1; }
    return 0;
}

/* ---- workers ------------------------------------------------------------- */

typedef struct worker {
    pid_t pid;       /* 0 = free slot */
    int fd;          /* read end of its pipe */
    int task;        /* index of its task */
    buf in;          /* what it has written so far */
} worker;

int task_check(const task *t, sqlite3 *db, double *weight, char *err, size_t errlen)
{
    scenario sc;
    int rc = -1;
    if (scenario_load(&sc, t->path, t->sets, t->nsets, err, errlen) != 0) return -1;
    if (scenario_resolve(&sc, db, err, errlen) != 0) goto done;
    if (scenario_check_memory(&sc, scenario_memory_budget(), err, errlen) != 0) goto done;
    if (weight) {
        double w = scenario_arrival_rate(&sc) * scenario_expected_duration_s(&sc);
        *weight = isfinite(w) && w > 0 ? w : 1;
    }
    rc = 0;
done:
    scenario_free(&sc);
    return rc;
}

/* Child: runs T, writes the encoded result to FD, exits. */
static void child(const task *t, const char *dbpath, int fd)
{
    task_out o;
    task_run(t, dbpath, &o);
    char *b = NULL;
    size_t n = 0;
    if (task_out_encode(&o, &b, &n) != 0) _exit(1);
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, b + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(1);
        off += (size_t) w;
    }
    _exit(0);
}

/* Parent: the worker W has closed its pipe: collects its result into OUT. */
static void reap(worker *w, task_out *out)
{
    int st = 0;
    while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {}
    close(w->fd);
    if (w->in.oom || task_out_decode(w->in.p, w->in.n, out) != 0) {
        task_out_free(out);
        memset(out, 0, sizeof *out);
        out->status = 1;
        if (WIFSIGNALED(st))
            snprintf(out->err, sizeof out->err, "worker for task %d died (signal %d)", w->task, WTERMSIG(st));
        else
            snprintf(out->err, sizeof out->err, "worker for task %d returned no result (exit %d)", w->task,
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    free(w->in.p);
    memset(w, 0, sizeof *w);
}

/* ---- streaming runner (explore): local workers and MPI ranks -------------- */

int task_child_start(const task *t, const char *dbpath, pid_t *pid, int *fd)
{
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(NULL);
    pid_t c = fork();
    if (c < 0) { close(p[0]); close(p[1]); return -1; }
    if (c == 0) { close(p[0]); child(t, dbpath, p[1]); }
    close(p[1]);
    *pid = c;
    *fd = p[0];
    return 0;
}

/* Runs T here, through the same bytes a worker writes. */
static void run_here(const task *t, const char *dbpath, task_out *o)
{
    task_out r;
    char *b = NULL;
    size_t n = 0;
    task_run(t, dbpath, &r);
    if (task_out_encode(&r, &b, &n) != 0 || task_out_decode(b, n, o) != 0) {
        task_out_free(o);
        *o = r;                 /* out of memory: the result as it is */
        free(b);
        return;
    }
    task_out_free(&r);
    free(b);
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

double task_rank_timeout_s(void)
{
    const char *e = getenv("LATSIM_MPI_TIMEOUT_S");
    double v = e ? strtod(e, NULL) : 0;
    return v > 0 && v <= 86400 ? v : 10;
}

typedef struct remote {
    int busy;        /* a task is out there */
    int idx;         /* which */
    int dead;        /* declared lost */
    double seen;     /* last message from it, monotonic s */
    double pinged;   /* last ping sent to it while idle, monotonic s */
} remote;

typedef struct doneq { int idx; task_out o; } doneq;

/* Hands the next tasks (the re-queued RE first, then ORDER from *NEXT) to the
 * free MPI ranks, one each; pings the idle ones once a second. */
/* The tasks still to hand out, in order, each claimed first (task_claim). */
typedef struct picker {
    const int *order;         /* task indices */
    int next, norder;         /* the next to hand out, of NORDER */
    task_claim claim;         /* NULL: every task is this process's */
    void *arg;                /* its argument */
    int skipped;              /* tasks the claim refused (finished elsewhere) */
    int stop;                 /* the claim asked to stop */
} picker;

/* Whether P has tasks left to try. */
static int left(const picker *p) { return p->next < p->norder; }

/* The next task of P that its claim grants, or -1 when none is left. */
static int pick(picker *p)
{
    while (p->next < p->norder) {
        int i = p->order[p->next++];
        int c = p->claim ? p->claim(i, p->arg) : 1;
        if (c > 0) return i;
        if (c < 0) {
            p->stop = 1;
            p->next = p->norder;
            return -1;
        }
        p->skipped++;
    }
    return -1;
}

static void hand_out(remote *rm, int size, int *re, int *nre, picker *pk, const task *ts, const char *dbpath)
{
    double now = mono_s();
    for (int r = 1; r < size; r++) {
        if (rm[r].dead || rm[r].busy) continue;
        if (*nre || left(pk)) {
            int i = *nre ? re[--*nre] : pick(pk);
            if (i < 0) continue;
            char *b = NULL;
            size_t len = 0;
            if (task_encode(&ts[i], dbpath, &b, &len) != 0) { re[(*nre)++] = i; break; }   /* memory: runs here */
            int bad = taskmpi_send_task(r, i, b, len) != 0;
            free(b);
            if (bad) { rm[r].dead = 1; re[(*nre)++] = i; continue; }
            rm[r].busy = 1;
            rm[r].idx = i;
            rm[r].seen = now;
        } else if (now - rm[r].pinged > 1) {
            taskmpi_send(r, TASKMPI_PING);
            rm[r].pinged = now;
        }
    }
}

int task_run_stream(const task *ts, int n, const int *order, int norder, int jobs, const char *dbpath,
                    task_sink sink, void *arg, char *lost, size_t lostlen)
{
    return task_run_stream_claimed(ts, n, order, norder, jobs, dbpath, NULL, sink, arg, lost, lostlen);
}

int task_run_stream_claimed(const task *ts, int n, const int *order, int norder, int jobs, const char *dbpath,
                            task_claim claim, task_sink sink, void *arg, char *lost, size_t lostlen)
{
    if (lost && lostlen) lost[0] = '\0';
    if (norder <= 0) return 0;
    int size = taskmpi_size();
    if (jobs <= 0) jobs = size > 1 ? 1 : task_cpus();
    if (jobs > norder) jobs = norder;
    if (jobs < 1) jobs = 1;
    char *fin = calloc((size_t) n, 1);
    int *re = calloc((size_t) (size + jobs) + 2, sizeof *re);
    worker *w = calloc((size_t) jobs, sizeof *w);
    struct pollfd *pf = calloc((size_t) jobs, sizeof *pf);
    remote *rm = calloc((size_t) size, sizeof *rm);
    doneq *dq = calloc((size_t) (jobs + size), sizeof *dq);
    int rc = 0, nre = 0, done = 0, stop = 0, nlost = 0;
    picker pk = { order, 0, norder, claim, arg, 0, 0 };
    if (!fin || !re || !w || !pf || !rm || !dq) { rc = -1; goto out; }
    double tmo = task_rank_timeout_s(), t0 = mono_s();
    for (int r = 1; r < size; r++) {
        rm[r].seen = rm[r].pinged = t0;
        if (taskmpi_is_lost(r)) rm[r].dead = 2;      /* lost in an earlier batch: reported then */
    }
    while (done + pk.skipped < norder && !stop && !pk.stop) {
        int nd = 0;
        /* Local slots: forked children (in process when only one and no ranks). */
        for (int k = 0; k < jobs && (nre || left(&pk)); k++) {
            if (w[k].pid) continue;
            int i = nre ? re[--nre] : pick(&pk);
            if (i < 0) break;
            if (jobs == 1 && size == 1) {
                run_here(&ts[i], dbpath, &dq[nd].o);
                dq[nd++].idx = i;
                break;
            }
            if (task_child_start(&ts[i], dbpath, &w[k].pid, &w[k].fd) != 0) {
                w[k].pid = 0;
                run_here(&ts[i], dbpath, &dq[nd].o);
                dq[nd++].idx = i;
                break;
            }
            w[k].task = i;
        }
        hand_out(rm, size, re, &nre, &pk, ts, dbpath);
        double now;
        if (!nd && (pk.stop || done + pk.skipped >= norder)) break;   /* the rest was claimed elsewhere */
        if (!nd) {
            for (int k = 0; k < jobs; k++) {
                pf[k].fd = w[k].pid ? w[k].fd : -1;
                pf[k].events = POLLIN;
                pf[k].revents = 0;
            }
            if (poll(pf, (size_t) jobs, size > 1 ? 2 : -1) < 0 && errno != EINTR) { rc = -1; break; }
            for (int k = 0; k < jobs; k++) {
                if (!w[k].pid || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                char chunk[65536];
                ssize_t r = read(w[k].fd, chunk, sizeof chunk);
                if (r < 0 && errno == EINTR) continue;
                if (r > 0) { put(&w[k].in, chunk, (size_t) r); continue; }
                dq[nd].idx = w[k].task;
                reap(&w[k], &dq[nd++].o);
            }
        }
        /* Results and heartbeats of the ranks. */
        for (int got = 1; size > 1 && got;) {
            int r = -1, i = -1;
            char *b = NULL;
            size_t len = 0;
            got = taskmpi_recv(&r, &i, &b, &len, 0);
            if (got == -1) {
                if (r > 0 && r < size && !rm[r].dead) { rm[r].dead = 1; if (rm[r].busy) re[nre++] = rm[r].idx; rm[r].busy = 0; }
                free(b);
                break;
            }
            if (got && r > 0 && r < size && !rm[r].dead) {
                rm[r].seen = mono_s();
                if (got == 1 && rm[r].busy && rm[r].idx == i) {
                    rm[r].busy = 0;
                    dq[nd].idx = i;
                    task_out_decode(b, len, &dq[nd++].o);
                }
            }
            free(b);
        }
        now = mono_s();
        for (int r = 1; r < size; r++) {
            if (rm[r].dead || now - rm[r].seen <= tmo) continue;     /* idle ranks answer pings */
            rm[r].dead = 1;
            if (rm[r].busy) re[nre++] = rm[r].idx;
            rm[r].busy = 0;
        }
        for (int r = 1; r < size; r++)
            if (rm[r].dead && rm[r].dead != 2) {
                rm[r].dead = 2;
                taskmpi_mark_lost(r);
                if (lost && lostlen) {
                    size_t l = strlen(lost);
                    snprintf(lost + l, lostlen - l, "%s%d", nlost ? ", " : "", r);
                }
                nlost++;
            }
        /* The freed slots get their next task before the results are stored
         * (a commit takes a while: the workers go on meanwhile). */
        hand_out(rm, size, re, &nre, &pk, ts, dbpath);
        for (int k = 0; k < jobs && size > 1 && (nre || left(&pk)); k++) {
            if (w[k].pid) continue;
            int i = nre ? re[--nre] : pick(&pk);
            if (i < 0) break;
            if (task_child_start(&ts[i], dbpath, &w[k].pid, &w[k].fd) != 0) { w[k].pid = 0; re[nre++] = i; break; }
            w[k].task = i;
        }
        for (int j = 0; j < nd; j++) {
            int i = dq[j].idx;
            if (fin[i] || stop) { task_out_free(&dq[j].o); continue; }
            fin[i] = 1;
            done++;
            if (sink(i, &dq[j].o, j == nd - 1, arg) != 0) stop = 1;
        }
    }
out:
    if (w)
        for (int k = 0; k < jobs; k++)
            if (w[k].pid) {
                kill(w[k].pid, SIGKILL);
                task_out o;
                reap(&w[k], &o);
                task_out_free(&o);
            }
    free(fin); free(re); free(w); free(pf); free(rm); free(dq);
    return rc ? rc : stop || pk.stop ? -1 : nlost;
}

/* ---- task_run_all: a batch in order, through the streaming runner -------- */

typedef struct batch {
    task_out *outs;          /* the caller's, by task index */
    char *got;               /* per task: 1 once its result is in OUTS */
    int done, n;             /* results in so far, of N */
    task_progress progress;  /* the caller's callback, or NULL */
    void *arg;               /* its argument */
} batch;

static int batch_sink(int i, task_out *o, int batch_end, void *arg)
{
    (void) batch_end;
    batch *b = arg;
    b->outs[i] = *o;
    b->got[i] = 1;
    if (b->progress) b->progress(++b->done, b->n, b->arg);
    return 0;
}

int task_run_all(const task *ts, int n, int jobs, const char *dbpath, task_out *outs,
                 task_progress progress, void *arg)
{
    if (n <= 0) return 0;
    int *order = malloc((size_t) n * sizeof *order);
    batch b = { outs, calloc((size_t) n, 1), 0, n, progress, arg };
    int rc = -1;
    if (order && b.got) {
        for (int i = 0; i < n; i++) order[i] = i;
        rc = task_run_stream(ts, n, order, n, jobs, dbpath, batch_sink, &b, NULL, 0) < 0 ? -1 : 0;
    }
    for (int i = 0; i < n; i++)
        if (!b.got || !b.got[i]) {
            memset(&outs[i], 0, sizeof outs[i]);
            outs[i].status = 1;
            snprintf(outs[i].err, sizeof outs[i].err, "task %d not run: out of memory", i);
        }
    free(order);
    free(b.got);
    return rc;
}
