/* test_clock_launch.c -- Criterion tests of the third hardening issue's clock
 * and MPI classes (issue 30):
 *   - a KV link (role = decode, kv_link_gbs) too slow for the run's expected
 *     transfers to finish within the simulated clock's range is refused at
 *     load naming the key (it was "internal error: an event was scheduled
 *     before the current time"), and every conversion of a duration in ns to
 *     the clock saturates (simtime_from_ns_ceil) instead of wrapping;
 *   - a plain build started by an MPI launcher (its environment says so:
 *     OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK...) refuses every command in
 *     one line naming `make MPI=1`, from rank 0 only, before any work; the MPI
 *     build refuses the commands it does not distribute when there are several
 *     ranks.  The launcher is the environment given to the child, so the tests
 *     need no mpirun.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/simtime.h"
#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h3load_", "runs.db"); }

TestSuite(launch_clock, .init = setup, .fini = tcli_teardown);
TestSuite(launch_mpi, .init = setup, .fini = tcli_teardown);

/* 1P1D of Llama-3.1-8B (131072 KV bytes per prompt token), 3000-token prompts. */
static const char *PD =
    "[sim]\nrequests = 200\nwarmup = 20\n[workload]\nrate = 2\nprompt_tokens = const(3000)\n"
    "output_tokens = const(20)\ntarget = prefill\n"
    "[pool prefill]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nrole = prefill\nscheduler = chunked\nnext = decode\n"
    "[pool decode]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nrole = decode\nscheduler = chunked\n";

/* The conversion saturates: NaN, infinities and values past the horizon give
 * SIMTIME_BEYOND, negative ones 0, others are rounded up. */
Test(launch_clock, ns_conversion_saturates)
{
    cr_expect_eq(simtime_from_ns_ceil(NAN), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ns_ceil(INFINITY), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ns_ceil(1e300), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ns_ceil((double) SIMTIME_HORIZON * 1.0001), SIMTIME_BEYOND);
    cr_expect_eq(simtime_from_ns_ceil(-INFINITY), 0);
    cr_expect_eq(simtime_from_ns_ceil(-5), 0);
    cr_expect_eq(simtime_from_ns_ceil(0), 0);
    cr_expect_eq(simtime_from_ns_ceil(0.2), 1);
    cr_expect_eq(simtime_from_ns_ceil(7.0), 7);
    cr_expect_eq(simtime_from_ns_ceil(1e12 + 0.5), (simtime_t) 1e12 + 1);
    cr_expect_leq(simtime_from_ns_ceil((double) SIMTIME_HORIZON), SIMTIME_HORIZON);
}

/* kv_link_gbs from 1e-300 to 1e-8 on 220 requests of 3000 tokens: refused at
 * load, one line naming the key and the time it would take; nothing stored. */
Test(launch_clock, slow_kv_link_refused)
{
    char p[256];
    write_file("pd.ini", PD, p, sizeof p);
    static const char *const gbs[] = { "1e-300", "1e-100", "1e-12", "1e-9", "1e-8" };
    for (size_t i = 0; i < sizeof gbs / sizeof gbs[0]; i++) {
        char s[128];
        snprintf(s, sizeof s, "pool decode.kv_link_gbs=%s", gbs[i]);
        result r = run_scenario(30, p, "--set", s, NULL);
        expect_one_line(&r, 2, "[pool decode] kv_link_gbs: 220 requests x 3000 prompt tokens x 131072 KV bytes per token", s);
        cr_expect(strstr(r.err, "beyond the simulated clock's range") != NULL, "%s: %s", s, r.err);
        cr_expect(strstr(r.err, "internal error") == NULL, "%s: %s", s, r.err);
        cr_expect_neq(access(db, F_OK), 0, "%s: the database was created", s);
        result_free(&r);
    }
    /* The same in the file, not --set: the message names file:line. */
    char text[2048];
    snprintf(text, sizeof text, "%skv_link_gbs = 1e-12\n", PD);
    write_file("pd2.ini", text, p, sizeof p);
    result r = run_scenario(30, p, NULL);
    expect_one_line(&r, 2, "pd2.ini:", "in the file");
    cr_expect(strstr(r.err, "kv_link_gbs") != NULL, "%s", r.err);
    result_free(&r);
}

/* A link slow but within the clock's range runs (saturated or not, never an
 * internal error); with fewer requests the bound moves accordingly. */
Test(launch_clock, slow_kv_link_within_range_runs)
{
    char p[256];
    write_file("pd.ini", PD, p, sizeof p);
    /* 12 requests x 3000 x 131072 B at 1e-6 GB/s: 4.7e6 s of link time, within range. */
    result r = run_scenario(60, p, "--set", "pool decode.kv_link_gbs=1e-6", "--set", "sim.requests=10", "--set", "sim.warmup=2",
                            "--no-store", NULL);
    cr_expect(r.rc == 0 || r.rc == 3, "rc %d: %s", r.rc, r.err);
    cr_expect(strstr(r.err, "internal error") == NULL, "%s", r.err);
    result_free(&r);
    /* 12 requests at 1e-12 GB/s: 4.7e12 s: refused, naming 12 requests. */
    r = run_scenario(60, p, "--set", "pool decode.kv_link_gbs=1e-12", "--set", "sim.requests=10", "--set", "sim.warmup=2", NULL);
    expect_one_line(&r, 2, "kv_link_gbs: 12 requests x 3000 prompt tokens", "12 requests");
    result_free(&r);
}

