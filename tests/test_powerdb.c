/* test_powerdb.c -- measured GPU power in the calibration store (issue 20):
 * `latsim calib import power` of an nvidia-smi log (synthetic, in nvidia-smi's
 * --format=csv shape) and of a plain utilization,power_w table, the stored
 * what = power rows, and `power_curve = calib`: the pool's energy follows the
 * curve binned from those rows and made monotone, against a hand computation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib.h"
#include "core/power.h"
#include "store/store.h"
#include "tcli.h"
#include "tsim.h"

static void setup(void)
{
    tcli_setup("/tmp/latsim_pwr_", "p.db");
    cimp_power_register();
}

TestSuite(powerdb, .init = setup, .fini = tcli_teardown);

/* Samples of GPU "test" (nvidia-smi's units): bin 0 (0 and 1 %: u 0.005, 72 W),
 * bin 10 (50 and 52 %: u 0.51, 390 W), bin 11 (55 %: 350 W, below bin 10: pooled
 * with it into (2 x 390 + 350) / 3 W), bin 20 (100 %: 690.5 W). */
static const char SMI[] =
    "timestamp, name, utilization.gpu [%], power.draw [W]\n"
    "2025/11/03 10:00:00.000, NVIDIA H100 80GB HBM3, 0 %, 70.00 W\n"
    "2025/11/03 10:00:00.100, NVIDIA H100 80GB HBM3, 1 %, 74.00 W\n"
    "2025/11/03 10:00:00.200, NVIDIA H100 80GB HBM3, 50 %, 400.00 W\n"
    "2025/11/03 10:00:00.300, NVIDIA H100 80GB HBM3, 52 %, 380.00 W\n"
    "2025/11/03 10:00:00.400, NVIDIA H100 80GB HBM3, 55 %, 350.00 W\n"
    "2025/11/03 10:00:00.500, NVIDIA H100 80GB HBM3, 100 %, 690.50 W\n";

/* test_energy.c's workload: constant arrivals, each request alone on a replica. */
#define ONE_AT_A_TIME(gpu, extra_pool) \
    "[sim]\nrequests = 400\nwarmup = 40\n" \
    "[workload]\narrival = constant\nrate = 2\nprompt_tokens = const(256)\noutput_tokens = const(64)\n" \
    "[gpu test]\nbf16_tflops = 400\nmem_gib = 80\nmem_bw_gbs = 3000\nlink_gbs = 400\nprice_hr = 2\n" \
    "idle_w = 100\nmax_w = 500\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = " gpu "\ntp = 2\nreplicas = 3\n" extra_pool

Test(powerdb, nvidia_smi_log_to_rows_to_curve_to_energy)
{
    char path[256];
    write_file("smi.csv", SMI, path, sizeof path);
    result r = run_db(60, "calib", "import", "power", path, "--gpu", "test", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "imported 6 measurements"), "%s", r.out);
    result_free(&r);
    /* The rows: utilisation share in batch, watts in time_ms, nvidia-smi's name and time. */
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE what = 'power' AND source = 'nvidia-smi'"
                              " AND gpu = 'test' AND tp = 1"), 6);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE batch = 0.52 AND time_ms = 380 AND line = 5"
                              " AND device = 'NVIDIA H100 80GB HBM3' AND measured_at = '2025/11/03 10:00:00.300'"), 1);

    /* The curve: bins, then pool-adjacent-violators. */
    sqlite3 *h = NULL;
    char err[1024];
    cr_assert_eq(store_open(db, &h, err, sizeof err), 0, "%s", err);
    power_curve c;
    cr_assert_eq(power_curve_stored(h, "test", &c, err, sizeof err), 0, "%s", err);
    store_close(h);
    double pooled = (2 * 390.0 + 350) / 3;
    cr_assert_eq(c.n, 4);
    cr_expect_float_eq(c.u[0], 0.005, 1e-12);
    cr_expect_float_eq(c.w[0], 72, 1e-12);
    cr_expect_float_eq(c.u[1], 0.51, 1e-12);
    cr_expect_float_eq(c.w[1], pooled, 1e-12);
    cr_expect_float_eq(c.u[2], 0.55, 1e-12);
    cr_expect_float_eq(c.w[2], pooled, 1e-12);
    cr_expect_float_eq(c.w[3], 690.5, 1e-12);
    for (int i = 1; i < c.n; i++) cr_expect_geq(c.w[i], c.w[i - 1], "monotone");

    /* A pool on it: E = N T P(u), P interpolated by hand between (0.005, 72) and (0.51, pooled). */
    sim_result res;
    tsim_run_db("p.ini", ONE_AT_A_TIME("test", "power_curve = calib\n"), db, 1, &res);
    double u = tsim_pv(&res, 0, "busy_share"), T = tsim_v(&res, "window_s");
    cr_assert_gt(u, 0.005);
    cr_assert_lt(u, 0.51);
    double P = 72 + (pooled - 72) * (u - 0.005) / (0.51 - 0.005);
    cr_expect_float_eq((tsim_pv(&res, 0, "energy_kwh") * 3.6e6), 6 * T * P, 1e-9 * 6 * T * P, "%.12g vs %.12g", (tsim_pv(&res, 0, "energy_kwh") * 3.6e6),
                       6 * T * P);
    sim_result_free(&res);
}

