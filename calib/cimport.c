/* cimport.c -- importers of measured times into the calibration store (see
 * cimport.h).
 *
 * Vidur files: each mlp.csv row gives, for one token count and TP degree, the
 * per-layer operators' times (time_stats.<op>.{min,max,mean,median,std}, ms); we
 * store the median of each operator (what = "op", name = the operator) with its
 * std.  attention.csv rows become "attn_prefill" (batch_size prompts of
 * prefill_chunk_size tokens after kv_cache_size cached ones) or "attn_decode"
 * (batch_size sequences with kv_cache_size tokens of context), time = attention
 * kernel + input/output reshapes; their model is "" and their name the geometry
 * "q<heads>_kv<kv_heads>_d<head_dim>" per GPU of the TP shard's parent model.
 * cpu_overheads.csv rows become "cpu_overhead" (schedule + sampler + prepare
 * inputs + process outputs, medians).  network CSVs become "allreduce" /
 * "send_recv" with bytes = size, tp = num_workers, name = "dpn<devices_per_node>",
 * gpu = the cluster directory name.  cimp_link_register hands the send_recv
 * rows (Vidur's or nccl-tests') to decode pools' kv_link_profile.
 */
#include "cimport.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/catalog.h"
#include "ccsv.h"
#include "cdb.h"
#include "core/power.h"
#include "engine/errmsg.h"
#include "llm/llmcfg.h"

/* Physically sane measured times, ms (cdb.h). */
#define MS_MIN CDB_MS_MIN
#define MS_MAX CDB_MS_MAX

int cimp_model_by_geometry(sqlite3 *db, int heads, int kv_heads, int hidden, int intermediate,
                           int vocab, char *name, size_t n)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name, vocab FROM models WHERE heads = ? AND kv_heads = ?"
                           " AND hidden = ? AND intermediate = ? ORDER BY name", -1, &st, NULL)
        != SQLITE_OK)
        return -1;
    sqlite3_bind_int(st, 1, heads);
    sqlite3_bind_int(st, 2, kv_heads);
    sqlite3_bind_int(st, 3, hidden);
    sqlite3_bind_int(st, 4, intermediate);
    int found = 0, best = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int d = abs(sqlite3_column_int(st, 1) - vocab);
        if (!found || d < best) {
            snprintf(name, n, "%s", (const char *)sqlite3_column_text(st, 0));
            best = d;
            found = 1;
        }
    }
    sqlite3_finalize(st);
    return found;
}

/* ---- steps CSV ------------------------------------------------------------------- */

enum { S_MODEL, S_GPU, S_TP, S_PHASE, S_BATCH, S_TOKENS, S_MS, S_NREQ };
static const char *STEP_COLS[S_NREQ] = { "model", "gpu", "tp", "phase", "batch_size", "tokens",
                                         "step_ms" };

typedef struct steps_ctx {
    sqlite3 *db;
    cdb_writer w;
    const cimp_opts *o;
    int col[S_NREQ];          /* column index of each required column */
    int col_weights;          /* optional, -1 if absent */
    int col_source;           /* optional, -1 if absent */
    int header_done;          /* columns resolved */
    long n;                   /* rows stored */
    model_spec model;         /* last model looked up (cache) */
    gpu_spec gpu;             /* last GPU looked up (cache) */
} steps_ctx;

static int steps_row(void *vctx, const ccsv_row *row, char *err, size_t errlen)
{
    steps_ctx *c = vctx;
    if (!c->header_done) {
        for (int k = 0; k < S_NREQ; k++)
            if ((c->col[k] = ccsv_col(row, STEP_COLS[k])) < 0) {
                snprintf(err, errlen, "%s:1: column %s: missing (expected columns "
                         "model,gpu,tp,phase,batch_size,tokens,step_ms[,weights,source])",
                         row->path, STEP_COLS[k]);
                return -1;
            }
        c->col_weights = ccsv_col(row, "weights");
        c->col_source = ccsv_col(row, "source");
        c->header_done = 1;
    }
    char e2[512];
    const char *mname = row->field[c->col[S_MODEL]], *gname = row->field[c->col[S_GPU]];
    if (strcasecmp(c->model.name, mname) != 0) {
        int s = catalog_model(c->db, mname, &c->model, e2, sizeof e2);
        if (s != 0) {
            c->model.name[0] = '\0';
            snprintf(err, errlen, "%s:%ld: column model: %s", row->path, row->line, e2);
            return -1;
        }
    }
    if (strcasecmp(c->gpu.name, gname) != 0) {
        int s = catalog_gpu(c->db, gname, &c->gpu, e2, sizeof e2);
        if (s != 0) {
            c->gpu.name[0] = '\0';
            snprintf(err, errlen, "%s:%ld: column gpu: %s", row->path, row->line, e2);
            return -1;
        }
    }
    long tp, batch;
    double tokens, ms;
    if (ccsv_int(row, c->col[S_TP], 1, 1024, &tp, err, errlen) != 0 ||
        ccsv_int(row, c->col[S_BATCH], 1, 1000000, &batch, err, errlen) != 0 ||
        ccsv_range(row, c->col[S_TOKENS], 1, 1e7, "tokens", &tokens, err, errlen) != 0 ||
        ccsv_range(row, c->col[S_MS], MS_MIN, MS_MAX, "ms", &ms, err, errlen) != 0)
        return -1;
    if (c->model.heads % tp != 0) {
        snprintf(err, errlen, "%s:%ld: column tp: %ld does not divide the %d attention heads of %s",
                 row->path, row->line, tp, c->model.heads, c->model.name);
        return -1;
    }
    const char *phase = row->field[c->col[S_PHASE]];
    int prefill = strcmp(phase, "prefill") == 0;
    if (!prefill && strcmp(phase, "decode") != 0) {
        snprintf(err, errlen, "%s:%ld: column phase: expected prefill or decode, got '%.40s'",
                 row->path, row->line, phase);
        return -1;
    }
    const char *weights = c->model.weights[0] ? c->model.weights : "bf16";
    if (c->col_weights >= 0 && row->field[c->col_weights][0]) {
        weights = row->field[c->col_weights];
        if (catalog_weight_bytes(weights) <= 0) {
            snprintf(err, errlen, "%s:%ld: column weights: unknown precision '%.40s' "
                     "(valid: bf16, fp16, fp8, int8, int4)", row->path, row->line, weights);
            return -1;
        }
    }
    if (c->o->model && strcasecmp(c->o->model, c->model.name) != 0)
        return 0;
    if (c->o->gpu && strcasecmp(c->o->gpu, c->gpu.name) != 0)
        return 0;
    cdb_meas m = { .source = "steps-csv", .what = prefill ? "step_prefill" : "step_decode",
                   .name = c->col_source >= 0 ? row->field[c->col_source] : "",
                   .model = c->model.name, .gpu = c->gpu.name, .weights = weights, .tp = (int)tp,
                   .batch = (double)batch, .tokens = prefill ? tokens : 0,
                   .context = prefill ? 0 : tokens, .time_ms = ms, .std_ms = NAN,
                   .tool = c->o->tool, .file = row->path, .line = row->line };
    if (cdb_put(&c->w, &m, NULL, err, errlen) != 0)
        return -1;
    c->n++;
    return 0;
}

