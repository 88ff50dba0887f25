/* test_hostile.c -- Criterion tests of latsim under hostile input (issue 6):
 * extreme values against the clock's contract (simtime.h), resource bounds, bad
 * traces, read-only database commands, JSON escaping.  Each case runs ./latsim as
 * a program in its own temporary directory, in a forked child bounded by alarm(),
 * and checks the exit status, that stderr is exactly one line (a sanitizer report
 * would add more), and that the database was not created or changed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "engine/evq.h"
#include "run/scenario.h"
#include "store/store.h"
#include "run/warmup.h"
#include "engine/simtime.h"

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_hard_", "runs.db"); }

TestSuite(hostile_clock, .init = setup, .fini = tcli_teardown);

/* The exit status is RC, stderr is one line containing WANT, and the database
 * file was not created. */
static void expect_fail(result *r, int rc, const char *want)
{
    cr_expect_eq(r->rc, rc, "exit %d, wanted %d; stderr: %s", r->rc, rc, r->err);
    cr_expect_eq(lines(r->err), 1, "stderr is not one line: %s", r->err);
    if (want) cr_expect(strstr(r->err, want) != NULL, "stderr lacks '%s': %s", want, r->err);
    cr_expect_neq(access(db, F_OK), 0, "the database was created");
}

static const char *MMC =
    "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\narrival = poisson\nrate = 56\n"
    "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n";

static const char *LLM =
    "[sim]\nrequests = 300\nwarmup = 30\n[workload]\narrival = poisson\nrate = 2\n"
    "prompt_tokens = const(200)\noutput_tokens = const(20)\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";

/* ---- the clock's contract ----------------------------------------------------- */

static void nop(evq *q, void *subject, int64_t arg) { (void) q; (void) subject; (void) arg; }

Test(hostile_clock, calendar_refuses_times_beyond_the_horizon)
{
    evq *q = evq_new();
    cr_assert_not_null(q);
    cr_expect_eq(simtime_add(SIMTIME_HORIZON - 5, 10), SIMTIME_BEYOND);
    cr_expect_eq(simtime_add(SIMTIME_BEYOND, SIMTIME_BEYOND), SIMTIME_BEYOND);
    cr_expect_eq(simtime_add(3, -7), 3);
    cr_expect_eq(simtime_from_ms(NAN), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ms(INFINITY), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ms(-INFINITY), 0);
    cr_expect_eq(simtime_from_ms(1e300), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ms(1.0), 1000000);
    cr_expect_eq(evq_after(q, SIMTIME_BEYOND, nop, NULL, 0), 0);
    cr_expect_eq(evq_overflowed(q), EVQ_BEYOND_HORIZON);
    cr_expect_eq(evq_pending(q), 0);
    cr_expect_eq(evq_run(q, SIMTIME_NEVER), 0);
    evq_free(q);
    q = evq_new();
    cr_expect_neq(evq_at(q, SIMTIME_HORIZON, nop, NULL, 0), 0, "the horizon itself is in range");
    cr_expect_eq(evq_overflowed(q), 0);
    evq_free(q);
}

/* The crashing values, each a scenario error naming its key (exit 2). */
Test(hostile_clock, certain_overflow_is_a_scenario_error)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    static const struct { const char *set, *want; } cases[] = {
        { "pool cpu.service_ms=const(1e12)", "[pool cpu] service_ms: mean 1e+12 ms" },
        { "workload.rate=1e-12", "[workload] rate:" },
        { "pool cpu.service_ms=lognormal(mean=1e300, cv=1)", "[pool cpu] service_ms:" },
        { "pool cpu.service_ms=uniform(min=0, max=1e308)", "[pool cpu] service_ms:" },
        { "pool cpu.service_ms=uniform(min=1e308, max=1.7e308)", "[pool cpu] service_ms:" },
        { "pool cpu.service_ms=gamma(mean=50, cv=1e-300)", "cv must be >= 1e-06" },
        { "pool cpu.service_ms=lognormal(mean=50, cv=1e300)", "cv must be <=" },
        { "workload.cv=1e-300", "[workload] cv:" },
        { "pool cpu.timeout_ms=1e300", "[pool cpu] timeout_ms:" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char set[128];
        snprintf(set, sizeof set, "%s", cases[i].set);
        result r = run_scenario(60, s, "--set", set, "--set", "workload.arrival=gamma", NULL);
        expect_fail(&r, 2, cases[i].want);
        result_free(&r);
    }
    char l[256];
    write_file("l.ini", LLM, l, sizeof l);
    const char *eff[] = { "pool chat.compute_eff=1e-300", "pool chat.memory_eff=1e-300", "pool chat.compute_eff=0.0009" };
    for (size_t i = 0; i < 3; i++) {
        result r = run_scenario(60, l, "--set", (char *) eff[i], NULL);
        expect_fail(&r, 2, "_eff: must be >= 0.001");
        result_free(&r);
    }
}

/* A draw past the horizon that the load-time checks cannot foresee ends the run
 * as a runtime failure (exit 1), one line, nothing stored. */
Test(hostile_clock, runtime_overflow_is_a_clean_failure)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    /* Each pool alone fits the clock (4e12 ms < 4.61e12 ms, one request per
     * server), but a request passing both needs 8e12 ms. */
    result r = run_scenario(60, s, "--set", "pool cpu.service_ms=const(4e12)", "--set", "pool cpu.servers=100000",
                     "--set", "sim.requests=2", "--set", "sim.warmup=0", "--set", "pool cpu.next=cpu2",
                     "--set", "pool cpu2.service_ms=const(4e12)", "--set", "pool cpu2.servers=100000", NULL);
    expect_fail(&r, 1, "simulated time would pass the clock's range");
    result_free(&r);
}

