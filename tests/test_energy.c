/* test_energy.c -- energy (docs/metrics.md, "Energy"): the power curve and its
 * interpolation, a pool's energy against the closed form N T (idle + u (max -
 * idle)) with its measured utilisation, a power_curve pool, the electricity
 * cost (kWh x pue x price), an autoscaled pool's energy against its replicas'
 * powered seconds, and `plan --objective energy` against the cost objective. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/power.h"
#include "tbin.h"
#include "tcli.h"
#include "tsim.h"

Test(energy, power_curve_interpolates_linearly)
{
    power_curve c;
    char err[256];
    cr_assert_eq(power_curve_parse("0:100, 0.5:400,1:500", &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.n, 3);
    gpu_spec g = { .idle_w = 10, .max_w = 20 };   /* ignored: the curve wins */
    /* By hand: 100 + (400 - 100) x 0.25 / 0.5 = 250; 400 + 100 x 0.2 / 0.5 = 440. */
    cr_assert_float_eq(power_at(&g, &c, 0.25), 250, 1e-12);
    cr_assert_float_eq(power_at(&g, &c, 0.7), 440, 1e-12);
    cr_assert_float_eq(power_at(&g, &c, 0.5), 400, 1e-12);
    cr_assert_float_eq(power_at(&g, &c, 1.5), 500, 1e-12);       /* clamped */
    /* Held flat beyond its ends. */
    cr_assert_eq(power_curve_parse("0.2:150, 0.8:600", &c, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(power_at(&g, &c, 0.1), 150, 1e-12);
    cr_assert_float_eq(power_at(&g, &c, 0.9), 600, 1e-12);
    /* The linear default: idle + (max - idle) u. */
    cr_assert_float_eq(power_at(&g, NULL, 0.3), 13, 1e-12);
    gpu_spec unknown = { 0 };
    cr_assert(isnan(power_at(&unknown, NULL, 0.3)));
    cr_assert(isnan(power_energy_j(&unknown, NULL, 4, 100, 50)));
    /* Energy: N (idle powered + (max - idle) busy) = 4 (10 x 100 + 10 x 25) = 5000 J. */
    cr_assert_float_eq(power_energy_j(&g, NULL, 4, 100, 25), 5000, 1e-9);
    cr_assert_neq(power_curve_parse("0.5:100, 0.2:50", &c, err, sizeof err), 0);
    cr_assert(strstr(err, "increasing") != NULL, "%s", err);
    cr_assert_neq(power_curve_parse("0:100, 1.5:50", &c, err, sizeof err), 0);
    cr_assert_neq(power_curve_parse("0:-1", &c, err, sizeof err), 0);
    cr_assert_neq(power_curve_parse("0 100", &c, err, sizeof err), 0);
    cr_assert_neq(power_curve_parse("", &c, err, sizeof err), 0);
}

/* Constant arrivals every 0.5 s, each request alone on a replica (its service,
 * about 0.1 s, ends before the next arrives): a deterministic busy share. */
#define ONE_AT_A_TIME(extra_sim, extra_pool) \
    "[sim]\nrequests = 400\nwarmup = 40\n" extra_sim \
    "[workload]\narrival = constant\nrate = 2\nprompt_tokens = const(256)\noutput_tokens = const(64)\n" \
    "[gpu test]\nbf16_tflops = 400\nmem_gib = 80\nmem_bw_gbs = 3000\nlink_gbs = 400\nprice_hr = 2\n" \
    "idle_w = 100\nmax_w = 500\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = test\ntp = 2\nreplicas = 3\n" extra_pool

Test(energy, pool_energy_is_n_t_idle_plus_u_span)
{
    sim_result r;
    tsim_run("energy.ini", ONE_AT_A_TIME("", ""), 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    double T = tsim_v(&r, "window_s"), u = tsim_prv(p, "busy_share");
    cr_assert_gt(T, 100);
    /* The busy share by hand: each served request steps for its service time
     * alone (its model compute, the service row, plus its steps' framework
     * overhead, which the overhead row holds: no request_overhead_ms here), so
     * u = served x mean (service + overhead) / (replicas x T) up to the one
     * request cut by each end of the window (0.1 s in 200 s: 0.1 %). */
    double u_hand = (double) tsim_prv(p, "served") * (tsim_prl(p, "service")->mean + tsim_sys(&r, "overhead")->mean) / 1000.0 / (3 * T);
    cr_assert_float_eq(u, u_hand, 0.002 * u_hand, "u %g, by hand %g", u, u_hand);
    cr_assert_gt(u, 0.01);
    cr_assert_lt(u, 0.5);
    /* N = 3 replicas x tp 2 = 6 GPUs. */
    double want = 6 * T * (100 + u * (500 - 100));
    cr_assert(!isnan(tsim_prv(p, "energy_kwh")));
    cr_assert_float_eq((tsim_prv(p, "energy_kwh") * 3.6e6), want, 1e-9 * want, "%.12g vs %.12g", (tsim_prv(p, "energy_kwh") * 3.6e6), want);
    cr_assert_float_eq(tsim_prv(p, "energy_kwh"), want / 3.6e6, 1e-9 * want / 3.6e6);
    cr_assert_float_eq(tsim_prv(p, "mean_power_w"), want / T, 1e-9 * want / T);
    double energy_j = sim_result_get(&r, "", "energy_kwh", "value") * 3.6e6;
    double power_w = sim_result_get(&r, "", "mean_power_w", "value");
    cr_assert_float_eq(energy_j, want, 1e-9 * want);
    cr_assert_float_eq(power_w, want / T, 1e-9 * want / T);
    /* Per output token and per request: mean power over the rates. */
    report rep;
    cr_assert_eq(report_flatten(&r, 0, &rep), 0);
    cr_assert_float_eq(report_get(&rep, "", "joules_per_output_token", "value"),
                       power_w / tsim_v(&r, "output_tokens_per_s"),
                       1e-12 * power_w);
    cr_assert_float_eq(report_get(&rep, "", "joules_per_request", "value"), power_w / tsim_v(&r, "throughput_rps"),
                       1e-12 * power_w);
    cr_assert_float_eq(report_get(&rep, "", "energy_kwh", "value"), want / 3.6e6, 1e-9 * want / 3.6e6);
    cr_assert(isnan(report_get(&rep, "", "electricity_usd", "value")));   /* not priced: no row */
    report_free(&rep);
    sim_result_free(&r);
}

Test(energy, power_curve_pool)
{
    sim_result r;
    tsim_run("energy.ini", ONE_AT_A_TIME("", "power_curve = 0:50, 0.5:300, 1:450\n"), 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    double T = tsim_v(&r, "window_s"), u = tsim_prv(p, "busy_share");
    cr_assert_lt(u, 0.5);
    double want = 6 * T * (50 + (300 - 50) * u / 0.5);
    cr_assert_float_eq((tsim_prv(p, "energy_kwh") * 3.6e6), want, 1e-9 * want, "%.12g vs %.12g", (tsim_prv(p, "energy_kwh") * 3.6e6), want);
    sim_result_free(&r);
    char err[1024];
    tsim_load_error("bad.ini", ONE_AT_A_TIME("", "power_curve = 0:50, 0.5:300, 0.4:450\n"), err, sizeof err);
    cr_assert(strstr(err, "bad.ini:") == err && strstr(err, "[pool chat] power_curve:") && strstr(err, "increasing"), "%s", err);
}

/* power_curve = csv(FILE): measured samples (nvidia-smi readings against the
 * busy share), averaged in bins of 0.05 of utilisation; rows of another GPU
 * skipped. */
Test(energy, power_curve_from_measured_samples)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/latsim_energy_%ld.csv", (long) getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpu,utilization,watts\n"
          "test,0.00,60\ntest,0.01,64\n"          /* bin 0: u 0.005, 62 W */
          "other,0.5,999\n"                        /* another GPU: skipped */
          "test,0.50,300\ntest,0.52,310\n"        /* bin 10: u 0.51, 305 W */
          "test,1.0,450\n", f);                    /* bin 20 */
    fclose(f);
    power_curve c;
    char err[1024];
    cr_assert_eq(power_curve_load(path, NULL, "TEST", &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.n, 3);
    cr_assert_float_eq(c.u[0], 0.005, 1e-12);
    cr_assert_float_eq(c.w[0], 62, 1e-12);
    cr_assert_float_eq(c.u[1], 0.51, 1e-12);
    cr_assert_float_eq(c.w[1], 305, 1e-12);
    cr_assert_float_eq(c.w[2], 450, 1e-12);
    /* A run with it: E = N T P(u) on the interpolated curve. */
    char text[4096];
    snprintf(text, sizeof text, ONE_AT_A_TIME("", "power_curve = csv(%s)\n"), path);
    sim_result r;
    tsim_run("energy.ini", text, 1, &r);
    double u = tsim_pv(&r, 0, "busy_share");
    cr_assert_gt(u, 0.005);
    cr_assert_lt(u, 0.51);
    double P = 62 + (305 - 62) * (u - 0.005) / (0.51 - 0.005);
    cr_assert_float_eq((tsim_pv(&r, 0, "energy_kwh") * 3.6e6), 6 * tsim_v(&r, "window_s") * P, 1e-9 * (tsim_pv(&r, 0, "energy_kwh") * 3.6e6));
    sim_result_free(&r);
    /* Bad samples: the file, line and column. */
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("gpu,utilization,watts\ntest,0.5,300\ntest,45,310\n", f);
    fclose(f);
    snprintf(text, sizeof text, ONE_AT_A_TIME("", "power_curve = csv(%s)\n"), path);
    tsim_load_error("bad.ini", text, err, sizeof err);
    char want[128];
    snprintf(want, sizeof want, "%s:3: column utilization", path);
    cr_assert(strstr(err, "[pool chat] power_curve:") && strstr(err, want), "%s", err);
    cr_assert_neq(power_curve_load(path, NULL, "h100", &c, err, sizeof err), 0);   /* no rows for h100 */
    cr_assert(strstr(err, "no rows for gpu h100") != NULL, "%s", err);
    unlink(path);
}

Test(energy, electricity_cost_is_kwh_pue_price)
{
    sim_result a, b;
    tsim_run("energy.ini", ONE_AT_A_TIME("", ""), 1, &a);
    tsim_run("energy.ini", ONE_AT_A_TIME("electricity_usd_per_kwh = 0.12\npue = 1.3\n", ""), 1, &b);
    /* Timing is unchanged; the cost gains kWh x pue x price. */
    double kwh = sim_result_get(&a, "", "energy_kwh", "value"), usd = kwh * 1.3 * 0.12;
    cr_assert_eq(kwh, sim_result_get(&b, "", "energy_kwh", "value"));
    cr_assert(isnan(sim_result_get(&a, "", "electricity_usd", "value")), "not priced: no row");
    cr_assert_float_eq(sim_result_get(&b, "", "electricity_usd", "value"), usd, 1e-12 * usd);
    cr_assert_float_eq(tsim_pv(&b, 0, "electricity_usd"), usd, 1e-12 * usd);
    double per_hour = usd * 3600 / tsim_v(&b, "window_s");
    double a_hour = sim_result_get(&a, "", "cost_per_hour", "value"), b_hour = sim_result_get(&b, "", "cost_per_hour", "value");
    double b_mtok = sim_result_get(&b, "", "cost_per_mtok", "value");
    cr_assert_float_eq(a_hour, 6 * 2.0, 1e-12);
    cr_assert_float_eq(b_hour, 6 * 2.0 + per_hour, 1e-9);
    cr_assert_float_eq(tsim_pv(&b, 0, "cost_per_hour"), 6 * 2.0 + per_hour, 1e-9);
    cr_assert_float_eq(b_mtok, b_hour / (tsim_v(&b, "output_tokens_per_s") * 3600 / 1e6), 1e-9 * b_mtok);
    sim_result_free(&a);
    sim_result_free(&b);
    char err[1024];
    tsim_load_error("bad.ini", ONE_AT_A_TIME("pue = 0.8\n", ""), err, sizeof err);
    cr_assert(strstr(err, "[sim] pue") != NULL, "%s", err);
}

/* An autoscaled LLM pool: its replicas draw idle power while powered (starting,
 * up or draining: without failures, exactly its paid replica-seconds) and the
 * busy increment while stepping. */
Test(energy, autoscaled_pool_follows_replica_uptime)
{
    const char *base =
        "[sim]\nrequests = 6000\nwarmup = 600\n[workload]\nrate = 20\n"
        "prompt_tokens = lognormal(mean=800, cv=1.0)\noutput_tokens = lognormal(mean=200, cv=1.0)\n"
        "[gpu test]\nbf16_tflops = 990\nmem_gib = 80\nmem_bw_gbs = 3350\nlink_gbs = 450\nprice_hr = 3\n"
        "idle_w = 100\nmax_w = 700\n"
        "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = test\nmax_seq_len = 8192\ntruncate = yes\n";
    char text[2048];
    snprintf(text, sizeof text, "%sreplicas = 6\nmin_replicas = 1\nmax_replicas = 6\nautoscale = kv\n"
             "autoscale_target = 0.05\nprovision_s = 20\ncooldown_s = 60\n", base);
    sim_result r, f;
    tsim_run("energy.ini", text, 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    cr_assert_gt(tsim_prv(p, "scale_ups") + tsim_prv(p, "scale_downs"), 0);
    double T = tsim_v(&r, "window_s"), rs = tsim_prv(p, "replica_seconds");
    double up = tsim_prv(p, "replicas_up_mean");
    double busy = tsim_prv(p, "busy_share") * up * T;     /* utilisation: busy share of the replicas up */
    double want = 100 * rs + 600 * busy;       /* one GPU per replica */
    cr_assert_float_eq((tsim_prv(p, "energy_kwh") * 3.6e6), want, 1e-9 * want, "%.12g vs %.12g", (tsim_prv(p, "energy_kwh") * 3.6e6), want);
    cr_assert_lt(rs, 6 * T * (1 - 1e-3));      /* some replicas were off part of the time */
    cr_assert_geq(rs, up * T * (1 - 1e-9));    /* and powered at least while up */
    /* The same pool at a fixed 6 replicas draws idle power for all six all the time. */
    snprintf(text, sizeof text, "%sreplicas = 6\n", base);
    tsim_run("energy.ini", text, 1, &f);
    tsim_pr q = tsim_pool_at(&f, 0);
    double fbusy = tsim_prv(q, "busy_share") * 6 * tsim_v(&f, "window_s");
    cr_assert_float_eq((tsim_prv(q, "energy_kwh") * 3.6e6), 100 * 6 * tsim_v(&f, "window_s") + 600 * fbusy, 1e-9 * (tsim_prv(q, "energy_kwh") * 3.6e6));
    cr_assert_lt((tsim_prv(p, "energy_kwh") * 3.6e6) / T, (tsim_prv(q, "energy_kwh") * 3.6e6) / tsim_v(&f, "window_s"));
    sim_result_free(&r);
    sim_result_free(&f);
}

/* ---- plan --objective --------------------------------------------------------- */

static void setup(void) { tcli_setup("/tmp/latsim_energy_", "runs.db"); }
TestSuite(energy_plan, .init = setup, .fini = tcli_teardown);

/* Two GPUs alike but for price and power: "hot" is cheap and draws much,
 * "cool" costs twice as much and draws a fifth.  The cost objective must pick
 * hot, the energy objective cool; each winner is the least of its objective
 * among the candidates. */
Test(energy_plan, objective_energy_picks_the_lowest_power)
{
    char path[512];
    write_file("two.ini",
               "[sim]\nrequests = 1500\n[workload]\nrate = 1\n"
               "prompt_tokens = const(256)\noutput_tokens = const(64)\n"
               "[gpu hot]\nbf16_tflops = 400\nmem_gib = 80\nmem_bw_gbs = 3000\nprice_hr = 1\nidle_w = 400\nmax_w = 1000\n"
               "[gpu cool]\nbf16_tflops = 400\nmem_gib = 80\nmem_bw_gbs = 3000\nprice_hr = 2\nidle_w = 50\nmax_w = 200\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = hot\n"
               "[slo]\nttft_p99_ms = 2000\n", path, sizeof path);
    const char *want[2] = { "hot", "cool" };
    for (int k = 0; k < 2; k++) {
        result r = run(120, "plan", path, "--target-rate", "4", "--gpus", "hot,cool", "--replicas", "1:8", "--objective",
                       k ? "energy" : "cost", "--no-store", "--json", "--seeds", "2", NULL);
        cr_assert_eq(r.rc, 0, "%s", r.err);
        json_error_t e;
        json_t *j = json_loads(r.out, 0, &e);
        cr_assert_not_null(j, "%s", e.text);
        cr_assert_str_eq(json_string_value(json_object_get(j, "objective")), k ? "energy" : "cost");
        json_t *best = json_object_get(j, "best");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(best, "settings"), "pool chat.gpu")), want[k]);
        const char *field = k ? "mean_power_w" : "usd_per_hour";
        double b = json_number_value(json_object_get(best, field));
        cr_assert_gt(b, 0);
        json_t *cands = json_object_get(j, "candidates");
        cr_assert_geq(json_array_size(cands), 1);
        for (size_t i = 0; i < json_array_size(cands); i++) {
            json_t *v = json_object_get(json_array_get(cands, i), field);
            if (json_is_number(v)) cr_assert_leq(b, json_number_value(v), "%s %g > %g", field, b, json_number_value(v));
        }
        json_decref(j);
        result_free(&r);
    }
    result r = run(60, "plan", path, "--target-rate", "4", "--objective", "watts", "--no-store", NULL);
    expect_one_line(&r, 2, "--objective: expected cost or energy", "plan");
    result_free(&r);
}