/* ---- MPI launchers ------------------------------------------------------------ */

static int mpi_build(void)
{
    const char *e = getenv("LATSIM_MPI");
    return e && !strcmp(e, "1");
}

/* The environment of a launcher: VARS ("NAME=VALUE", NULL-terminated) set for
 * the children (each test is its own process). */
static void launcher(const char *const *vars)
{
    static const char *const ALL[] = { "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                                       "PMIX_SIZE", "MPI_LOCALNRANKS", "MPI_LOCALRANKID", NULL };
    for (int i = 0; ALL[i]; i++) unsetenv(ALL[i]);
    for (int i = 0; vars && vars[i]; i++) cr_assert_eq(putenv((char *) vars[i]), 0);
}

/* Every command, under several launchers' environments, rank 0: refused in
 * one line naming make MPI=1, before any work (no database); other ranks exit
 * 2 silently. */
Test(launch_mpi, plain_build_refuses)
{
    if (mpi_build()) cr_skip_test("the plain build's refusal (this is the MPI build)");
    char s[256], g[256], text[512];
    write_file("s.ini", "[sim]\nrequests = 200\n[workload]\nrate = 10\n[pool cpu]\nkind = generic\nservers = 2\n"
               "service_ms = exp(mean=50)\n", s, sizeof s);
    snprintf(text, sizeof text, "[explore]\nbase = %s\npool.cpu.servers = 2,3\n", s);
    write_file("g.ini", text, g, sizeof g);
    const char *const *const envs[] = {
        (const char *const[]) { "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_RANK=0", NULL },
        (const char *const[]) { "PMI_SIZE=2", "PMI_RANK=0", NULL },
        (const char *const[]) { "PMIX_RANK=0", NULL },
        (const char *const[]) { "MPI_LOCALNRANKS=4", NULL },
    };
    const char *const *const cmds[4] = {
        (const char *const[]) { "explore", g, NULL },
        (const char *const[]) { "run", s, NULL },
        (const char *const[]) { "sweep", s, "--vary", "workload.rate=10:20:10", NULL },
        (const char *const[]) { "catalog", "add", "--hf", "tests/data/hf/qwen3-8b.json", "--name", "q", NULL },
    };
    for (size_t e = 0; e < sizeof envs / sizeof envs[0]; e++) {
        launcher(envs[e]);
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            char *argv[16];
            int n = 0;
            for (; cmds[c][n]; n++) argv[n] = (char *) cmds[c][n];
            argv[n++] = "--db";
            argv[n++] = db;
            argv[n] = NULL;
            result r = run_argv(20, argv);
            char what[128];
            snprintf(what, sizeof what, "%s under %s", cmds[c][0], envs[e][0]);
            expect_one_line(&r, 2, "built without MPI", what);
            cr_expect(strstr(r.err, "make MPI=1") != NULL, "%s: %s", what, r.err);
            cr_expect_eq(r.nout, 0, "%s: printed results: %s", what, r.out);
            cr_expect_neq(access(db, F_OK), 0, "%s: the database was created", what);
            result_free(&r);
        }
    }
    /* Rank 2 of 3: the same refusal, silently (rank 0 speaks). */
    launcher((const char *const[]) { "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_RANK=2", NULL });
    result r = run_db(20, "run", s, NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect_eq(r.nerr, 0, "%s", r.err);
    result_free(&r);
    /* One rank (mpirun -n 1) runs as usual; --help is never refused. */
    launcher((const char *const[]) { "OMPI_COMM_WORLD_SIZE=1", "OMPI_COMM_WORLD_RANK=0", NULL });
    r = run_db(60, "run", s, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    launcher((const char *const[]) { "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_RANK=0", NULL });
    r = run(20, "run", "--help", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* The MPI build: a command it does not distribute, under 3 ranks, is refused
 * (it would run and store once per rank). */
Test(launch_mpi, mpi_build_refuses_undistributed)
{
    if (!mpi_build()) cr_skip_test("the MPI build's refusal (make test-mpi)");
    char s[256];
    write_file("s.ini", "[sim]\nrequests = 200\n[workload]\nrate = 10\n[pool cpu]\nkind = generic\nservers = 2\n"
               "service_ms = exp(mean=50)\n", s, sizeof s);
    launcher((const char *const[]) { "OMPI_COMM_WORLD_SIZE=3", "OMPI_COMM_WORLD_RANK=0", NULL });
    result r = run_db(20, "run", s, NULL);
    expect_one_line(&r, 2, "run: not distributed over MPI ranks", "run");
    cr_expect_neq(access(db, F_OK), 0);
    result_free(&r);
    r = run_db(20, "catalog", "add", "--hf", "tests/data/hf/qwen3-8b.json", "--name", "q", NULL);
    expect_one_line(&r, 2, "catalog: not distributed over MPI ranks", "catalog");
    result_free(&r);
}