/* ---- memory ------------------------------------------------------------------- */

TestSuite(hostile_memory, .init = setup, .fini = tcli_teardown);

/* What a scenario asks for is bounded by the memory it implies: 10^6 replicas of
 * max_batch 256 need about 5 GB (20 bytes per batch slot), which a budget of 1 GB
 * refuses naming the key, while 1000 replicas (5 MB) pass. */
Test(hostile_memory, replicas_bounded_by_the_memory_they_imply)
{
    sqlite3 *h;
    char err[1024];
    cr_assert_eq(store_open(":memory:", &h, err, sizeof err), 0, "%s", err);
    scenario sc;
    const char *big[] = { "pool chat.replicas=1000000" };
    cr_assert_eq(scenario_load_text(&sc, "m.ini", LLM, big, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, h, err, sizeof err), 0, "%s", err);
    double need = scenario_footprint(&sc);
    cr_expect(need > 5e9 && need < 7e9, "footprint %g", need);
    cr_expect_eq(scenario_check_memory(&sc, 1e9, err, sizeof err), -1);
    cr_expect(strstr(err, "[pool chat] replicas: 1000000 replicas") != NULL, "%s", err);
    scenario_free(&sc);
    const char *small[] = { "pool chat.replicas=1000" };
    cr_assert_eq(scenario_load_text(&sc, "m.ini", LLM, small, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, h, err, sizeof err), 0, "%s", err);
    cr_expect_eq(scenario_check_memory(&sc, 1e9, err, sizeof err), 0, "%s", err);
    scenario_free(&sc);
    store_close(h);
}

/* 1000 chained pools: the histograms are allocated as values arrive, so the
 * estimate (and the run) stays in the hundreds of MB, not the 1.75 GB a full
 * histogram per statistic cost. */
Test(hostile_memory, thousand_pools_estimate)
{
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    n += (size_t) snprintf(text + n, cap - n, "[sim]\nrequests = 100\n[workload]\nrate = 10\n");
    for (int i = 0; i < 1000; i++) {
        if (cap - n < 128) { cap *= 2; text = realloc(text, cap); cr_assert_not_null(text); }
        n += (size_t) snprintf(text + n, cap - n, "[pool p%d]\nservice_ms = exp(mean=1)\n", i);
        if (i < 999) n += (size_t) snprintf(text + n, cap - n, "next = p%d\n", i + 1);
    }
    scenario sc;
    char err[1024];
    cr_assert_eq(scenario_load_text(&sc, "chain.ini", text, NULL, 0, err, sizeof err), 0, "%s", err);
    double need = scenario_footprint(&sc);
    cr_expect(need > 1e8 && need < 5e8, "footprint %g", need);
    cr_expect_eq(scenario_check_memory(&sc, 1e8, err, sizeof err), -1);
    cr_expect(strstr(err, "chain.ini: 1000 pools need about") != NULL, "%s", err);
    scenario_free(&sc);
    free(text);
}

/* Out of memory at run time is a clean exit 1 with one line: an overloaded queue
 * grows (20 million arrivals allowed) until an address-space limit of 512 MB (or,
 * under AddressSanitizer, its soft RSS limit) stops it. */
Test(hostile_memory, out_of_memory_exits_1)
{
    char s[256];
    write_file("s.ini", "[sim]\nrequests = 10000000\nwarmup = 0\n[workload]\narrival = constant\nrate = 1000\n"
               "[pool cpu]\nservice_ms = const(1000)\n", s, sizeof s);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
#if defined(__SANITIZE_ADDRESS__)
        /* ASan cannot run under an address-space limit: its allocator returns
         * NULL once the resident set passes 512 MB, and its own notice about that
         * goes to a log file, not to latsim's stderr. */
        char opts[256];
        snprintf(opts, sizeof opts, "allocator_may_return_null=1:soft_rss_limit_mb=512:detect_leaks=0:log_path=%s/asan",
                 dir);
        setenv("ASAN_OPTIONS", opts, 1);
#else
        struct rlimit rl = { 512u << 20, 512u << 20 };
        setrlimit(RLIMIT_AS, &rl);
#endif
        result r = run_scenario(120, s, "--no-store", NULL);
        int ok = r.rc == 1 && lines(r.err) == 1 && strstr(r.err, "out of memory") != NULL;
        if (!ok) fprintf(stderr, "exit %d, stderr: %s\n", r.rc, r.err);
        _exit(ok ? 0 : 1);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) cr_assert_eq(errno, EINTR);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "see stderr");
}

/* ---- unbounded or malformed input ---------------------------------------------- */

TestSuite(hostile_input, .init = setup, .fini = tcli_teardown);

static const char *TRACE_SC =
    "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = trace\ntrace = t.csv\ntime_format = seconds\n"
    "time_column = t\nprompt_column = p\noutput_column = o\n[pool cpu]\nservice_ms = const(1)\n";

/* A trace (or scenario) that is not a regular file is refused at once: /dev/zero
 * would grow a line without end, a FIFO with no writer would block (alarm()
 * bounds the test). */
