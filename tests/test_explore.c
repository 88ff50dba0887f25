/* test_explore.c -- `latsim explore`: the same rows from one process, two
 * workers and (MPI build) mpirun -n 3; a killed exploration resumed runs every
 * task exactly once; a killed MPI worker rank loses no task; bad grids are
 * refused before anything is stored.  `sweep` and `plan` go through the same
 * task runner: under mpirun (also with a hostfile and TCP, the command line of
 * docs/explore.md's two-machine example) they give the one-process rows and
 * verdicts, and survive a killed worker rank.  The MPI checks need `make MPI=1 test`
 * (LATSIM_MPI=1): in the default build they are reported as skipped. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tcli.h"
#include "tbin.h"

static void setup(void) { tcli_setup("/tmp/latsim_explore_", "x.db"); }
static void teardown(void) { tcli_teardown(); }
TestSuite(explore, .init = setup, .fini = teardown);

/* 4 x 2 x 2 configurations x 4 seeds = 64 tasks; tp = 3 does not divide the 64
 * heads (skipped), REQ requests each. */
static void write_grid(const char *name, int req, const char *extra, char *path, size_t n)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[sim]\nrequests = %d\nseed = 7\n\n"
             "[workload]\narrival = poisson\nrate = 20\nprompt_tokens = 500\noutput_tokens = 100\n\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-70b\ngpu = h100\ntp = 8\nreplicas = 2\nscheduler = continuous\ncost = roofline\n\n"
             "[slo]\nttft_p99_ms = 800\ntpot_p99_ms = 60\n\n"
             "[explore]\npool.chat.tp = 3, 4, 8, 16\npool.chat.gpu = h100, a100\npool.chat.replicas = 1, 2\nseeds = 4\n%s",
             req, extra ? extra : "");
    write_file(name, text, path, n);
}

/* Every stored result of the exploration in DBPATH, ids and times aside: one
 * line per sweep point and statistic, in task order (malloc'd). */
static char *rows_of(const char *dbpath)
{
    sqlite3 *d;
    cr_assert(sqlite3_open_v2(dbpath, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK, "cannot open %s", dbpath);
    sqlite3_stmt *st;
    cr_assert(sqlite3_prepare_v2(d, "SELECT p.idx, p.settings, p.seed, p.rate, p.usd_per_hour, p.slo_met, r.seed, r.scenario_hash,"
                                 " s.replication, s.scope, s.metric, s.stat, s.value, s.text"
                                 " FROM sweep_points p JOIN runs r ON r.id = p.run_id JOIN run_stats s ON s.run_id = r.id"
                                 " WHERE s.metric != 'wall_time_s' ORDER BY p.idx, s.rowid", -1, &st, NULL) == SQLITE_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < 14; c++) {
            const unsigned char *t = sqlite3_column_text(st, c);
            fprintf(m, "%s|", t ? (const char *) t : "NULL");
        }
        fputc('\n', m);
    }
    sqlite3_finalize(st);
    sqlite3_close(d);
    fclose(m);
    return buf;
}

static int mpi_build(void)
{
    const char *e = getenv("LATSIM_MPI");
    return e && !strcmp(e, "1");
}

Test(explore, same_rows_for_one_process_and_two_workers)
{
    char grid[256], db2[300];
    write_grid("grid.ini", 400, NULL, grid, sizeof grid);
    result r = run(120, "explore", grid, "--db", db, "--workers", "1", NULL);
    cr_expect_eq(r.rc, 0, "explore: %s", r.err);
    cr_expect(strstr(r.out, "16 configurations x 4 seeds = 64 tasks; 0 excluded, 4 skipped"), "%s", r.out);
    cr_expect(strstr(r.out, "tp = 3 does not divide llama-3-70b's 64 attention heads"), "%s", r.out);
    cr_expect(strstr(r.out, "<- best"), "%s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points"), 48);
    snprintf(db2, sizeof db2, "%s/w2.db", dir);
    r = run(120, "explore", grid, "--db", db2, "--workers", "2", NULL);
    cr_expect_eq(r.rc, 0, "explore --workers 2: %s", r.err);
    result_free(&r);
    char *a = rows_of(db), *b = rows_of(db2);
    cr_expect(strlen(a) > 10000, "rows: %zu bytes", strlen(a));
    cr_expect(!strcmp(a, b), "--workers 2 stored other rows than one process");
    /* Seeds come from the task: seed index k runs seed 7 + k. */
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points WHERE seed != 7 + CAST(substr(settings, instr(settings, 'seed=') + 5) AS INTEGER)"), 0);
    free(a);
    free(b);
}

