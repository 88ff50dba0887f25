/* test_offload.c -- Criterion tests of the KV-cache offload tiers (kv_offload,
 * sim/llm/offload.c), end to end through scenario_load_text / sim_run:
 *   - the Mooncake conversation trace: with an unlimited CPU tier every prefix
 *     repeat is found (GPU + tier = the trace's offline count of leading
 *     repeated blocks, counted here from the file), with the GPU cache alone
 *     fewer;
 *   - a block evicted from the GPU and asked for again is loaded in exactly
 *     tokens x KV bytes per token / bandwidth + latency (CPU and SSD tiers,
 *     the CPU tier's evictions going to the SSD), the step waits for it, and a
 *     GPU hit costs nothing;
 *   - a shared tier serves another replica's evictions, a private one does not;
 *   - configuration errors name the key. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/scenario.h"
#include "run/sim.h"
#include "run/breakdown.h"
#include "tsim.h"
#include "store/store.h"
#include "tcheck.h"

/* Full sanity checks, every step (tcheck.h). */
TestSuite(offload_errors, .init = tcheck_every_step);
TestSuite(offload_load, .init = tcheck_every_step);
TestSuite(offload_mooncake, .init = tcheck_every_step);

#define KV_BYTES_TOKEN 131072.0   /* llama-3(.1)-8b, bf16: 2 x 32 layers x 8 KV heads x 128 x 2 bytes */
#define MOONCAKE "tests/data/mooncake_conversation_1000.jsonl"

static int load_resolve(const char *text, scenario *sc, char *err, size_t errlen)
{
    return tsim_load_resolve("/tmp/test_offload.ini", text, sc, err, errlen);
}

static void run_text(const char *text, sim_result *res) { tsim_run("/tmp/test_offload.ini", text, 1, res); }

static double pm(const sim_result *r, int pool, const char *name) { return tsim_pv(r, pool, name); }

/* Offline: of the prompt tokens of rows WARMUP.. of the trace, the share an
 * unlimited prefix cache finds: each row's leading run of hash ids that some
 * earlier row had, x 512 tokens, at most its prompt. */
static double offline_repeat_share(const char *path, int warmup)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static int64_t seen[200000];
    size_t nseen = 0;
    char line[1 << 16];
    double rep = 0, prompt = 0;
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        json_error_t e;
        json_t *o = json_loads(line, 0, &e);
        cr_assert_not_null(o, "line %d: %s", row + 1, e.text);
        json_t *ids = json_object_get(o, "hash_ids");
        double in = (double) json_integer_value(json_object_get(o, "input_length"));
        size_t n = json_array_size(ids), run = 0;
        int leading = 1;
        for (size_t i = 0; i < n; i++) {
            int64_t id = json_integer_value(json_array_get(ids, i));
            int found = 0;
            for (size_t j = 0; j < nseen && !found; j++) found = seen[j] == id;
            if (found && leading) run++;
            else leading = 0;
            if (!found) {
                cr_assert_lt(nseen, sizeof seen / sizeof seen[0]);
                seen[nseen++] = id;
            }
        }
        if (row >= warmup) {
            double r = (double) run * 512;
            rep += r < in ? r : in;
            prompt += in;
        }
        json_decref(o);
    }
    fclose(f);
    return rep / prompt;
}

static void mooncake_text(char *buf, size_t n, const char *offload)
{
    char cwd[512];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(buf, n,
             "[sim]\nrequests = 900\nwarmup = 100\nseed = 1\n"
             "[workload]\narrival = trace\ntrace = %s/" MOONCAKE "\nspeedup = 0.5\ntarget = chat\n"
             "[pool chat]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nscheduler = chunked\nprefix_cache = yes\n"
             "kv_blocks = 8192\n%s\n", cwd, offload);
}

Test(offload_mooncake, unlimited_tier_finds_every_repeat)
{
    double want = offline_repeat_share(MOONCAKE, 100);
    cr_expect_float_eq(want, 0.238535, 1e-6, "offline count %.9f", want);
    char t[2048];
    sim_result gpu, tier;
    mooncake_text(t, sizeof t, "");
    run_text(t, &gpu);
    mooncake_text(t, sizeof t, "kv_offload = cpu\nkv_offload_cpu_gib = 100000");
    run_text(t, &tier);
    cr_assert_eq(tsim_n(&tier, "served"), 900);
    cr_expect_float_eq(sim_result_get(&tier, "", "repeat_token_share", "value"), want, 1e-12);
    /* Every repeat is a hit: on the GPU or in the tier. */
    cr_expect_float_eq(pm(&tier, 0, "kv_offload_total_hit_rate"), want, 1e-12, "total hit rate %.9f vs %.9f",
                       pm(&tier, 0, "kv_offload_total_hit_rate"), want);
    cr_expect_float_eq(pm(&tier, 0, "kv_offload_gpu_hit_rate") + pm(&tier, 0, "kv_offload_cpu_hit_rate"), want, 1e-12);
    cr_expect_gt(pm(&tier, 0, "kv_offload_cpu_hit_rate"), 0.1);
    cr_expect_gt(pm(&tier, 0, "kv_loads"), 0);
    /* The GPU cache alone (8192 blocks: 131k tokens, evicting) finds fewer. */
    double g = pm(&gpu, 0, "prefix_hit_rate");
    cr_expect_lt(g, want - 0.1, "GPU-only hit rate %g vs %g", g, want);
    cr_expect_float_eq(pm(&tier, 0, "kv_offload_gpu_hit_rate") >= pm(&tier, 0, "prefix_hit_rate") - 1e-12, 1, 0);
    /* Fewer prefill tokens: the mean TTFT falls. */
    cr_expect_lt(tsim_sys(&tier, "ttft")->mean, tsim_sys(&gpu, "ttft")->mean);
    cr_expect(tsim_bd_row(&tier, "breakdown.all", BD_KV_TRANSFER) != NULL, "the KV shares are reported");
    cr_expect_gt(tsim_bd(&tier, "breakdown.all", BD_KV_LOAD), 0);
    sim_result_free(&gpu);
    sim_result_free(&tier);
}

