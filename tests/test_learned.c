/* test_learned.c -- the learned step model (calib/clearn.[ch], docs/learned.md):
 * physical bounds over the whole catalog, the hand-computed formula, the per-pool
 * fast path against the general one, the `engine` key and `latsim cost --engine`,
 * `cost = auto` resolving to it, and the training re-run against the committed
 * table (bit for bit). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clearn.h"
#include "core/catalog.h"
#include "llm/cost.h"
#include "tcli.h"

/* The built-in catalog, in memory. */
static sqlite3 *catalog(void)
{
    sqlite3 *db = NULL;
    char err[256];
    cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    cr_assert_eq(catalog_init(db, err, sizeof err), 0, "%s", err);
    return db;
}

/* Names of TABLE ("gpus" or "models") of DB into NAMES (at most MAX); returns how many. */
static int names_of(sqlite3 *db, const char *table, char names[][48], int max)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT name FROM %s ORDER BY name", table);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    int n = 0;
    while (n < max && sqlite3_step(st) == SQLITE_ROW) snprintf(names[n++], 48, "%s", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return n;
}

static cost_hw hw_of(sqlite3 *db, const char *gpu, const char *model, int tp, const char *weights)
{
    cost_hw h = { 0 };
    char err[256];
    cr_assert_eq(catalog_gpu(db, gpu, &h.gpu, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_model(db, model, &h.model, err, sizeof err), 0, "%s", err);
    h.have_hw = 1;
    h.tp = tp;
    h.kv_bytes = 2;
    cr_assert_eq(cost_hw_set_weights(&h, weights), 0);
    return h;
}

/* No learned step is faster than the hardware floor (FLOPs at the dtype's dense
 * peak, weight bytes at peak bandwidth), for every catalog GPU and model, under
 * every engine, at batch 1..512 and context 128..128k; and every learned
 * efficiency of every class is below 1. */
Test(learned, hardware_floor, .timeout = 120)
{
    sqlite3 *db = catalog();
    char gpus[64][48], models[64][48];
    int ng = names_of(db, "gpus", gpus, 64), nm = names_of(db, "models", models, 64);
    cr_assert_geq(ng, 16);
    cr_assert_geq(nm, 10);
    static const char *const engines[] = { "vllm", "sglang", "trtllm", "generic" };
    static const int batch[] = { 1, 8, 64, 512 };
    static const int ctx[] = { 128, 1024, 16384, 131072 };
    long checked = 0;
    for (int g = 0; g < ng; g++)
        for (int e = 0; e < 4; e++) {
            gpu_spec gs;
            char err[256];
            cr_assert_eq(catalog_gpu(db, gpus[g], &gs, err, sizeof err), 0);
            clearn_prior p;
            clearn_prior_for(NULL, &gs, engines[e], &p);
            const double eff[] = { p.c.compute_eff, p.c.memory_eff, p.c.overlap, p.c.link_eff, p.c.attn_eff,
                                   p.c.lowp_eff, p.c.kv_eff, p.c.gqa_reuse };
            for (size_t k = 0; k < sizeof eff / sizeof eff[0]; k++)
                cr_assert(eff[k] > 0 && eff[k] < 1, "%s %s: efficiency %zu = %g", gpus[g], engines[e], k, eff[k]);
            cr_assert(isfinite(p.mape) && p.mape >= 0, "%s %s: mape %g", gpus[g], engines[e], p.mape);
            for (int m = 0; m < nm; m++) {
                cost_hw h = hw_of(db, gpus[g], models[m], 1, "bf16");
                for (int b = 0; b < 4; b++)
                    for (int c = 0; c < 4; c++) {
                        cost_step d = { .decode_seqs = batch[b], .kv_tokens = (int64_t) batch[b] * ctx[c] };
                        cost_step f = { .prefill_tokens = ctx[c] < 8192 ? (int64_t) batch[b] * ctx[c] / (b + 1) : ctx[c],
                                        .prefill_seqs = 1 };
                        f.prefill_pairs = (double) f.prefill_tokens * (f.prefill_tokens + 1) / 2;
                        const cost_step *st[] = { &d, &f };
                        for (int k = 0; k < 2; k++) {
                            double t = clearn_step_ms(&h, &p.c, st[k], NULL), fl = clearn_floor_ms(&h, st[k]);
                            cr_assert(t >= fl && fl > 0, "%s %s %s batch %d ctx %d: %g ms under the floor %g ms",
                                      gpus[g], models[m], engines[e], batch[b], ctx[c], t, fl);
                            checked++;
                        }
                    }
            }
        }
    cr_assert_geq(checked, 16L * 4 * 10 * 32);
    sqlite3_close(db);
}

/* The formula of clearn.h by hand for llama-3-8b on an H100 at tp 2 (a plain
 * replica): a decode step and a prefill step. */
Test(learned, hand_computed)
{
    sqlite3 *db = catalog();
    cost_hw h = hw_of(db, "h100", "llama-3-8b", 2, "bf16");
    sqlite3_close(db);
    clearn_prior p;
    clearn_prior_for(NULL, &h.gpu, "vllm", &p);
    const clearn_coef *c = &p.c;
    const model_spec *m = &h.model;
    /* 32 decoding sequences at 1000 tokens of context each. */
    cost_step s = { .decode_seqs = 32, .kv_tokens = 32000 };
    double peak = 989e12 * c->compute_eff, bw = 3350e9 * c->memory_eff;
    double T = 32, tc = (2 * m->params * T * (T + c->t_half) / T + 4.0 * 32 * 32 * 128 * 32000 / c->attn_eff) / 2 / peak;
    double kvb = 2.0 * 32 * (8 / 2) * 128 * 2;   /* K and V of this GPU's 4 KV heads, all layers, bytes */
    double tm = (m->params * 2 / 2 + kvb * T) / bw + kvb * 32000 * pow(32.0 / 8, 1 - c->gqa_reuse) / (bw * c->kv_eff);
    double gpu = fmax(tc, tm) + c->overlap * fmin(tc, tm);
    double ar = 2 * 32 * (c->ar_lat_us * 1e-6 + 2.0 * 1 / 2 * T * 4096 * 2 / (900e9 * c->link_eff));
    double want = (gpu + ar + 32 * c->graph_us * 1e-6) * 1e3 + c->fixed_ms + c->seq_us * 1e-3 * 32;
    double got = clearn_step_ms(&h, c, &s, NULL);
    cr_assert_float_eq(got, want, 1e-9 * want, "decode %.17g vs %.17g", got, want);
    /* One prompt of 2048 tokens: no graph, launch_us. */
    cost_step f = { .prefill_tokens = 2048, .prefill_pairs = 2048.0 * 2049 / 2, .prefill_seqs = 1 };
    T = 2048;
    tc = (2 * m->params * (T + c->t_half) + 4.0 * 32 * 32 * 128 * f.prefill_pairs / c->attn_eff) / 2 / peak;
    tm = (m->params * 2 / 2 + kvb * T) / bw;
    gpu = fmax(tc, tm) + c->overlap * fmin(tc, tm);
    ar = 2 * 32 * (c->ar_lat_us * 1e-6 + T * 4096 * 2 / (900e9 * c->link_eff));
    want = (gpu + ar + 32 * c->launch_us * 1e-6) * 1e3 + c->fixed_ms + c->seq_us * 1e-3;
    got = clearn_step_ms(&h, c, &f, NULL);
    cr_assert_float_eq(got, want, 1e-9 * want, "prefill %.17g vs %.17g", got, want);
}

/* The `learned` row's per-pool constants (the hot path) give the general
 * evaluation's step times, for mixed, speculative and large steps. */
Test(learned, fast_path_matches)
{
    cr_assert_eq(clearn_register(), 0);
    sqlite3 *db = catalog();
    cost_model m = { 0 };
    m.hw = hw_of(db, "a100", "llama-2-7b", 1, "bf16");
    snprintf(m.hw.engine, sizeof m.hw.engine, "trtllm");
    sqlite3_close(db);
    cr_assert_eq(cost_init(&m, "learned", NULL), 0);
    const clearn_prior *p = clearn_model_prior(&m);
    cost_step st[] = {
        { .decode_seqs = 1, .kv_tokens = 100 },
        { .decode_seqs = 600, .kv_tokens = 600000 },
        { .prefill_tokens = 512, .prefill_pairs = 512.0 * 513 / 2, .prefill_seqs = 1, .decode_seqs = 40, .kv_tokens = 40000 },
        { .decode_seqs = 8, .decode_tokens_per_seq = 5, .kv_tokens = 8000 },
    };
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        clearn_parts q;
        double a = cost_step_ms(&m, &st[i]), b = clearn_step_ms(&m.hw, &p->c, &st[i], &q);
        cr_assert(a > 0 && fabs(a - b) <= 1e-12 * b, "step %zu: %.17g vs %.17g", i, a, b);
        /* The overhead hook's fast path: the launch and host parts of the general one. */
        double o = cost_step_overhead_ms(&m, &st[i]);
        cr_assert(o > 0 && fabs(o - (q.launch + q.cpu)) <= 1e-12 * o, "step %zu: overhead %.17g vs %.17g", i, o,
                  q.launch + q.cpu);
    }
    cost_info ci;
    cost_describe(&m, &ci);
    cr_assert_str_eq(ci.kind, "learned");
    cr_assert_str_eq(ci.source, "learned");
    cr_assert(isfinite(ci.mape));
    cr_assert(strstr(ci.coeffs, "engine=trtllm") != NULL, "%s", ci.coeffs);
    cost_free(&m);
}