Test(explore, same_rows_under_mpirun_as_one_process)
{
    if (!mpi_build()) cr_skip_test("needs the MPI build (make MPI=1 test)");
    char grid[256], db3[300];
    write_grid("grid.ini", 400, NULL, grid, sizeof grid);
    result r = run(120, "explore", grid, "--db", db, "--workers", "1", NULL);
    cr_expect_eq(r.rc, 0, "explore: %s", r.err);
    result_free(&r);
    char *a = rows_of(db), *b;
    snprintf(db3, sizeof db3, "%s/m3.db", dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun --oversubscribe -n 3 "
             LATSIM_SH " explore %s --db %s >%s/mpi.out 2>&1", grid, db3, dir);
    int rc = system(cmd);
    cr_expect_eq(rc, 0, "mpirun -n 3: status %d", rc);
    b = rows_of(db3);
    cr_expect(!strcmp(a, b), "mpirun -n 3 stored other rows than one process");
    free(a);
    free(b);
}

/* Starts `explore GRID --workers 2` and kills it (SIGKILL) once 12 tasks are
 * stored; returns the tasks stored then (asserted between 12 and 47). */
static long long explore_killed(const char *grid)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(120);
        execl(LATSIM, LATSIM, "explore", grid, "--db", db, "--workers", "2", (char *) NULL);
        _exit(121);
    }
    long long n = 0;
    for (int i = 0; i < 600 && n < 12; i++) {
        usleep(50000);
        if (access(db, F_OK) == 0) {
            sqlite3 *d;
            if (sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
                sqlite3_stmt *st;
                sqlite3_busy_timeout(d, 1000);
                if (sqlite3_prepare_v2(d, "SELECT count(*) FROM sweep_points", -1, &st, NULL) == SQLITE_OK &&
                    sqlite3_step(st) == SQLITE_ROW)
                    n = sqlite3_column_int64(st, 0);
                sqlite3_finalize(st);
            }
            sqlite3_close(d);
        }
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFSIGNALED(status), "explore ended before it was killed");
    long long before = db_count(db, "SELECT count(*) FROM sweep_points");
    cr_assert(before >= 12 && before < 48, "%lld tasks stored when killed", before);
    return before;
}

Test(explore, killed_then_resumed_runs_every_task_once)
{
    char grid[256], ref[300];
    write_grid("grid.ini", 12000, NULL, grid, sizeof grid);
    long long before = explore_killed(grid);
    result r = run(300, "explore", grid, "--db", db, "--resume", "--workers", "2", NULL);
    cr_expect_eq(r.rc, 0, "--resume: %s", r.err);
    char want[64];
    snprintf(want, sizeof want, "%d run now, %lld stored before", 48 - (int) before, before);
    cr_expect(strstr(r.out, want), "want '%s' in %s", want, r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points"), 48);
    cr_expect_eq(db_count(db, "SELECT count(DISTINCT idx) FROM sweep_points"), 48);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM runs"), 48);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweeps WHERE kind = 'explore'"), 1);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
    /* The resumed exploration holds what an uninterrupted one does. */
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    r = run(300, "explore", grid, "--db", ref, "--workers", "2", NULL);
    cr_expect_eq(r.rc, 0);
    result_free(&r);
    char *a = rows_of(db), *b = rows_of(ref);
    cr_expect(!strcmp(a, b), "the resumed exploration differs from an uninterrupted one");
    free(a);
    free(b);
}

/* Two `explore --resume` at once after a kill (issue 30: 116 points were stored
 * for 64 tasks): each task is claimed in a transaction of its own
 * (planstore_claim) before it runs, so the two run the missing tasks between
 * them, each exactly once (the killed process's claims are taken over), and
 * the exploration holds what an uninterrupted one does. */