Test(powerdb, plain_table_and_errors)
{
    char path[256];
    write_file("p.csv", "gpu,utilization,power_w\ntest,0.2,150\nother,0.5,999\ntest,0.8,450\n", path, sizeof path);
    result r = run_db(60, "calib", "import", "power", path, "--gpu", "test", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE what = 'power' AND source = 'csv'"), 2,
                 "the other GPU's row skipped");
    /* No samples of the pool's GPU: the key named, exit-2 style error. */
    char err[1024] = "";
    scenario sc;
    int rc = tsim_load_resolve_db("p.ini", ONE_AT_A_TIME("h100", "power_curve = calib\n"), db, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_expect_neq(rc, 0);
    cr_expect(strstr(err, "[pool chat] power_curve:") && strstr(err, "no power samples of GPU h100")
              && strstr(err, "latsim calib import power"), "%s", err);
    /* A stored curve from the table: (0.2, 150), (0.8, 450). */
    sim_result res;
    tsim_run_db("p.ini", ONE_AT_A_TIME("test", "power_curve = calib\n"), db, 1, &res);
    double u = tsim_pv(&res, 0, "busy_share"), T = tsim_v(&res, "window_s");
    double P = u <= 0.2 ? 150 : 150 + 300 * (u - 0.2) / 0.6;
    cr_expect_float_eq((tsim_pv(&res, 0, "energy_kwh") * 3.6e6), 6 * T * P, 1e-9 * 6 * T * P);
    sim_result_free(&res);

    /* Bad input: one line with the file, line and column; nothing stored. */
    char bad[256], want[400];
    write_file("bad.csv", "timestamp, name, utilization.gpu [%], power.draw [W]\n"
                          "2025/11/03 10:00:00.000, NVIDIA H100 80GB HBM3, 40 %, 300.00 W\n"
                          "2025/11/03 10:00:00.100, NVIDIA H100 80GB HBM3, 41 %, [N/A]\n", bad, sizeof bad);
    long long before = db_count(db, "SELECT count(*) FROM calib_meas");
    r = run_db(60, "calib", "import", "power", bad, "--gpu", "test", NULL);
    snprintf(want, sizeof want, "%s:3: column power.draw [W]: '[N/A]' is not a number of W", bad);
    expect_one_line(&r, 2, want, "latsim");
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas"), before, "nothing half-written");
    write_file("bad2.csv", "utilization,power_w\n0.5,300\n87,310\n", bad, sizeof bad);
    r = run_db(60, "calib", "import", "power", bad, "--gpu", "test", NULL);
    snprintf(want, sizeof want, "%s:3: column utilization: '87' is out of range (expected 0 to 1)", bad);
    expect_one_line(&r, 2, want, "latsim");
    result_free(&r);
    r = run_db(60, "calib", "import", "power", bad, NULL);
    expect_one_line(&r, 2, "--gpu G is required", "latsim");
    result_free(&r);
}
