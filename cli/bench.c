/* bench.c -- the speed benchmark behind `make bench`.
 *
 * Each case is a scenario text run in a child process; the parent reads the
 * child's counters through a pipe and its peak resident memory from wait4().
 * Each case runs three times (--repeat N) and the fastest run is reported: on a
 * shared machine the others measure the neighbours as much as the code.
 * Cases: an M/M/8 queue at utilisation 0.9 with 10^6 and 10^7 requests (the
 * engine's event rate, and memory that must not grow with the request count),
 * the same M/M/8 driven by 16 closed-loop users (think 1 ms: utilisation
 * 0.92; the event calendar holds one pending event per thinking user, so its
 * cost grows with log(users)) and by a diurnal rate (Poisson by thinning, peak
 * utilisation 0.95), 10^6 requests each, and 10^6 LLM requests (mean 1000
 * prompt / 200 output tokens) on 16 continuous-batching replicas fed by one
 * shared queue, and the same behind a power_of_two router over per-replica
 * queues (routing = power_of_two).
 * Then the planner: `latsim plan` on the seed's chat service
 * (scenarios/chat_plan.ini: the cheapest H100/A100/L40S fleet, TP 1/2/4/8,
 * Llama-3-70B at 50 requests/s) with two workers, as on a 2-core machine: its
 * wall time and how many simulations it ran.
 * Then the calibrator: importing the whole Vidur profile set
 * (../shared/data/profiles/vidur) into a fresh database in one transaction, and
 * building the operator-profile model of every (model, TP) it holds for the GPU
 * with attention measurements (A100), each with its cross-validated error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "calib.h"
#include "latsim/scenario.h"
#include "latsim/sim.h"
#include "latsim/store.h"

typedef struct bench_case {
    const char *name;
    const char *text;
} bench_case;

#define MM8(n) \
    "[sim]\nrequests = " n "\nwarmup = 100000\nseed = 1\n" \
    "[workload]\narrival = poisson\nrate = 7200\n" \
    "[pool mm8]\nservers = 8\nservice_ms = exp(mean=1)\n"

#define LLM16(routing) \
    "[sim]\nrequests = 1000000\nwarmup = 20000\nseed = 1\n" \
    "[workload]\narrival = poisson\nrate = 110\n" \
    "prompt_tokens = lognormal(mean=1000, cv=1.0)\noutput_tokens = lognormal(mean=200, cv=1.0)\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 16\nscheduler = continuous\n" \
    "truncate = yes\nrouting = " routing "\n"

static const bench_case CASES[] = {
    { "M/M/8 rho=0.9, 1e6 req", MM8("1000000") },
    { "M/M/8 rho=0.9, 1e7 req", MM8("10000000") },
    { "M/M/8 closed, 16 users, 1e6", "[sim]\nrequests = 1000000\nwarmup = 100000\nseed = 1\n"
      "[workload]\nusers = 16\nthink_ms = exp(mean=1)\n[pool mm8]\nservers = 8\nservice_ms = exp(mean=1)\n" },
    { "M/M/8 diurnal rate, 1e6 req", "[sim]\nrequests = 1000000\nwarmup = 100000\nseed = 1\n"
      "[workload]\narrival = poisson\nrate = diurnal(mean=6500, peak_to_trough=1.4, period=1m, peak_at=20s)\n"
      "[pool mm8]\nservers = 8\nservice_ms = exp(mean=1)\n" },
    { "LLM 16x continuous, 1e6 req", LLM16("shared") },
    { "LLM 16x power_of_two, 1e6 req", LLM16("power_of_two") },
};

typedef struct bench_out {
    double wall_s;
    double events;
    double requests;
    double steps;
    double sim_s;
    int saturated;
    int ok;
} bench_out;

static void run_child(const bench_case *c, int fd)
{
    bench_out o = { 0 };
    char err[1024];
    scenario *sc = scenario_new();
    sqlite3 *db = NULL;
    snprintf(err, sizeof err, "out of memory");
    if (sc && scenario_load_text(sc, c->name, c->text, NULL, 0, err, sizeof err) == 0 &&
        store_open(":memory:", &db, err, sizeof err) == 0 &&
        scenario_resolve(sc, db, err, sizeof err) == 0) {
        sim_result r;
        if (sim_run(sc, scenario_seed(sc), &r, err, sizeof err) == 0) {
            o.ok = 1;
            o.wall_s = sim_result_value(&r, "wall_time_s");
            o.events = (double) sim_result_count(&r, "events");
            o.requests = (double) (sim_result_count(&r, "requests") + scenario_warmup(sc));
            o.sim_s = sim_result_value(&r, "sim_time_s");
            o.saturated = sim_result_value(&r, "saturated") > 0;
            for (int i = 0; sim_result_pool(&r, i); i++) {
                double st = sim_result_get(&r, sim_result_pool(&r, i), "steps", "value");
                if (!isnan(st)) o.steps += st;
            }
        } else fprintf(stderr, "bench: %s\n", err);
        sim_result_free(&r);
    } else fprintf(stderr, "bench: %s\n", err);
    if (db) store_close(db);
    scenario_delete(sc);
    if (write(fd, &o, sizeof o) != (ssize_t) sizeof o) _exit(1);
    _exit(o.ok ? 0 : 1);
}

/* Runs case C once in a child process.  Returns 0 with O and the child's peak
 * resident memory in *PEAK_MIB, or -1. */
