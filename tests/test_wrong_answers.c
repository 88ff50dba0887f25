/* test_wrong_answers.c -- Criterion tests of the third hardening issue's silent
 * wrong answers (issue 30), each now refused in one line naming the file, line
 * or key, exit 2, nothing stored:
 *   - an explore axis given twice in any spelling ("pool.cpu.servers" and
 *     "pool cpu.servers");
 *   - PD topologies that cannot decode: a prefill pool whose next ends at a
 *     generic pool (directly or through a router), a lone role = decode pool,
 *     prefill and decode pools of different models;
 *   - power_curve points above 1e5 W (the power importer's bound);
 *   - nccl-tests tables whose sizes repeat or go back, or whose bus bandwidth
 *     beats the GPU's datasheet link by more than 2x;
 *   - plan --peak-minutes windows too short to measure (fewer than 100
 *     requests, or shorter than 10 x the SLO's largest latency limit).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h3wrong_", "runs.db"); }

TestSuite(wrong_answers, .init = setup, .fini = tcli_teardown);

static const char *GEN =
    "[sim]\nrequests = 200\nwarmup = 20\n[workload]\nrate = 10\n[pool cpu]\nkind = generic\nservers = 2\n"
    "service_ms = exp(mean=50)\n";

/* expect_one_line, and no database. */
static void refused(result *r, const char *want, const char *what)
{
    expect_one_line(r, 2, want, what);
    cr_expect_neq(access(db, F_OK), 0, "%s: the database was created", what);
    result_free(r);
}

Test(wrong_answers, explore_axis_twice)
{
    char g[256], text[1024];
    static const char *const pairs[][2] = {
        { "pool.cpu.servers = 1,2", "pool cpu.servers = 3,4" },
        { "pool cpu.servers = 1,2", "pool.cpu.servers = 3" },
        { "workload.rate = 5,6", "workload.rate = 7" },
        { "pool.cpu.service_ms = const(1)", "pool cpu.service_ms = const(2), const(3)" },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        snprintf(text, sizeof text, "%s[explore]\n%s\nseeds = 1\n%s\n", GEN, pairs[i][0], pairs[i][1]);
        write_file("g.ini", text, g, sizeof g);
        result r = run_db(30, "explore", g, NULL);
        refused(&r, "g.ini:13: [explore]", pairs[i][1]);
    }
    /* The message names both lines and the key; two different keys of one section run. */
    snprintf(text, sizeof text, "%s[explore]\npool.cpu.servers = 1,2\npool cpu.servers = 3,4\n", GEN);
    write_file("g.ini", text, g, sizeof g);
    result r = run_db(30, "explore", g, NULL);
    refused(&r, "g.ini:12: [explore] pool cpu.servers: axis given twice: line 11's pool.cpu.servers is the same key [pool cpu] servers",
            "message");
    snprintf(text, sizeof text, "%s[explore]\npool.cpu.servers = 2,3\npool cpu.service_ms = const(10)\n", GEN);
    write_file("g.ini", text, g, sizeof g);
    r = run_db(120, "explore", g, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* The prefill pool of a PD pair with NEXT (its text after "next = "), and
 * EXTRA sections. */
static void pd(const char *name, const char *prefill_extra, const char *extra, char *path, size_t n)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 100\nwarmup = 10\n[workload]\nrate = 2\nprompt_tokens = const(200)\noutput_tokens = const(10)\n"
             "target = p\n[pool p]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nrole = prefill\nscheduler = chunked\n%s%s",
             prefill_extra, extra);
    write_file(name, text, path, n);
}

