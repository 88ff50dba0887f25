/* calib.c -- `latsim calib` (measurement store, importers, fits, microbenchmarks)
 * and `latsim cost` (one step time from a chosen cost model).
 *
 * Argument parsing, the database transaction around each writing command and the
 * exit codes live here; the work is in calib/.  Exit codes: 0 done, 1 runtime
 * failure, 2 bad input (usage, file, database contents).  `latsim cost` is
 * costcmd.c's (calibcli.h: what the two share).
 */
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
#include "calibcli.h"

#ifndef LATSIM_VERSION
#define LATSIM_VERSION "0.1"
#endif

/* Prints "latsim: MSG" as one printable line (control characters escaped). */
void cal_say(const char *msg)
{
    char line[4096];
    fprintf(stderr, "latsim: %s\n", errmsg_field(msg, line, sizeof line));
}

int cal_fail(int code, const char *msg)
{
    cal_say(msg);
    return code;
}

/* Options shared by the calib subcommands. */
typedef struct opts {
    const char *db;           /* --db */
    const char *model;        /* --model */
    const char *gpu;          /* --gpu */
    const char *weights;      /* --weights */
    long tp;                  /* --tp (0 = not given) */
    long gpus;                /* --gpus (0 = not given) */
    long folds;               /* --folds (0 = default) */
    int data;                 /* --data: COBSFIT_BOTH ... (calib fit observed) */
    double max_min;           /* --max-minutes: minutes (calib fit observed; default 60, 0 no bound) */
    int progress;             /* --progress (calib fit observed) */
    int no_prior;             /* --prior none (calib fit): the steps alone */
    const char *source;       /* --source S (export) */
    const char *target;       /* --target HOST:PORT (net) */
    const char *sizes;        /* --sizes LIST (net) */
    const char *tokens;       /* --tokens LIST */
    const char *batches;      /* --batches LIST */
    const char *contexts;     /* --contexts LIST */
    const char *prompts;      /* --prompts LIST */
    long repeats;             /* --repeats (0 = default) */
    long threads;             /* --threads (0 = the BLAS default) */
    const char *corpus;       /* --corpus DIR (train) */
    const char *out;          /* --out FILE (train) */
    const char *cmd;          /* the command, "calib import" */
    char **pos;               /* the arguments after the command's name */
    int npos;                 /* how many */
} opts;

