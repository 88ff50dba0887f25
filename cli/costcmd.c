/* costcmd.c -- `latsim cost`: the step time of one prefill or decode step from
 * a chosen cost model (calib_cost_eval), for a model, a GPU and a batch. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calib.h"
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "observed.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/store.h"

#ifndef LATSIM_VERSION
#define LATSIM_VERSION "0.1"
#endif
#include "calibcli.h"

enum { C_MODEL = 1, C_GPU, C_TP, C_WEIGHTS, C_PREFILL, C_PBATCH, C_DECODE, C_CONTEXT, C_COST, C_COST_ID, C_ENGINE };

static const cli_opt COST_OPTS[] = {
    { "model", C_MODEL, "M", "the model (a catalog name)", CLI_REQUIRED },
    { "gpu", C_GPU, "G", "the GPU (a catalog name)", CLI_REQUIRED },
    { "tp", C_TP, "T", "tensor-parallel degree (1 to 1024)", CLI_REQUIRED },
    { "weights", C_WEIGHTS, "P", "weight precision: bf16, fp16, fp8, int8, int4, fp4 (default: the model's, else bf16)", 0 },
    { "prefill", C_PREFILL, "TOKENS", "prompt tokens per prefilling sequence", 0 },
    { "prefill-batch", C_PBATCH, "B", "prefilling sequences (default 1)", 0 },
    { "decode", C_DECODE, "SEQS", "decoding sequences, each with --context TOKENS of context", 0 },
    { "context", C_CONTEXT, "TOKENS", "context of each decoding sequence", 0 },
    { "cost", C_COST, "KIND", "auto (default: best calibrated model, else the learned one), fitted, profile, learned, roofline", 0 },
    { "engine", C_ENGINE, "E", "serving engine: vllm (default), sglang, trtllm, generic (the learned model's efficiencies)", 0 },
    { "cost-id", C_COST_ID, "ID", "a stored calibrated model (latsim calib list)", 0 },
    { "json", CLI_JSON, NULL, "{\"step_ms\": X, \"cost_model\": {kind, id, source, mape}, \"parts\": {NAME: ms}}", 0 },
    CLI_OPT_DB,
    { NULL },
};

static const cli_cmd COST = {
    "cost", "",
    "Prints the predicted time of one forward step (--prefill and/or --decode) and the\n"
    "cost model that produced it.\n",
    "", COST_OPTS, 0, 0,
};

/* What cost was asked. */
typedef struct cost_opts {
    const char *model, *gpu, *weights, *kind;  /* --model, --gpu, --weights, --cost (NULL: not given) */
    const char *engine;                        /* --engine (NULL: the default) */
    long tp, prefill, pbatch, decode, context, id;  /* --tp, --prefill, --prefill-batch, --decode, --context (-1: none), --cost-id */
} cost_opts;

/* cli_opt_fn of cost: CTX is the cost_opts. */
static int cost_opt(void *ctx, int id, const char *v)
{
    cost_opts *o = ctx;
    char err[300];
    int bad = 0;
    switch (id) {
    case C_MODEL: o->model = v; break;
    case C_GPU: o->gpu = v; break;
    case C_WEIGHTS: o->weights = v; break;
    case C_COST: o->kind = v; break;
    case C_ENGINE:
        if (strcmp(v, "vllm") && strcmp(v, "sglang") && strcmp(v, "trtllm") && strcmp(v, "generic")) {
            snprintf(err, sizeof err, "cost: --engine: unknown engine '%.100s' (valid: vllm, sglang, trtllm, generic)", v);
            bad = 1;
        } else
            o->engine = v;
        break;
    case C_TP: bad = cal_parse_long("cost: --tp", v, 1, 1024, &o->tp, err, sizeof err); break;
    case C_PREFILL: bad = cal_parse_long("cost: --prefill", v, 1, 10000000, &o->prefill, err, sizeof err); break;
    case C_PBATCH: bad = cal_parse_long("cost: --prefill-batch", v, 1, 1000000, &o->pbatch, err, sizeof err); break;
    case C_DECODE: bad = cal_parse_long("cost: --decode", v, 1, 1000000, &o->decode, err, sizeof err); break;
    case C_CONTEXT: bad = cal_parse_long("cost: --context", v, 0, 10000000, &o->context, err, sizeof err); break;
    default: bad = cal_parse_long("cost: --cost-id", v, 1, 1L << 62, &o->id, err, sizeof err); break;   /* C_COST_ID */
    }
    return bad ? cal_fail(2, err) : 0;
}

static void json_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.10g", v);
    else
        fputs("null", out);
}

