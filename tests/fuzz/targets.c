/* targets.c -- the fuzz targets: one input file through the scenario parser (and,
 * when it loads, a short simulation), the CSV trace reader, the JSON-lines
 * trace reader, the observed-run reader (calib import observed: CSV, JSON
 * lines, one JSON document), a Hugging Face config.json (catalog add --hf), an
 * engine log (calib import engine-log: CSV, vLLM log lines, Prometheus scrapes)
 * or a server's metadata (--meta M.json).  Shared by the AFL++ drivers (tests/fuzz/main_*.c, `make fuzz`),
 * the sanitizer replay (`make fuzz-replay`) and the Criterion suite
 * (tests/test_fuzz_corpus.c), so every corpus file is loaded by `make test`.
 *
 * A target must never crash, abort, hang or leak, whatever the input; an error
 * must come back as one line.  A target returns 0 when the input was handled
 * (accepted or refused), or -1 when an error message was not one line.
 */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccost.h"
#include "cenglog.h"
#include "cobsmeta.h"
#include "cobserved.h"
#include "latsim/catalog.h"
#include "fuzz_targets.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "workload/trace.h"
#include "core/csvread.h"

/* Measured requests of the simulation run on an accepted scenario (and warm-up
 * at most a tenth of it): enough to reach every event path, short enough for a
 * fuzzer's thousands of runs per second. */
#define FUZZ_REQUESTS 100
/* Memory a fuzzed scenario may ask for, bytes. */
#define FUZZ_BUDGET 256e6

static int one_line(const char *err)
{
    return strchr(err, '\n') == NULL ? 0 : -1;
}

int fuzz_scenario(const char *path)
{
    char err[2048] = "";
    scenario sc;
    sqlite3 *db = NULL;
    int rc = 0;
    gsl_set_error_handler_off();
    /* The calibrated cost models, as latsim's main adds them (harmless twice). */
    if (ccost_register() != 0) {
        fprintf(stderr, "fuzz: cannot register the calibrated cost models\n");
        return -1;
    }
    if (scenario_load(&sc, path, NULL, 0, err, sizeof err) != 0) {
        rc = one_line(err);
        scenario_free(&sc);
        return rc;
    }
    if (sc.requests > FUZZ_REQUESTS) sc.requests = FUZZ_REQUESTS;
    if (sc.warmup > FUZZ_REQUESTS / 10) sc.warmup = FUZZ_REQUESTS / 10;
    if (store_open(":memory:", &db, err, sizeof err) != 0 || scenario_resolve(&sc, db, err, sizeof err) != 0 ||
        scenario_check_memory(&sc, FUZZ_BUDGET, err, sizeof err) != 0) {
        rc = one_line(err);
        goto done;
    }
    sim_result res;
    if (sim_run(&sc, sc.seed, &res, err, sizeof err) != 0) rc = one_line(err);
    sim_result_free(&res);
done:
    store_close(db);
    scenario_free(&sc);
    return rc;
}

/* Loads PATH as a trace of format JSONL (0: CSV) with the columns the corpus
 * uses (t, p, o; times in seconds). */
static int fuzz_trace(const char *path, int jsonl)
{
    char err[2048] = "";
    trace t;
    trace_opts o = { .path = path, .time_column = "t", .format = TRACE_SECONDS, .prompt_column = "p",
                     .output_column = "o", .class_column = NULL, .jsonl = jsonl };
    gsl_set_error_handler_off();
    if (trace_load(&t, &o, err, sizeof err) != 0) return one_line(err);
    trace_free(&t);
    double *v = NULL;
    size_t n = 0;
    if (!jsonl && csv_read_column(path, "p", &v, &n, err, sizeof err) != 0) return one_line(err);
    free(v);
    return 0;
}

int fuzz_trace_csv(const char *path) { return fuzz_trace(path, 0); }
int fuzz_trace_jsonl(const char *path) { return fuzz_trace(path, 1); }

int fuzz_observed(const char *path)
{
    char err[2048] = "";
    cobs_run run;
    gsl_set_error_handler_off();
    int rc = cobs_read(path, NULL, &run, err, sizeof err);
    cobs_free(&run);
    return rc ? one_line(err) : 0;
}

int fuzz_hfcfg(const char *path)
{
    char err[2048] = "";
    model_spec m;
    hf_moe moe;
    gsl_set_error_handler_off();
    if (hf_config_read(path, "fuzz", NULL, &m, &moe, err, sizeof err) != 0) return one_line(err);
    return catalog_check_model(&m, err, sizeof err) != 0 ? one_line(err) : 0;
}

int fuzz_englog(const char *path)
{
    char err[2048] = "";
    celog log;
    gsl_set_error_handler_off();
    int rc = celog_read(path, &log, err, sizeof err);
    if (rc == 0) celog_free(&log);
    return rc ? one_line(err) : 0;
}

int fuzz_meta(const char *path)
{
    char err[2048] = "";
    cobs_meta m;
    gsl_set_error_handler_off();
    return cobs_meta_read(path, &m, err, sizeof err) ? one_line(err) : 0;
}