int cal_parse_long(const char *opt, const char *v, long lo, long hi, long *out, char *err,
                      size_t n)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end || errno || x < lo || x > hi) {
        snprintf(err, n, "%s: expected a whole number in %ld..%ld, got '%s'", opt, lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* The options of the calib commands (each command's table lists those it takes). */
enum { O_MODEL = 1, O_GPU, O_WEIGHTS, O_TP, O_FOLDS, O_SOURCE, O_TARGET, O_SIZES, O_TOKENS, O_BATCHES, O_CONTEXTS,
       O_PROMPTS, O_REPEATS, O_THREADS, O_GPUS, O_DATA, O_CORPUS, O_OUT, O_MAXMIN, O_PROGRESS, O_PRIOR };

#define OPT_MODEL(flags)  { "model", O_MODEL, "M", "the model (a catalog name)", flags }
#define OPT_TP            { "tp", O_TP, "T", "tensor-parallel degree (1 to 1024)", 0 }
#define OPT_LISTS                                                                                   \
    { "tokens", O_TOKENS, "LIST", "token counts of the GEMMs timed (comma-separated)", 0 },          \
    { "batches", O_BATCHES, "LIST", "decode batch sizes timed", 0 },                                 \
    { "contexts", O_CONTEXTS, "LIST", "decode context lengths timed", 0 },                           \
    { "prompts", O_PROMPTS, "LIST", "prefill prompt lengths timed", 0 },                             \
    { "repeats", O_REPEATS, "N", "timings of each (1 to 10000)", 0 }

static const cli_opt LIST_OPTS[] = { CLI_OPT_DB, { NULL } };
static const cli_opt IMPORT_OPTS[] = {
    OPT_MODEL(0),
    { "gpu", O_GPU, "G", "the GPU (a catalog name) of the measurements (nccl: required; power: unless the file has a gpu column)", 0 },
    { "gpus", O_GPUS, "N", "nccl: GPUs of the run (default: its '# nThread T nGpus G' line)", 0 },
    CLI_OPT_DB, { NULL },
};
static const cli_opt FIT_OPTS[] = {
    OPT_MODEL(CLI_REQUIRED),
    { "gpu", O_GPU, "G", "the GPU (a catalog name)", CLI_REQUIRED },
    { "tp", O_TP, "T", "tensor-parallel degree (fit profile: required)", 0 },
    { "weights", O_WEIGHTS, "P", "weight precision of the fitted model (bf16, fp8...)", 0 },
    { "folds", O_FOLDS, "K", "cross-validation folds (2 to 100)", 0 },
    { "data", O_DATA, "D", "observed: fit both (default), requests (the runs), steps (imported steps, engine logs) or none (the prior)", 0 },
    { "max-minutes", O_MAXMIN, "M", "observed: stop the fit after M minutes of wall-clock time, nothing stored (default 60; 0: no bound)", 0 },
    { "progress", O_PROGRESS, NULL, "observed: a progress line on stderr every second even when it is not a terminal", 0 },
    { "prior", O_PRIOR, "P", "fitted: learned (default: a posterior toward the learned default) or none (the steps alone)", 0 },
    CLI_OPT_DB, { NULL },
};
static const cli_opt EXPORT_OPTS[] = {
    { "source", O_SOURCE, "S", "only the measurements of source S", 0 },
    CLI_OPT_DB, { NULL },
};
static const cli_opt CPU_OPTS[] = {
    OPT_MODEL(CLI_REQUIRED), OPT_TP, OPT_LISTS,
    { "threads", O_THREADS, "N", "BLAS threads (default: the BLAS default)", 0 },
    CLI_OPT_DB, { NULL },
};
static const cli_opt GPU_OPTS[] = {
    OPT_MODEL(CLI_REQUIRED), OPT_TP,
    { "gpu", O_GPU, "G", "the catalog GPU of the device (default: from the device's name)", 0 },
    OPT_LISTS,
    CLI_OPT_DB, { NULL },
};
static const cli_opt NET_OPTS[] = {
    { "target", O_TARGET, "HOST:PORT", "a latsim echo server (default: one started on 127.0.0.1)", 0 },
    { "sizes", O_SIZES, "LIST", "payload sizes, bytes (at least 3)", 0 },
    { "repeats", O_REPEATS, "N", "round trips per size (default 200)", 0 },
    CLI_OPT_DB, { NULL },
};

static const cli_opt TRAIN_OPTS[] = {
    { "corpus", O_CORPUS, "DIR", "the corpus (default tests/data/corpus: its README.md)", 0 },
    { "out", O_OUT, "FILE.c", "write the trained table as C source (calib/clearn_coef.c to replace the compiled-in one)", 0 },
    { NULL },
};

static const char *const BAD_INPUT = "Bad input: one line naming the file, line and column; exit 2; database untouched.\n";

static const cli_cmd CALIB_LIST = { "calib list", "", "Lists the measurements and calibrated models in the database.\n", "", LIST_OPTS, 0, 0 };
static const cli_cmd CALIB_SHOW = { "calib show", "ID", "Prints calibrated model ID (latsim calib list): its coefficients, errors and provenance.\n",
                                    "", LIST_OPTS, 0, 0 };
static const cli_cmd CALIB_IMPORT = {
    "calib import", "vidur DIR\nsteps FILE.csv\nmeas FILE.csv\nnccl FILE --gpu G\npower FILE.csv [--gpu G]",
    "Imports measurements, all or none: Vidur operator profiles (DIR/compute/,\n"
    "attention_a100/, network/); whole-step times (FILE.csv:\n"
    "model,gpu,tp,phase,batch_size,tokens,step_ms[,weights,source]); or measurements\n"
    "exported by latsim calib export; or nccl-tests output (all_reduce_perf,\n"
    "alltoall_perf, sendrecv_perf) of --gpu G; or GPU power samples: an nvidia-smi\n"
    "log (--query-gpu=timestamp,name,utilization.gpu,power.draw --format=csv) or a\n"
    "table utilization,power_w[,gpu] (utilization 0..1), for power_curve = calib.\n",
    "", IMPORT_OPTS, 0, 0,
};
static const cli_cmd CALIB_FIT = {
    "calib fit", "[fitted]\nprofile\nobserved",
    "fitted: fits the parametric step model to the imported steps, as a posterior\n"
    "toward the learned default (--prior none: the steps alone); profile: builds\n"
    "the operator-profile model of --tp T from imported profiles; observed: fits the\n"
    "step model's coefficients so that replays of the stored observed runs of --model\n"
    "on --gpu (latsim calib import observed) reproduce their TTFT, TPOT and E2E.\n"
    "Prints the model (R2, cross-validated MAPE, coefficients) and stores it.\n",
    "", FIT_OPTS, 0, 0,
};
static const cli_cmd CALIB_EXPORT = {
    "calib export", "FILE.csv",
    "Writes the measurements (of source S) as CSV (FILE.csv - : standard output);\n"
    "latsim calib import meas FILE.csv reads it.\n",
    "", EXPORT_OPTS, 0, 0,
};
static const cli_cmd CALIB_CPU = {
    "calib cpu", "",
    "Times the model's layer GEMMs (OpenBLAS), attention and memory bandwidth on this\n"
    "CPU; stores them and catalog GPU 'cpu'.\n",
    "", CPU_OPTS, 0, 0,
};
static const cli_cmd CALIB_GPU = {
    "calib gpu", "",
    "Times the same on CUDA GPU 0 (cuBLAS; needs make CUDA=1) and stores them.\n",
    "", GPU_OPTS, 0, 0,
};
static const cli_cmd CALIB_NET = {
    "calib net", "",
    "Times TCP round trips (to a latsim echo it starts on 127.0.0.1, or to\n"
    "HOST:PORT), fits base + bytes / bandwidth, and times JSON against binary encoding.\n",
    "", NET_OPTS, 0, 0,
};

static const cli_cmd CALIB_TRAIN = {
    "calib train", "",
    "Trains the learned step model (docs/learned.md) on the corpus: GSL's\n"
    "Levenberg-Marquardt on log(predicted / measured), coefficients per GPU and engine\n"
    "shrunk toward their vendor's and the cross-engine means; then leave-one-GPU-,\n"
    "engine- and model-out cross-validation.  Prints the fit; --out writes the table.\n",
    "", TRAIN_OPTS, 0, 0,
};

/* cli_opt_fn of the calib commands: CTX is the opts. */
static int calib_opt(void *ctx, int id, const char *v)
{
    opts *o = ctx;
    char err[300];
    int bad = 0;
    switch (id) {
    case O_MODEL: o->model = v; break;
    case O_GPU: o->gpu = v; break;
    case O_WEIGHTS: o->weights = v; break;
    case O_SOURCE: o->source = v; break;
    case O_DATA:
        o->data = !strcmp(v, "both") ? 0 : !strcmp(v, "requests") ? 1 : !strcmp(v, "steps") ? 2 : !strcmp(v, "none") ? 3 : -1;
        if (o->data < 0) return cu_die(2, "%s: --data: expected both, requests, steps or none, got '%s'", o->cmd, v);
        break;
    case O_MAXMIN: {
        char *end;
        errno = 0;
        double m = strtod(v, &end);
        if (!*v || *end || errno || strpbrk(v, "xX") || !(m >= 0 && m <= 1e6))
            return cu_die(2, "%s: --max-minutes: expected minutes in 0..1e6 (0: no bound), got '%s'", o->cmd, v);
        o->max_min = m;
        break;
    }
    case O_PROGRESS: o->progress = 1; break;
    case O_PRIOR:
        o->no_prior = !strcmp(v, "none") ? 1 : !strcmp(v, "learned") ? 0 : -1;
        if (o->no_prior < 0) return cu_die(2, "%s: --prior: expected learned or none, got '%s'", o->cmd, v);
        break;
    case O_TARGET: o->target = v; break;
    case O_SIZES: o->sizes = v; break;
    case O_TOKENS: o->tokens = v; break;
    case O_BATCHES: o->batches = v; break;
    case O_CONTEXTS: o->contexts = v; break;
    case O_PROMPTS: o->prompts = v; break;
    case O_CORPUS: o->corpus = v; break;
    case O_OUT: o->out = v; break;
    case O_TP: bad = cal_parse_long("--tp", v, 1, 1024, &o->tp, err, sizeof err); break;
    case O_GPUS: bad = cal_parse_long("--gpus", v, 1, 1024, &o->gpus, err, sizeof err); break;
    case O_FOLDS: bad = cal_parse_long("--folds", v, 2, 100, &o->folds, err, sizeof err); break;
    case O_REPEATS: bad = cal_parse_long("--repeats", v, 1, 10000, &o->repeats, err, sizeof err); break;
    default: bad = cal_parse_long("--threads", v, 1, 1024, &o->threads, err, sizeof err); break;   /* O_THREADS */
    }
    return bad ? cu_die(2, "%s: %s", o->cmd, err) : 0;
}

/* Opens an existing latsim database read-only (list, show, export, cost): nothing
 * is created or written, an empty or foreign file is refused unchanged, and a
 * database without calibration tables reads as holding none. */
int cal_open_readonly(const char *path, sqlite3 **db, char *err, size_t n)
{
    if (access(path, F_OK) != 0) {
        snprintf(err, n, "%s: no such database (import measurements first, or give --db PATH)", path);
        return -1;
    }
    if (store_open_readonly(path, db, err, n) != 0)
        return -1;
    if (cdb_init_readonly(*db, err, n) != 0) {
        store_close(*db);
        *db = NULL;
        return -1;
    }
    return 0;
}

/* An import (cmd_import, through cu_write_db). */
typedef struct import_job {
    const opts *o;            /* the command's options */
    long n;                   /* out: measurements imported */
    int64_t before;           /* out: measurements in the database before */
} import_job;

/* cu_write_fn of `calib import`: the calibration tables and the rows, inside the
 * one transaction.  Returns 0, or 2 (bad input; ERR says which file and line). */
static int import_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    import_job *j = arg;
    const opts *o = j->o;
    cimp_opts io = { .model = o->model, .gpu = o->gpu, .tool = "latsim " LATSIM_VERSION,
                     .log = dry ? NULL : stdout };
    if (cdb_init(db, err, n) != 0)
        return 2;
    j->before = cdb_count(db, NULL, NULL, NULL);
    j->n = 0;
    int s = !strcmp(o->pos[0], "vidur") ? cimp_vidur(db, o->pos[1], &io, &j->n, err, n)
            : !strcmp(o->pos[0], "meas") ? cimp_meas(db, o->pos[1], &io, &j->n, err, n)
            : !strcmp(o->pos[0], "nccl") ? cimp_nccl(db, o->pos[1], &io, (int)o->gpus, &j->n, err, n)
            : !strcmp(o->pos[0], "power") ? cimp_power(db, o->pos[1], &io, &j->n, err, n)
                                         : cimp_steps(db, o->pos[1], &io, &j->n, err, n);
    return s == 0 ? 0 : 2;
}

/* `calib import`: the files are read and checked before anything is written (a
 * new database is not created, an existing one is not given the calibration
 * tables, when they are refused). */
static int cmd_import(const opts *o)
{
    char err[2048];
    if (o->npos != 2
        || (strcmp(o->pos[0], "vidur") && strcmp(o->pos[0], "steps") && strcmp(o->pos[0], "meas")
            && strcmp(o->pos[0], "nccl") && strcmp(o->pos[0], "power")))
        return cal_fail(2, "calib import: expected 'vidur DIR', 'steps FILE.csv', 'meas FILE.csv', 'nccl FILE' or "
                    "'power FILE.csv'");
    /* The one check of the input before any work: a FIFO would block, a device never end. */
    int bad = !strcmp(o->pos[0], "vidur") ? cu_check_in_dir("calib import vidur", NULL, o->pos[1], err, sizeof err)
              : cu_check_in("calib import", o->pos[0], o->pos[1], INFILE_MAX_TABLE, err, sizeof err);
    if (bad) return cal_fail(2, err);
    import_job j = { .o = o };
    int rc = cu_write_db(cu_db_path(o->db), import_write, &j, NULL, err, sizeof err);
    if (rc != 0)
        return cal_fail(rc, err);
    printf("imported %ld measurements from %s (%lld in the database)\n", j.n, ERRMSG_SHOWN(o->pos[1]),
           (long long)(j.before + j.n));
    return 0;
}

/* A fit (cmd_fit, through cu_write_db). */
typedef struct fit_job {
    const opts *o;            /* the command's options */
    const char *kind;         /* "fitted", "profile" or "observed" */
    int64_t id;               /* out: the stored fit */
    char *report;             /* out: observed: the replay errors (malloc'd) */
} fit_job;

/* cu_write_fn of `calib fit`.  Returns 0, or 2 (ERR says why). */
static int fit_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    (void)dry;
    fit_job *j = arg;
    const opts *o = j->o;
    if (cdb_init(db, err, n) != 0)
        return 2;
    if (!strcmp(j->kind, "observed")) {
        size_t len = 0;
        free(j->report);
        j->report = NULL;
        FILE *rep = open_memstream(&j->report, &len);
        calib_fit_observed_bounds(o->max_min * 60, o->progress || isatty(2) ? stderr : NULL, 1);
        int rc = calib_fit_observed(db, o->model, o->gpu, o->weights, (int)o->tp, o->data, LATSIM_VERSION, rep, &j->id, err, n);
        if (rep) fclose(rep);
        return rc;
    }
    return calib_fit(db, j->kind, o->model, o->gpu, (int)o->tp, o->weights, (size_t)o->folds, !o->no_prior, LATSIM_VERSION, &j->id,
                     err, n) != 0 ? 2 : 0;
}

static int cmd_fit(const opts *o)
{
    char err[2048];
    const char *kind = o->npos >= 1 ? o->pos[0] : "fitted";
    if (o->npos > 1 || (strcmp(kind, "fitted") && strcmp(kind, "profile") && strcmp(kind, "observed")))
        return cal_fail(2, "calib fit: expected 'fitted', 'profile' or 'observed' (see latsim calib fit --help)");
    if (!strcmp(kind, "profile") && !o->tp)
        return cal_fail(2, "calib fit profile: --tp T is required");
    const char *path = cu_db_path(o->db);
    if (access(path, F_OK) != 0) {
        snprintf(err, sizeof err, "%s: no such database (import measurements first, or give --db PATH)", path);
        return cal_fail(2, err);
    }
    /* One transaction: a refused fit leaves the file as it was (no tables added). */
    fit_job j = { .o = o, .kind = kind };
    sqlite3 *db = NULL;
    int rc = cu_write_db(path, fit_write, &j, &db, err, sizeof err);
    if (rc != 0) {
        free(j.report);
        return cal_fail(rc, err);
    }
    rc = cdb_show(db, j.id, stdout, err, sizeof err) == 0 ? 0 : 1;
    if (rc)
        cal_say(err);
    else if (j.report)
        fputs(j.report, stdout);
    free(j.report);
    store_close(db);
    return rc;
}

/* One list option: the user's, else DEF.  Returns the count or -1 (ERR set). */
static int list_opt(const char *opt, const char *given, const char *def, int *out, int max, char *err, size_t n)
{
    int k = cb_parse_list(given ? given : def, out, max);
    if (k < 0)
        snprintf(err, n, "calib: %s: expected comma-separated whole numbers in 1..10000000 (at most %d), got '%s'",
                 opt, max, given ? given : def);
    return k;
}

/* What bench_write stores (cmd_bench). */
typedef struct bench_job {
    const calib_bench *b;     /* what was timed, and where */
    long n;                   /* out: measurements stored */
} bench_job;

/* cu_write_fn of `calib cpu` / `calib gpu`.  Returns 0, 1 (the database) or 2. */
static int bench_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    (void)dry;
    bench_job *j = arg;
    return calib_bench_store(db, j->b, "latsim " LATSIM_VERSION, &j->n, err, n);
}