/* The energy rows reach the table, the JSON and the database (run_stats). */
Test(energy_plan, rows_in_table_json_and_database)
{
    char path[512];
    write_file("one.ini", ONE_AT_A_TIME("electricity_usd_per_kwh = 0.2\n", ""), path, sizeof path);
    result r = run_db(60, "run", path, "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    double kwh = json_number_value(json_object_get(j, "energy_kwh"));
    cr_assert_gt(kwh, 0);
    cr_assert(json_is_number(json_object_get(j, "joules_per_output_token")));
    json_t *pool = json_object_get(json_object_get(j, "pools"), "chat");
    cr_assert_float_eq(json_number_value(json_object_get(pool, "energy_kwh")), kwh, 1e-5 * kwh);
    cr_assert_float_eq(json_number_value(json_object_get(j, "electricity_usd")), kwh * 0.2, 1e-5 * kwh * 0.2);
    json_decref(j);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM run_stats WHERE metric IN ('energy_kwh', 'mean_power_w', "
                              "'joules_per_output_token', 'joules_per_request', 'electricity_usd') AND scope = ''"), 5);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM run_stats WHERE metric IN ('energy_kwh', 'mean_power_w', "
                              "'electricity_usd') AND scope = 'chat'"), 3);
    r = run(60, "run", path, "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "energy_kwh") && strstr(r.out, "joules_per_output_token") && strstr(r.out, "electricity_usd"),
              "%s", r.out);
    result_free(&r);
}