int cost_main(int argc, char **argv)
{
    cost_opts co = { .pbatch = 1, .context = -1 };
    cli_args a;
    char err[2048];
    int rc = cli_parse(&COST, argc, argv, &a, cost_opt, &co);
    if (rc != CLI_GO) return rc;
    if (a.npos > 0) return cu_die(2, "cost: unexpected argument '%s' (see latsim cost --help)", a.pos[0]);
    const char *dbopt = a.db, *model = co.model, *gpu = co.gpu, *weights = co.weights, *kind = co.kind;
    long tp = co.tp, prefill = co.prefill, pbatch = co.pbatch, decode = co.decode, context = co.context, id = co.id;
    int json = a.json;
    if (!prefill && !decode) return cal_fail(2, "cost: give --prefill TOKENS and/or --decode SEQS --context TOKENS");
    if (decode && context < 0) return cal_fail(2, "cost: --decode needs --context TOKENS");
    if (kind && !ccost_asked(kind)) {
        snprintf(err, sizeof err, "cost: --cost: unknown kind '%s' (valid: %s)", kind, ccost_ask_list());
        return cal_fail(2, err);
    }
    if (kind && id) return cal_fail(2, "cost: give --cost KIND or --cost-id ID, not both");
    const char *path = cu_db_path(dbopt);
    sqlite3 *db = NULL;
    rc = 2;
    if (cu_check_db_path(path, err, sizeof err) != 0)
        return cal_fail(2, err);
    /* Read-only: an existing file is never written (an empty or foreign one is
     * refused); without one, the built-in catalog in memory and the roofline. */
    if (access(path, F_OK) == 0 ? cal_open_readonly(path, &db, err, sizeof err) : store_open(":memory:", &db, err, sizeof err))
        return cal_fail(2, err);
    calib_cost_req q = { .model = model, .gpu = gpu, .tp = (int)tp, .weights = weights, .kind = kind, .id = id,
                         .engine = co.engine,
                         .prefill = prefill, .pbatch = pbatch, .decode = decode, .context = context };
    calib_cost c;
    rc = calib_cost_eval(db, &q, &c, err, sizeof err);
    if (rc != 0)
        goto out;
    if (c.warn[0])
        fprintf(stderr, "latsim: warning: %s\n", c.warn);
    double ms = c.step_ms;
    const char *range = c.range;
    if (json) {
        printf("{\"step_ms\": ");
        json_num(stdout, ms);
        printf(", \"cost_model\": {\"kind\": ");
        report_json_str(stdout, c.kind);
        printf(", \"id\": ");
        if (c.id) printf("%lld", (long long)c.id); else printf("null");
        printf(", \"source\": ");
        report_json_str(stdout, c.source);
        printf(", \"mape\": ");
        json_num(stdout, c.mape);
        printf("}, \"parts\": {");
        for (int k = 0; k < c.nparts; k++) {
            printf("%s", k ? ", " : "");
            report_json_str(stdout, c.part[k]);
            printf(": ");
            json_num(stdout, c.part_ms[k]);
        }
        printf("}, \"ops\": {");   /* the step by operator */
        for (int k = 0; k < c.nops; k++) {
            printf("%s", k ? ", " : "");
            report_json_str(stdout, c.op[k]);
            printf(": ");
            json_num(stdout, c.op_ms[k]);
        }
        printf("}}\n");
    } else {
        printf("step_ms %.4g  (%s", ms, c.kind);
        if (c.id) printf(" model %lld", (long long)c.id);
        printf(", %s", ERRMSG_SHOWN(c.source));
        if (isfinite(c.mape)) printf(", cv_mape %.3g %%", c.mape);
        if (range[0]) printf(", %s", range);
        printf(")\n");
        for (int k = 0; k < c.nparts; k++)
            printf("  %-18s %10.4g ms\n", ERRMSG_SHOWN(c.part[k]), c.part_ms[k]);
        printf("  by operator:");
        for (int k = 0; k < c.nops; k++)
            if (c.op_ms[k] != 0) printf(" %s %.3g ms (%.1f %%)", c.op[k], c.op_ms[k], ms > 0 ? 100 * c.op_ms[k] / ms : 0);
        printf("\n");
        if (c.note[0]) printf("  note: %s\n", ERRMSG_SHOWN(c.note));
        if (c.hwnote[0]) printf("  note: %s\n", ERRMSG_SHOWN(c.hwnote));
    }
    if (range[0] && strcmp(range, "extrapolated") == 0 && !strcmp(c.kind, "learned"))
        fprintf(stderr, "latsim: note: the learned model is extrapolated here (its GPU or engine has no measurement in "
                        "its corpus: docs/learned.md)\n");
    else if (range[0] && strcmp(range, "extrapolated") == 0)
        fprintf(stderr, "latsim: note: cost model %lld is extrapolated here (outside its measured TP, step sizes or GPU)\n", (long long)c.id);
    rc = 0;
out:
    if (rc) cal_say(err);
    store_close(db);
    return rc;
}
