/* test_lora.c -- LoRA adapters on the LLM replica (sim/llm/lora.c), end to end:
 *   - the adapter's bytes from the model geometry by hand (llama-3-8b, rank 16,
 *     q k v o), its load time bytes / lora_load_gbs;
 *   - max_loras >= adapters: each adapter loads once, every later admission hits;
 *   - one slot and requests alternating between two adapters (a trace's class
 *     column): every request loads, and a lone request's TTFT grows by exactly
 *     the load plus the adapter's weight read;
 *   - few slots under load: requests wait for a slot, the sanity checks
 *     (LATSIM_CHECK: in use <= resident <= max_loras) hold at every step;
 *   - vLLM's admission: a request whose adapter can get no slot keeps its
 *     place while one behind it whose adapter is in the batch joins (with
 *     lora_max_wait_ms, not once it has waited that long);
 *   - a trace's adapter column (CSV and JSON lines, tests/data/lora_adapters.*)
 *     wins over the class's adapter, and a row naming an adapter the pool lacks
 *     is an error naming the file, line and column;
 *   - a class on the base model loads nothing; configuration errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/llmcfg.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "tsim.h"
#include "store/store.h"

static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve("/tmp/test_lora.ini", text, sc, err, errlen);
}

static void run_text(const char *text, uint64_t seed, sim_result *res) { tsim_run("/tmp/test_lora.ini", text, seed, res); }

static void expect_error(const char *text, const char *want)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_assert_eq(rc, -1, "accepted:\n%s", text);
    cr_expect_not_null(strstr(err, want), "message lacks '%s': %s", want, err);
}

static double metric(const sim_result *r, const char *name) { return tsim_pv(r, 0, name); }

#define POOL "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\n"

/* llama-3-8b: 32 layers, hidden 4096, 32 heads and 8 KV heads of 128.  Rank 16
 * on q (4096 -> 4096), k and v (4096 -> 1024), o (4096 -> 4096): per layer
 * 16 x (8192 + 5120 + 5120 + 8192) x 2 bytes. */
static const double BYTES = 32.0 * 16 * (8192 + 5120 + 5120 + 8192) * 2;

Test(lora, bytes_and_load_time_by_hand)
{
    char buf[1024];
    sim_result res;
    snprintf(buf, sizeof buf, "[sim]\nrequests = 20\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
             "prompt_tokens = const(64)\noutput_tokens = const(8)\n" POOL "adapters = 3\nlora_load_gbs = 12.5\n");
    run_text(buf, 1, &res);
    cr_expect_float_eq(metric(&res, "adapter_mib"), BYTES / 1048576.0, 1e-12);
    cr_expect_float_eq(metric(&res, "lora_load_ms"), BYTES / 12.5e9 * 1e3, 1e-12);
    cr_expect_float_eq(metric(&res, "lora_load_s"), metric(&res, "lora_loads") * BYTES / 12.5e9, 1e-12);
    sim_result_free(&res);
    /* all targets add gate and up (4096 -> 14336) and down (14336 -> 4096). */
    snprintf(buf, sizeof buf, "[sim]\nrequests = 5\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
             "prompt_tokens = const(64)\noutput_tokens = const(8)\n" POOL "adapters = 3\nadapter_targets = all\n"
             "adapter_rank = 8\n");
    run_text(buf, 1, &res);
    cr_expect_float_eq(metric(&res, "adapter_mib"), (BYTES / 2 + 32.0 * 8 * 3 * (4096 + 14336) * 2) / 1048576.0, 1e-12);
    sim_result_free(&res);
}

Test(lora, enough_slots_load_each_adapter_once)
{
    /* 6 adapters, 6 slots, 3000 requests at a busy load: the first admission of
     * each adapter loads it, every other one hits. */
    char buf[1024];
    sim_result res;
    snprintf(buf, sizeof buf, "[sim]\nrequests = 3000\nwarmup = 0\n[workload]\narrival = poisson\nrate = 20\n"
             "prompt_tokens = const(200)\noutput_tokens = const(50)\n" POOL "adapters = 6\nmax_loras = 6\n"
             "adapter_zipf_s = 0.5\n");
    run_text(buf, 1, &res);
    cr_expect_eq(metric(&res, "lora_loads"), 6);
    cr_expect_eq(metric(&res, "lora_waits"), 0);
    cr_expect_gt(metric(&res, "lora_hit_rate"), 1 - 6.0 / 3000 - 1e-12);
    sim_result_free(&res);
}