/* `calib cpu` and `calib gpu`: plan (catalog look-ups only), time, then store
 * in one transaction (the database is opened for writing only then). */
static int cmd_bench(const opts *o, int gpu)
{
    char err[2048];
    const char *cmd = gpu ? "calib gpu" : "calib cpu";
    if (o->npos != 0) return cu_die(2, "%s: unexpected argument '%s' (see latsim %s --help)", cmd, o->pos[0], cmd);
    if (gpu && !cb_gpu_available(err, sizeof err))
        return cal_fail(2, err);
    int tok[64], bat[16], ctx[16], pr[16];
    int ntok = list_opt("--tokens", o->tokens, gpu ? "1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384" : "1,4,16,64",
                        tok, 64, err, sizeof err);
    int nb = ntok < 0 ? -1 : list_opt("--batches", o->batches, gpu ? "1,4,16,64,256" : "1,8", bat, 16, err, sizeof err);
    int nc = nb < 0 ? -1 : list_opt("--contexts", o->contexts, gpu ? "128,512,2048,8192" : "128,1024", ctx, 16, err, sizeof err);
    int np = nc < 0 ? -1 : list_opt("--prompts", o->prompts, gpu ? "128,512,2048,4096,8192" : "64,128,256,512", pr, 16, err, sizeof err);
    if (np < 0)
        return cal_fail(2, err);
    const char *path = cu_db_path(o->db);
    sqlite3 *db = NULL;
    /* Checked now, not after the timing; written only to store its results. */
    if (cu_check_db(path, err, sizeof err) != 0 || store_open_lookup(path, &db, err, sizeof err) != 0)
        return cal_fail(2, err);
    calib_bench_req r = { .gpu = gpu, .model = o->model, .tp = (int)o->tp, .tokens = tok, .ntok = ntok, .batches = bat,
                          .nbatch = nb, .contexts = ctx, .nctx = nc, .prompts = pr, .nprompt = np, .repeats = (int)o->repeats,
                          .threads = (int)o->threads, .gpu_name = o->gpu };
    calib_bench *b = NULL;
    int rc = calib_bench_plan(db, &r, &b, err, sizeof err);
    if (rc == 0) rc = calib_bench_run(b, db, err, sizeof err);
    store_close(db);
    bench_job j = { .b = b };
    if (rc == 0 && (rc = cu_write_db(path, bench_write, &j, NULL, err, sizeof err)) == 0) {
        calib_bench_info in;
        calib_bench_info_of(b, &in);
        printf("stored %ld measurements of %s (tp %d) on %s (%s; %s)\n", j.n, ERRMSG_SHOWN(in.model), in.tp, ERRMSG_SHOWN(in.gpu),
               ERRMSG_SHOWN(in.device), ERRMSG_SHOWN(in.driver));
        if (!gpu) printf("catalog gpu 'cpu': fp32 GEMM peak %.3g GFLOP/s, memory %.3g GB/s\n", in.gflops, in.gbs);
        printf("next: latsim calib fit profile --model %s --gpu %s --tp %d\n", ERRMSG_SHOWN(in.model), ERRMSG_SHOWN(in.gpu), in.tp);
    }
    if (rc) cal_say(err);
    calib_bench_free(b);
    return rc;
}