Test(wrong_answers, pd_topologies)
{
    char p[256];
    static const char *DEC = "[pool d]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nrole = decode\nscheduler = chunked\n";
    /* Next is a generic pool. */
    pd("a.ini", "next = g\n", "[pool g]\nkind = generic\nservice_ms = const(1)\n", p, sizeof p);
    result r = run_scenario(30, p, NULL);
    refused(&r, "a.ini:15: [pool p] next: a role = prefill pool's requests must go on to a role = decode pool, but they end "
                "at [pool g] (kind = generic)", "generic next");
    /* Through a router, one branch generic. */
    char extra[1024];
    snprintf(extra, sizeof extra, "[pool r]\nkind = router\nnext = d, g\n%s[pool g]\nkind = generic\nservice_ms = const(1)\n", DEC);
    pd("b.ini", "next = r\n", extra, p, sizeof p);
    r = run_scenario(30, p, NULL);
    refused(&r, "end at [pool g] (kind = generic)", "router to generic");
    /* Next is another prefill or a role = both pool. */
    pd("c.ini", "next = q\n", "[pool q]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nscheduler = chunked\n", p, sizeof p);
    r = run_scenario(30, p, NULL);
    refused(&r, "they reach [pool q] (role = both), which would prefill them again", "both next");
    /* Different models. */
    pd("d.ini", "next = d\n", "[pool d]\nkind = llm\nmodel = qwen3-8b\ngpu = h100\nrole = decode\nscheduler = chunked\n", p, sizeof p);
    r = run_scenario(30, p, NULL);
    refused(&r, "[pool d] model: qwen3-8b, but its prefill pool [pool p] serves llama-3.1-8b", "models");
    /* A lone decode pool (the target itself), and one no pool leads to. */
    write_file("e.ini", "[sim]\nrequests = 100\n[workload]\nrate = 2\nprompt_tokens = const(200)\noutput_tokens = const(10)\n"
               "[pool d]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nrole = decode\nscheduler = chunked\n", p, sizeof p);
    r = run_scenario(30, p, NULL);
    refused(&r, "[pool d] role: decode: no LLM pool's next leads here", "lone decode");
    snprintf(extra, sizeof extra, "%s[pool d2]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\nrole = decode\nscheduler = chunked\n", DEC);
    pd("f.ini", "next = d\n", extra, p, sizeof p);
    r = run_scenario(30, p, NULL);
    refused(&r, "[pool d2] role: decode: no LLM pool's next leads here", "unreached decode");
    /* The valid shapes still run: prefill -> decode, and prefill -> router -> two decodes. */
    pd("ok1.ini", "next = d\n", DEC, p, sizeof p);
    r = run_scenario(60, p, "--no-store", NULL);
    cr_expect(r.rc == 0 || r.rc == 3, "prefill -> decode: %s", r.err);
    result_free(&r);
    snprintf(extra, sizeof extra, "[pool r]\nkind = router\nnext = d, d2\n%s[pool d2]\nkind = llm\nmodel = llama-3.1-8b\n"
             "gpu = h100\nrole = decode\nscheduler = chunked\n", DEC);
    pd("ok2.ini", "next = r\n", extra, p, sizeof p);
    r = run_scenario(60, p, "--no-store", NULL);
    cr_expect(r.rc == 0 || r.rc == 3, "prefill -> router -> decodes: %s", r.err);
    result_free(&r);
}

Test(wrong_answers, power_curve_bound)
{
    char p[256];
    static const char *const bad[] = { "0:1e308, 1:1e308", "0:90, 1:1e5001", "0:90, 1:100001", "0:1e6" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024], set[128];
        snprintf(text, sizeof text, "[sim]\nrequests = 50\n[workload]\nrate = 1\nprompt_tokens = const(100)\n"
                 "output_tokens = const(10)\n[pool c]\nkind = llm\nmodel = llama-3.1-8b\ngpu = h100\n");
        write_file("p.ini", text, p, sizeof p);
        snprintf(set, sizeof set, "pool c.power_curve=%s", bad[i]);
        result r = run_scenario(30, p, "--set", set, NULL);
        refused(&r, "[pool c] power_curve: watts", bad[i]);
    }
    /* 1e5 W itself is accepted (a bound, not a gap). */
    result r = run_scenario(60, p, "--set", "pool c.power_curve=0:100, 1:1e5", "--no-store", NULL);
    cr_expect(r.rc == 0 || r.rc == 3, "%s", r.err);
    result_free(&r);
    /* The measured samples' file: the same bound. */
    char csv[256];
    write_file("w.csv", "utilization,watts\n0,90\n1,2e5\n", csv, sizeof csv);
    char set[400];
    snprintf(set, sizeof set, "pool c.power_curve=csv(%s)", csv);
    r = run_scenario(30, p, "--set", set, NULL);
    refused(&r, "column watts: '2e5' is not a power from 0 to 100000 W", "csv");
}

/* An nccl-tests table with the row of SIZE duplicated (DUP) or its time set
 * to 0.001 us (FAST). */
static void nccl_variant(const char *name, double size, int dup, int fast, char *path, size_t n)
{
    size_t len;
    char *src = slurp_or_fail("tests/data/nccl/all_reduce_perf_h100x8.txt", &len);
    char *out = malloc(2 * len + 1024);
    size_t o = 0;
    for (char *line = strtok(src, "\n"); line; line = strtok(NULL, "\n")) {
        double s = 0;
        int data = line[0] != '#' && sscanf(line, "%lf", &s) == 1;
        if (data && s == size && fast) {
            char f[16][64];
            int k = sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s", f[0], f[1], f[2], f[3],
                           f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12]);
            o += (size_t) sprintf(out + o, "%s %s %s %s %s 0.001", f[0], f[1], f[2], f[3], f[4]);
            for (int i = 6; i < k; i++) o += (size_t) sprintf(out + o, " %s", f[i]);
            o += (size_t) sprintf(out + o, "\n");
            continue;
        }
        o += (size_t) sprintf(out + o, "%s\n", line);
        if (data && s == size && dup) o += (size_t) sprintf(out + o, "%s\n", line);
    }
    out[o] = '\0';
    write_file(name, out, path, n);
    free(out);
    free(src);
}