/* --model and --gpu must name catalog entries (an unknown one would import
 * nothing, or everything but what it filters).  Returns 0 or -1 + ERR. */
static int check_filters(sqlite3 *db, const cimp_opts *o, char *err, size_t errlen)
{
    char e2[512];
    model_spec m;
    gpu_spec g;
    if (o->model && catalog_model(db, o->model, &m, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "--model: %s", e2);
        return -1;
    }
    if (o->gpu && catalog_gpu(db, o->gpu, &g, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "--gpu: %s", e2);
        return -1;
    }
    return 0;
}

int cimp_steps(sqlite3 *db, const char *path, const cimp_opts *o, long *n, char *err,
               size_t errlen)
{
    steps_ctx c = { .db = db, .o = o };
    if (check_filters(db, o, err, errlen) != 0)
        return -1;
    if (cdb_writer_open(&c.w, db, err, errlen) != 0)
        return -1;
    int rc = ccsv_read(path, steps_row, &c, err, errlen);
    cdb_writer_close(&c.w);
    if (rc == 0 && c.n == 0 && !o->model && !o->gpu) {
        snprintf(err, errlen, "%s: no data rows after the header", path);
        rc = -1;
    }
    if (rc == 0)
        *n = c.n;
    return rc;
}

/* ---- exported measurements ------------------------------------------------------- */

typedef struct meas_ctx {
    cdb_writer w;
    const cimp_opts *o;
    int col[18];              /* column index of each CDB_CSV_COLUMNS entry */
    int resolved;             /* header looked up */
    long n;                   /* rows stored */
} meas_ctx;

static int meas_row(void *vctx, const ccsv_row *row, char *err, size_t errlen)
{
    meas_ctx *c = vctx;
    static const char *names[18] = { "source", "what", "name", "model", "gpu", "weights", "tp", "batch",
                                     "tokens", "context", "bytes", "time_ms", "std_ms", "repeats", "device",
                                     "driver", "measured_at", "tool" };
    if (!c->resolved) {
        for (int k = 0; k < 18; k++)
            if ((c->col[k] = ccsv_col(row, names[k])) < 0) {
                snprintf(err, errlen, "%s:1: column %s: missing (expected %s)", row->path, names[k],
                         CDB_CSV_COLUMNS);
                return -1;
            }
        c->resolved = 1;
    }
    /* tp, batch, tokens, context, bytes, time_ms: whole or decimal, within sane bounds. */
    double v[8];
    long tp;
    if (ccsv_int(row, c->col[6], 0, 1000000, &tp, err, errlen) ||
        ccsv_range(row, c->col[7], 0, 1e9, "", &v[1], err, errlen) ||
        ccsv_range(row, c->col[8], 0, 1e9, "tokens", &v[2], err, errlen) ||
        ccsv_range(row, c->col[9], 0, 1e9, "tokens", &v[3], err, errlen) ||
        ccsv_range(row, c->col[10], 0, 1e15, "bytes", &v[4], err, errlen) ||
        ccsv_range(row, c->col[11], MS_MIN, MS_MAX, "ms", &v[5], err, errlen))
        return -1;
    v[0] = (double)tp;
    double sd = NAN;
    long rep = 0;
    if (row->field[c->col[12]][0] && ccsv_range(row, c->col[12], 0, MS_MAX, "ms", &sd, err, errlen))
        return -1;
    if (row->field[c->col[13]][0] && ccsv_int(row, c->col[13], 0, 1000000000, &rep, err, errlen))
        return -1;
    const char *src = row->field[c->col[0]], *what = row->field[c->col[1]];
    if (!src[0] || !what[0]) {
        snprintf(err, errlen, "%s:%ld: column %s: empty", row->path, row->line, src[0] ? "what" : "source");
        return -1;
    }
    cdb_meas m = { .source = src, .what = what, .name = row->field[c->col[2]], .model = row->field[c->col[3]],
                   .gpu = row->field[c->col[4]], .weights = row->field[c->col[5]], .tp = (int)v[0],
                   .batch = v[1], .tokens = v[2], .context = v[3], .bytes = v[4], .time_ms = v[5],
                   .std_ms = sd, .repeats = (int)rep, .device = row->field[c->col[14]],
                   .driver = row->field[c->col[15]], .measured_at = row->field[c->col[16]],
                   .tool = row->field[c->col[17]], .file = row->path, .line = row->line };
    if (cdb_put(&c->w, &m, NULL, err, errlen) != 0)
        return -1;
    c->n++;
    return 0;
}