static int run_once(const bench_case *c, bench_out *o, double *peak_mib)
{
    int fds[2];
    if (pipe(fds) != 0) { perror("bench: pipe"); return -1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("bench: fork"); close(fds[0]); close(fds[1]); return -1; }
    if (pid == 0) {
        close(fds[0]);
        run_child(c, fds[1]);
    }
    close(fds[1]);
    memset(o, 0, sizeof *o);
    ssize_t got = read(fds[0], o, sizeof *o);
    close(fds[0]);
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    *peak_mib = (double) ru.ru_maxrss / 1024.0;   /* ru_maxrss is KiB on Linux */
    return (got == (ssize_t) sizeof *o && o->ok) ? 0 : -1;
}

#define PLAN_SCENARIO "scenarios/chat_plan.ini"

/* Runs the planner case once as a child `latsim plan ... --json`.  Returns 0
 * with its wall time and simulation count, or -1. */
static int plan_once(double *wall, double *sims)
{
    int fds[2];
    if (pipe(fds) != 0) { perror("bench: pipe"); return -1; }
    fflush(stdout);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) { perror("bench: fork"); close(fds[0]); close(fds[1]); return -1; }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        close(fds[1]);
        execl("/proc/self/exe", "latsim", "plan", PLAN_SCENARIO, "--target-rate", "50", "--gpus", "h100,a100,l40s",
              "--tp", "1,2,4,8", "--replicas", "1:64", "--jobs", "2", "--no-store", "--json", (char *) NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[65536];
    size_t n = 0;
    ssize_t k;
    while (n + 1 < sizeof buf && (k = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t) k;
    buf[n] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *wall = (double) (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    const char *p = strstr(buf, "\"simulations\": ");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !p) return -1;
    *sims = atof(p + 15);
    return 0;
}

#define VIDUR_DIR "../shared/data/profiles/vidur"

static double clock_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + t.tv_nsec * 1e-9;
}

/* Imports the Vidur set into a fresh database and fits every A100 profile; returns
 * 0 with the import and fit seconds, the rows and profiles, or -1 (ERR says why). */
static int calib_once(double *imp_s, double *fit_s, long *rows, int *fits, char *err, size_t n)
{
    char path[] = "/tmp/latsim-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { snprintf(err, n, "mkstemp failed"); return -1; }
    close(fd);
    unlink(path);
    sqlite3 *db = NULL;
    int rc = -1;
    *fits = 0;
    if (store_open(path, &db, err, n) != 0 || cdb_init(db, err, n) != 0) goto out;
    double t0 = clock_s();
    cimp_opts o = { .tool = "latsim bench" };
    if (cdb_begin(db, err, n) != 0) goto out;
    if (cimp_vidur(db, VIDUR_DIR, &o, rows, err, n) != 0 || cdb_commit(db, err, n) != 0) { cdb_rollback(db); goto out; }
    double t1 = clock_s();
    int k = calib_fit_profiles(db, "a100", "bench", err, n);
    if (k < 0) goto out;
    *fits = k;
    *imp_s = t1 - t0;
    *fit_s = clock_s() - t1;
    rc = *fits > 0 ? 0 : -1;
out:
    store_close(db);
    char side[64];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    return rc;
}

enum { O_REPEAT = 1 };

static const cli_opt OPTS[] = {
    { "repeat", O_REPEAT, "N", "runs of each case (default 3); the fastest is shown", 0 },
    { NULL },
};

