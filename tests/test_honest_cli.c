/* test_honest_cli.c -- honest numbers (issue 29) through the program: the HTML
 * page's "Where the time goes" figures are the run's component means, and
 * error messages and warnings that say what happened. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_honest_", "runs.db"); }

TestSuite(honest_cli, .init = setup, .fini = tcli_teardown);

/* A 4G client, a result cache (its hits are all overhead), a gateway, a gRPC
 * hop and an LLM pool: every component of e2e is there. */
static const char *GW =
    "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\nrate = 8\n"
    "prompt_tokens = lognormal(mean=800, cv=0.5)\noutput_tokens = lognormal(mean=100, cv=0.5)\n"
    "target = client\n"
    "[pool client]\nkind = net\npreset = client_4g\nnext = cache\n"
    "[pool cache]\nkind = result_cache\nintents = 500\nhit_ms = const(2)\nmiss_ms = const(3)\nnext = gw\n"
    "[pool gw]\nkind = router\noverhead_ms = const(1.5)\nnext = hop\n"
    "[pool hop]\nkind = net\npreset = cross_zone\nprotocol = grpc\nnext = chat\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrequest_overhead_ms = 1\n";

static json_t *parse(const result *r)
{
    cr_assert_eq(r->rc, 0, "exit %d: %s", r->rc, r->err);
    json_error_t je;
    json_t *j = json_loadb(r->out, r->nout, 0, &je);
    cr_assert_not_null(j, "not JSON (%s): %.400s", je.text, r->out);
    return j;
}

/* The HTML legend of the breakdown prints "NAME S% (M ms)" for all requests:
 * S is the share of the mean and M the component's mean, so M must be the run's
 * mean of that component (to the 3 digits printed) and S its share of the mean
 * e2e (before issue 29 M was the mean of per-request ratios times the mean e2e:
 * a result-cache hit counted as 100 % overhead). */