/* cu_write_fn of `calib net`: ARG is the calib_net_job.  Returns 0, 1 (out of
 * memory) or 2 (ERR says why). */
typedef struct net_job {
    calib_net_meas m;         /* what was measured */
    calib_net_fit fit;        /* out: its fit and the stored profile */
} net_job;

static int net_write(sqlite3 *db, int dry, void *arg, char *err, size_t n)
{
    (void)dry;
    net_job *j = arg;
    return calib_net_store(db, &j->m, &j->fit, err, n);
}

/* `calib net`: round trips, their fit, codec timings; stored in one transaction. */
static int cmd_net(const opts *o)
{
    char err[2048], host[256] = "127.0.0.1", label[300] = "loopback";
    int port = 0, lfd = -1;
    pid_t child = -1;
    int sz[32];
    if (o->npos != 0) return cu_die(2, "calib net: unexpected argument '%s' (see latsim calib net --help)", o->pos[0]);
    int ns = list_opt("--sizes", o->sizes, "64,256,1024,4096,16384,65536,262144,1048576", sz, 32, err, sizeof err);
    if (ns < 0) return cal_fail(2, err);
    if (ns < 3) return cal_fail(2, "calib net: need at least 3 sizes to fit base + bytes / bandwidth");
    const char *path = cu_db_path(o->db);
    /* Checked now, not after the measuring; written only to store its results. */
    if (cu_check_db(path, err, sizeof err) != 0) return cal_fail(2, err);
    int reps = o->repeats ? (int)o->repeats : 200;
    if (o->target) {
        const char *colon = strrchr(o->target, ':');
        long p = 0;
        if (!colon || colon == o->target || (size_t)(colon - o->target) >= sizeof host ||
            cal_parse_long("calib net: --target port", colon + 1, 1, 65535, &p, err, sizeof err)) {
            snprintf(err, sizeof err, "calib net: --target: expected HOST:PORT, got '%s'", o->target);
            return cal_fail(2, err);
        }
        snprintf(host, sizeof host, "%.*s", (int)(colon - o->target), o->target);
        port = (int)p;
        snprintf(label, sizeof label, "%s", o->target);
    } else {
        /* Our own echo server on loopback, in a child process. */
        lfd = cnet_listen("127.0.0.1", 0, &port, err, sizeof err);
        if (lfd < 0) return cal_fail(1, err);
        fflush(stdout);
        child = fork();
        if (child < 0) { close(lfd); return cal_fail(1, "calib net: fork failed"); }
        if (child == 0) {
            static volatile int stop = 0;
            cnet_serve(lfd, &stop);
            _exit(0);
        }
        close(lfd);
    }
    size_t sizes[32];
    for (int i = 0; i < ns; i++) sizes[i] = (size_t)sz[i];
    cnet_rtt rtt[32];
    cnet_codec cod;
    int m = cnet_measure(host, port, sizes, ns, reps, rtt, err, sizeof err);
    if (child > 0) {
        kill(child, SIGTERM);
        waitpid(child, NULL, 0);
    }
    if (m != 0) return cal_fail(2, err);
    if (cnet_codec_time(4096, 2000, &cod, err, sizeof err) != 0) return cal_fail(1, err);
    printf("round trips to %s (%s:%d), %d per size\n  %10s %10s %10s %10s %10s\n", ERRMSG_SHOWN(label), ERRMSG_SHOWN(host), port,
           reps, "bytes",
           "p50_ms", "p90_ms", "p99_ms", "mean_ms");
    for (int i = 0; i < ns; i++)
        printf("  %10zu %10.4g %10.4g %10.4g %10.4g\n", rtt[i].bytes, rtt[i].p50, rtt[i].p90, rtt[i].p99, rtt[i].mean);
    printf("chat request (4096-character prompt): JSON %zu bytes, encode %.3g us, decode %.3g us; "
           "binary %zu bytes, encode %.3g us, decode %.3g us\n", cod.json_bytes, cod.json_encode_us, cod.json_decode_us,
           cod.bin_bytes, cod.bin_encode_us, cod.bin_decode_us);
    char hostname[128] = "", when[32];
    gethostname(hostname, sizeof hostname - 1);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    net_job j = { .m = { .rtt = rtt, .ns = ns, .reps = reps, .cod = &cod, .label = label, .hostname = hostname, .when = when,
                         .tool = "latsim " LATSIM_VERSION } };
    int rc = cu_write_db(path, net_write, &j, NULL, err, sizeof err);
    if (rc != 0) return cal_fail(rc, err);
    printf("fit: latency = %.4g ms + bytes / %.4g GB/s (R2 %.4f, cv_mape %.3g %%): network profile %lld\n", j.fit.base_ms,
           j.fit.ms_per_mb > 0 ? 1.0 / j.fit.ms_per_mb : INFINITY, j.fit.r2, j.fit.mape, (long long)j.fit.id);
    return 0;
}

