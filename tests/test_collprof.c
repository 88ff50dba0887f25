/* test_collprof.c -- measured all-to-all and stage-to-stage send/recv in the
 * general roofline (issue 20): expert-parallel dispatch and combine priced by an
 * imported nccl-tests all-to-all, pipeline transfers by an imported send/recv.
 *
 * tests/data/vidur_h100_dgx_send_recv.csv is Vidur's real measurement
 * (../shared/data/profiles/vidur/network/h100_dgx/send_recv.csv, unchanged):
 * 994 sizes between two H100s of one DGX node (devices_per_node 2) and the same
 * between two nodes (devices_per_node 1).  tests/data/nccl/
 * alltoall_perf_h100x4_synthetic.txt is NOT a measurement: nccl-tests' shape
 * with made-up times (9 us + size / 120 GB/s), for the mechanics only. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calib.h"
#include "core/catalog.h"
#include "llm/cost.h"
#include "store/store.h"
#include "tcli.h"
#include "tsim.h"

#define SR_FILE "tests/data/vidur_h100_dgx_send_recv.csv"
#define A2A_FILE "tests/data/nccl/alltoall_perf_h100x4_synthetic.txt"

void cnccl_register(void);   /* calib/cnccl.c: the loader of stored collective profiles */

static void setup(void)
{
    tcli_setup("/tmp/latsim_collp_", "c.db");
    cnccl_register();
}

TestSuite(collprof, .init = setup, .fini = tcli_teardown);

/* A Vidur directory in the test's directory holding only the H100 DGX send/recv
 * profile (compute/ empty); its path in BUF. */
static void vidur_dir(char *buf, size_t n)
{
    char p[512];
    snprintf(buf, n, "%s/v", dir);
    snprintf(p, sizeof p, "%s/compute", buf);
    cr_assert_eq(mkdir(buf, 0755) | mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/network", buf);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/network/h100_dgx", buf);
    cr_assert_eq(mkdir(p, 0755), 0);
    size_t len;
    char *text = slurp_or_fail(SR_FILE, &len);
    snprintf(p, sizeof p, "%s/network/h100_dgx/send_recv.csv", buf);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    free(text);
}

/* The measured time (s) of a send/recv of BYTES from the CSV itself: the
 * medians of devices_per_node DPN, linear in log(size) between the two sizes
 * around BYTES (read here, not through the importer or the loader); of a size
 * measured twice, the later row (as the loader: the latest stored). */
static double csv_time(int dpn, double bytes)
{
    FILE *f = fopen(SR_FILE, "r");
    cr_assert(f);
    char line[1024];
    cr_assert(fgets(line, sizeof line, f));   /* header: ,min,max,mean,median,std,rank,num_workers,size,collective,dpn,max */
    double lo_b = 0, lo_t = 0, hi_b = INFINITY, hi_t = 0;
    while (fgets(line, sizeof line, f)) {
        double v[12] = { 0 };   /* the fields as numbers (the collective's name: 0) */
        char *p = line;
        for (int i = 0; i < 12 && p; i++) {
            v[i] = strtod(p, NULL);
            p = strchr(p, ',');
            if (p) p++;
        }
        if ((int) v[10] != dpn) continue;
        double size = v[8], med = v[4] * 1e-3;
        if (size <= bytes && size >= lo_b) { lo_b = size; lo_t = med; }
        if (size >= bytes && size <= hi_b) { hi_b = size; hi_t = med; }
    }
    fclose(f);
    cr_assert(lo_b > 0 && isfinite(hi_b), "%g B inside the measured sizes", bytes);
    if (hi_b == lo_b) return lo_t;
    return lo_t + (log(bytes) - log(lo_b)) / (log(hi_b) - log(lo_b)) * (hi_t - lo_t);
}

/* A roofline on MODEL and GPU (catalog, bf16) with tp, pp, ep. */
static void roofline_on(cost_model *m, const char *model, int tp, int pp, int ep)
{
    memset(m, 0, sizeof *m);
    cr_assert_eq(cost_init(m, "roofline", &cost_roofline_defaults), 0);
    m->hw.have_hw = 1;
    tsim_catalog("h100", model, &m->hw.gpu, &m->hw.model);
    m->hw.tp = tp;
    m->hw.pp = pp;
    m->hw.ep = ep;
    m->hw.kv_bytes = 2;
    cr_assert_eq(cost_hw_set_weights(&m->hw, "bf16"), 0);
}