Test(honest_cli, html_breakdown_figures_are_the_component_means, .timeout = 300)
{
    char sc[256], html[256];
    write_file("gw.ini", GW, sc, sizeof sc);
    result r = run_db(120, "run", sc, "--json", NULL);
    json_t *j = parse(&r);
    result_free(&r);
    snprintf(html, sizeof html, "%s/page.html", dir);
    r = run_db(120, "report", "1", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    const char *at = strstr(page, "id=\"breakdown\"");
    cr_assert_not_null(at, "no breakdown section");
    double e2e = json_number_value(json_object_get(json_object_get(json_object_get(j, "latency_ms"), "e2e"), "mean"));
    const char *parts[] = { "network", "queue", "service", "overhead" };
    for (int k = 0; k < 4; k++) {
        char want[64];
        snprintf(want, sizeof want, "</i>%s ", parts[k]);
        const char *p = strstr(at, want);
        cr_assert_not_null(p, "no legend entry for %s", parts[k]);
        double share, ms;
        cr_assert_eq(sscanf(p + strlen(want), "%lf%% (%lf ms)", &share, &ms), 2, "legend of %s: %.60s", parts[k], p);
        double mean = json_number_value(json_object_get(json_object_get(json_object_get(j, "latency_ms"), parts[k]), "mean"));
        double bd = json_number_value(json_object_get(json_object_get(json_object_get(j, "breakdown"), "all"), parts[k]));
        /* %.3g of the mean: within 0.5 in its third digit (and the JSON's 6 digits) */
        cr_expect(fabs(ms - mean) <= 5e-3 * fabs(mean) + 1e-9, "%s: page %g ms, run mean %g ms", parts[k], ms, mean);
        cr_expect(fabs(share - 100 * mean / e2e) <= 0.051, "%s: page %g%%, mean / e2e %g%%", parts[k], share,
                  100 * mean / e2e);
        cr_expect(fabs(bd * e2e - mean) <= 1e-5 * e2e, "%s: JSON share %g x e2e %g != mean %g", parts[k], bd, e2e, mean);
    }
    free(page);
    json_decref(j);
}

/* M/M/4 at rho 0.5 with an SLO that holds. */
static const char *MM4 =
    "[sim]\nrequests = 2000\n[workload]\nrate = 20\n"
    "[pool cpu]\nservers = 4\nservice_ms = exp(mean=100)\n[slo]\ne2e_p99_ms = 1000\n";

/* `check` of a scenario whose baseline is missing (a renamed file, a lost
 * database) passes with one warning line saying so; --require-baseline fails
 * it; once a baseline is accepted neither warns. */
Test(honest_cli, check_without_baseline_warns_or_fails)
{
    char sc[256];
    write_file("mm4.ini", MM4, sc, sizeof sc);
    result r = run_db(120, "check", sc, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(lines(r.err), 1, "one warning line: %s", r.err);
    cr_expect(strstr(r.err, "warning") && strstr(r.err, "no accepted baseline") && strstr(r.err, "mm4.ini"), "%s", r.err);
    result_free(&r);
    r = run_db(120, "check", sc, "--require-baseline", NULL);
    cr_expect_eq(r.rc, 1, "--require-baseline fails: %s", r.out);
    cr_expect(strstr(r.out, "MISSING") && strstr(r.out, "no accepted baseline"), "%s", r.out);
    cr_expect_eq(r.nerr, 0, "%s", r.err);
    result_free(&r);
    r = run_db(60, "baseline", "accept", "1", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(120, "check", sc, "--require-baseline", NULL);
    cr_expect_eq(r.rc, 0, "%s%s", r.out, r.err);
    cr_expect_eq(r.nerr, 0, "%s", r.err);
    result_free(&r);
}

/* --set on a pool the file lacks (a typo) names the missing pool and the
 * closest one, instead of refusing the key for a generic pool; with no close
 * name it lists the file's pools.  Exit 2, one line, nothing stored. */
Test(honest_cli, set_on_a_missing_pool_names_it)
{
    result r = run_db(60, "run", "scenarios/chat_plan.ini", "--set", "pool chta.replicas=4", NULL);
    expect_one_line(&r, 2, "has no pool chta (did you mean [pool chat]?)", "latsim: --set: [pool chta]");
    result_free(&r);
    char sc[256];
    write_file("mm4.ini", MM4, sc, sizeof sc);
    r = run_db(60, "run", sc, "--set", "pool frontend.servers=4", NULL);
    expect_one_line(&r, 2, "has no pool frontend (its pools: cpu;", "latsim: --set: [pool frontend]");
    result_free(&r);
    cr_expect(access(db, F_OK) != 0, "nothing stored: no database made");
}

/* [slo] terms on an LLM pool's MFU/MBU and KV occupancy (the golden signals
 * "GPU utilisation < 80 %" and "memory < 90 %" as figures that do not read 1
 * under any continuous-batching load, unlike the stepping share): chat_plan's
 * MBU is about 0.28 and its KV occupancy 0.07 (3 x H100 tp 8 at 50 req/s), so
 * a limit of 0.01 fails and one of 0.99 holds; on a scenario without an LLM
 * pool the term is refused, naming it. */
Test(honest_cli, slo_terms_on_mfu_mbu_and_kv_occupancy, .timeout = 300)
{
    result r = run_db(120, "check", "scenarios/chat_plan.ini", "--no-store", "--set", "slo.mbu_max=0.01", "--set",
                      "slo.kv_occupancy_max=0.99", NULL);
    cr_expect_eq(r.rc, 1, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "slo mbu_max <= 0.01") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "slo kv_occupancy_max") == NULL, "the KV term holds: %s", r.out);
    result_free(&r);
    r = run_db(120, "check", "scenarios/chat_plan.ini", "--no-store", "--set", "slo.mbu_max=0.99", "--set",
               "slo.kv_occupancy_max=0.99", NULL);
    cr_expect_eq(r.rc, 0, "%s%s", r.out, r.err);
    result_free(&r);
    char sc[256];
    write_file("mm4.ini", MM4, sc, sizeof sc);
    r = run_db(60, "run", sc, "--set", "slo.mfu_max=0.5", NULL);
    expect_one_line(&r, 2, "mfu_max is reported only for LLM pools", "latsim: --set: [slo] mfu_max");
    result_free(&r);
}

/* --verbose prints a result cache's expected hit rate: repeat_share's, or for
 * a Zipf over intents 1 - E[distinct] / requests. */
Test(honest_cli, verbose_prints_the_expected_hit_rate)
{
    char sc[256];
    write_file("rc.ini",
               "[sim]\nrequests = 2000\n[workload]\nrate = 5\ntarget = cache\n"
               "[pool cache]\nkind = result_cache\nnext = work\n[pool work]\nservice_ms = const(10)\n", sc, sizeof sc);
    result r = run_db(60, "run", sc, "--verbose", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.err, "[pool cache] expected hit rate 0.3: repeat_share") != NULL, "%s", r.err);
    result_free(&r);
    r = run_db(60, "run", sc, "--verbose", "--set", "pool cache.intents=1000", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.err, "[pool cache] expected hit rate") && strstr(r.err, "over 2000 requests"), "%s", r.err);
    result_free(&r);
}

