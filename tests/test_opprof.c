/* test_opprof.c -- a step's time by operator under an operator profile and
 * against it (issue 35): Vidur's measured operator times of Llama-2-7B on an
 * A100 (tests/data/vidur, the profile `latsim calib fit profile` builds).
 * Under `cost = profile` the operators are the profile's own rows (QKV,
 * output projection, MLP, norms: their ratios at a profiled token count are
 * the CSV's medians' exactly) and add up to the step; attention's share grows
 * with context.  The roofline's and the learned model's shares of the same
 * steps are compared with the profile's (docs/llm.md, "Time by operator"). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ccsv.h"
#include "llm/opshare.h"
#include "tcli.h"

#define VIDUR_MLP "tests/data/vidur/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv"

static void setup(void)
{
    tcli_setup("/tmp/latsim_opprof_", "runs.db");
    result r = run_db(300, "calib", "import", "vidur", "tests/data/vidur", "--model", "llama-2-7b", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    r = run_db(300, "calib", "fit", "profile", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "1", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

TestSuite(opshare_cli, .init = setup, .fini = tcli_teardown, .timeout = 600);

/* One step's operators under KIND: ms by operator into OPS[OP_N], the step's ms returned. */
static double step_ops(const char *kind, const char *prefill, const char *decode, const char *context, double ops[OP_N])
{
    result r = decode ? run_db(120, "cost", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "1", "--decode", decode,
                               "--context", context, "--cost", kind, "--json", NULL)
                      : run_db(120, "cost", "--model", "llama-2-7b", "--gpu", "a100", "--tp", "1", "--prefill", prefill,
                               "--cost", kind, "--json", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    cr_assert_not_null(j, "%s: %s", e.text, r.out);
    double step = json_number_value(json_object_get(j, "step_ms")), sum = 0;
    json_t *o = json_object_get(j, "ops");
    cr_assert_not_null(o);
    for (int k = 0; k < OP_N; k++) {
        json_t *v = json_object_get(o, OP_NAMES[k]);
        cr_assert_not_null(v, "%s", OP_NAMES[k]);
        ops[k] = json_number_value(v);
        cr_assert_geq(ops[k], 0);
        sum += ops[k];
    }
    cr_expect(fabs(sum - step) < 1e-9 * step, "%s: operators %.17g, step %.17g", kind, sum, step);
    json_decref(j);
    result_free(&r);
    return step;
}

/* The CSV's medians at TOKENS tokens, TP 1, by class: QKV, output, MLP (up, down, act). */
typedef struct rows_at {
    double tokens, qkv, out, mlp;
    int found;
} rows_at;

static double cell(const ccsv_row *r, const char *op)
{
    char col[96], err[256];
    double v = NAN;
    snprintf(col, sizeof col, "time_stats.%s.median", op);
    cr_assert_eq(ccsv_num(r, ccsv_col(r, col), &v, err, sizeof err), 0, "%s", err);
    return v;
}

static int take(void *ctx, const ccsv_row *r, char *err, size_t n)
{
    (void) err;
    (void) n;
    rows_at *a = ctx;
    const char *tok = r->field[ccsv_col(r, "num_tokens")], *tp = r->field[ccsv_col(r, "num_tensor_parallel_workers")];
    if (strcmp(tp, "1") || atof(tok) != a->tokens) return 0;
    a->qkv = cell(r, "attn_pre_proj");
    a->out = cell(r, "attn_post_proj");
    a->mlp = cell(r, "mlp_up_proj") + cell(r, "mlp_down_proj") + cell(r, "mlp_act");
    a->found++;
    return 0;
}

/* At a profiled point (a prompt of 1024 tokens: one row of the CSV) the
 * operators are the profile's rows: QKV : output : MLP as the medians are. */
Test(opshare_cli, profile_shares_are_the_operator_rows)
{
    double ops[OP_N];
    step_ops("profile", "1024", NULL, NULL, ops);
    rows_at a = { .tokens = 1024 };
    char err[512] = "";
    cr_assert_eq(ccsv_read(VIDUR_MLP, take, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.found, 1);
    cr_expect(fabs(ops[OP_QKV] / ops[OP_MLP] - a.qkv / a.mlp) < 1e-12, "%.15g vs %.15g", ops[OP_QKV] / ops[OP_MLP],
              a.qkv / a.mlp);
    cr_expect(fabs(ops[OP_OUT_PROJ] / ops[OP_MLP] - a.out / a.mlp) < 1e-12);
    cr_expect_eq(ops[OP_LOGITS], 0, "no LM-head row in a profile");
    cr_expect_eq(ops[OP_ATTN_DECODE], 0);
    cr_expect_gt(ops[OP_ATTN_PREFILL], 0);
    /* Decoding: attention's share grows with the context, as its KV reads do. */
    double last = 0;
    static const char *const CTX[] = { "500", "1000", "2000", "4000" };
    for (int i = 0; i < 4; i++) {
        double step = step_ops("profile", NULL, "32", CTX[i], ops), share = ops[OP_ATTN_DECODE] / step;
        cr_expect_gt(share, last, "context %s: %g after %g", CTX[i], share, last);
        last = share;
    }
}

/* The kernel operators' shares (attention, QKV, output, MLP, norms: of their sum)
 * of KIND at one step, into S[5]. */
static void kernel_shares(const char *kind, const char *prefill, const char *decode, const char *context, double s[5])
{
    double ops[OP_N];
    step_ops(kind, prefill, decode, context, ops);
    double v[5] = { ops[OP_ATTN_PREFILL] + ops[OP_ATTN_DECODE], ops[OP_QKV], ops[OP_OUT_PROJ], ops[OP_MLP], ops[OP_NORM] };
    double sum = 0;
    for (int k = 0; k < 5; k++) sum += v[k];
    for (int k = 0; k < 5; k++) s[k] = 100 * v[k] / sum;
}

/* docs/llm.md's table: each model's kernel shares at four steps and their
 * distance from the profile's (half the sum of |differences|, points). */
Test(opshare_cli, roofline_and_learned_against_the_profile)
{
    static const struct { const char *prefill, *decode, *context, *attn[3], *dist[2]; } S[] = {
        { "1024", NULL, NULL, { "9.2", "1.9", "9.8" }, { "7.3", "1.7" } },
        { "4096", NULL, NULL, { "16.8", "7.3", "31.2" }, { "9.6", "14.4" } },
        { NULL, "32", "1000", { "54.1", "56.2", "66.7" }, { "2.7", "12.6" } },
        { NULL, "128", "2000", { "87.6", "90.8", "91.8" }, { "3.2", "4.2" } },
    };
    static const char *const K[] = { "profile", "roofline", "learned" };
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        double s[3][5];
        for (int k = 0; k < 3; k++) kernel_shares(K[k], S[i].prefill, S[i].decode, S[i].context, s[k]);
        for (int k = 0; k < 3; k++) {
            printf("opshare_cli: %s/%s/%s %s: attention %.1f qkv %.1f out %.1f mlp %.1f norm %.1f\n",
                   S[i].prefill ? S[i].prefill : "-", S[i].decode ? S[i].decode : "-", S[i].context ? S[i].context : "-",
                   K[k], s[k][0], s[k][1], s[k][2], s[k][3], s[k][4]);
            char got[16];
            snprintf(got, sizeof got, "%.1f", s[k][0]);
            cr_expect_str_eq(got, S[i].attn[k], "step %zu %s: attention %.3f %%, the docs say %s", i, K[k], s[k][0],
                             S[i].attn[k]);
        }
        for (int k = 1; k < 3; k++) {
            double d = 0;
            for (int o = 0; o < 5; o++) d += fabs(s[k][o] - s[0][o]);
            printf("opshare_cli: %s distance %.1f\n", K[k], d / 2);
            char got[16];
            snprintf(got, sizeof got, "%.1f", d / 2);
            cr_expect_str_eq(got, S[i].dist[k - 1], "step %zu %s: distance %.3f, the docs say %s", i, K[k], d / 2,
                             S[i].dist[k - 1]);
        }
    }
}