enum { O_HOST = 1, O_PORT };

static const cli_opt ECHO_OPTS[] = {
    { "host", O_HOST, "ADDR", "the address to listen on (default 127.0.0.1)", 0 },
    { "port", O_PORT, "P", "the port (default 0: any free one, printed)", 0 },
    { NULL },
};

static const cli_cmd ECHO = {
    "echo", "",
    "A TCP echo server for latsim calib net --target (frames: 4-byte big-endian\n"
    "length, payload).\n",
    "", ECHO_OPTS, 0, 0,
};

/* What echo was asked. */
typedef struct echo_opts {
    const char *host;         /* --host */
    long port;                /* --port */
} echo_opts;

/* cli_opt_fn of echo: CTX is the echo_opts. */
static int echo_opt(void *ctx, int id, const char *v)
{
    echo_opts *o = ctx;
    char err[300];
    if (id == O_HOST) o->host = v;
    else if (cal_parse_long("echo: --port", v, 0, 65535, &o->port, err, sizeof err)) return cal_fail(2, err);
    return 0;
}

int echo_main(int argc, char **argv)
{
    echo_opts o = { "127.0.0.1", 0 };
    cli_args a;
    char err[512];
    int rc = cli_parse(&ECHO, argc, argv, &a, echo_opt, &o);
    if (rc != CLI_GO) return rc;
    if (a.npos > 0) return cu_die(2, "echo: unexpected argument '%s' (see latsim echo --help)", a.pos[0]);
    const char *host = o.host;
    long port = o.port;
    int bound, fd = cnet_listen(host, (int)port, &bound, err, sizeof err);
    if (fd < 0) {
        char e2[600];
        snprintf(e2, sizeof e2, "echo: %s", err);
        return cal_fail(2, e2);
    }
    printf("latsim echo: listening on %s:%d\n", ERRMSG_SHOWN(host), bound);
    fflush(stdout);
    static volatile int stop = 0;
    cnet_serve(fd, &stop);
    close(fd);
    return 0;
}

