/* test_encvalid.c -- encoder passes against measured ones (issue 35): NVIDIA's
 * TensorRT BERT demo's FP16 latencies on an A100-40GB (tests/data/
 * trt_bert_a100_fp16.csv: BERT-base and BERT-large, 128 and 384 tokens, batch
 * 1 to 128; Apache-2.0, tests/data/trt_bert_LICENSE-APACHE.txt) priced by the
 * roofline and by the learned model (core/encoder.h), and the mean absolute
 * percentage error of each: the figures of docs/scenario-files.md, "Encoder
 * passes against measurements". */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ccsv.h"
#include "clearn.h"
#include "core/encoder.h"
#include "tsim.h"

#define NROWS 64

typedef struct meas {
    char model[16];
    int len, batch;
    double ms;
} meas;

typedef struct rows {
    meas m[NROWS];
    int n;
} rows;

static int take(void *ctx, const ccsv_row *r, char *err, size_t n)
{
    rows *t = ctx;
    long len, batch;
    double ms;
    int cm = ccsv_col(r, "model");
    if (t->n >= NROWS || cm < 0 || ccsv_int(r, ccsv_col(r, "seq_len"), 1, 100000, &len, err, n) ||
        ccsv_int(r, ccsv_col(r, "batch"), 1, 100000, &batch, err, n) ||
        ccsv_num(r, ccsv_col(r, "latency_avg_ms"), &ms, err, n))
        return -1;
    meas *m = &t->m[t->n++];
    snprintf(m->model, sizeof m->model, "%s", r->field[cm]);
    m->len = (int) len;
    m->batch = (int) batch;
    m->ms = ms;
    return 0;
}

static void read_rows(rows *t)
{
    char err[512] = "";
    memset(t, 0, sizeof *t);
    cr_assert_eq(ccsv_read("tests/data/trt_bert_a100_fp16.csv", take, t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t->n, 40);
}

/* MODEL on the measured A100-40GB (the catalog's A100 with its 1555 GB/s),
 * priced by the roofline's defaults, or learned under ENGINE when ENGINE is not NULL.
 * BERT-large is bge-m3's geometry (XLM-RoBERTa-large: 24 layers of 1024, 16
 * heads, 4096 intermediate): its vocabulary and positions are looked up, not
 * multiplied, and enc_work reads neither. */
static enc_cfg a100(const char *model, const char *engine)
{
    enc_cfg c;
    memset(&c, 0, sizeof c);
    gpu_spec g;
    tsim_catalog("a100", !strcmp(model, "bert-large") ? "bge-m3" : "bert-base-uncased", &g, &c.model);
    g.mem_bw_gbs = 1555;
    c.peak_flops = g.bf16_tflops * 1e12;   /* FP16's tensor-core peak is BF16's */
    c.mem_bw = g.mem_bw_gbs * 1e9;
    c.weight_bytes = 2;
    c.compute_eff = 0.6;
    c.memory_eff = 0.8;
    c.overhead_ms = 1.0;
    c.launch_us = 20;
    c.max_seq_len = 512;
    if (engine) {
        clearn_enc_register();
        clearn_prior p;
        clearn_prior_for(NULL, &g, engine, &p);
        c.cost = ENC_COST_LEARNED;
        c.lc = (enc_learned) { .compute_eff = p.c.compute_eff, .t_half = p.c.t_half, .memory_eff = p.c.memory_eff,
                               .overlap = p.c.overlap, .attn_eff = p.c.attn_eff, .lowp_eff = 1,
                               .launch_us = p.c.launch_us, .fixed_ms = p.c.fixed_ms, .seq_us = p.c.seq_us };
    }
    return c;
}

/* MAPE of ENGINE's learned model (NULL: the roofline) over T's rows of MODEL
 * ("": all), %; the worst signed error in *WORST. */
static double mape(const rows *t, const char *model, const char *engine, double *worst)
{
    double sum = 0, w = 0;
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        const meas *m = &t->m[i];
        if (model[0] && strcmp(m->model, model)) continue;
        enc_cfg c = a100(m->model, engine);
        double e = (enc_pass_ms(&c, m->batch, m->len) - m->ms) / m->ms * 100;
        sum += fabs(e);
        if (fabs(e) > fabs(w)) w = e;
        n++;
    }
    if (worst) *worst = w;
    return n ? sum / n : NAN;
}

/* The figures docs/scenario-files.md quotes (one decimal), each recomputed
 * here: the MAPE of the roofline and of the learned model (vllm, the default
 * engine; trtllm, the measured stack's) by model and over all 40 rows.  The
 * learned default is the closer over all rows. */
Test(encoder_valid, trt_bert_a100_mape_roofline_vs_learned)
{
    rows t;
    read_rows(&t);
    static const char *const E[] = { NULL, "vllm", "trtllm" };
    static const char *const M[] = { "", "bert-base", "bert-large" };
    static const double DOC[3][3] = { { 19.0, 29.2, 8.7 }, { 9.2, 10.5, 7.9 }, { 15.7, 24.9, 6.5 } };
    double v[3][3];
    for (int e = 0; e < 3; e++)
        for (int k = 0; k < 3; k++) {
            double w;
            v[e][k] = mape(&t, M[k], E[e], &w);
            cr_expect(fabs(v[e][k] - DOC[e][k]) < 0.05, "%s %s: MAPE %.2f %%, the docs say %.1f", E[e] ? E[e] : "roofline",
                      M[k][0] ? M[k] : "all", v[e][k], DOC[e][k]);
        }
    cr_expect_lt(v[1][0], v[0][0], "the learned default is closer than the roofline over all rows");
}