static const cli_cmd CMD = {
    "bench", "[CASE]",
    "Runs each benchmark case N times (default 3), each in its own process, and\n"
    "prints the fastest run's figures; CASE selects cases whose name contains it.\n",
    "", OPTS, 0, 0,
};

/* cli_opt_fn of bench: CTX is the repeat count. */
static int bench_opt(void *ctx, int id, const char *v)
{
    (void) id;
    long x = cu_posint("bench", "--repeat", v, 100);     /* strict: "3x" or 1e20 is refused */
    if (x < 0) return 2;
    *(int *) ctx = (int) x;
    return 0;
}

int bench_main(int argc, char **argv)
{
    int repeat = 3;
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, bench_opt, &repeat);
    if (rc != CLI_GO) return rc;
    if (a.npos > 1) return cu_die(2, "bench: expected at most one CASE, got '%s' and '%s'", a.pos[0], a.pos[1]);
    const char *only = a.npos ? a.pos[0] : NULL;
    printf("(fastest of %d runs per case)\n", repeat);
    printf("%-30s %12s %12s %9s %12s %12s %11s %9s\n", "case", "requests", "events", "wall s",
           "events/s", "requests/s", "steps/s", "peak MiB");
    rc = 0;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (only && !strstr(CASES[i].name, only)) continue;
        bench_out best = { 0 }, o;
        double best_peak = 0, peak;
        int ok = 0;
        for (int k = 0; k < repeat; k++) {
            if (run_once(&CASES[i], &o, &peak) != 0) { ok = 0; break; }
            if (!ok || o.wall_s < best.wall_s) best = o;
            if (peak > best_peak) best_peak = peak;     /* memory: the largest seen */
            ok = 1;
        }
        if (!ok) {
            printf("%-30s failed\n", CASES[i].name);
            rc = 1;
            continue;
        }
        char steps[32];
        if (best.steps > 0) snprintf(steps, sizeof steps, "%.3g", best.steps / best.wall_s);
        else snprintf(steps, sizeof steps, "-");
        printf("%-30s %12.0f %12.0f %9.2f %12.3g %12.3g %11s %9.1f%s\n", CASES[i].name, best.requests, best.events,
               best.wall_s, best.events / best.wall_s, best.requests / best.wall_s, steps, best_peak,
               best.saturated ? "  (saturated!)" : "");
    }
    if (!only || strstr("planner", only)) {
        if (access(PLAN_SCENARIO, R_OK) != 0) {
            printf("\nplanner: skipped (%s not found: run from the repository root)\n", PLAN_SCENARIO);
            return rc;
        }
        double best = INFINITY, sims = 0, w, s;
        for (int k = 0; k < repeat; k++) {
            if (plan_once(&w, &s) != 0) { best = NAN; break; }
            if (w < best) { best = w; sims = s; }
        }
        printf("\n%-44s %10s %12s %14s\n", "planner (2 workers)", "wall s", "simulations", "simulations/s");
        if (isnan(best)) { printf("%-44s failed\n", "chat_plan: cheapest fleet, 50 req/s"); rc = 1; }
        else printf("%-44s %10.2f %12.0f %14.1f\n", "chat_plan: cheapest fleet, 50 req/s", best, sims, sims / best);
    }
    if (!only || strstr("calibration", only)) {
        if (access(VIDUR_DIR, R_OK) != 0) {
            printf("\ncalibration: skipped (%s not found: run from the repository root)\n", VIDUR_DIR);
            return rc;
        }
        double bi = INFINITY, bf = INFINITY, i, f;
        long rows = 0;
        int fits = 0;
        char err[1024] = "";
        for (int k = 0; k < repeat; k++) {
            if (calib_once(&i, &f, &rows, &fits, err, sizeof err) != 0) { bi = NAN; break; }
            if (i < bi) bi = i;
            if (f < bf) bf = f;
        }
        printf("\n%-44s %10s %12s %14s\n", "calibration", "wall s", "rows/models", "per second");
        if (isnan(bi)) { printf("%-44s failed: %s\n", "import Vidur profile set", err); rc = 1; }
        else {
            printf("%-44s %10.2f %12ld %14.3g\n", "import Vidur profile set (one transaction)", bi, rows, rows / bi);
            printf("%-44s %10.2f %12d %14.3g\n", "fit A100 profiles (every model x tp)", bf, fits, fits / bf);
        }
    }
    return rc;
}