Test(explore, two_resumes_at_once_run_every_task_once)
{
    char grid[256], ref[300], out[2][300];
    write_grid("grid.ini", 12000, NULL, grid, sizeof grid);
    long long before = explore_killed(grid);
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
        snprintf(out[k], sizeof out[k], "%s/resume%d.out", dir, k);
        pid[k] = fork();
        cr_assert(pid[k] >= 0);
        if (pid[k] == 0) {
            if (!freopen(out[k], "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(120);
            execl(LATSIM, LATSIM, "explore", grid, "--db", db, "--resume", "--workers", "2", (char *) NULL);
            _exit(121);
        }
    }
    int ran = 0, elsewhere = 0;
    for (int k = 0; k < 2; k++) {
        int status;
        waitpid(pid[k], &status, 0);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "resume %d: status %d", k, status);
        size_t n;
        char *text = slurp_or_fail(out[k], &n);
        const char *p = strstr(text, " run now, ");
        cr_assert_not_null(p, "%s", text);
        while (p > text && p[-1] != ' ') p--;
        ran += atoi(p);
        const char *q = strstr(text, " run by another process;");
        if (q) {
            while (q > text && q[-1] != ' ') q--;
            elsewhere += atoi(q);
        }
        free(text);
    }
    cr_expect_eq(ran, 48 - before, "the two resumes ran %d tasks, %lld were missing", ran, 48 - before);
    cr_expect_gt(elsewhere, 0, "neither resume saw the other's claims: they did not overlap");
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points"), 48);
    cr_expect_eq(db_count(db, "SELECT count(DISTINCT idx) FROM sweep_points"), 48);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM runs"), 48);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    result r = run(300, "explore", grid, "--db", ref, "--workers", "2", NULL);
    cr_expect_eq(r.rc, 0);
    result_free(&r);
    char *a = rows_of(db), *b = rows_of(ref);
    cr_expect(!strcmp(a, b), "the resumed exploration differs from an uninterrupted one");
    free(a);
    free(b);
}

Test(explore, mpi_worker_rank_killed_loses_no_task)
{
    if (!mpi_build()) cr_skip_test("needs the MPI build (make MPI=1 test)");
    char grid[256], cmd[2048];
    write_grid("grid.ini", 12000, NULL, grid, sizeof grid);
    snprintf(cmd, sizeof cmd, "timeout 300 tests/mpi-kill.sh " LATSIM_SH " %s %s >%s/kill.out 2>&1", grid, db, dir);
    int rc = system(cmd);
    cr_assert_eq(rc, 0, "mpi-kill.sh: status %d", rc);
    char path[300];
    snprintf(path, sizeof path, "%s/kill.out", dir);
    char *out = slurp_or_fail(path, NULL);
    cr_expect(!strncmp(out, "rc=0 killed=", 12) && strncmp(out, "rc=0 killed=none", 16), "%s", out);
    int warnings = 0;
    for (char *p = out; (p = strstr(p, "latsim: ")); p++) warnings++;
    cr_expect_eq(warnings, 1, "%s", out);
    /* Rank 1 is the one killed; Open MPI sometimes takes another worker down with it
     * (its connection to the dead rank breaks): then both are named, and their tasks
     * still run on the others. */
    cr_expect(strstr(out, "latsim: warning: explore: lost MPI rank 1: ") || strstr(out, "latsim: warning: explore: lost MPI ranks 1, "),
              "%s", out);
    free(out);
    cr_expect_eq(db_count(db, "SELECT count(DISTINCT idx) FROM sweep_points"), 48);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points"), 48);
}

/* GRID with [explore] EXTRA is refused: exit 2, one line holding WANT, no database. */
static void refused(const char *axes, const char *want)
{
    char grid[256];
    char text[2048];
    snprintf(text, sizeof text, "[sim]\nrequests = 100\n\n[workload]\nrate = 10\n\n[pool web]\nservers = 2\nservice_ms = exp(mean=50)\nusd_per_hour = 1\n\n"
             "[explore]\n%s", axes);
    write_file("bad.ini", text, grid, sizeof grid);
    result r = run(60, "explore", grid, "--db", db, NULL);
    expect_one_line(&r, 2, want, "latsim: ");
    cr_expect(access(db, F_OK) != 0, "%s: a database was made", axes);
    result_free(&r);
}