/* A catalog GPU with no measurement takes its vendor's efficiencies, marked
 * extrapolated; a measured one is not; sglang (no data) is the cross-engine mean. */
Test(learned, extrapolated_classes)
{
    sqlite3 *db = catalog();
    gpu_spec a100, mi325, b200;
    char err[256];
    cr_assert_eq(catalog_gpu(db, "a100", &a100, err, sizeof err), 0);
    cr_assert_eq(catalog_gpu(db, "mi325x", &mi325, err, sizeof err), 0);
    cr_assert_eq(catalog_gpu(db, "b200", &b200, err, sizeof err), 0);
    sqlite3_close(db);
    clearn_prior p;
    clearn_prior_for(NULL, &a100, "vllm", &p);
    cr_assert_eq(p.extrapolated, 0);
    cr_assert(p.gpu_measured && p.engine_measured);
    clearn_prior_for(NULL, &mi325, "vllm", &p);
    cr_assert_eq(p.extrapolated, 1);
    cr_assert(strstr(p.note, "mi325x") != NULL, "%s", p.note);
    cr_assert_str_eq(clearn_vendor(&mi325), "amd");
    cr_assert_str_eq(clearn_link_class(&mi325), "if");
    clearn_prior_for(NULL, &b200, "sglang", &p);
    cr_assert_eq(p.extrapolated, 1);
    cr_assert_eq(p.engine_measured, 0);
    /* generic is the cross-engine mean: no engine offset at all. */
    clearn_prior q;
    clearn_prior_for(NULL, &a100, "generic", &q);
    clearn_prior_for(NULL, &a100, "sglang", &p);
    for (int j = 0; j < LP_N; j++) cr_assert_eq(p.th[j], q.th[j]);
}