#define LINEAR_KEYS \
    "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\n" \
    "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"

/* Four prompts of 2048 tokens (4 ids of 512), 100 s apart: ids 1-4, 5-8, 1-4,
 * 1-4.  140 KV blocks hold one prompt (128 blocks) and its output: the second
 * evicts the first's blocks (to the tier), the third loads them back (2048
 * tokens), the fourth finds them on the GPU.  Prefill of a whole prompt: 5 +
 * 0.1 x 2048 = 209.8 ms; found whole, a hit skips whole blocks short of the last
 * token (vLLM): 2032 tokens, so 16 are prefilled: 5 + 1.6 = 6.6 ms. */
static const char *write_trace(void)
{
    static const char *path = "/tmp/test_offload_trace.jsonl";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    const char *ids[4] = { "1, 2, 3, 4", "5, 6, 7, 8", "1, 2, 3, 4", "1, 2, 3, 4" };
    for (int i = 0; i < 4; i++)
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 2048, \"output_length\": 10, \"hash_ids\": [%s]}\n",
                i * 100000, ids[i]);
    fclose(f);
    return path;
}

static void small_text(char *buf, size_t n, const char *path, const char *extra)
{
    snprintf(buf, n,
             "[sim]\nrequests = 4\nwarmup = 0\n[workload]\narrival = trace\ntrace = %s\ntarget = chat\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nprefix_cache = yes\nkv_blocks = 140\n"
             LINEAR_KEYS "%s\n", path, extra);
}

Test(offload_load, load_time_is_bytes_over_bandwidth)
{
    const char *path = write_trace();
    const struct { const char *keys; double gbs, lat; } v[] = {
        { "kv_offload = cpu\nkv_offload_cpu_gbs = 20\nkv_offload_cpu_latency_ms = 0.25", 20, 0.25 },
        { "kv_offload = ssd\nkv_offload_ssd_gbs = 5\nkv_offload_ssd_latency_ms = 0.1", 5, 0.1 },
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char t[2048];
        sim_result r;
        small_text(t, sizeof t, path, v[i].keys);
        run_text(t, &r);
        double load = 2048 * KV_BYTES_TOKEN / (v[i].gbs * 1e9) * 1e3 + v[i].lat;
        cr_assert_eq(tsim_n(&r, "served"), 4);
        cr_expect_float_eq(pm(&r, 0, "kv_loads"), 1, 1e-12, "variant %zu", i);
        cr_expect_float_eq(pm(&r, 0, "kv_load_ms"), load, 2e-6, "variant %zu: load %.9f vs %.9f", i,
                           pm(&r, 0, "kv_load_ms"), load);
        /* TTFTs: 209.8 (miss), 209.8 (miss), 6.6 + load (tier), 6.6 (GPU, free). */
        cr_expect_float_eq(tsim_sys(&r, "ttft")->max, 209.8, 1e-5);
        cr_expect_float_eq(tsim_sys(&r, "ttft")->mean, (2 * 209.8 + 6.6 + load + 6.6) / 4, 1e-5,
                           "variant %zu: ttft mean %.9f", i,
                           tsim_sys(&r, "ttft")->mean);
        cr_expect_float_eq(pm(&r, 0, "kv_offload_total_hit_rate"), (2 * 2048.0) / (4 * 2048.0), 1e-12);
        cr_expect_float_eq(pm(&r, 0, "kv_offload_gpu_hit_rate"), 0.25, 1e-12);
        sim_result_free(&r);
    }
    /* A CPU tier of one id (32 blocks of 2 MiB = 0.0625 GiB): of ids 1-4, evicted
     * oldest first, 1-3 pass on to the SSD and 4 stays; the load is the SSD's
     * 1536 tokens then the CPU's 512. */
    {
        char t[2048];
        sim_result r;
        small_text(t, sizeof t, path, "kv_offload = cpu,ssd\nkv_offload_cpu_gib = 0.0625\nkv_offload_ssd_gbs = 5\n"
                   "kv_offload_ssd_latency_ms = 0.1\nkv_offload_cpu_gbs = 25\nkv_offload_cpu_latency_ms = 0.01");
        run_text(t, &r);
        double load = 1536 * KV_BYTES_TOKEN / 5e9 * 1e3 + 0.1 + 512 * KV_BYTES_TOKEN / 25e9 * 1e3 + 0.01;
        cr_expect_float_eq(pm(&r, 0, "kv_load_ms"), load, 2e-6, "two tiers: load %.9f vs %.9f", pm(&r, 0, "kv_load_ms"), load);
        cr_expect_float_eq(pm(&r, 0, "kv_offload_ssd_hit_rate"), 1536.0 / (4 * 2048), 1e-12);
        cr_expect_float_eq(pm(&r, 0, "kv_offload_cpu_hit_rate"), 512.0 / (4 * 2048), 1e-12);
        cr_expect_float_eq(pm(&r, 0, "kv_offload_cpu_blocks"), 32, 1e-12);
        sim_result_free(&r);
    }
    /* Without a tier the third prompt is prefilled again. */
    char t[2048];
    sim_result r;
    small_text(t, sizeof t, path, "");
    run_text(t, &r);
    cr_expect_float_eq(tsim_sys(&r, "ttft")->mean, (3 * 209.8 + 6.6) / 4, 1e-5);
    cr_expect(!tsim_bd_row(&r, "breakdown.all", BD_KV_TRANSFER) && !tsim_bd_row(&r, "breakdown.all", BD_KV_LOAD),
              "no KV shares without KV time");
    sim_result_free(&r);
    unlink(path);
}