static char csv[64];

/* Lone requests (one every 10 s) from a trace whose class column alternates a
 * and b; [class a] uses adapter 1, [class b] adapter 2; EXTRA in the pool. */
static void alternating(char *buf, size_t n, int nreq, const char *extra)
{
    snprintf(csv, sizeof csv, "/tmp/latsim_lora_%d.csv", (int) getpid());
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fprintf(f, "p,o,kind\n");
    for (int i = 0; i < nreq; i++) fprintf(f, "100,20,%s\n", i % 2 ? "b" : "a");
    fclose(f);
    snprintf(buf, n, "[sim]\nrequests = %d\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.1\ntrace = %s\n"
             "prompt_column = p\noutput_column = o\nclass_column = kind\n[class a]\nadapter = 1\n[class b]\nadapter = 2\n"
             POOL "%s", nreq, csv, extra);
}

Test(lora, one_slot_alternating_loads_every_request)
{
    char buf[2048];
    sim_result res, two, base;
    alternating(buf, sizeof buf, 40, "adapters = 2\nmax_loras = 1\nlora_step_overhead_ms = 0\n");
    run_text(buf, 1, &res);
    cr_expect_eq(metric(&res, "lora_loads"), 40);
    cr_expect_eq(metric(&res, "lora_hit_rate"), 0);
    alternating(buf, sizeof buf, 40, "adapters = 2\nmax_loras = 2\nlora_step_overhead_ms = 0\n");
    run_text(buf, 1, &two);
    cr_expect_eq(metric(&two, "lora_loads"), 2);
    alternating(buf, sizeof buf, 40, "");
    run_text(buf, 1, &base);
    unlink(csv);
    /* TTFT of a lone request: its prefill step plus the load (25 GB/s) plus the
     * adapter's weight read (3350 GB/s x 0.8); the steps are whole ns. */
    double load = BYTES / 25e9 * 1e3, read = BYTES / (3350e9 * 0.8) * 1e3;
    cr_expect(fabs(tsim_sys(&res, "ttft")->mean - tsim_sys(&base, "ttft")->mean - load - read) < 2e-6,
              "ttft %.9f vs %.9f + %.9f + %.9f",
              tsim_sys(&res, "ttft")->mean, tsim_sys(&base, "ttft")->mean, load, read);
    cr_expect(fabs(tsim_sys(&two, "ttft")->mean - tsim_sys(&base, "ttft")->mean - read - 2 * load / 40) < 2e-6,
              "two slots: ttft %.9f",
              tsim_sys(&two, "ttft")->mean);
    cr_expect(fabs(tsim_sys(&res, "tpot")->mean - tsim_sys(&base, "tpot")->mean - read) < 2e-6, "tpot %.9f vs %.9f",
              tsim_sys(&res, "tpot")->mean, tsim_sys(&base, "tpot")->mean);
    sim_result_free(&res);
    sim_result_free(&two);
    sim_result_free(&base);
}

Test(lora, few_slots_make_requests_wait)
{
    /* 2 slots, 40 adapters nearly uniform, a load that needs batches of many:
     * admissions wait for a slot, and in use <= resident <= max_loras at every
     * step (LATSIM_CHECK aborts otherwise).  8 slots wait less. */
    setenv("LATSIM_CHECK", "1", 1);
    char buf[1024];
    sim_result a, b;
    snprintf(buf, sizeof buf, "[sim]\nrequests = 1500\nwarmup = 0\n[workload]\narrival = poisson\nrate = 4\n"
             "prompt_tokens = const(300)\noutput_tokens = const(100)\n" POOL "adapters = 40\nmax_loras = 2\n"
             "adapter_zipf_s = 0.01\nqueue_limit = 0\n");
    run_text(buf, 1, &a);
    char *m = strstr(buf, "max_loras = 2");
    m[12] = '8';
    run_text(buf, 1, &b);
    unsetenv("LATSIM_CHECK");
    cr_expect_gt(metric(&a, "lora_waits"), 0);
    cr_expect_lt(metric(&b, "lora_waits"), metric(&a, "lora_waits"));
    /* 2 slots saturate (queueing of seconds), 8 do not; the queue built with 2
     * lets requests whose adapter is in the batch pass (vLLM), so their hit
     * rate is the higher one. */
    cr_expect_gt(tsim_sys(&a, "ttft")->p99, 10 * tsim_sys(&b, "ttft")->p99, "ttft p99 %g vs %g",
                 tsim_sys(&a, "ttft")->p99, tsim_sys(&b, "ttft")->p99);
    cr_expect_gt(metric(&a, "lora_hit_rate"), metric(&b, "lora_hit_rate"));
    sim_result_free(&a);
    sim_result_free(&b);
}