/* `cost = learned` by name; `auto` without a calibrated model is the learned model
 * (docs/learned.md: its held-out errors are below the roofline's). */
Test(learned_cli, cost_learned_by_name_auto_is_learned)
{
    tcli_setup("/tmp/latsim_learn_", "x.db");
    result r = run(60, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--decode", "16", "--context",
                   "1000", "--json", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"kind\": \"learned\""), "auto without calibration is the learned model: %s", r.out);
    result_free(&r);
    r = run(60, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--decode", "16", "--context",
            "1000", "--json", "--cost", "learned", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"kind\": \"learned\"") && strstr(r.out, "\"source\": \"learned"), "%s", r.out);
    double vllm = strtod(strstr(r.out, "\"step_ms\": ") + 11, NULL);
    result_free(&r);
    r = run(60, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--decode", "16", "--context", "1000",
            "--json", "--cost", "learned", "--engine", "trtllm", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    double trt = strtod(strstr(r.out, "\"step_ms\": ") + 11, NULL);
    cr_assert(vllm > 0 && trt > 0 && vllm != trt, "vllm %g trtllm %g", vllm, trt);
    result_free(&r);
    r = run(60, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--decode", "16", "--context", "1000",
            "--cost", "roofline", "--json", "--db", db, NULL);
    cr_assert(strstr(r.out, "\"kind\": \"roofline\"") != NULL, "%s", r.out);
    result_free(&r);
    r = run(60, "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--decode", "1", "--context", "10",
            "--engine", "tgi", "--db", db, NULL);
    expect_one_line(&r, 2, "--engine: unknown engine 'tgi'", "latsim: ");
    result_free(&r);
    tcli_teardown();
}