/* `calib export FILE.csv`: the output path is checked before the database is read. */
static int cmd_export(const opts *o)
{
    char err[2048];
    if (o->npos != 1) return cal_fail(2, "calib export: expected FILE.csv (- for stdout)");
    sqlite3 *db = NULL;
    int to_file = strcmp(o->pos[0], "-") != 0;
    if (to_file && cu_check_out("calib export", NULL, o->pos[0], err, sizeof err) != 0) return cal_fail(2, err);
    if (cal_open_readonly(cu_db_path(o->db), &db, err, sizeof err) != 0) return cal_fail(2, err);
    FILE *f = to_file ? cu_open_out("calib export", NULL, o->pos[0], err, sizeof err) : stdout;
    if (!f) {
        store_close(db);
        return cal_fail(2, err);
    }
    long n = cdb_export(db, o->source, f, err, sizeof err);
    store_close(db);
    if (to_file && cu_close_out("calib export", NULL, o->pos[0], f, n < 0 ? NULL : err, n < 0 ? 0 : sizeof err) != 0)
        n = -1;
    if (n < 0) return cal_fail(1, err);
    if (to_file) printf("exported %ld measurements to %s\n", n, ERRMSG_SHOWN(o->pos[0]));
    return 0;
}

/* `calib list` and `calib show ID` (SHOW 1). */
static int cmd_list_show(const opts *o, int show)
{
    char err[2048];
    sqlite3 *db = NULL;
    int64_t id = 0;
    if (show && o->npos != 1) return cal_fail(2, "calib show: expected one model ID (see latsim calib list)");
    if (show && cu_parse_id("model", o->pos[0], &id, err, sizeof err) != 0)
        return cu_die(2, "calib show: %.500s (see latsim calib list)", err);
    if (!show && o->npos != 0) return cal_fail(2, "calib list: unexpected argument");
    if (cal_open_readonly(cu_db_path(o->db), &db, err, sizeof err) != 0) return cal_fail(2, err);
    int s = show ? cdb_show(db, id, stdout, err, sizeof err) : cdb_list(db, stdout, err, sizeof err);
    store_close(db);
    return s != 0 ? cal_fail(s == 1 ? 2 : 1, err) : 0;
}