Test(explore, bad_grids_are_refused_before_anything_is_stored)
{
    refused("pool.web.sevrers = 1, 2\n", "unknown key");
    refused("pool.web.servers =\n", "empty axis");
    refused("pool.web.servers = 1, , 2\n", "pool.web.servers");
    refused("pool.nope.servers = 1, 2\n", "no section [pool.nope]");
    refused("workload.rate = 1:400:1\npool.web.servers = 1:200:1\nsim.requests = 100:50000:200\n", "pass --yes");
    refused("pool.web.servers = 1, 2\nexclude = pool.web.replicas=3\n", "is not an axis");
    refused("pool.web.servers = 1, 2\nobjective = watts\n", "expected cost, p99 or energy");
}

/* objective = energy: the best is the eligible configuration of least GPU
 * energy, which no frontier point (cost against p99) undercuts. */
Test(explore, objective_energy_picks_least_energy)
{
    char grid[256];
    write_file("energy.ini",
               "[sim]\nrequests = 300\nwarmup = 50\n\n[workload]\nrate = 4\nprompt_tokens = 200\noutput_tokens = 50\n\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = continuous\n\n"
               "[explore]\npool.chat.gpu = h100, a100, l40s\npool.chat.replicas = 1, 2\nobjective = energy\nslo = off\n",
               grid, sizeof grid);
    result r = run(300, "explore", grid, "--db", db, "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_error_t je;
    json_t *j = json_loads(r.out, 0, &je);
    cr_assert_not_null(j, "%s: %s", je.text, r.out);
    cr_expect_str_eq(json_string_value(json_object_get(j, "objective")), "energy");
    json_t *best = json_object_get(j, "best");
    double eb = json_real_value(json_object_get(best, "energy_kwh"));
    cr_expect_gt(eb, 0);
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(j, "frontier"), i, f)
        cr_expect_geq(json_real_value(json_object_get(f, "energy_kwh")), eb, "frontier point %zu", i);
    /* One replica draws less than two at the same load. */
    cr_expect(strstr(json_string_value(json_object_get(best, "settings")), "replicas=1"), "%s", r.out);
    json_decref(j);
    result_free(&r);
}

Test(explore, exclude_matching_nothing_warns)
{
    char grid[256];
    write_file("w.ini", "[sim]\nrequests = 200\n\n[workload]\nrate = 10\n\n[pool web]\nservers = 2\nservice_ms = exp(mean=50)\nusd_per_hour = 1\n\n"
               "[explore]\npool.web.servers = 1, 2, 3\nexclude = pool.web.servers=4\nexclude2 = pool.web.servers=1\n", grid, sizeof grid);
    result r = run(60, "explore", grid, "--db", db, "--json", NULL);
    expect_one_line(&r, 0, "exclude = pool.web.servers=4: matches no configuration", "latsim: ");
    cr_expect(strstr(r.out, "\"configurations\": 3, \"seeds\": 1, \"tasks\": 3, \"excluded\": 1, \"stored\": 2"), "%s", r.out);
    cr_expect(strstr(r.out, "\"best\": {\"settings\": \"pool web.servers=2\""), "%s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points"), 2);
}

/* ---- sweep and plan on the same runner ------------------------------------ */

/* The scenario of write_grid without [explore]: REQ requests. */
static void write_scenario(const char *name, int req, char *path, size_t n)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = %d\nseed = 7\n\n"
             "[workload]\narrival = poisson\nrate = 20\nprompt_tokens = 500\noutput_tokens = 100\n\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-70b\ngpu = h100\ntp = 8\nreplicas = 2\nscheduler = continuous\n\n"
             "[slo]\nttft_p99_ms = 800\ntpot_p99_ms = 60\n", req);
    write_file(name, text, path, n);
}

/* Every stored statistic of every run in DBPATH and the sweep points, ids and
 * wall times aside, in run order (malloc'd). */