/* A trace of timed requests (seconds, class, output tokens) on one slot. */
static void timed(char *buf, size_t n, const char *rows, int nreq, const char *extra)
{
    snprintf(csv, sizeof csv, "/tmp/latsim_lora_t%d.csv", (int) getpid());
    FILE *f = fopen(csv, "w");
    cr_assert_not_null(f);
    fprintf(f, "t,p,o,kind\n%s", rows);
    fclose(f);
    snprintf(buf, n, "[sim]\nrequests = %d\nwarmup = 0\n[workload]\narrival = trace\ntrace = %s\ntime_column = t\n"
             "time_format = seconds\nprompt_column = p\noutput_column = o\nclass_column = kind\n[class a]\nadapter = 1\n"
             "[class b]\nadapter = 2\n" POOL "adapters = 2\nmax_loras = 1\n%s", nreq, csv, extra);
}

Test(lora, in_batch_adapter_passes_a_waiting_request)
{
    /* One slot.  a (200 tokens to decode) runs; b arrives and cannot get the
     * slot; a second a arrives behind b.  vLLM passes over b and admits the
     * second a into the batch (its adapter is in it): 2 loads, 1 hit of 3.  A
     * queue kept first come first served would load a, b, a (3 loads, no hit). */
    setenv("LATSIM_CHECK", "1", 1);
    char buf[2048];
    sim_result res;
    timed(buf, sizeof buf, "0,100,200,a\n0.05,100,20,b\n0.1,100,20,a\n", 3, "");
    run_text(buf, 1, &res);
    cr_expect_eq(metric(&res, "lora_loads"), 2);
    cr_expect_float_eq(metric(&res, "lora_hit_rate"), 1.0 / 3, 1e-12);
    cr_expect_gt(metric(&res, "lora_waits"), 0);
    cr_expect_eq(tsim_n(&res, "served"), 3);
    /* b waited for the whole of the first a (200 steps), the second a for a step. */
    cr_expect_gt(tsim_sys(&res, "ttft")->max, 20 * tsim_sys(&res, "ttft")->p50, "ttft max %g p50 %g",
                 tsim_sys(&res, "ttft")->max, tsim_sys(&res, "ttft")->p50);
    sim_result_free(&res);
    /* lora_max_wait_ms = 10: b has waited 50 ms when the second a arrives, so
     * the second a queues behind it (first come first served again): a, b, a
     * load (3 loads, no hit), all served. */
    timed(buf, sizeof buf, "0,100,200,a\n0.05,100,20,b\n0.1,100,20,a\n", 3, "lora_max_wait_ms = 10\n");
    run_text(buf, 1, &res);
    cr_expect_eq(metric(&res, "lora_loads"), 3);
    cr_expect_eq(metric(&res, "lora_hit_rate"), 0);
    cr_expect_eq(tsim_n(&res, "served"), 3);
    sim_result_free(&res);
    /* Under load, alternating a and b every 20 ms: the b requests keep their
     * places and are served (no starvation), every request completes, and the
     * checks (in use <= resident <= 1) hold at every step. */
    char rows[16384];
    size_t k = 0;
    for (int i = 0; i < 400; i++)
        k += (size_t) snprintf(rows + k, sizeof rows - k, "%.3f,200,60,%s\n", i * 0.02, i % 2 ? "b" : "a");
    timed(buf, sizeof buf, rows, 400, "");
    run_text(buf, 1, &res);
    unlink(csv);
    unsetenv("LATSIM_CHECK");
    cr_expect_eq(tsim_n(&res, "served"), 400);
    cr_expect_gt(metric(&res, "lora_hit_rate"), 0.5);   /* same-adapter requests join the batch */
    cr_expect_lt(metric(&res, "lora_loads"), 200);
    sim_result_free(&res);
}