/* Two replicas, round robin: 1-4 -> 0, 5-8 -> 1, 5-8 -> 0, 1-4 -> 1.  A shared
 * tier is written through: the third finds 5-8 (computed on replica 1) and the
 * fourth 1-4 (from replica 0) there: 2 loads.  Private tiers hold only their
 * replica's evictions (1-4 on replica 0, asked for on replica 1): none. */
Test(offload_load, shared_tier_serves_other_replicas)
{
    const char *path = "/tmp/test_offload_shared.jsonl";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    const char *ids[4] = { "1, 2, 3, 4", "5, 6, 7, 8", "5, 6, 7, 8", "1, 2, 3, 4" };
    for (int i = 0; i < 4; i++)
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 2048, \"output_length\": 10, \"hash_ids\": [%s]}\n",
                i * 100000, ids[i]);
    fclose(f);
    for (int shared = 0; shared <= 1; shared++) {
        char t[2048], extra[256];
        snprintf(extra, sizeof extra, "replicas = 2\nrouting = round_robin\nkv_offload = cpu\nkv_offload_shared = %s",
                 shared ? "yes" : "no");
        sim_result r;
        small_text(t, sizeof t, path, extra);
        run_text(t, &r);
        cr_assert_eq(tsim_n(&r, "served"), 4);
        cr_expect_float_eq(pm(&r, 0, "kv_loads"), shared ? 2 : 0, 1e-12, "shared = %d: loads %g", shared,
                           pm(&r, 0, "kv_loads"));
        sim_result_free(&r);
    }
    unlink(path);
}

static void expect_error(const char *text, const char *want1, const char *want2)
{
    scenario sc;
    char err[1024];
    int rc = load_resolve(text, &sc, err, sizeof err);
    if (rc == 0) scenario_free(&sc);
    cr_assert_eq(rc, -1, "accepted:\n%s", text);
    cr_expect_not_null(strstr(err, want1), "message lacks '%s': %s", want1, err);
    cr_expect_not_null(strstr(err, want2), "message lacks '%s': %s", want2, err);
}

Test(offload_errors, bad_configurations)
{
    const char *head = "[sim]\nrequests = 10\n[workload]\nrate = 1\n[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    char t[1024];
    snprintf(t, sizeof t, "%skv_offload = cpu\n", head);
    expect_error(t, "kv_offload", "prefix_cache");
    snprintf(t, sizeof t, "%sprefix_cache = yes\nkv_offload = cpu\nkv_offload_ssd_gib = -1\n", head);
    expect_error(t, "kv_offload_ssd_gib", "");
    snprintf(t, sizeof t, "%sprefix_cache = yes\nkv_offload = ssd\nkv_offload_ssd_gib = 0.0001\n", head);
    expect_error(t, "kv_offload_ssd_gib", "no room");
    snprintf(t, sizeof t, "%sprefix_cache = yes\nkv_offload = tape\n", head);
    expect_error(t, "kv_offload", "cpu,ssd");
    snprintf(t, sizeof t, "%sprefix_cache = yes\nkv_offload = cpu\nkv_offload_cpu_gbs = 0\n", head);
    expect_error(t, "kv_offload_cpu_gbs", "");
    snprintf(t, sizeof t, "%sprefix_cache = yes\nkv_offload = cpu\nkv_offload_shared = maybe\n", head);
    expect_error(t, "kv_offload_shared", "");
}