int cimp_meas(sqlite3 *db, const char *path, const cimp_opts *o, long *n, char *err, size_t errlen)
{
    meas_ctx c = { .o = o };
    if (cdb_writer_open(&c.w, db, err, errlen) != 0)
        return -1;
    int rc = ccsv_read(path, meas_row, &c, err, errlen);
    cdb_writer_close(&c.w);
    if (rc == 0 && c.n == 0) {
        snprintf(err, errlen, "%s: no data rows after the header", path);
        rc = -1;
    }
    if (rc == 0)
        *n = c.n;
    return rc;
}

/* ---- Vidur profiles --------------------------------------------------------------- */

#define MAX_OPS 24

typedef struct vid_ctx {
    sqlite3 *db;
    cdb_writer *w;
    const cimp_opts *o;
    const char *gpu;           /* catalog GPU or network cluster */
    const char *model;         /* catalog model ("" where the file has none) */
    int kind;                  /* 0 mlp, 1 attention, 2 cpu overheads, 3 network */
    const char *coll;          /* network: "allreduce" / "send_recv" */
    int resolved;              /* header columns looked up */
    int nops;                  /* mlp: operators found */
    char op[MAX_OPS][40];      /* mlp: their names */
    int op_med[MAX_OPS];       /* mlp: median column */
    int op_std[MAX_OPS];       /* mlp: std column */
    int c[16];                 /* other columns by kind-specific index */
    long n;                    /* rows stored */
} vid_ctx;

static int need(const ccsv_row *row, const char *name, int *col, char *err, size_t errlen)
{
    if ((*col = ccsv_col(row, name)) < 0) {
        snprintf(err, errlen, "%s:1: column %s: missing", row->path, name);
        return -1;
    }
    return 0;
}

/* An optional cell: empty is NAN, else a number in [LO, HI] ms. */
static int ms_or_nan(const ccsv_row *row, int col, double lo, double *v, char *err, size_t errlen)
{
    if (row->field[col][0] == '\0') {
        *v = NAN;
        return 0;
    }
    return ccsv_range(row, col, lo, MS_MAX, "ms", v, err, errlen);
}

static int vid_put(vid_ctx *c, const ccsv_row *row, cdb_meas *m, char *err, size_t errlen)
{
    m->source = "vidur";
    m->tool = c->o->tool;
    m->file = row->path;
    m->line = row->line;
    if (cdb_put(c->w, m, NULL, err, errlen) != 0)
        return -1;
    c->n++;
    return 0;
}

static int mlp_row(vid_ctx *c, const ccsv_row *row, char *err, size_t errlen)
{
    enum { TOK, TP };
    if (!c->resolved) {
        if (need(row, "num_tokens", &c->c[TOK], err, errlen) ||
            need(row, "num_tensor_parallel_workers", &c->c[TP], err, errlen))
            return -1;
        for (size_t i = 0; i < row->nheader && c->nops < MAX_OPS; i++) {
            const char *h = row->header[i];
            size_t L = strlen(h);
            if (strncmp(h, "time_stats.", 11) != 0 || L < 18 || strcmp(h + L - 7, ".median") != 0)
                continue;
            snprintf(c->op[c->nops], sizeof c->op[0], "%.*s", (int)(L - 18), h + 11);
            char sd[96];
            snprintf(sd, sizeof sd, "time_stats.%s.std", c->op[c->nops]);
            c->op_med[c->nops] = (int)i;
            c->op_std[c->nops] = ccsv_col(row, sd);
            c->nops++;
        }
        if (c->nops == 0) {
            snprintf(err, errlen, "%s:1: column time_stats.<op>.median: missing (no operator columns)",
                     row->path);
            return -1;
        }
        c->resolved = 1;
    }
    long tok, tp;
    if (ccsv_int(row, c->c[TOK], 1, 100000000, &tok, err, errlen) ||
        ccsv_int(row, c->c[TP], 1, 1024, &tp, err, errlen))
        return -1;
    for (int k = 0; k < c->nops; k++) {
        double med, sd = NAN;
        if (ccsv_range(row, c->op_med[k], MS_MIN, MS_MAX, "ms", &med, err, errlen))
            return -1;
        if (c->op_std[k] >= 0 && ms_or_nan(row, c->op_std[k], 0, &sd, err, errlen))
            return -1;
        cdb_meas m = { .what = "op", .name = c->op[k], .model = c->model, .gpu = c->gpu,
                       .weights = "bf16", .tp = (int)tp, .tokens = (double)tok, .time_ms = med,
                       .std_ms = sd };
        if (vid_put(c, row, &m, err, errlen))
            return -1;
    }
    return 0;
}