static sqlite3 *open_db(void)
{
    sqlite3 *h = NULL;
    char err[256];
    cr_assert_eq(store_open(db, &h, err, sizeof err), 0, "%s", err);
    return h;
}

Test(collprof, pp2_transfer_is_the_measured_send_recv)
{
    char vd[256];
    vidur_dir(vd, sizeof vd);
    result r = run_db(60, "calib", "import", "vidur", vd, "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE what = 'send_recv' AND name = 'dpn2'"), 994);

    /* llama-3-8b, pp 2 on one node: one prompt of 1000 tokens sends 1000 x 4096 x 2 B. */
    cost_model m, flat;
    roofline_on(&m, "llama-3-8b", 1, 2, 1);
    roofline_on(&flat, "llama-3-8b", 1, 2, 1);
    sqlite3 *h = open_db();
    cr_expect_eq(cost_roofline_collectives(m.state, &m.hw, h), 2, "within and across nodes");
    const cost_roofline *c = m.state;
    cr_expect_eq(c->sr.n, 993, "994 rows, one size twice");
    cr_expect_str_eq(c->sr.source, "vidur");
    cr_expect_eq(c->ar.n, 0, "tp 1: no all-reduce");
    cost_step s = { .prefill_tokens = 1000, .prefill_pairs = 1000.0 * 1001 / 2, .prefill_seqs = 1 };
    double B = 1000.0 * 4096 * 2, want = csv_time(2, B);
    cost_breakdown b;
    double ms = cost_roofline_breakdown(&m.hw, c, &s, &b);
    cr_expect_float_eq(b.transfer_ms, want * 1e3, 1e-12 * want * 1e3, "%.12g vs %.12g", b.transfer_ms, want * 1e3);
    cr_expect_float_eq(ms, cost_step_ms(&m, &s), 1e-12);
    /* Only the transfer changes from the link formula (8 us + B / 900 GB/s). */
    double link = 8e-6 + B / 900e9;
    cr_expect_float_eq(cost_step_ms(&m, &s) - cost_step_ms(&flat, &s), (want - link) * 1e3, 1e-9);
    cost_info ci;
    cost_describe(&m, &ci);
    cr_expect_str_eq(ci.source, "datasheet+vidur");
    cost_describe(&flat, &ci);
    cr_expect_str_eq(ci.source, "datasheet");
    /* The measured link is slower than the datasheet's: 8.19 MB takes longer. */
    cr_expect_gt(want, link);

    /* tp 8 x pp 2 on 8-GPU nodes: the second stage is on the second node, so the
     * transfer is the two-node measurement (devices_per_node 1). */
    cost_model x;
    roofline_on(&x, "llama-3-70b", 8, 2, 1);
    cr_expect_eq(cost_roofline_collectives(x.state, &x.hw, h), 2);
    cost_step d = { .decode_seqs = 64, .kv_tokens = 64 * 501 };
    double B2 = 32.0 * 8192 * 2;   /* two micro-batches of 32 sequences: the first one's transfer */
    cost_roofline_breakdown(&x.hw, x.state, &d, &b);
    cr_expect_float_eq(b.transfer_ms, csv_time(1, B2) * 1e3, 1e-12, "%.12g vs %.12g", b.transfer_ms, csv_time(1, B2) * 1e3);
    store_close(h);
    cost_free(&m);
    cost_free(&flat);
    cost_free(&x);
}

Test(collprof, ep_alltoall_is_the_imported_profile)
{
    result r = run_db(60, "calib", "import", "nccl", A2A_FILE, "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE what = 'alltoall' AND tp = 4"), 15);
    /* qwen3-30b-a3b, tp 4 = ep 4: 48 MoE layers, each a dispatch and a combine of
     * 16 tokens x 2048 hidden x 2 B = 65536 B, a measured size: 9.55 us each. */
    cost_model m, flat;
    roofline_on(&m, "qwen3-30b-a3b", 4, 1, 4);
    roofline_on(&flat, "qwen3-30b-a3b", 4, 1, 4);
    sqlite3 *h = open_db();
    cr_expect_eq(cost_roofline_collectives(m.state, &m.hw, h), 1, "the all-to-all only");
    store_close(h);
    cost_step d = { .decode_seqs = 16, .kv_tokens = 16 * 101 };
    cost_breakdown b, f;
    cost_roofline_breakdown(&m.hw, m.state, &d, &b);
    cost_roofline_breakdown(&flat.hw, flat.state, &d, &f);
    cr_expect_float_eq(b.alltoall_ms, 2 * 48 * 9.55e-3, 1e-12, "%.12g", b.alltoall_ms);
    /* the link formula: 8 us + 65536 x 3/4 B / 900 GB/s, per collective */
    cr_expect_float_eq(f.alltoall_ms, 2 * 48 * (8e-3 + 65536 * 0.75 / 900e9 * 1e3), 1e-12);
    cr_expect_float_eq(b.allreduce_ms, f.allreduce_ms, 1e-15, "the all-reduces keep the link formula");
    cost_info ci;
    cost_describe(&m, &ci);
    cr_expect_str_eq(ci.source, "datasheet+nccl");
    cost_free(&m);
    cost_free(&flat);
}