Test(wrong_answers, nccl_curves)
{
    char p[256];
    static const double sizes[] = { 8, 1048576, 1073741824 };
    for (size_t i = 0; i < 3; i++) {
        nccl_variant("dup.txt", sizes[i], 1, 0, p, sizeof p);
        result r = run_db(30, "calib", "import", "nccl", p, "--gpu", "h100", NULL);
        refused(&r, "the sizes of one collective's table must increase", "dup");
    }
    /* Fast rows: only those beating 2 x 900 GB/s are refused (a small message at 0.001 us is 16 GB/s). */
    nccl_variant("fast.txt", 1048576, 0, 1, p, sizeof p);
    result r = run_db(30, "calib", "import", "nccl", p, "--gpu", "h100", NULL);
    refused(&r, "bus bandwidth of 1.835e+06 GB/s, more than 2 x the h100's 900 GB/s link", "fast");
    nccl_variant("fast2.txt", 1073741824, 0, 1, p, sizeof p);
    r = run_db(30, "calib", "import", "nccl", p, "--gpu", "h100", NULL);
    refused(&r, "more than 2 x the h100's", "fast 1 GB");
    /* The table as measured imports. */
    r = run_db(30, "calib", "import", "nccl", "tests/data/nccl/all_reduce_perf_h100x8.txt", "--gpu", "h100", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

Test(wrong_answers, plan_peak_too_short)
{
    /* 2 req/s for 10 minutes, then a burst of 300 requests within 1 s. */
    char csv[40000] = "TIMESTAMP\n", t[256], s[256];
    size_t len = strlen(csv);
    double at = 0;
    for (int i = 0; i < 1200; i++) len += (size_t) sprintf(csv + len, "%.4f\n", at += 0.5);
    for (int i = 0; i < 300; i++) len += (size_t) sprintf(csv + len, "%.4f\n", at += 1.0 / 300);
    write_file("t.csv", csv, t, sizeof t);
    write_file("p.ini", "[sim]\nrequests = 2000\nseed = 1\n[workload]\nrate = 2\n[pool cpu]\nservice_ms = exp(mean=200)\n"
               "[slo]\ne2e_p99_ms = 3000\n", s, sizeof s);
    static const char *const mins[] = { "0.001", "0.01", "0.2" };
    for (size_t i = 0; i < 3; i++) {
        result r = run_db(60, "plan", s, "--search", "pool cpu.servers=1:64", "--trace", t, "--set", "workload.time_format=seconds",
                          "--peak-minutes", mins[i], NULL);
        /* 0.001 min holds 18 requests; 0.01 min (0.6 s) 180 of the burst, 0.2 min (12 s) all 300 of
         * it and 24 more, but both last less than 30 s. */
        refused(&r, i < 1 ? "a peak window needs at least 100" : "less than 10 x the SLO's largest latency limit (3000 ms)", mins[i]);
    }
    result r = run_db(60, "plan", s, "--search", "pool cpu.servers=1:64", "--peak-minutes", "1e9", NULL);
    refused(&r, "--peak-minutes: expected minutes above 0 and at most 1e7", "1e9");
}

/* tests/data/hf/llama-3.1-8b.json with FIELD (a JSON member, "" none) added at
 * its top level, as dir/NAME. */
static void hf_variant(const char *name, const char *field, char *path, size_t n)
{
    size_t len;
    char *src = slurp_or_fail("tests/data/hf/llama-3.1-8b.json", &len);
    char *brace = strrchr(src, '}');
    cr_assert(brace);
    *brace = '\0';
    size_t m = len + strlen(field) + 8;
    char *out = malloc(m);
    snprintf(out, m, "%s%s%s}\n", src, field[0] ? ", " : "", field);
    write_file(name, out, path, n);
    free(out);
    free(src);
}

/* catalog add --hf: quantization_config sets the weights' precision, or is
 * refused when latsim prices no such scheme or width. */
Test(wrong_answers, hf_quantization)
{
    static const struct { const char *q, *want; } ok[] = {
        { "\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": "
          "{\"weights\": {\"num_bits\": 4, \"type\": \"int\"}}}}", "int4" },
        { "\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": "
          "{\"weights\": {\"num_bits\": 8, \"type\": \"int\"}}}}", "int8" },
        { "\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": "
          "{\"weights\": {\"num_bits\": 8, \"type\": \"float\"}}}}", "fp8" },
        { "\"quantization_config\": {\"quant_method\": \"bitsandbytes\", \"load_in_4bit\": true}", "int4" },
        { "\"quantization_config\": {\"quant_method\": \"bitsandbytes\", \"load_in_8bit\": true}", "int8" },
        { "\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 4}", "int4" },
        { "\"quantization_config\": {\"quant_method\": \"fp8\"}", "fp8" },
        { "", "bf16" },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char p[256], name[32], sql[160];
        snprintf(name, sizeof name, "m%zu", i);
        hf_variant("q.json", ok[i].q, p, sizeof p);
        result r = run_db(30, "catalog", "add", "--hf", p, "--name", name, NULL);
        cr_expect_eq(r.rc, 0, "%s: %s", ok[i].q, r.err);
        result_free(&r);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM models WHERE name = '%s' AND weights = '%s'", name, ok[i].want);
        cr_expect_eq(db_count(db, sql), 1, "%s: not stored as %s", ok[i].q, ok[i].want);
    }
    size_t n;
    char *before = slurp_or_fail(db, &n);
    static const struct { const char *q, *want; } bad[] = {
        { "\"quantization_config\": {\"quant_method\": \"gptq\", \"bits\": 3}", "gptq with bits = 3" },
        { "\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 2}", "awq with bits = 2" },
        { "\"quantization_config\": {\"quant_method\": \"hqq\"}", "quant_method 'hqq'" },
        { "\"quantization_config\": {\"quant_method\": \"bitsandbytes\"}", "bitsandbytes without load_in_4bit" },
        { "\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"g\": "
          "{\"weights\": {\"num_bits\": 2, \"type\": \"int\"}}}}", "compressed-tensors int weights of 2 bits" },
        { "\"quantization_config\": {\"quant_method\": \"compressed-tensors\"}", "without config_groups" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char p[256];
        hf_variant("bad.json", bad[i].q, p, sizeof p);
        result r = run_db(30, "catalog", "add", "--hf", p, "--name", "bad", NULL);
        expect_one_line(&r, 2, bad[i].want, bad[i].q);
        cr_expect(strstr(r.err, "bad.json: field quantization_config") != NULL, "%s", r.err);
        result_free(&r);
    }
    /* --weights overrides an unknown scheme. */
    char p[256];
    hf_variant("bad.json", bad[0].q, p, sizeof p);
    cr_expect(same_bytes(db, before, n), "a refused config changed the database");
    free(before);
    result r = run_db(30, "catalog", "add", "--hf", p, "--name", "w3", "--weights", "int4", NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* One set of geometry limits for --hf and [model]; params checked against the geometry. */
Test(wrong_answers, model_limits_and_params)
{
    static const struct { const char *f, *want; } hf[] = {
        { "\"num_hidden_layers\": 1000000000", "layers = 1000000000 is beyond the 100000" },
        { "\"head_dim\": 1000000000", "head_dim = 1000000000 is beyond the 100000" },
        { "\"hidden_size\": 20000000", "hidden = 20000000 is beyond the 10000000" },
        { "\"max_position_embeddings\": 1000000000", "context = 1000000000 is beyond the 100000000" },
    };
    for (size_t i = 0; i < sizeof hf / sizeof hf[0]; i++) {
        char p[256];
        hf_variant("big.json", hf[i].f, p, sizeof p);
        result r = run_db(30, "catalog", "add", "--hf", p, "--name", "big", NULL);
        expect_one_line(&r, 2, hf[i].want, hf[i].f);
        cr_expect_neq(access(db, F_OK), 0);
        result_free(&r);
    }
    /* [model] params far from its geometry (32 x 4096: about 7e9). */
    static const char *const params[] = { "1", "1e6", "5e8", "1e12" };
    for (size_t i = 0; i < 4; i++) {
        char text[1024], p[256];
        snprintf(text, sizeof text, "[model m]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nintermediate = 14336\n"
                 "vocab = 128256\nparams = %s\n", params[i]);
        write_file("m.ini", text, p, sizeof p);
        result r = run_db(30, "catalog", "add", p, NULL);
        expect_one_line(&r, 2, "does not match its geometry", params[i]);
        cr_expect(strstr(r.err, "10 x either way is accepted") != NULL, "%s", r.err);
        result_free(&r);
    }
    char text[1024], p[256];
    snprintf(text, sizeof text, "[model m]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nintermediate = 14336\n"
             "vocab = 128256\nparams = 8.03e9\n");
    write_file("m.ini", text, p, sizeof p);
    result r = run_db(30, "catalog", "add", p, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}