/* replay replaces the workload: a copy of a replay scenario whose [workload]
 * trace is not beside it still replays (the same predictions as the original),
 * and the replay names the cost model it used, for a FILE and for --run ID. */
Test(honest_cli, replay_ignores_the_workload_and_names_its_cost_model, .timeout = 300)
{
    const char *obs = "tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl";
    char *orig = slurp_or_fail("scenarios/replay_vllm_rtx4090.ini", NULL);
    char copy[256];
    write_file("copied.ini", orig, copy, sizeof copy);
    free(orig);
    result a = run_db(200, "replay", obs, "--scenario", "scenarios/replay_vllm_rtx4090.ini", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    result b = run_db(200, "replay", obs, "--scenario", copy, NULL);
    cr_assert_eq(b.rc, 0, "the copy's trace is not there, but the replay does not need it: %s", b.err);
    cr_expect(strstr(b.err, "[workload] is not used") != NULL, "%s", b.err);
    const char *ta = strstr(a.out, "\n  metric"), *tb = strstr(b.out, "\n  metric");
    cr_assert(ta && tb);
    cr_expect_str_eq(ta, tb, "the same predictions");
    cr_expect(strstr(a.out, "cost model: vllm roofline (datasheet)") != NULL, "%s", a.out);
    result_free(&a);
    result_free(&b);
    a = run_db(200, "calib", "import", "observed", obs, "--scenario", "scenarios/replay_vllm_rtx4090.ini", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    result_free(&a);
    a = run_db(200, "replay", "--run", "1", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_expect(strstr(a.out, "cost model: vllm roofline (datasheet)") != NULL, "%s", a.out);
    result_free(&a);
}

/* A pool's busy share is named for what it is in the text report, the JSON and
 * the database (busy_share, not utilization: an LLM pool reads 1 under any
 * continuous-batching load while its MFU is far below), and a run stored
 * before the rename (its rows named "utilization") is read with the new name:
 * `compare --all` pairs it with a new run's row. */
Test(honest_cli, busy_share_is_named_busy_share, .timeout = 300)
{
    char sc[256];
    write_file("llm.ini",
               "[sim]\nrequests = 300\nwarmup = 30\n[workload]\nrate = 4\n"
               "prompt_tokens = lognormal(mean=400, cv=0.5)\noutput_tokens = lognormal(mean=100, cv=0.5)\n"
               "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nscheduler = continuous\n", sc, sizeof sc);
    result r = run_db(120, "run", sc, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\n  busy_share ") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "utilization ") == NULL, "no row labelled utilization: %s", r.out);
    result_free(&r);
    r = run_db(120, "run", sc, "--json", NULL);
    json_t *j = parse(&r);
    json_t *chat = json_object_get(json_object_get(j, "pools"), "chat");
    double busy = json_number_value(json_object_get(chat, "busy_share"));
    double mfu = json_number_value(json_object_get(chat, "mfu"));
    cr_expect(busy > 0 && busy <= 1, "busy_share %g", busy);
    cr_expect(mfu > 0 && mfu < busy, "mfu %g beside busy_share %g", mfu, busy);
    cr_expect_null(json_object_get(chat, "utilization"), "the JSON key is busy_share only");
    json_decref(j);
    result_free(&r);
    /* Run 1 as an older latsim stored it. */
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
    char *e = NULL;
    cr_assert_eq(sqlite3_exec(h, "UPDATE run_stats SET metric = 'utilization' WHERE run_id = 1 AND metric = 'busy_share'",
                              NULL, NULL, &e), SQLITE_OK, "%s", e ? e : "");
    cr_assert_gt(sqlite3_changes(h), 0);
    sqlite3_close(h);
    r = run_db(120, "compare", "1", "2", "--all", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "chat.busy_share") != NULL, "the old row is read as busy_share: %s", r.out);
    cr_expect(strstr(r.out, "utilization") == NULL, "%s", r.out);
    result_free(&r);
}