static int attn_row(vid_ctx *c, const ccsv_row *row, char *err, size_t errlen)
{
    enum { PRE, DEC, IN, OUT, EMBD, QH, KVH, TP, BATCH, CHUNK, KV, ISPRE };
    static const char *names[] = { "time_stats.attn_prefill.median", "time_stats.attn_decode.median",
                                   "time_stats.attn_input_reshape.median",
                                   "time_stats.attn_output_reshape.median", "n_embd", "n_q_head",
                                   "n_kv_head", "num_tensor_parallel_workers", "batch_size",
                                   "prefill_chunk_size", "kv_cache_size", "is_prefill" };
    if (!c->resolved) {
        for (int k = 0; k <= ISPRE; k++)
            if (need(row, names[k], &c->c[k], err, errlen))
                return -1;
        c->resolved = 1;
    }
    long embd, qh, kvh, tp, batch, chunk, kv;
    if (ccsv_int(row, c->c[EMBD], 1, 1 << 20, &embd, err, errlen) ||
        ccsv_int(row, c->c[QH], 1, 4096, &qh, err, errlen) ||
        ccsv_int(row, c->c[KVH], 1, 4096, &kvh, err, errlen) ||
        ccsv_int(row, c->c[TP], 1, 1024, &tp, err, errlen) ||
        ccsv_int(row, c->c[BATCH], 1, 1000000, &batch, err, errlen) ||
        ccsv_int(row, c->c[CHUNK], 0, 100000000, &chunk, err, errlen) ||
        ccsv_int(row, c->c[KV], 0, 100000000, &kv, err, errlen))
        return -1;
    const char *ip = row->field[c->c[ISPRE]];
    int pre = strcmp(ip, "True") == 0;
    if (!pre && strcmp(ip, "False") != 0) {
        snprintf(err, errlen, "%s:%ld: column is_prefill: expected True or False, got '%.40s'",
                 row->path, row->line, ip);
        return -1;
    }
    /* The kernel's time must be a real one; the reshapes may take 0 (a no-op). */
    double t, tin, tout;
    if (ccsv_range(row, c->c[pre ? PRE : DEC], MS_MIN, MS_MAX, "ms", &t, err, errlen) ||
        ms_or_nan(row, c->c[IN], 0, &tin, err, errlen) || ms_or_nan(row, c->c[OUT], 0, &tout, err, errlen))
        return -1;
    char geo[64];
    snprintf(geo, sizeof geo, "q%ld_kv%ld_d%ld", qh, kvh, embd / qh);
    cdb_meas m = { .what = pre ? "attn_prefill" : "attn_decode", .name = geo, .model = "",
                   .gpu = c->gpu, .weights = "bf16", .tp = (int)tp, .batch = (double)batch,
                   .tokens = pre ? (double)chunk : 1, .context = (double)kv,
                   .time_ms = t + (isfinite(tin) ? tin : 0) + (isfinite(tout) ? tout : 0),
                   .std_ms = NAN };
    return vid_put(c, row, &m, err, errlen);
}