/* `calib train [--corpus DIR] [--out FILE.c]`. */
static int cmd_train(const opts *o)
{
    char err[2048] = "";
    if (o->npos) return cal_fail(2, "calib train: unexpected argument (see latsim calib train --help)");
    if (o->out && cu_check_out("calib train", "--out", o->out, err, sizeof err) != 0) return cal_fail(2, err);
    FILE *f = o->out ? cu_open_out("calib train", "--out", o->out, err, sizeof err) : NULL;
    if (o->out && !f) return cal_fail(2, err);
    int rc = clearn_train(o->corpus ? o->corpus : "tests/data/corpus", f, stdout, err, sizeof err);
    if (f && cu_close_out("calib train", "--out", o->out, f, rc ? NULL : err, rc ? 0 : sizeof err) != 0) rc = -1;
    return rc ? cal_fail(2, err) : 0;
}

static int cmd_list(const opts *o) { return cmd_list_show(o, 0); }
static int cmd_show(const opts *o) { return cmd_list_show(o, 1); }
static int cmd_cpu(const opts *o) { return cmd_bench(o, 0); }
static int cmd_gpu(const opts *o) { return cmd_bench(o, 1); }

/* The calib commands: `latsim calib NAME ...` parses CMD's options and runs FN. */
static const struct calib_sub {
    const char *name;                 /* as typed after calib */
    const cli_cmd *cmd;               /* its command line */
    int (*fn)(const opts *o);         /* returns the exit status */
    const char *summary;              /* its line in latsim calib --help */
} SUBS[] = {
    { "list", &CALIB_LIST, cmd_list, "measurements and calibrated models in the database" },
    { "show", &CALIB_SHOW, cmd_show, "one calibrated model: coefficients, errors, provenance" },
    { "import", &CALIB_IMPORT, cmd_import, "Vidur operator profiles, whole-step times, or exported measurements" },
    { "fit", &CALIB_FIT, cmd_fit, "fit the parametric step model, or build the operator-profile model" },
    { "export", &CALIB_EXPORT, cmd_export, "the measurements as CSV; import meas FILE.csv reads it" },
    { "cpu", &CALIB_CPU, cmd_cpu, "time the model's layer GEMMs, attention and memory bandwidth on this CPU" },
    { "gpu", &CALIB_GPU, cmd_gpu, "the same on CUDA GPU 0 (cuBLAS; needs make CUDA=1)" },
    { "net", &CALIB_NET, cmd_net, "TCP round trips, fit base + bytes / bandwidth, JSON vs binary" },
    { "train", &CALIB_TRAIN, cmd_train, "train the learned step model on the shipped corpus (docs/learned.md)" },
};

