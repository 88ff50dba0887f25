/* ccostops.c -- a step's time by operator under a calibrated cost model (ccostops.h). */
#include "ccostops.h"

#include <string.h>
#include "clearn.h"
#include "cprofile.h"

/* The profile's split: its parts by name, the linear part over its rows' classes. */
static void profile_split(const ccost *c, const cost_hw *h, const cost_step *s, const char *const *part,
                          const double *part_ms, int nparts, double out[OP_N])
{
    static const int OPS[CP_NCLS] = { OP_QKV, OP_OUT_PROJ, OP_MLP, OP_NORM };
    double lin = 0, emb = 0, by[OP_N] = { 0 };
    for (int i = 0; i < nparts; i++) {
        const char *n = part[i];
        if (!strcmp(n, "linear")) lin += part_ms[i];
        else if (!strcmp(n, "embedding")) emb += part_ms[i];
        else if (!strcmp(n, "attention_prefill")) by[OP_ATTN_PREFILL] += part_ms[i];
        else if (!strcmp(n, "attention_decode")) by[OP_ATTN_DECODE] += part_ms[i];
        else {
            int o = op_of_part(n);
            by[o < 0 ? OP_MLP : o] += part_ms[i];
        }
    }
    double tokens = (double) s->prefill_tokens + (double) cost_step_decode_tokens(s), cls[CP_NCLS], sum = 0;
    cprofile_linear_classes(&c->profile, tokens, cls);
    for (int k = 0; k < CP_NCLS; k++) sum += cls[k] > 0 ? cls[k] : 0;
    if (sum > 0) {
        double given = 0;   /* the last class takes what is left: they sum to the linear part */
        for (int k = 0; k < CP_NCLS - 1; k++) {
            double v = lin * (cls[k] > 0 ? cls[k] : 0) / sum;
            by[OPS[k]] += v;
            given += v;
        }
        by[OPS[CP_NCLS - 1]] += lin - given;
    } else {
        /* No rows by class (a profile stored before they were kept): the roofline's
         * times of those four operators. */
        double t[OP_N], f[OP_N], b[OP_N], tsum = 0;
        op_work(h, s, f, b);
        double peak = h->gpu.bf16_tflops * 1e12, bw = h->gpu.mem_bw_gbs * 1e9;
        for (int k = 0; k < CP_NCLS; k++) {
            double tc = peak > 0 ? f[OPS[k]] / peak : 0, tm = bw > 0 ? b[OPS[k]] / bw : 0;
            t[k] = tc > tm ? tc : tm;
            tsum += t[k];
        }
        for (int k = 0; k < CP_NCLS; k++) by[OPS[k]] += tsum > 0 ? lin * t[k] / tsum : (k == 2 ? lin : 0);
    }
    by[OP_NORM] += emb;
    memcpy(out, by, sizeof by);
}

void ccost_op_split(const ccost *c, const cost_hw *h, const cost_step *s, const char *const *part,
                    const double *part_ms, int nparts, double out[OP_N])
{
    if (c->kind == CC_PROFILE) {
        profile_split(c, h, s, part, part_ms, nparts, out);
        return;
    }
    double by[OP_N + 1] = { 0 };
    for (int k = 0; k < nparts; k++) {
        int o = op_of_part(part[k]);
        by[o < 0 ? OP_N : o] += part_ms[k];
    }
    op_rates r;
    int learned = c->kind == CC_LEARNED && clearn_op_rates(h, &clearn_model_prior(&c->lm)->c, &r) == 0;
    op_split_rates(h, learned ? &r : NULL, s, by[OP_N], by[OP_ALLREDUCE], by[OP_ALLTOALL], by[OP_PIPELINE],
                   by[OP_FRAMEWORK], out);
}