static int cpu_row(vid_ctx *c, const ccsv_row *row, char *err, size_t errlen)
{
    enum { SCH, SAM, PREP, PROC, MODEL, BATCH, TP };
    static const char *names[] = { "schedule_median", "sampler_e2e_median",
                                   "prepare_inputs_e2e_median", "process_model_outputs_median",
                                   "model_name", "batch_size", "tensor_parallel_degree" };
    if (!c->resolved) {
        for (int k = 0; k <= TP; k++)
            if (need(row, names[k], &c->c[k], err, errlen))
                return -1;
        c->resolved = 1;
    }
    double t = 0;
    for (int k = SCH; k <= PROC; k++) {
        double v;
        if (ccsv_range(row, c->c[k], 0, MS_MAX, "ms", &v, err, errlen))
            return -1;
        t += v;
    }
    if (t < MS_MIN) {
        snprintf(err, errlen, "%s:%ld: column %s: the CPU overheads of the row sum to %g ms "
                 "(expected a measured time)", row->path, row->line, names[SCH], t);
        return -1;
    }
    long batch, tp;
    if (ccsv_int(row, c->c[BATCH], 1, 1000000, &batch, err, errlen) ||
        ccsv_int(row, c->c[TP], 1, 1024, &tp, err, errlen))
        return -1;
    /* "codellama/CodeLlama-34b-Instruct-hf" -> the catalog model whose name it contains. */
    const char *vn = strrchr(row->field[c->c[MODEL]], '/');
    vn = vn ? vn + 1 : row->field[c->c[MODEL]];
    char lower[128], model[48] = "";
    size_t i = 0;
    for (; vn[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)(vn[i] >= 'A' && vn[i] <= 'Z' ? vn[i] - 'A' + 'a' : vn[i]);
    lower[i] = '\0';
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, "SELECT name FROM models WHERE instr(?, name) > 0 ORDER BY"
                           " length(name) DESC", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, strncmp(lower, "meta-", 5) == 0 ? lower + 5 : lower, -1,
                          SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            snprintf(model, sizeof model, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    if (c->o->model && strcasecmp(c->o->model, model) != 0)
        return 0;
    cdb_meas m = { .what = "cpu_overhead", .name = vn, .model = model, .gpu = c->gpu,
                   .weights = "bf16", .tp = (int)tp, .batch = (double)batch, .time_ms = t,
                   .std_ms = NAN };
    return vid_put(c, row, &m, err, errlen);
}

static int net_row(vid_ctx *c, const ccsv_row *row, char *err, size_t errlen)
{
    enum { MED, STD, WORKERS, SIZE, DPN };
    char med[64], sd[64];
    snprintf(med, sizeof med, "time_stats.%s.median", c->coll[0] == 'a' ? "all_reduce" : "send_recv");
    snprintf(sd, sizeof sd, "time_stats.%s.std", c->coll[0] == 'a' ? "all_reduce" : "send_recv");
    if (!c->resolved) {
        if (need(row, med, &c->c[MED], err, errlen) || need(row, sd, &c->c[STD], err, errlen) ||
            need(row, "num_workers", &c->c[WORKERS], err, errlen) ||
            need(row, "size", &c->c[SIZE], err, errlen) ||
            need(row, "devices_per_node", &c->c[DPN], err, errlen))
            return -1;
        c->resolved = 1;
    }
    double t, s, size;
    long workers, dpn;
    if (ccsv_range(row, c->c[MED], MS_MIN, MS_MAX, "ms", &t, err, errlen) ||
        ms_or_nan(row, c->c[STD], 0, &s, err, errlen) ||
        ccsv_range(row, c->c[SIZE], 1, 1e15, "bytes", &size, err, errlen) ||
        ccsv_int(row, c->c[WORKERS], 1, 100000, &workers, err, errlen) ||
        ccsv_int(row, c->c[DPN], 1, 100000, &dpn, err, errlen))
        return -1;
    char name[32];
    snprintf(name, sizeof name, "dpn%ld", dpn);
    cdb_meas m = { .what = c->coll, .name = name, .model = "", .gpu = c->gpu, .tp = (int)workers,
                   .bytes = size, .time_ms = t, .std_ms = s };
    return vid_put(c, row, &m, err, errlen);
}

static int vid_row(void *vctx, const ccsv_row *row, char *err, size_t errlen)
{
    vid_ctx *c = vctx;
    switch (c->kind) {
    case 0: return mlp_row(c, row, err, errlen);
    case 1: return attn_row(c, row, err, errlen);
    case 2: return cpu_row(c, row, err, errlen);
    default: return net_row(c, row, err, errlen);
    }
}

/* 1 when PATH (symbolic links followed) is a directory. */
static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* 1 when something is at PATH (what it is, ccsv_read checks), 0 when nothing is. */
static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* An expected file: 0 when present, -1 with "PATH: missing (expected WHAT)". */
static int expect(const char *path, const char *what, char *err, size_t errlen)
{
    if (exists(path))
        return 0;
    errmsg_set(err, errlen, "%s: missing (expected %s; the layout is that of "
               "shared/data/profiles/vidur)", path, what);
    return -1;
}

static int vid_file(vid_ctx *proto, int kind, const char *path, const char *gpu,
                    const char *model, const char *coll, char *err, size_t errlen)
{
    vid_ctx c = *proto;
    c.kind = kind;
    c.gpu = gpu;
    c.model = model;
    c.coll = coll;
    c.n = 0;
    c.resolved = 0;
    c.nops = 0;
    if (ccsv_read(path, vid_row, &c, err, errlen) != 0)
        return -1;
    proto->n += c.n;
    if (proto->o->log)
        fprintf(proto->o->log, "  %6ld rows  %s\n", c.n, path);
    return 0;
}

/* Sorted directory entries (deterministic import order); NULL-terminated array
 * the caller frees with free_names(), or NULL with *N == -1 on error. */
static char **list_dir(const char *path, int *n)
{
    struct dirent **ent = NULL;
    int k = scandir(path, &ent, NULL, alphasort);
    *n = k;
    if (k < 0)
        return NULL;
    char **names = calloc((size_t)k + 1, sizeof *names);
    int m = 0;
    for (int i = 0; i < k; i++) {
        if (names && ent[i]->d_name[0] != '.')
            names[m++] = strdup(ent[i]->d_name);
        free(ent[i]);
    }
    free(ent);
    *n = m;
    return names;
}

static void free_names(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* The geometry columns of an mlp.csv header's first data row, read with a
 * one-row pass. */
typedef struct geo_ctx {
    long g[5];               /* n_head, n_kv_head, n_embd, n_expanded_embd, vocab_size */
    int done;                /* first row read */
} geo_ctx;

static int geo_row(void *vctx, const ccsv_row *row, char *err, size_t errlen)
{
    geo_ctx *g = vctx;
    static const char *names[] = { "n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size" };
    if (g->done)
        return 0;
    for (int k = 0; k < 5; k++) {
        int col;
        if (need(row, names[k], &col, err, errlen) ||
            ccsv_int(row, col, 1, 100000000, &g->g[k], err, errlen))
            return -1;
    }
    g->done = 1;
    return 0;
}

static int import_compute(vid_ctx *c, const char *dir, long *files, char *err, size_t errlen)
{
    char p1[4096], p2[4400], p3[4800];
    snprintf(p1, sizeof p1, "%.4000s/compute", dir);
    int ng, no, nm;
    char **gpus = list_dir(p1, &ng);
    if (!gpus) {
        snprintf(err, errlen, "%s: cannot list: not a Vidur profile directory (expected compute/)", p1);
        return -1;
    }
    int rc = 0;
    for (int i = 0; gpus[i] && rc == 0; i++) {
        gpu_spec g;
        char e2[256];
        snprintf(p2, sizeof p2, "%s/%.255s", p1, gpus[i]);
        if (!is_dir(p2))
            continue;
        if (catalog_gpu(c->db, gpus[i], &g, e2, sizeof e2) != 0) {
            if (c->o->log) fprintf(c->o->log, "  skipped %s/%s: not a catalog GPU\n", p1, gpus[i]);
            continue;
        }
        if (c->o->gpu && strcasecmp(c->o->gpu, g.name) != 0)
            continue;
        char **orgs = list_dir(p2, &no);
        if (!orgs) {
            snprintf(err, errlen, "%s: cannot list: %s", p2, strerror(errno));
            rc = -1;
        }
        for (int j = 0; orgs && orgs[j] && rc == 0; j++) {
            snprintf(p3, sizeof p3, "%s/%.255s", p2, orgs[j]);
            if (!is_dir(p3))
                continue;
            char **models = list_dir(p3, &nm);
            if (!models) {
                snprintf(err, errlen, "%s: cannot list: %s", p3, strerror(errno));
                rc = -1;
            }
            for (int k = 0; models && models[k] && rc == 0; k++) {
                char path[8192];
                snprintf(path, sizeof path, "%s/%.255s", p3, models[k]);
                if (!is_dir(path))
                    continue;
                snprintf(path, sizeof path, "%s/%.255s/mlp.csv", p3, models[k]);
                /* Every model directory holds its operator profile. */
                if (expect(path, "the model's operator profile mlp.csv", err, errlen) != 0) { rc = -1; break; }
                geo_ctx geo = { .done = 0 };
                if (ccsv_read(path, geo_row, &geo, err, errlen) != 0) { rc = -1; break; }
                if (!geo.done) {
                    snprintf(err, errlen, "%s: no data rows after the header", path);
                    rc = -1;
                    break;
                }
                char model[48];
                int s = cimp_model_by_geometry(c->db, (int)geo.g[0], (int)geo.g[1], (int)geo.g[2],
                                               (int)geo.g[3], (int)geo.g[4], model, sizeof model);
                if (s < 0) { snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(c->db)); rc = -1; break; }
                if (s == 0) {
                    if (c->o->log)
                        fprintf(c->o->log, "  skipped %s: no catalog model with its geometry "
                                "(heads %ld, kv_heads %ld, hidden %ld, intermediate %ld)\n", path,
                                geo.g[0], geo.g[1], geo.g[2], geo.g[3]);
                    continue;
                }
                if (c->o->model && strcasecmp(c->o->model, model) != 0)
                    continue;
                rc = vid_file(c, 0, path, g.name, model, NULL, err, errlen);
                (*files)++;
            }
            free_names(models);
        }
        free_names(orgs);
    }
    free_names(gpus);
    return rc;
}

int cimp_vidur(sqlite3 *db, const char *dir, const cimp_opts *o, long *n, char *err,
               size_t errlen)
{
    if (check_filters(db, o, err, errlen) != 0)
        return -1;
    cdb_writer w;
    if (cdb_writer_open(&w, db, err, errlen) != 0)
        return -1;
    vid_ctx c = { .db = db, .w = &w, .o = o };
    char path[4096];
    long mlps = 0;
    int rc = import_compute(&c, dir, &mlps, err, errlen);
    if (rc == 0 && o->model && mlps == 0) {
        /* Its attention and network rows alone would make no profile. */
        errmsg_set(err, errlen, "%.4000s/compute: no operator profile (mlp.csv) of %s%s%s: nothing "
                   "imported", dir, o->model, o->gpu ? " on " : "", o->gpu ? o->gpu : "");
        rc = -1;
    }
    /* Attention and CPU overheads: a100 only in the published set; both expected. */
    int want_a100 = !o->gpu || strcasecmp(o->gpu, "a100") == 0;
    snprintf(path, sizeof path, "%.4000s/attention_a100/attention.csv", dir);
    if (rc == 0 && want_a100)
        rc = expect(path, "the A100 attention profile", err, errlen) ||
             vid_file(&c, 1, path, "a100", "", NULL, err, errlen) ? -1 : 0;
    snprintf(path, sizeof path, "%.4000s/attention_a100/cpu_overheads.csv", dir);
    if (rc == 0 && want_a100)
        rc = expect(path, "the A100 CPU overheads", err, errlen) ||
             vid_file(&c, 2, path, "a100", "", NULL, err, errlen) ? -1 : 0;
    char netdir[4096];
    snprintf(netdir, sizeof netdir, "%.4000s/network", dir);
    int nc;
    char **clusters = rc == 0 && is_dir(netdir) ? list_dir(netdir, &nc) : NULL;
    if (rc == 0 && is_dir(netdir) && !clusters) {
        errmsg_set(err, errlen, "%s: cannot list: %s", netdir, strerror(errno));
        rc = -1;
    }
    for (int i = 0; clusters && clusters[i] && rc == 0; i++) {
        /* Cluster "a100_dgx" belongs to GPU "a100". */
        if (o->gpu && (strncasecmp(clusters[i], o->gpu, strlen(o->gpu)) != 0 ||
                       clusters[i][strlen(o->gpu)] != '_'))
            continue;
        char p[8400], q[8400];
        snprintf(p, sizeof p, "%s/%.255s", netdir, clusters[i]);
        if (!is_dir(p))
            continue;
        snprintf(p, sizeof p, "%s/%.255s/all_reduce.csv", netdir, clusters[i]);
        snprintf(q, sizeof q, "%s/%.255s/send_recv.csv", netdir, clusters[i]);
        int have_p = exists(p), have_q = exists(q);
        if (!have_p && !have_q) {
            errmsg_set(err, errlen, "%s/%.255s: missing all_reduce.csv and send_recv.csv (a network "
                       "profile directory holds at least one)", netdir, clusters[i]);
            rc = -1;
        }
        if (rc == 0 && have_p)
            rc = vid_file(&c, 3, p, clusters[i], "", "allreduce", err, errlen);
        if (rc == 0 && have_q)
            rc = vid_file(&c, 3, q, clusters[i], "", "send_recv", err, errlen);
    }
    free_names(clusters);
    cdb_writer_close(&w);
    if (rc == 0 && c.n == 0) {
        snprintf(err, errlen, "%s: no Vidur profile rows found%s", dir,
                 o->model || o->gpu ? " for the --model/--gpu given" : "");
        rc = -1;
    }
    if (rc == 0)
        *n = c.n;
    return rc;
}

/* ---- power samples: nvidia-smi logs and utilization,power_w tables ------------- */

typedef struct power_ctx {
    cdb_writer w;
    const cimp_opts *o;
    int smi;                   /* 1: an nvidia-smi --format=csv log */
    int cu, cw, cg, ct, cn;    /* columns: utilisation, power, gpu, timestamp, name (-1: none) */
    long n;                    /* rows stored */
} power_ctx;

/* The column whose name, up to a blank or '[', is NAME (nvidia-smi writes
 * "utilization.gpu [%]" with --format=csv, "utilization.gpu" with nounits); -1. */
static int smi_col(const ccsv_row *row, const char *name)
{
    size_t k = strlen(name);
    for (size_t i = 0; i < row->nheader; i++)
        if (!strncmp(row->header[i], name, k) && (!row->header[i][k] || row->header[i][k] == ' ' || row->header[i][k] == '['))
            return (int)i;
    return -1;
}

/* Cell COL as a number followed by nothing or by UNIT ("87 %", "123.45 W";
 * blanks around), in [LO, HI].  Returns 0, or -1 with "FILE:LINE: column NAME:
 * ..." in ERR (nvidia-smi's "[N/A]" and "[Not Supported]" included). */
static int unit_num(const ccsv_row *row, int col, const char *unit, double lo, double hi, double *v, char *err,
                    size_t errlen)
{
    const char *s = row->field[col];
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end != s) {
        while (*end == ' ') end++;
        if (!strncmp(end, unit, strlen(unit))) end += strlen(unit);
        while (*end == ' ') end++;
    }
    if (end == s || *end || errno || !isfinite(*v) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
        errmsg_set(err, errlen, "%s:%ld: column %s: '%s' is not a number%s%s", row->path, row->line, row->header[col], s,
                   unit[0] ? " of " : "", unit);
        return -1;
    }
    if (!(*v >= lo && *v <= hi)) {
        errmsg_set(err, errlen, "%s:%ld: column %s: '%s' is out of range (expected %g to %g%s%s)", row->path, row->line,
                   row->header[col], s, lo, hi, unit[0] ? " " : "", unit);
        return -1;
    }
    return 0;
}

static int power_row(void *vctx, const ccsv_row *row, char *err, size_t errlen)
{
    power_ctx *c = vctx;
    if (c->cu < 0) {   /* the header: which format */
        c->cg = c->ct = c->cn = -1;
        if ((c->cw = smi_col(row, "power.draw")) >= 0) {
            c->smi = 1;
            c->cu = smi_col(row, "utilization.gpu");
            c->ct = smi_col(row, "timestamp");
            c->cn = smi_col(row, "name");
            if (c->cu < 0) {
                errmsg_set(err, errlen, "%s:1: column utilization.gpu: missing (nvidia-smi --query-gpu=timestamp,name,"
                           "utilization.gpu,power.draw --format=csv)", row->path);
                return -1;
            }
        } else {
            c->cu = ccsv_col(row, "utilization");
            c->cw = ccsv_col(row, "power_w");
            c->cg = ccsv_col(row, "gpu");
            if (c->cu < 0 || c->cw < 0) {
                errmsg_set(err, errlen, "%s:1: column %s: missing (expected utilization,power_w[,gpu], or an nvidia-smi "
                           "--format=csv log with utilization.gpu and power.draw)", row->path,
                           c->cu < 0 ? "utilization" : "power_w");
                return -1;
            }
        }
        if (!c->o->gpu && c->cg < 0) {
            errmsg_set(err, errlen, "%s: --gpu G is required (the GPU the samples are of%s%s%s)", row->path,
                       c->cn >= 0 ? "; the log names it '" : "", c->cn >= 0 ? row->field[c->cn] : "", c->cn >= 0 ? "'" : "");
            return -1;
        }
    }
    const char *gpu = c->o->gpu ? c->o->gpu : row->field[c->cg];
    if (c->o->gpu && c->cg >= 0 && strcasecmp(row->field[c->cg], c->o->gpu) != 0) return 0;   /* another GPU's */
    if (!gpu[0]) {
        errmsg_set(err, errlen, "%s:%ld: column gpu: empty", row->path, row->line);
        return -1;
    }
    double u, w;
    if (c->smi ? unit_num(row, c->cu, "%", 0, 100, &u, err, errlen)
               : unit_num(row, c->cu, "", 0, 1, &u, err, errlen))
        return -1;
    if (unit_num(row, c->cw, c->smi ? "W" : "", 0, POWER_MAX_W, &w, err, errlen)) return -1;
    if (!(w > 0)) {
        errmsg_set(err, errlen, "%s:%ld: column %s: '%s': a board power is > 0 W", row->path, row->line,
                   row->header[c->cw], row->field[c->cw]);
        return -1;
    }
    cdb_meas m = { .source = c->smi ? "nvidia-smi" : "csv", .what = "power", .name = "", .model = "", .gpu = gpu,
                   .weights = "", .tp = 1, .batch = c->smi ? u / 100 : u, .time_ms = w, .std_ms = NAN,
                   .device = c->cn >= 0 ? row->field[c->cn] : "", .driver = "",
                   .measured_at = c->ct >= 0 ? row->field[c->ct] : "", .tool = c->o->tool, .file = row->path,
                   .line = row->line };
    if (cdb_put(&c->w, &m, NULL, err, errlen) != 0) return -1;
    c->n++;
    return 0;
}

int cimp_power(sqlite3 *db, const char *path, const cimp_opts *o, long *n, char *err, size_t errlen)
{
    power_ctx c = { .o = o, .cu = -1 };
    if (cdb_writer_open(&c.w, db, err, errlen) != 0) return -1;
    int rc = ccsv_read(path, power_row, &c, err, errlen);
    cdb_writer_close(&c.w);
    if (rc == 0 && c.n == 0) {
        errmsg_set(err, errlen, "%s: no power samples%s%s", path, o->gpu ? " of GPU " : "", o->gpu ? o->gpu : "");
        rc = -1;
    }
    if (rc == 0) {
        *n = c.n;
        if (o->log) fprintf(o->log, "%s: %ld power samples\n", path, c.n);
    }
    return rc;
}

/* The rows of what = power of GPU (power.h, power_rows_fn): utilisation share
 * (batch) and watts (time_ms), in the order stored.  Returns the rows, -1 on a
 * database error. */
static int power_rows(sqlite3 *db, const char *gpu, void (*add)(void *, double, double), void *ctx, char *err,
                      size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT batch, time_ms FROM calib_meas WHERE what = 'power' AND gpu = ?1 ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        /* no calibration tables: nothing stored */
        return 0;
    }
    sqlite3_bind_text(st, 1, gpu, -1, SQLITE_STATIC);
    int n = 0, s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        add(ctx, sqlite3_column_double(st, 0), sqlite3_column_double(st, 1));
        n++;
    }
    if (s != SQLITE_DONE) {
        errmsg_set(err, errlen, "calibration store: %s", sqlite3_errmsg(db));
        n = -1;
    }
    sqlite3_finalize(st);
    return n;
}