/* A pool under `cost = auto` that gives the roofline's own keys (its efficiencies,
 * step_overhead_ms, ...) calibrated that roofline by hand: auto keeps it. */
Test(learned_cli, auto_with_roofline_keys_is_that_roofline)
{
    tcli_setup("/tmp/latsim_learn_", "x.db");
    char a[256], b[256];
    const char *base = "[sim]\nrequests = 40\n[workload]\nrate = 1\nprompt_tokens = 200\noutput_tokens = 20\n"
                       "[pool p]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    char text[512];
    write_file("a.ini", base, a, sizeof a);
    snprintf(text, sizeof text, "%smemory_eff = 0.7\n", base);
    write_file("b.ini", text, b, sizeof b);
    result r = run(60, "run", a, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"learned\"") != NULL, "%.600s", r.out);
    result_free(&r);
    r = run(60, "run", b, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"cost_model\": {\"kind\": \"roofline\"") != NULL, "%.600s", r.out);
    cr_expect(strstr(r.out, "memory_eff=0.7") != NULL, "the pool's efficiency is used: %.800s", r.out);
    result_free(&r);
    tcli_teardown();
}

/* `engine` on a pool: an unknown one is one line naming the file, line and key. */
Test(learned_cli, engine_key)
{
    tcli_setup("/tmp/latsim_learn_", "x.db");
    char path[256];
    write_file("e.ini", "[sim]\nrequests = 50\n[workload]\nrate = 2\nprompt_tokens = 200\noutput_tokens = 20\n"
                        "[pool p]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nengine = tgi\n", path, sizeof path);
    result r = run(60, "run", path, "--no-store", NULL);
    expect_one_line(&r, 2, "engine", "latsim: ");
    cr_expect(strstr(r.err, "e.ini:11") != NULL, "%s", r.err);
    result_free(&r);
    write_file("ok.ini", "[sim]\nrequests = 50\n[workload]\nrate = 2\nprompt_tokens = 200\noutput_tokens = 20\n"
                         "[pool p]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nengine = trtllm\ncost = learned\n", path, sizeof path);
    r = run(60, "run", path, "--no-store", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"learned\"") != NULL, "%.400s", r.out);
    result_free(&r);
    tcli_teardown();
}

/* `latsim calib train` regenerates the committed table bit for bit. */
Test(learned_cli, train_reproduces_table, .timeout = 1200)
{
    tcli_setup("/tmp/latsim_learn_", NULL);
    char out[256];
    snprintf(out, sizeof out, "%s/coef.c", dir);
    result r = run(1100, "calib", "train", "--corpus", "tests/data/corpus", "--out", out, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_assert(strstr(r.out, "leave-one-GPU-out") != NULL, "%s", r.out);
    size_t n;
    char *want = slurp_or_fail("calib/clearn_coef.c", &n);
    cr_assert(same_bytes(out, want, n), "calib/clearn_coef.c differs from what latsim calib train writes now: "
              "retrain (docs/learned.md)");
    free(want);
    result_free(&r);
    tcli_teardown();
}