Test(hostile_input, traces_and_scenarios_must_be_regular_files)
{
    char s[256], fifo[256];
    write_file("s.ini", TRACE_SC, s, sizeof s);
    result r = run_scenario(20, s, "--set", "workload.trace=/dev/zero", NULL);
    expect_fail(&r, 2, "/dev/zero: not a regular file");
    result_free(&r);
    snprintf(fifo, sizeof fifo, "%s/fifo.csv", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    char set[300];
    snprintf(set, sizeof set, "workload.trace=%s", fifo);
    r = run_scenario(20, s, "--set", set, NULL);
    expect_fail(&r, 2, "not a regular file");
    result_free(&r);
    r = run_scenario(20, fifo, NULL);
    expect_fail(&r, 2, "not a regular file");
    result_free(&r);
    r = run_scenario(20, "/dev/zero", NULL);
    expect_fail(&r, 2, "/dev/zero: not a regular file");
    result_free(&r);
    /* An empirical distribution's file goes through the same reader. */
    char m[256];
    write_file("m.ini", MMC, m, sizeof m);
    r = run_scenario(20, m, "--set", "pool cpu.service_ms=empirical(file=/dev/zero, column=x)", NULL);
    expect_fail(&r, 2, "not a regular file");
    result_free(&r);
}

/* A line longer than 1 MB (here 2 MB without a newline) is an error, not memory
 * growing without limit. */
Test(hostile_input, trace_line_length_is_capped)
{
    char s[256], t[256];
    write_file("s.ini", TRACE_SC, s, sizeof s);
    snprintf(t, sizeof t, "%s/t.csv", dir);
    FILE *f = fopen(t, "w");
    cr_assert_not_null(f);
    fputs("t,p,o\n0,1,1\n", f);
    for (int i = 0; i < 2 << 20; i++) fputc('7', f);
    fclose(f);
    result r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "t.csv:3: line longer than");
    result_free(&r);
}

/* A NUL byte in a trace is not text: refused naming the line, the column and
 * the byte of the cell it is in (the one CSV reader's message, core/csvread.h). */
Test(hostile_input, trace_nul_byte_is_refused)
{
    char s[256], t[256];
    write_file("s.ini", TRACE_SC, s, sizeof s);
    snprintf(t, sizeof t, "%s/t.csv", dir);
    FILE *f = fopen(t, "wb");
    cr_assert_not_null(f);
    static const char bytes[] = "t,p,o\n0,1,1\n1,12\0" "8,1\n";
    cr_assert_eq(fwrite(bytes, 1, sizeof bytes - 1, f), sizeof bytes - 1);
    fclose(f);
    result r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "t.csv:3: column p: a NUL byte (byte 3 of the cell, after '12'): not text");
    result_free(&r);
}

/* Times past the clock's range are refused with their line; fields holding
 * newlines, quotes or escape sequences appear escaped and cut, on one line. */
Test(hostile_input, trace_values_reported_on_one_line)
{
    char s[256], t[256];
    write_file("s.ini", TRACE_SC, s, sizeof s);
    write_file("t.csv", "t,p,o\n0,1,1\n1e300,1,1\n", t, sizeof t);
    result r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "t.csv:3: t is 1e+300 s from the first row, beyond the simulated clock's range");
    result_free(&r);
    write_file("t.csv", "t,p,o\n0,1,1\n1,\"12\n34\",1\n", t, sizeof t);
    r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "t.csv:3: p '12\\n34' is not a whole number");   /* the line the row starts on */
    result_free(&r);
    write_file("t.csv", "t,p,o\n0,1,1\n1,\"\x1b[31mred", t, sizeof t);
    r = run_scenario(20, s, NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strchr(r.err, '\x1b') == NULL, "raw escape on stderr: %s", r.err);
    result_free(&r);
    char longf[512] = "t,p,o\n0,1,1\n1,";
    for (int i = 0; i < 300; i++) strcat(longf, "x");
    strcat(longf, ",1\n");
    write_file("t.csv", longf, t, sizeof t);
    r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "...' is not a whole number");
    cr_expect(strlen(r.err) < 250, "field not shortened: %s", r.err);
    result_free(&r);
}

/* A second [sim] (or any section) is an error naming both lines; heads must
 * divide hidden unless head_dim is given. */
Test(hostile_input, duplicate_sections_and_model_geometry)
{
    char s[256];
    write_file("s.ini", "[sim]\nrequests = 10\n[workload]\nrate = 1\n[pool cpu]\nservice_ms = const(1)\n[sim]\nseed = 3\n",
               s, sizeof s);
    result r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "s.ini:7: [sim]: section given twice (first on line 1)");
    result_free(&r);
    write_file("s.ini", "[workload]\nrate = 1\n[pool cpu]\nservice_ms = const(1)\n[workload]\narrival = poisson\n",
               s, sizeof s);
    r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "s.ini:5: [workload]: section given twice (first on line 1)");
    result_free(&r);
    char m[1024];
    snprintf(m, sizeof m, "%s[model odd]\nlayers = 2\nhidden = 100\nheads = 3\nparams = 1e6\n", LLM);
    write_file("m.ini", m, s, sizeof s);
    r = run_scenario(20, s, "--set", "pool chat.model=odd", NULL);
    expect_fail(&r, 2, "[model odd] heads: heads (3) must divide hidden (100), or give head_dim");
    result_free(&r);
}

/* An empirical file of zeros is refused for its zero mean without leaking the
 * rows read (LeakSanitizer would add lines to stderr in the sanitizer build). */