/* tests/data/lora_adapters.{csv,jsonl}: six lone requests (1 s apart) whose
 * adapter column reads 1, 1, 2, (none), 0, 2 and class column a, a, a, b, a, a,
 * with [class a] on adapter 1 and [class b] on adapter 2.  The row's adapter
 * wins over the class's; an empty one leaves the class's; 0 is the base model.
 * One slot: adapters 1 (load), 1 (hit), 2 (load), 2 (hit, from class b), base,
 * 2 (hit): 2 loads, hit rate 3/5.  Were the class to win: 1, 1, 1, 2, base, 1
 * (3 loads); were an empty field the base model: 2 hits of 4. */
static void adapter_trace(char *buf, size_t n, const char *ext, const char *pool_extra)
{
    char cwd[512];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(buf, n, "[sim]\nrequests = 6\nwarmup = 0\n[workload]\narrival = trace\ntrace = %s/tests/data/lora_adapters.%s\n"
             "time_column = t\ntime_format = seconds\nprompt_column = p\noutput_column = o\nclass_column = kind\n"
             "adapter_column = adapter\n[class a]\nadapter = 1\n[class b]\nadapter = 2\n" POOL "adapters = 2\n%s",
             cwd, ext, pool_extra);
}

Test(lora, trace_column_chooses_the_adapter)
{
    char buf[2048];
    sim_result res;
    const char *ext[] = { "csv", "jsonl" };
    for (int i = 0; i < 2; i++) {
        adapter_trace(buf, sizeof buf, ext[i], "max_loras = 1\n");
        run_text(buf, 1, &res);
        cr_expect_eq(tsim_n(&res, "served"), 6, "%s", ext[i]);
        cr_expect_eq(metric(&res, "lora_loads"), 2, "%s: loads %g", ext[i], metric(&res, "lora_loads"));
        cr_expect_float_eq(metric(&res, "lora_hit_rate"), 3.0 / 5, 1e-12, "%s", ext[i]);
        sim_result_free(&res);
    }
    /* The rows name adapter 2: a pool with one adapter rejects the trace, naming
     * its file, the line of the first row naming 2 (line 4) and the column. */
    adapter_trace(buf, sizeof buf, "csv", "");
    char *a = strstr(buf, "adapters = 2\n[class a]");   /* the pool's, not the class's */
    cr_assert_null(a);
    a = strstr(buf, POOL "adapters = 2");
    cr_assert_not_null(a);
    a[strlen(POOL) + 11] = '1';
    char *c = strstr(buf, "[class b]\nadapter = 2");
    c[strlen("[class b]\nadapter = ")] = '1';
    expect_error(buf, "lora_adapters.csv:4: column 'adapter' names adapter 2, but the pool has adapters = 1");
    adapter_trace(buf, sizeof buf, "jsonl", "");
    a = strstr(buf, POOL "adapters = 2");
    a[strlen(POOL) + 11] = '1';
    c = strstr(buf, "[class b]\nadapter = 2");
    c[strlen("[class b]\nadapter = ")] = '1';
    expect_error(buf, "lora_adapters.jsonl:3: column 'adapter' names adapter 2");
}

Test(lora, base_model_class_loads_nothing)
{
    char buf[1024];
    sim_result res;
    snprintf(buf, sizeof buf, "[sim]\nrequests = 50\nwarmup = 0\n[workload]\narrival = constant\nrate = 1\n"
             "prompt_tokens = const(64)\noutput_tokens = const(8)\n[class plain]\nadapter = 0\n" POOL "adapters = 3\n");
    run_text(buf, 1, &res);
    cr_expect_eq(metric(&res, "lora_loads"), 0);
    cr_expect(isnan(metric(&res, "lora_hit_rate")));
    cr_expect_eq(metric(&res, "lora_compute_s"), 0);
    sim_result_free(&res);
}

Test(lora, config_errors)
{
    const char *head = "[sim]\nrequests = 5\n[workload]\nrate = 1\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s" POOL "adapters = 2\nscheduler = static\n", head);
    expect_error(buf, "iteration-level");
    snprintf(buf, sizeof buf, "%s[class x]\nadapter = 3\n" POOL "adapters = 2\n", head);
    expect_error(buf, "adapter");
    snprintf(buf, sizeof buf, "%s" POOL "adapters = 2\nlora_load_gbs = 0\n", head);
    expect_error(buf, "lora_load_gbs");
    snprintf(buf, sizeof buf, "%s" POOL "adapters = 2\nadapter_targets = mlp\n", head);
    expect_error(buf, "adapter_targets");
}