static char *runs_of(const char *dbpath)
{
    sqlite3 *d;
    cr_assert(sqlite3_open_v2(dbpath, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK, "cannot open %s", dbpath);
    static const char *const Q[] = {
        "SELECT r.seed, r.scenario_hash, s.replication, s.scope, s.metric, s.stat, s.value, s.text FROM runs r"
        " JOIN run_stats s ON s.run_id = r.id WHERE s.metric != 'wall_time_s' ORDER BY r.id, s.rowid",
        "SELECT p.idx, p.settings, p.seed, p.rate, p.usd_per_hour, p.slo_met, p.role, 0, 0 FROM sweep_points p ORDER BY p.sweep_id, p.idx",
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (int q = 0; q < 2; q++) {
        sqlite3_stmt *st;
        cr_assert(sqlite3_prepare_v2(d, Q[q], -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(d));
        int nc = sqlite3_column_count(st);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < nc; c++) {
                const unsigned char *t = sqlite3_column_text(st, c);
                fprintf(m, "%s|", t ? (const char *) t : "NULL");
            }
            fputc('\n', m);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(d);
    fclose(m);
    return buf;
}

/* JSON text OUT without its wall times ("wall_s", at any depth), as a string (malloc'd). */
static void drop_wall(json_t *j)
{
    if (json_is_object(j)) {
        json_object_del(j, "wall_s");
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v) drop_wall(v);
    } else if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) drop_wall(v);
    }
}
static char *json_sans_wall(const char *out)
{
    json_error_t je;
    json_t *j = json_loads(out, JSON_DISABLE_EOF_CHECK, &je);
    cr_assert_not_null(j, "%s: %.300s", je.text, out);
    drop_wall(j);
    char *s = json_dumps(j, JSON_SORT_KEYS);
    json_decref(j);
    return s;
}

/* The stdout of `mpirun MPIOPTS -n 3 latsim ARGS` (exit status into *RC; malloc'd). */
static char *mpirun_out(const char *mpiopts, const char *args, int *rc)
{
    char cmd[4096], path[300];
    snprintf(cmd, sizeof cmd, "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun --oversubscribe %s -n 3 "
             LATSIM_SH " %s >%s/mpi.out 2>%s/mpi.err", mpiopts, args, dir, dir);
    *rc = system(cmd);
    snprintf(path, sizeof path, "%s/mpi.out", dir);
    return slurp_or_fail(path, NULL);
}

