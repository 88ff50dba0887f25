/* test_nccl.c -- `latsim calib import nccl` and the roofline's measured all-reduce.
 *
 * tests/data/nccl/all_reduce_perf_h100x8.txt is in nccl-tests' exact shape
 * (src/common.cu: the '# Collective test starting' and '# nThread 1 nGpus 8'
 * lines, the out-of-place/in-place header, 28 sizes 8 B .. 1 GiB). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/cost.h"
#include "tcli.h"

#define NCCL_FILE "tests/data/nccl/all_reduce_perf_h100x8.txt"

static void setup(void) { tcli_setup("/tmp/latsim_nccl_", "n.db"); }

TestSuite(nccl, .init = setup, .fini = tcli_teardown);

Test(nccl, imports_every_size_of_all_reduce_perf)
{
    result r = run_db(60, "calib", "import", "nccl", NCCL_FILE, "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "imported 28 measurements"), "%s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE source = 'nccl' AND what = 'allreduce'"
                              " AND gpu = 'h100' AND tp = 8"), 28);
    cr_expect_eq(db_count(db, "SELECT min(bytes) FROM calib_meas"), 8);
    cr_expect_eq(db_count(db, "SELECT max(bytes) FROM calib_meas"), 1073741824);
    /* 524288 B: out-of-place 12.62 us (line 33), not the in-place 12.75 */
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE bytes = 524288 AND abs(time_ms - 0.01262) < 1e-12"
                              " AND line = 33 AND file = '" NCCL_FILE "'"), 1);
}

Test(nccl, gpus_option_overrides_the_header)
{
    result r = run_db(60, "calib", "import", "nccl", NCCL_FILE, "--gpu", "h100", "--gpus", "4", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE tp = 4"), 28);
}

Test(nccl, malformed_line_is_refused_with_file_and_line)
{
    char path[256];
    write_file("bad.txt",
               "# Collective test starting: all_reduce_perf\n"
               "# nThread 1 nGpus 8 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\n"
               "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
               "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.10    0.00    0.00      0\n"
               "          16             4     float     sum      -1    ten      0.00    0.00      0    10.10    0.00    0.00      0\n",
               path, sizeof path);
    result r = run_db(60, "calib", "import", "nccl", path, "--gpu", "h100", NULL);
    char want[300];
    snprintf(want, sizeof want, "%s:5:", path);
    expect_one_line(&r, 2, want, "latsim");
    result_free(&r);
    cr_expect_neq(access(db, F_OK), 0, "no database was created");
    /* an unknown collective and a missing --gpu are refused too */
    write_file("bad2.txt", "# Collective test starting: broadcast_perf\n", path, sizeof path);
    r = run_db(60, "calib", "import", "nccl", path, "--gpu", "h100", NULL);
    snprintf(want, sizeof want, "%s:1: collective 'broadcast_perf'", path);
    expect_one_line(&r, 2, want, "latsim");
    result_free(&r);
    r = run_db(60, "calib", "import", "nccl", NCCL_FILE, NULL);
    expect_one_line(&r, 2, "--gpu G is required", "latsim");
    result_free(&r);
    cr_expect_neq(access(db, F_OK), 0, "no database was created");
}

Test(nccl, interpolates_in_log_size_and_extrapolates_with_the_last_bandwidth)
{
    cost_coll_prof p = { .n = 3, .bytes = { 1024, 4096, 16384 }, .sec = { 10e-6, 20e-6, 50e-6 } };
    cr_expect_float_eq(cost_coll_time(&p, 512), 10e-6, 1e-18, "below: the smallest size's time");
    cr_expect_float_eq(cost_coll_time(&p, 4096), 20e-6, 1e-18);
    /* 2048 is half way between 1024 and 4096 in log(size) */
    cr_expect_float_eq(cost_coll_time(&p, 2048), 15e-6, 1e-17);
    /* beyond: 30 us per 12288 bytes */
    cr_expect_float_eq(cost_coll_time(&p, 16384 + 12288), 80e-6, 1e-17);
}

/* The allreduce part (ms) of `latsim cost --json`; 1 when SOURCE_WANT is in its source. */
static double allreduce_ms(const char *source_want)
{
    result r = run_db(60, "cost", "--model", "llama-3-70b", "--gpu", "h100", "--tp", "8", "--decode", "24",
                      "--context", "1000", "--cost", "roofline", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    const char *a = strstr(r.out, "\"allreduce\": ");
    cr_assert(a, "%s", r.out);
    double v = strtod(a + 13, NULL);
    cr_expect(source_want ? strstr(r.out, source_want) != NULL : strstr(r.out, "nccl") == NULL, "%s", r.out);
    result_free(&r);
    return v;
}

Test(nccl, roofline_allreduce_is_the_profile_time_when_imported)
{
    /* 24 decode tokens x 8192 hidden x 2 bytes = 393216 B per all-reduce, 160 of them (2 per layer). */
    result r = run_db(60, "calib", "import", "nccl", "tests/data/nccl/all_reduce_perf_h100x8.txt", "--gpu", "h100",
                      "--gpus", "2", NULL);   /* another TP: not used at tp 8 */
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double link = allreduce_ms(NULL);
    /* datasheet: 8 us + 2 x 7/8 x 393216 B / 900 GB/s */
    cr_expect_float_eq(link, 160 * (8e-3 + 2.0 * 7 / 8 * 393216 / 900e9 * 1e3), 1e-6);
    r = run_db(60, "calib", "import", "nccl", NCCL_FILE, "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double prof = allreduce_ms("all-reduce from the nccl profile (28 sizes)");
    /* 262144 B: 11.31 us, 524288 B: 12.62 us; 393216 is log2(1.5) of the way */
    double t = 11.31 + log2(1.5) * (12.62 - 11.31);
    cr_expect_float_eq(prof, 160 * t * 1e-3, 1e-6, "%.9g vs %.9g", prof, 160 * t * 1e-3);
}

/* The --json of a run of one llm pool of llama-3-8b on h100 at TP. */
static char *run_pool(int tp)
{
    char ini[512], path[256];
    snprintf(ini, sizeof ini,
             "[sim]\nrequests = 300\nseed = 3\n[workload]\nrate = 4\n"
             "[pool llm]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ntp = %d\ncost = roofline\n", tp);
    write_file("s.ini", ini, path, sizeof path);
    result r = run_scenario(120, path, "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    char *out = strdup(r.out);
    char *w = strstr(out, "\"wall_time_s\": ");   /* the one field that is not deterministic */
    if (w) {
        char *e = w += 15;
        while (*e && *e != ',') e++;
        memmove(w, e, strlen(e) + 1);
    }
    result_free(&r);
    return out;
}

Test(nccl, a_run_changes_only_where_tp_is_above_one)
{
    char *a1 = run_pool(1), *a4 = run_pool(4);
    result r = run_db(60, "calib", "import", "nccl", NCCL_FILE, "--gpu", "h100", "--gpus", "4", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(60, "calib", "import", "nccl", NCCL_FILE, "--gpu", "h100", "--gpus", "1", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);   /* a 1-GPU profile: tp 1 has no all-reduce to price */
    result_free(&r);
    char *b1 = run_pool(1), *b4 = run_pool(4);
    cr_expect_str_eq(a1, b1, "tp 1: identical");
    cr_expect_str_neq(a4, b4, "tp 4: the measured all-reduce");
    free(a1);
    free(a4);
    free(b1);
    free(b4);
}