/* latsim calib --help: every command's synopsis (from its table) and what it does. */
static void calib_usage(FILE *out)
{
    fputs("usage: latsim calib COMMAND [options]\n"
          "\n"
          "Measurements, importers, fitted cost models and microbenchmarks (latsim calib\n"
          "COMMAND --help: a command's own help).\n\n", out);
    for (size_t i = 0; i < sizeof SUBS / sizeof SUBS[0]; i++) {
        cli_synopsis(SUBS[i].cmd, "  ", out);
        fprintf(out, "        %s\n", SUBS[i].summary);
    }
    fputs("  calib import observed FILE --scenario S.ini [--pool P] [--format F]\n"
          "        an observed benchmark run: its requests and timings (docs/observed.md)\n"
          "  calib show observed ID\n"
          "        one imported observed run\n"
          "  calib import engine-log FILE --scenario S.ini [--pool P]\n"
          "        an engine's periodic metrics: steady windows as step times (docs/observed.md)\n"
          "  calib forget RUN\n"
          "        removes a stored observed run (one that cannot be replayed blocks later fits)\n", out);
    fprintf(out, "\n%s", BAD_INPUT);
}

static const cli_opt VALIDATE_OPTS[] = {
    { "corpus", 1, "DIR", "the corpus (default tests/data/corpus)", 0 },
    { NULL },
};
static const cli_cmd VALIDATE = {
    "validate", "",
    "Cross-validates the learned step model on the corpus: leave-one-GPU-out,\n"
    "-engine-out and -model-out MAPE of batch and step latency, beside the roofline's\n"
    "on the same rows; prints the markdown table (make validate writes docs/accuracy.md).\n",
    "", VALIDATE_OPTS, 0, 0,
};

static int validate_opt(void *ctx, int id, const char *v)
{
    (void) id;
    *(const char **) ctx = v;
    return 0;
}

int validate_main(int argc, char **argv)
{
    const char *corpus = "tests/data/corpus";
    cli_args a;
    char err[2048] = "";
    int rc = cli_parse(&VALIDATE, argc, argv, &a, validate_opt, &corpus);
    if (rc != CLI_GO) return rc;
    if (a.npos) return cal_fail(2, "validate: unexpected argument (see latsim validate --help)");
    return clearn_validate(corpus, stdout, err, sizeof err) ? cal_fail(2, err) : 0;
}

int calib_main(int argc, char **argv)
{
    char err[2048];
    if (argc == 0) { calib_usage(stderr); return 2; }
    const char *sub = argv[0];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) { calib_usage(stdout); return 0; }
    if (argc >= 2 && !strcmp(argv[1], "observed") && (!strcmp(sub, "import") || !strcmp(sub, "show")))
        return !strcmp(sub, "import") ? calib_import_observed_main(argc - 2, argv + 2)
                                      : calib_show_observed_main(argc - 2, argv + 2);
    if (!strcmp(sub, "forget")) return calib_forget_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(sub, "import") && !strcmp(argv[1], "engine-log")) return calib_import_englog_main(argc - 2, argv + 2);
    for (size_t i = 0; i < sizeof SUBS / sizeof SUBS[0]; i++) {
        if (strcmp(sub, SUBS[i].name)) continue;
        opts o;
        cli_args a;
        memset(&o, 0, sizeof o);
        o.max_min = 60;
        o.cmd = SUBS[i].cmd->name;
        int rc = cli_parse(SUBS[i].cmd, argc - 1, argv + 1, &a, calib_opt, &o);
        if (rc != CLI_GO) return rc;
        o.db = a.db;
        o.pos = a.pos;
        o.npos = a.npos;
        if (cu_check_db_path(cu_db_path(o.db), err, sizeof err) != 0) return cal_fail(2, err);
        return SUBS[i].fn(&o);
    }
    if (sub[0] == '-') return cu_die(2, "calib: expected a COMMAND before the options, got '%s' (see latsim calib --help)", sub);
    return cu_die(2, "calib: unknown command '%s' (see latsim calib --help)", sub);
}