Test(explore, one_process_sweep_stores_what_two_workers_do)
{
    /* The default build's check of the runner sweep now shares with explore
     * (task_run_all over task_run_stream): --jobs 1 (in process) and --jobs 2
     * (forked workers) store the same rows. */
    char sc[256], db2[300];
    write_scenario("s.ini", 1500, sc, sizeof sc);
    result a = run(120, "sweep", sc, "--vary", "workload.rate=10:70:10", "--db", db, "--jobs", "1", "--json", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    snprintf(db2, sizeof db2, "%s/j2.db", dir);
    result b = run(120, "sweep", sc, "--vary", "workload.rate=10:70:10", "--db", db2, "--jobs", "2", "--json", NULL);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    char *ja = json_sans_wall(a.out), *jb = json_sans_wall(b.out);
    cr_expect_str_eq(ja, jb);
    char *ra = runs_of(db), *rb = runs_of(db2);
    cr_expect(strlen(ra) > 5000, "rows: %zu bytes", strlen(ra));
    cr_expect(!strcmp(ra, rb), "--jobs 2 stored other rows than --jobs 1");
    free(ja); free(jb); free(ra); free(rb);
    result_free(&a);
    result_free(&b);
}

Test(explore, sweep_under_mpirun_same_rows_as_one_process)
{
    if (!mpi_build()) cr_skip_test("needs the MPI build (make MPI=1 test)");
    char sc[256], db3[300], args[1024];
    write_scenario("s.ini", 1500, sc, sizeof sc);
    result a = run(120, "sweep", sc, "--vary", "workload.rate=10:70:10", "--db", db, "--jobs", "1", "--json", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    snprintf(db3, sizeof db3, "%s/m3.db", dir);
    snprintf(args, sizeof args, "sweep %s --vary workload.rate=10:70:10 --db %s --json", sc, db3);
    int rc;
    char *out = mpirun_out("", args, &rc);
    cr_assert_eq(rc, 0, "mpirun -n 3 sweep: status %d", rc);
    char *ja = json_sans_wall(a.out), *jb = json_sans_wall(out);
    cr_expect_str_eq(ja, jb, "mpirun -n 3 sweep printed another result");
    char *ra = runs_of(db), *rb = runs_of(db3);
    cr_expect(strlen(ra) > 5000, "rows: %zu bytes", strlen(ra));
    cr_expect(!strcmp(ra, rb), "mpirun -n 3 sweep stored other rows than one process");
    free(ja); free(jb); free(ra); free(rb); free(out);
    result_free(&a);
}

/* plan is rounds of batches: every round goes to the ranks, which serve until
 * rank 0 is done.  Run here with the two-machine example's command line of
 * docs/explore.md on one machine: a hostfile (localhost slots=2) and TCP over
 * the loopback interface. */
Test(explore, plan_under_mpirun_with_hostfile_and_tcp_same_verdicts)
{
    if (!mpi_build()) cr_skip_test("needs the MPI build (make MPI=1 test)");
    char sc[256], hosts[256], args[1024], opts[600];
    write_scenario("p.ini", 1500, sc, sizeof sc);
    write_file("hosts", "localhost slots=2\n", hosts, sizeof hosts);
    result a = run(300, "plan", sc, "--target-rate", "20", "--gpus", "h100,a100", "--tp", "4,8", "--replicas", "1:16",
                   "--jobs", "1", "--no-store", "--json", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_assert(strstr(a.out, "\"verdicts\": [{"), "%s", a.out);
    snprintf(args, sizeof args, "plan %s --target-rate 20 --gpus h100,a100 --tp 4,8 --replicas 1:16 --no-store --json", sc);
    snprintf(opts, sizeof opts, "--hostfile %s --mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo", hosts);
    int rc;
    char *out = mpirun_out(opts, args, &rc);
    cr_assert_eq(rc, 0, "mpirun --hostfile -n 3 plan: status %d", rc);
    char *ja = json_sans_wall(a.out), *jb = json_sans_wall(out);
    cr_expect(strstr(ja, "\"simulations\": ") && strlen(ja) > 1000, "%s", ja);
    cr_expect_str_eq(ja, jb, "mpirun -n 3 plan gave other verdicts than one process");
    free(ja); free(jb); free(out);
    result_free(&a);
}

Test(explore, mpi_worker_rank_killed_in_a_sweep_loses_no_point)
{
    if (!mpi_build()) cr_skip_test("needs the MPI build (make MPI=1 test)");
    char sc[256], cmd[2048], path[300];
    /* About a second a point: rank 1 is caught simulating. */
    write_scenario("k.ini", 200000, sc, sizeof sc);
    snprintf(cmd, sizeof cmd, "timeout 300 tests/mpi-kill.sh " LATSIM_SH " %s %s sweep workload.rate=4:16:4 >%s/kill.out 2>&1",
             sc, db, dir);
    int rc = system(cmd);
    cr_assert_eq(rc, 0, "mpi-kill.sh: status %d", rc);
    snprintf(path, sizeof path, "%s/kill.out", dir);
    char *out = slurp_or_fail(path, NULL);
    cr_expect(!strncmp(out, "rc=0 killed=", 12) && strncmp(out, "rc=0 killed=none", 16), "%s", out);
    int warnings = 0;
    for (char *p = out; (p = strstr(p, "lost MPI rank")); p++) warnings++;
    cr_expect_eq(warnings, 1, "%s", out);
    cr_expect(strstr(out, "latsim: warning: sweep: lost MPI rank 1: its tasks ran on the others"), "%s", out);
    cr_expect(strstr(out, "(4 simulations,"), "%s", out);
    free(out);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM sweep_points"), 4);
    cr_expect_eq(db_count(db, "SELECT count(DISTINCT run_id) FROM sweep_points"), 4);
}

/* ---- report explore --html ------------------------------------------------- */

static int on_path_x(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* The page of an exploration: self-contained (one inline SVG, no script, no
 * URL fetched), its tables match the exploration's JSON (the Pareto set row
 * for row, the best), text from the grid escaped; rendered by headless
 * Chromium without console errors (CI must have it, as for test_review.c). */
Test(explore, report_html_of_an_exploration)
{
    char grid[256], html[300], path[300];
    write_grid("g<&>.ini", 400, NULL, grid, sizeof grid);
    result r = run(300, "explore", grid, "--db", db, "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_error_t je;
    json_t *j = json_loads(r.out, 0, &je);
    cr_assert_not_null(j, "%s", je.text);
    result_free(&r);
    snprintf(html, sizeof html, "%s/x.html", dir);
    r = run(120, "report", "explore", "--db", db, "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "(exploration 1)"), "%s", r.out);
    result_free(&r);
    size_t n;
    char *page = slurp_or_fail(html, &n);
    int svgs = 0;
    for (const char *p = strstr(page, "<svg"); p; p = strstr(p + 1, "<svg")) svgs++;
    cr_expect_eq(svgs, 1, "%d pictures", svgs);
    cr_expect(strstr(page, "<table id=\"headline\">") && strstr(page, "<table id=\"best-config\">") && strstr(page, "<table id=\"pareto\">"));
    cr_expect(strstr(page, "<script") == NULL && strstr(page, "src=\"http") == NULL && strstr(page, "href=\"http") == NULL
              && strstr(page, "url(http") == NULL && strstr(page, "<link") == NULL, "not self-contained");
    cr_expect(strstr(page, "g&lt;&amp;&gt;.ini") != NULL, "the grid's name escaped");
    /* The Pareto table: one row per frontier point, in order. */
    const char *t = strstr(page, "<table id=\"pareto\">"), *e = t ? strstr(t, "</table>") : NULL;
    cr_assert(t && e);
    json_t *fr = json_object_get(j, "frontier"), *f;
    cr_assert_gt(json_array_size(fr), 1);
    size_t i;
    const char *at = t;
    json_array_foreach(fr, i, f) {
        char row[600];
        snprintf(row, sizeof row, "<tr><th>%s</th><td>%.4g</td>", json_string_value(json_object_get(f, "settings")),
                 json_real_value(json_object_get(f, "usd_per_hour")));
        const char *hit = strstr(at, row);
        cr_expect(hit && hit < e, "frontier point %zu (%s) not in the Pareto table in order", i, row);
        if (hit) at = hit + 1;
    }
    int rows = 0;
    for (const char *p = strstr(strstr(t, "<tbody>"), "<tr><th>"); p && p < e; p = strstr(p + 1, "<tr><th>")) rows++;
    cr_expect_eq((size_t) rows, json_array_size(fr));
    char best[600];
    snprintf(best, sizeof best, "<table id=\"best-config\"><thead><tr><th>configuration</th><th>usd_per_hour</th><th>ttft_p99_ms</th>"
             "<th>energy_kwh</th></tr></thead><tbody>\n<tr><th>%s</th>",
             json_string_value(json_object_get(json_object_get(j, "best"), "settings")));
    cr_expect(strstr(page, best), "the best configuration: %s", best);
    free(page);
    json_decref(j);
    /* Bad input: one line, exit 2, nothing written. */
    r = run(60, "report", "explore", "7", "--db", db, "--html", html, NULL);
    expect_one_line(&r, 2, "no exploration 7", "latsim: report");
    result_free(&r);
    snprintf(path, sizeof path, "%s/none.db", dir);
    r = run(60, "run", "scenarios/default.ini", "--db", path, NULL);
    result_free(&r);
    snprintf(html, sizeof html, "%s/y.html", dir);
    r = run(60, "report", "explore", "--db", path, "--html", html, NULL);
    expect_one_line(&r, 2, "holds no exploration", "latsim: report");
    result_free(&r);
    cr_expect(access(html, F_OK) != 0, "a page was written");

    if (!on_path_x("chromium")) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but chromium is not installed");
        /* A skip, not a warning (Criterion 2.4 exits 1 when a test logs one); the checks above ran. */
        cr_skip_test("chromium is not installed (an optional package of .ci/packages): the page was checked "
                     "but not rendered in a browser");
    }
    char cmd[2048], dom[300], log[300];
    snprintf(html, sizeof html, "%s/x.html", dir);
    snprintf(dom, sizeof dom, "%s/dom.html", dir);
    snprintf(log, sizeof log, "%s/console.log", dir);
    snprintf(cmd, sizeof cmd, "timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=%s/profile"
             " --enable-logging=stderr --v=0 --dump-dom file://%s >%s 2>%s", dir, html, dom, log);
    cr_assert_eq(system(cmd), 0, "chromium --dump-dom failed: %s", slurp(log, NULL));
    char *d = slurp_or_fail(dom, NULL), *l = slurp_or_fail(log, NULL);
    cr_expect(strstr(d, "id=\"pareto\"") && strstr(d, "Exploration 1"), "the DOM lacks the page");
    cr_expect(strstr(l, "CONSOLE") == NULL && strstr(l, "Uncaught") == NULL && strstr(l, "net::ERR") == NULL, "console errors: %s", l);
    free(d);
    free(l);
}