void cimp_power_register(void) { power_set_loader(power_rows); }

/* The loader of stored send/recv profiles for a decode pool's KV link
 * (llm/llmcfg.h, llm_link_prof_fn): rows of what = 'send_recv' between 2 GPUs
 * stored under gpu NAME, Vidur's of devices_per_node DPN (name "dpn<DPN>") or
 * nccl-tests' (any name), the latest at each size. */
static int load_link(sqlite3 *db, const char *name, int dpn, double **bytes, double **sec, int *n, char *err,
                     size_t errlen)
{
    sqlite3_stmt *st = NULL;
    *bytes = *sec = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db,
            "SELECT bytes, time_ms FROM calib_meas WHERE id IN (SELECT max(id) FROM calib_meas"
            " WHERE what = 'send_recv' AND gpu = ?1 AND tp = 2 AND bytes > 0 AND (source = 'nccl' OR name = ?2)"
            " GROUP BY bytes) ORDER BY bytes", -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);   /* no calibration tables: no profile */
        return 0;
    }
    char dn[32];
    snprintf(dn, sizeof dn, "dpn%d", dpn);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, dn, -1, SQLITE_TRANSIENT);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((size_t) *n == cap) {
            cap = cap ? 2 * cap : 256;
            double *b = realloc(*bytes, cap * sizeof *b);
            if (b) *bytes = b;
            double *s = b ? realloc(*sec, cap * sizeof *s) : NULL;
            if (s) *sec = s;
            if (!b || !s) {
                sqlite3_finalize(st);
                errmsg_set(err, errlen, "out of memory");
                return -1;
            }
        }
        (*bytes)[*n] = sqlite3_column_double(st, 0);
        (*sec)[*n] = sqlite3_column_double(st, 1) * 1e-3;
        (*n)++;
    }
    if (rc != SQLITE_DONE) {
        errmsg_set(err, errlen, "reading the send_recv profile: %s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return *n > 0;
}

void cimp_link_register(void) { llm_set_link_profile(load_link); }