Test(hostile_input, empirical_zero_mean_does_not_leak)
{
    char s[256], z[256];
    write_file("z.csv", "x\n0\n0\n0\n", z, sizeof z);
    write_file("s.ini", MMC, s, sizeof s);
    result r = run_scenario(20, s, "--set", "pool cpu.service_ms=empirical(file=z.csv, column=x)", NULL);
    expect_fail(&r, 2, "mean service time must be > 0");
    result_free(&r);
}

/* A name holding an ANSI escape sequence is printed escaped in an error. */
Test(hostile_input, escape_sequences_in_names_are_escaped)
{
    char s[256];
    write_file("s.ini", "[workload]\nrate = 1\n[pool \x1b[2Jx]\nservice_ms = const(1)\nsevrers = 2\n", s, sizeof s);
    result r = run_scenario(20, s, NULL);
    expect_fail(&r, 2, "[pool \\x1b[2Jx] sevrers: unknown key");
    cr_expect(strchr(r.err, '\x1b') == NULL);
    result_free(&r);
}

/* ---- the database --------------------------------------------------------------- */

TestSuite(hostile_db, .init = setup, .fini = tcli_teardown);

static char *file_bytes(const char *path, size_t *n)
{
    return slurp(path, n);
}

/* show, runs, catalog, calib list/show/export and cost on an empty or foreign
 * file: exit 2, one line, and the file is byte for byte what it was (no schema
 * written into it). */
Test(hostile_db, read_only_commands_change_nothing)
{
    char empty[256], foreign[256];
    write_file("empty.db", "", empty, sizeof empty);
    snprintf(foreign, sizeof foreign, "%s/foreign.db", dir);
    write_foreign_db(foreign);
    const char *files[] = { empty, foreign };
    for (int f = 0; f < 2; f++) {
        size_t n0, n1;
        char *before = file_bytes(files[f], &n0);
        char *cmds[][12] = {
            { "runs", "--db", (char *) files[f], NULL },
            { "show", "1", "--db", (char *) files[f], NULL },
            { "catalog", "--db", (char *) files[f], NULL },
            { "calib", "list", "--db", (char *) files[f], NULL },
            { "calib", "show", "1", "--db", (char *) files[f], NULL },
            { "calib", "export", "-", "--db", (char *) files[f], NULL },
            { "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--prefill", "128",
              "--db", (char *) files[f], NULL },
        };
        for (int c = 0; c < (int) (sizeof cmds / sizeof cmds[0]); c++) {
            result r = run_argv(20, cmds[c]);
            cr_expect_eq(r.rc, 2, "%s on %s: exit %d: %s", cmds[c][0], files[f], r.rc, r.err);
            cr_expect_eq(lines(r.err), 1, "%s", r.err);
            cr_expect(strstr(r.err, "not a latsim database") != NULL, "%s", r.err);
            result_free(&r);
        }
        char *after = file_bytes(files[f], &n1);
        cr_expect(n0 == n1 && memcmp(before, after, n0) == 0, "%s was changed", files[f]);
        free(before);
        free(after);
    }
}

/* Holds a read transaction (SHARED lock) on PATH: the pre-run check's write
 * transaction still begins, but the final COMMIT must wait for it. */
static sqlite3 *hold_shared(const char *path)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "BEGIN; SELECT count(*) FROM runs;", NULL, NULL, NULL), SQLITE_OK);
    return h;
}

/* A lock held past the wait: the report is printed, the run is not stored, exit 1
 * with one line.  (LATSIM_LOCK_WAIT_S shortens the wait for the test.) */
Test(hostile_db, lock_past_the_wait_is_exit_1_with_the_report)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    result r = run_scenario(60, s, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    sqlite3 *h = hold_shared(db);
    setenv("LATSIM_LOCK_WAIT_S", "1", 1);
    r = run_scenario(60, s, NULL);
    unsetenv("LATSIM_LOCK_WAIT_S");
    cr_expect_eq(r.rc, 1, "exit %d: %s", r.rc, r.err);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "run not stored:") != NULL, "%s", r.err);
    cr_expect(strstr(r.out, "throughput_rps") != NULL, "the report was not printed: %s", r.out);
    sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM runs"), 1);
    result_free(&r);
}

/* A lock released after 6 s (more than the old 5 s timeout) is waited for with
 * the default wait: the run is stored. */
Test(hostile_db, lock_held_6_s_is_waited_for)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    result r = run_scenario(60, s, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    sqlite3 *h = hold_shared(db);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        result c = run_scenario(60, s, NULL);
        if (c.rc != 0) fprintf(stderr, "exit %d: %s\n", c.rc, c.err);
        _exit(c.rc == 0 ? 0 : 1);
    }
    sleep(6);
    sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(h);
    int st;
    while (waitpid(pid, &st, 0) < 0) cr_assert_eq(errno, EINTR);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run was not stored after the lock was released");
    cr_expect_eq(db_count(db, "SELECT count(*) FROM runs"), 2);
}

/* A damaged database is found before simulating: exit 2, no report, one line. */
Test(hostile_db, damaged_database_refused_before_the_run)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    result r = run_scenario(60, s, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *bytes = file_bytes(db, &n);
    cr_assert(n > 4 * 4096, "database of %zu bytes", n);
    /* Garbage over page 3 (pages are 4096 bytes): the header stays valid. */
    memset(bytes + 2 * 4096, 0x5a, 4096);
    FILE *f = fopen(db, "wb");
    cr_assert_not_null(f);
    fwrite(bytes, 1, n, f);
    fclose(f);
    free(bytes);
    r = run_scenario(60, s, NULL);
    cr_expect_eq(r.rc, 2, "exit %d: %s", r.rc, r.err);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "damaged") != NULL || strstr(r.err, "malformed") != NULL, "%s", r.err);
    cr_expect_eq(r.out[0], '\0', "a report was printed: %s", r.out);
    result_free(&r);
}