/* The allreduce part and the step (ms) of `latsim cost --cost profile` for 24
 * decoding sequences of llama-2-7b on h100 at tp 2; its output in *OUT (malloc'd). */
static double profile_allreduce(double *step, char **out)
{
    result r = run_db(60, "cost", "--model", "llama-2-7b", "--gpu", "h100", "--tp", "2", "--decode", "24",
                      "--context", "1000", "--cost", "profile", "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    const char *a = strstr(r.out, "\"allreduce\": "), *s = strstr(r.out, "\"step_ms\": ");
    cr_assert(a && s, "%s", r.out);
    double v = strtod(a + 13, NULL);
    *step = strtod(s + 11, NULL);
    *out = strdup(r.out);
    result_free(&r);
    return v;
}

Test(collprof, profile_allreduce_is_the_nccl_profile_when_imported)
{
    result r = run_db(60, "calib", "import", "vidur", "tests/data/vidur", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(60, "calib", "fit", "profile", "--model", "llama-2-7b", "--gpu", "h100", "--tp", "2", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double s0, s1;
    char *o0, *o1;
    double vidur = profile_allreduce(&s0, &o0);
    cr_expect(strstr(o0, "nccl") == NULL, "%s", o0);
    cr_expect_gt(vidur, 0, "Vidur's all-reduce of the h100 DGX at tp 2");
    r = run_db(60, "calib", "import", "nccl", "tests/data/nccl/all_reduce_perf_h100x8.txt", "--gpu", "h100", "--gpus",
               "2", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double nccl = profile_allreduce(&s1, &o1);
    cr_expect(strstr(o1, "all-reduce from the nccl profile (28 sizes)") != NULL, "%s", o1);
    /* 2 x 32 all-reduces of 24 x 4096 x 2 = 196608 B, between 131072 B (10.66 us)
     * and 262144 B (11.31 us), log2(1.5) of the way. */
    double want = 64 * (10.66 + log2(1.5) * (11.31 - 10.66)) * 1e-3;
    cr_expect_float_eq(nccl, want, 1e-6, "%.9g vs %.9g", nccl, want);
    /* Replaced, not added: the step moves by the difference of the two parts alone. */
    cr_expect_float_eq(s1 - s0, nccl - vidur, 2e-6, "%.9g vs %.9g", s1 - s0, nccl - vidur);
    free(o0);
    free(o1);
}

/* TTFT (ms) of one lone 1000-token prompt through llama-3-8b in pp = 2 stages on
 * h100, resolved against database PATH. */
static double lone_ttft(const char *path)
{
    const char *text = "[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
                       "prompt_tokens = const(1000)\noutput_tokens = const(3)\n"
                       "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\npp = 2\ncost = roofline\n";
    sim_result res;
    tsim_run_db("pp.ini", text, path, 1, &res);
    double t = tsim_sys(&res, "ttft")->mean;
    sim_result_free(&res);
    return t;
}

Test(collprof, a_pp2_run_carries_the_measured_transfer)
{
    char mem[300];
    snprintf(mem, sizeof mem, "%s/none.db", dir);
    double link = lone_ttft(mem);   /* no profile: the link formula */
    char vd[256];
    vidur_dir(vd, sizeof vd);
    result r = run_db(60, "calib", "import", "vidur", vd, "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    double meas = lone_ttft(db);
    /* The prompt's step (its first token) sends B = 1000 x 4096 x 2 bytes once:
     * the TTFT moves by the measured time minus 8 us + B / 900 GB/s, nothing else
     * (to 2 ns: the clock counts whole nanoseconds, each run rounds once). */
    double B = 1000.0 * 4096 * 2;
    double d = (csv_time(2, B) - (8e-6 + B / 900e9)) * 1e3;
    cr_expect_float_eq(meas - link, d, 2e-6, "%.12g vs %.12g", meas - link, d);
}