/* ---- output --------------------------------------------------------------------- */

TestSuite(hostile_output, .init = setup, .fini = tcli_teardown);

/* Decodes the JSON string starting at S (after its opening quote) into OUT;
 * fails the test on a raw control character or a bad escape. */
static void json_decode(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s != '"'; s++) {
        cr_assert((unsigned char) *s >= 0x20, "raw control character 0x%02x in a JSON string", (unsigned char) *s);
        cr_assert(k + 4 < n);
        if (*s != '\\') { out[k++] = *s; continue; }
        s++;
        if (*s == 'u') {
            unsigned v;
            cr_assert_eq(sscanf(s + 1, "%4x", &v), 1);
            cr_assert(v < 0x100, "unexpected \\u%04x", v);
            out[k++] = (char) v;
            s += 4;
        } else {
            cr_assert(strchr("\"\\/bfnrt", *s) != NULL, "bad escape \\%c", *s);
            out[k++] = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : *s == 'b' ? '\b' : *s == 'f' ? '\f' : *s;
        }
    }
    out[k] = '\0';
}

/* A scenario path with control characters and 1500 bytes long, and a pool name
 * with an escape sequence: the JSON holds them exactly (escaped), the table
 * shows them escaped, nothing raw reaches the terminal. */
Test(hostile_output, json_escaped_in_full_and_table_escaped)
{
    char path[2048];
    int k = snprintf(path, sizeof path, "%s", dir);
    for (int i = 0; k < 1400; i++) {
        k += snprintf(path + k, sizeof path - (size_t) k, "/d%d_%s", i,
                      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
        cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s", path);
    }
    k += snprintf(path + k, sizeof path - (size_t) k, "/s\x01\x1b[1m\"q\\\t.ini");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("[sim]\nrequests = 200\nwarmup = 20\n[workload]\nrate = 10\n[pool \x1b[31mred\x7f]\nservice_ms = exp(mean=5)\n", f);
    fclose(f);
    result r = run_scenario(60, path, "--json", NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    const char *p = strstr(r.out, "\"scenario\": \"");
    cr_assert_not_null(p);
    char back[4096];
    json_decode(p + 13, back, sizeof back);
    cr_expect_str_eq(back, path, "the path did not survive the JSON");
    cr_expect(strstr(r.out, "\"\\u001b[31mred\\u007f\": {") != NULL, "pool name not escaped: %.300s", r.out);
    for (const char *c = r.out; *c; c++) cr_expect((unsigned char) *c >= 0x20 || *c == '\n');
    result_free(&r);
    r = run_scenario(60, path, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    cr_expect(strchr(r.out, '\x1b') == NULL, "raw escape in the table");
    cr_expect(strstr(r.out, "pool \\x1b[31mred\\x7f (generic)") != NULL, "%s", r.out);
    result_free(&r);
}

/* Display columns of [S, E): UTF-8 continuation bytes take none. */
static int columns(const char *s, const char *e)
{
    int w = 0;
    for (; s < e; s++) w += ((unsigned char) *s & 0xC0) != 0x80;
    return w;
}

/* With --replications the latency table keeps its columns: every row of a
 * block (header, means, half-widths) is equally wide, and each half-width line
 * right-aligns under its mean. */
Test(hostile_output, replications_table_aligned)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    result r = run_scenario(60, s, "--replications", "3", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    int header = -1, rows = 0;   /* header: width of the current table's "ms" line, -1 outside a table */
    for (const char *l = r.out; *l;) {
        const char *e = strchr(l, '\n');
        if (!e) break;
        if (!strncmp(l, "  ms ", 5)) header = columns(l, e);
        else if (header > 0 && (l == e || strncmp(l, "  ", 2) != 0)) header = -1;
        else if (header > 0 && strncmp(l, "  share ", 8) != 0) {   /* the breakdown line is not a row */
            cr_expect_eq(columns(l, e), header, "misaligned row: '%.*s'", (int) (e - l), l);
            rows++;
        }
        l = e + 1;
    }
    cr_expect_geq(rows, 10, "found %d table rows in:\n%s", rows, r.out);
    /* The scalars: with replications two to a line, and the second column starts
     * at the same place on every line. */
    int col = -1;
    for (const char *l = r.out; *l;) {
        const char *e = strchr(l, '\n');
        if (!e) break;
        const char *second = strstr(l, "±");
        if (second && second < e && !strncmp(l, "  ", 2) && l[2] != ' ') {
            const char *m = strstr(second, "  ");
            while (m && m < e && m[2] == ' ') m++;
            if (m && m < e && strstr(m + 2, "±") && strstr(m + 2, "±") < e) {
                int c = columns(l, m + 2);
                if (col < 0) col = c;
                cr_expect_eq(c, col, "second column misaligned: '%.*s'", (int) (e - l), l);
            }
        }
        if (l == e) break;    /* the scalars block ends at the first blank line */
        l = e + 1;
    }
    result_free(&r);
}

/* ---- property: extreme values for every key ------------------------------------- */

TestSuite(hostile_property, .init = setup, .fini = tcli_teardown);

static const char *PROP_BASE =
    "[sim]\nrequests = 50\nwarmup = 5\n"
    "[workload]\narrival = gamma\nrate = 20\ncv = 1.5\nprompt_tokens = lognormal(mean=200, cv=1)\noutput_tokens = exp(mean=20)\n"
    "[client]\ntimeout_ms = 60000\n"
    "[pool front]\nservers = 2\nservice_ms = exp(mean=5)\nnext = chat\n"
    "[pool chat]\nkind = llm\nmodel = m\ngpu = g\n"
    "[gpu g]\nbf16_tflops = 989\nmem_gib = 80\nmem_bw_gbs = 3350\n"
    "[model m]\nlayers = 4\nhidden = 512\nheads = 8\nparams = 1e8\ncontext = 4096\n";

/* The section of PROP_BASE that a `latsim keys` heading stands for, or NULL for
 * the kinds the base scenario does not hold (net, api, caches, routers, classes). */
static const char *prop_section(const char *heading)
{
    static const struct { const char *prefix, *section; } map[] = {
        { "[sim]", "sim" }, { "[workload]", "workload" }, { "[client]", "client" },
        { "[pool NAME]  (any kind)", "pool front" }, { "[pool NAME]  kind = generic", "pool front" },
        { "[pool NAME]  kind = llm", "pool chat" }, { "[gpu NAME]", "gpu g" }, { "[model NAME]", "model m" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(heading, map[i].prefix, strlen(map[i].prefix))) return map[i].section;
    return NULL;
}

/* A deterministic stream (splitmix64) for the random extremes. */
static uint64_t prop_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Every key that `latsim keys` lists for the sections of the base scenario gets
 * values drawn from the extremes (1e-300 .. 1e300 in magnitude, both signs, 0, -0,
 * NaN, infinities; for distributions, inside their parameters): latsim must exit
 * 0, 1, 2 or 3, within 20 s (alarm), with every stderr line its own ("latsim: "),
 * and a failure as one line.  Random magnitudes stay beyond 1e20 or below 1e-20,
 * so that no draw is a legitimately huge run (10^9 requests). */
Test(hostile_property, extreme_values_never_crash_or_hang)
{
    char base[256];
    write_file("base.ini", PROP_BASE, base, sizeof base);
    FILE *k = popen(LATSIM_SH " keys", "r");
    cr_assert_not_null(k);
    static const char *fixed[] = { "1e-300", "-1e-300", "1e300", "-1e300", "nan", "inf", "-inf", "-0", "0", "1e308",
                                   "-1e308", "4.9e-324" };
    static const char *dists[] = { "const(%s)", "exp(mean=%s)", "lognormal(mean=%s, cv=1)", "lognormal(mean=5, cv=%s)",
                                   "gamma(mean=%s, cv=0.5)", "gamma(mean=5, cv=%s)", "weibull(mean=5, cv=%s)",
                                   "uniform(min=0, max=%s)", "uniform(min=%s, max=1e308)" };
    uint64_t rng = 6;
    char line[512];
    const char *section = NULL;
    int runs = 0, keys = 0;
    while (fgets(line, sizeof line, k)) {
        if (line[0] == '[') { section = prop_section(line); continue; }
        if (!section || strncmp(line, "  ", 2) != 0) continue;
        char key[64];
        if (sscanf(line, " %63s", key) != 1) continue;
        keys++;
        int is_dist = !strcmp(key, "service_ms") || !strcmp(key, "prompt_tokens") || !strcmp(key, "output_tokens");
        for (int v = 0; v < 4; v++) {
            char num[64], value[128], set[256];
            uint64_t r = prop_next(&rng);
            if (v < 2) snprintf(num, sizeof num, "%s", fixed[r % (sizeof fixed / sizeof fixed[0])]);
            else {
                int e = 20 + (int) (r % 281);              /* decades 20 .. 300 */
                double m = 1 + (double) ((r >> 20) % 9000) / 1000.0;
                snprintf(num, sizeof num, "%s%.3fe%s%d", (r >> 40) & 1 ? "-" : "", m, (r >> 41) & 1 ? "-" : "", e);
            }
            if (is_dist) snprintf(value, sizeof value, dists[(r >> 8) % (sizeof dists / sizeof dists[0])], num);
            else snprintf(value, sizeof value, "%s", num);
            snprintf(set, sizeof set, "%s.%s=%s", section, key, value);
            char *args[] = { "run", base, "--no-store", "--set", set, NULL };
            result res = run_argv(20, args);
            runs++;
            cr_expect(res.rc >= 0 && res.rc <= 3, "--set '%s': exit %d (%s)\n%s", set, res.rc,
                      res.rc == 128 + SIGALRM ? "hung: killed after 20 s" : "crashed or aborted", res.err);
            if (res.rc == 1 || res.rc == 2)
                cr_expect_eq(lines(res.err), 1, "--set '%s': stderr is not one line:\n%s", set, res.err);
            for (const char *l = res.err; *l;) {
                cr_expect(!strncmp(l, "latsim: ", 8), "--set '%s': stray stderr line: %s", set, l);
                const char *e = strchr(l, '\n');
                l = e ? e + 1 : l + strlen(l);
            }
            result_free(&res);
        }
    }
    pclose(k);
    cr_expect_geq(keys, 60, "only %d keys found in `latsim keys`", keys);
    cr_log_info("property: %d runs over %d keys", runs, keys);
}

/* Writes into SETS[0] the --set value that a tiny value of KEY needs beside it
 * to take effect (the pause length, the failure to repair, autoscaling, a
 * closed loop); TINY is the value given to a partner of the same kind.
 * Returns how many were written (0 or 1). */
static int prop_partners(const char *section, const char *key, const char *tiny, char sets[1][160])
{
    int n = 0;
    if (!strcmp(key, "pause_every_s")) snprintf(sets[n++], 160, "%s.pause_s=%s", section, tiny);
    else if (!strcmp(key, "pause_s")) snprintf(sets[n++], 160, "%s.pause_every_s=%s", section, tiny);
    else if (!strcmp(key, "repair_s")) snprintf(sets[n++], 160, "%s.fail_after_s=%s", section, tiny);
    else if (!strcmp(key, "autoscale_interval_s") || !strcmp(key, "provision_s") || !strcmp(key, "cooldown_s"))
        snprintf(sets[n++], 160, "%s.max_replicas=4", section);
    else if (!strcmp(key, "think_ms") || !strcmp(key, "ramp_users_s")) snprintf(sets[n++], 160, "workload.users=4");
    return n;
}

/* Every duration key (a name ending in _s or _ms) that `latsim keys` lists for
 * the sections of the base scenario gets the tiny periods 1e-300, 1e-12, 1e-9
 * and 1e-6 (a distribution key as const(x) and exp(mean=x)), with the keys it
 * needs to take effect: below the clock's resolution, or periodic events too
 * many for the run, a key is refused at load (exit 2, one line); what gets
 * through must end within 20 s (alarm) with exit 0..3. */
Test(hostile_property, tiny_periods_never_hang)
{
    char base[256];
    write_file("base.ini", PROP_BASE, base, sizeof base);
    FILE *k = popen(LATSIM_SH " keys", "r");
    cr_assert_not_null(k);
    static const char *tiny[] = { "1e-300", "1e-12", "1e-9", "1e-6" };
    char line[512];
    const char *section = NULL;
    int runs = 0, keys = 0;
    while (fgets(line, sizeof line, k)) {
        if (line[0] == '[') { section = prop_section(line); continue; }
        if (!section || strncmp(line, "  ", 2) != 0) continue;
        char key[64];
        if (sscanf(line, " %63s", key) != 1) continue;
        size_t len = strlen(key);
        if (!(len > 2 && !strcmp(key + len - 2, "_s")) && !(len > 3 && !strcmp(key + len - 3, "_ms"))) continue;
        keys++;
        int is_dist = strstr(line, "distribution") != NULL;
        for (size_t v = 0; v < sizeof tiny / sizeof tiny[0]; v++)
            for (int form = 0; form < (is_dist ? 2 : 1); form++) {
                char value[64], set[256], partner[1][160];
                if (!is_dist) snprintf(value, sizeof value, "%s", tiny[v]);
                else snprintf(value, sizeof value, form ? "exp(mean=%s)" : "const(%s)", tiny[v]);
                snprintf(set, sizeof set, "%s.%s=%s", section, key, value);
                int np = prop_partners(section, key, value, partner);
                char *args[] = { "run", base, "--no-store", "--set", set, np ? "--set" : NULL, partner[0], NULL };
                result res = run_argv(20, args);
                runs++;
                cr_expect(res.rc >= 0 && res.rc <= 3, "--set '%s'%s%s: exit %d (%s)\n%s", set, np ? " --set " : "",
                          np ? partner[0] : "", res.rc,
                          res.rc == 128 + SIGALRM ? "hung: killed after 20 s" : "crashed or aborted", res.err);
                if (res.rc == 1 || res.rc == 2)
                    cr_expect_eq(lines(res.err), 1, "--set '%s': stderr is not one line:\n%s", set, res.err);
                result_free(&res);
            }
    }
    pclose(k);
    cr_expect_geq(keys, 15, "only %d duration keys found in `latsim keys`", keys);
    cr_log_info("tiny periods: %d runs over %d duration keys", runs, keys);
}

/* ---- automatic warm-up ---------------------------------------------------------- */

TestSuite(hostile_warmup, .init = setup, .fini = tcli_teardown);

static const char *FLEET =
    "[workload]\narrival = poisson\nrate = 8192\nprompt_tokens = lognormal(mean=1000, cv=1)\noutput_tokens = exp(mean=200)\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 1024\nscheduler = continuous\ncost = roofline\n";

/* A number from the --json report: the first "KEY": VALUE. */
static double json_num(const char *json, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    cr_assert_not_null(p, "no %s in %.200s", key, json);
    p += strlen(pat);
    if (!strncmp(p, "true", 4)) return 1;
    if (!strncmp(p, "false", 5)) return 0;
    return strtod(p, NULL);
}

/* The fleet: 1024 Llama-3-8B replicas on H100, 8 req/s each, requests
 * lasting ~2 s on average (prompts lognormal mean 1000, outputs mean 200).  A
 * warm-up of requests/10 (10 000 arrivals, 1.2 s) opens the window while the
 * fleet is still filling, and the growth of its contents is called saturation;
 * the automatic warm-up waits until the arrivals are 4 times the requests inside
 * (about 66 000 arrivals, 8 s here) and the same load is stable, serving what is
 * offered (8192 req/s within 2 %: 100 000 requests give a relative sampling
 * error near 1/sqrt(10^5) = 0.3 %).  One replica at the same load is stable with
 * the default keys too. */
Test(hostile_warmup, fleet_stable_with_default_keys)
{
    char f[256];
    write_file("fleet.ini", FLEET, f, sizeof f);
    result r = run_scenario(200, f, "--no-store", "--json", "--set", "sim.requests=100000", "--set", "sim.warmup=10000", NULL);
    cr_assert(r.rc == 3, "exit %d: %s", r.rc, r.err);
    result_free(&r);
    r = run_scenario(200, f, "--no-store", "--json", "--set", "sim.requests=100000", NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    cr_expect_eq(json_num(r.out, "saturated"), 0);
    double w = json_num(r.out, "warmup_requests"), ws = json_num(r.out, "warmup_s");
    cr_expect(w > 40000 && w < 110000, "warm-up %g requests", w);
    cr_expect(ws > 4 && ws < 14, "warm-up %g s", ws);
    double x = json_num(r.out, "throughput_rps");
    cr_expect(fabs(x / 8192 - 1) < 0.02, "throughput %g req/s for 8192 offered", x);
    result_free(&r);
    r = run_scenario(200, f, "--no-store", "--json", "--set", "sim.requests=20000", "--set", "workload.rate=8",
                     "--set", "pool chat.replicas=1", NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    cr_expect_eq(json_num(r.out, "saturated"), 0);
    cr_expect_eq(json_num(r.out, "warmup_requests"), 2000, "one replica fills within requests/10");
    result_free(&r);
}

/* A given warmup is used exactly; the automatic one never goes below
 * requests/10, and an overloaded pool (offered load 1.03) is still saturated. */
Test(hostile_warmup, fixed_and_minimum_and_overload)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    result r = run_scenario(60, s, "--no-store", "--json", "--set", "sim.warmup=777", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(json_num(r.out, "warmup_requests"), 777);
    result_free(&r);
    write_file("s.ini", "[sim]\nrequests = 20000\n[workload]\nrate = 56\n[pool cpu]\nservers = 4\nservice_ms = exp(mean=50)\n",
               s, sizeof s);
    r = run_scenario(60, s, "--no-store", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(json_num(r.out, "warmup_requests"), 2000);
    result_free(&r);
    r = run_scenario(60, s, "--no-store", "--json", "--set", "workload.rate=82.4", NULL);
    cr_expect_eq(r.rc, 3, "offered load 1.03 not saturated: %s", r.err);
    result_free(&r);
}

/* The trend rule on synthetic pool contents over a window of 200 000 arrivals
 * (the bound on later-half growth is (3 sqrt(200000) + 20) / 2 = 681 requests):
 * a 3 % overload grows 3 000 over the later half and is caught; a fill of 5 000
 * requests with a time constant of 20 000 arrivals (over in the first half) and a
 * stationary AR(1) queue (sd about 130) are not. */
Test(hostile_warmup, trend_separates_overload_from_fill)
{
    enum { N = 200000 };
    double bound = (3.0 * sqrt((double) N) + 20.0) / 2;
    for (int kind = 0; kind < 3; kind++) {
        trend t;
        cr_assert_eq(trend_init(&t, 1), 0);
        uint64_t x = 42;
        double ar = 0;
        for (int k = 0; k < N; k++) {
            double u = (double) (prop_next(&x) >> 11) / 9007199254740992.0 - 0.5;   /* uniform, sd 0.29 */
            ar = 0.999 * ar + 20 * u;            /* AR(1): sd 20 x 0.29 / sqrt(1 - 0.998) = 130 */
            double v = kind == 0 ? 0.03 * k + ar : kind == 1 ? 5000 * (1 - exp(-k / 20000.0)) + ar : 300 + ar;
            if (trend_due(&t)) {
                trend_put(&t, 0, v);
                trend_commit(&t);
            }
        }
        double g, se;
        cr_assert_eq(trend_growth(&t, 0, &g, &se), 0);
        int grew = g > 3 * se && g > bound;
        cr_expect_eq(grew, kind == 0, "kind %d: growth %g, se %g, bound %g", kind, g, se, bound);
        trend_free(&t);
    }
}

/* A 3 % overload is caught on a long run by the trend rule alone (an LLM pool has
 * no offered-load check): one replica, static batches of one request taking one
 * 10 ms step (capacity 100 req/s), 200 000 requests.  At 103 req/s its contents
 * grow by about 3 x 1 940 s = 5 800 requests over the window; at 97 req/s it is
 * stable and serves what is offered. */
Test(hostile_warmup, three_percent_overload_detected_on_a_long_run)
{
    char s[256];
    write_file("o.ini", "[sim]\nrequests = 200000\n[workload]\nrate = 103\nprompt_tokens = const(1)\noutput_tokens = const(1)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = static\nmax_batch = 1\n"
               "cost = linear\nstep_base_ms = 10\nprefill_ms_per_token = 0\ndecode_ms_per_seq = 0\n", s, sizeof s);
    result r = run_scenario(200, s, "--no-store", "--json", NULL);
    cr_expect_eq(r.rc, 3, "exit %d: %s", r.rc, r.err);
    cr_expect(fabs(json_num(r.out, "throughput_rps") - 100) < 1, "capacity %g", json_num(r.out, "throughput_rps"));
    result_free(&r);
    r = run_scenario(200, s, "--no-store", "--json", "--set", "workload.rate=97", NULL);
    cr_expect_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    cr_expect_eq(json_num(r.out, "saturated"), 0);
    result_free(&r);
}
