/* runband.c -- the prediction band of `latsim run --band` (docs/bands.md): the
 * first replication simulated again at both ends of the step-time model's 90 %
 * error, the seed noise beside it, as JSON and table lines. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cliopt.h"
#include "cliutil.h"
#include "provenance.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/band.h"
#include "latsim/sim.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "latsim/tseries.h"
#include "latsim/omx.h"
#include "run.h"

/* The scenario of the run again with every LLM pool's step times scaled by F
 * (step_time_scale, times the pool's own), resolved, simulated with the first
 * replication's seed and flattened into OUT.  Returns 0 or the exit status (printed). */
static int run_scaled(const run_opts *o, run_state *st, double f, report *out)
{
    const scenario *base = st->sc;
    int np = scenario_npools(base), n = 0, rc = 2;
    const char **sets = calloc((size_t) (64 + CLI_MAX_SETS + np), sizeof *sets);
    char (*scaled)[200] = calloc((size_t) np + 1, sizeof *scaled);
    scenario *sc = scenario_new();
    sqlite3 *db = NULL;
    sim_result res;
    memset(&res, 0, sizeof res);
    if (!sets || !scaled || !sc) { rc = die(1, "out of memory"); goto out; }
    if (o->from_run) for (int i = 0; i < st->nfrom; i++) sets[n++] = st->from_sets[i];
    for (int i = 0; i < o->a.nsets; i++) sets[n++] = o->a.sets[i];
    for (int i = 0; i < np; i++) {
        if (!scenario_pool_takes(base, i, "step_time_scale")) continue;
        const char *own = scenario_pool_value(base, i, "step_time_scale");
        double k = own ? strtod(own, NULL) : 1;
        snprintf(scaled[i], sizeof scaled[i], "pool %s.step_time_scale=%.17g", scenario_pool_name(base, i), f * (k > 0 ? k : 1));
        sets[n++] = scaled[i];
    }
    /* The run's warnings (a stored model passed over, a saturated pool) were said once. */
    int quiet = cu_stderr_quiet();
    int bad = o->from_run ? scenario_load_text(sc, st->from_path, st->from_text, sets, n, st->err, sizeof st->err)
                          : scenario_load(sc, o->file, sets, n, st->err, sizeof st->err);
    if (bad || store_open_lookup(st->db_path, &db, st->err, sizeof st->err) != 0 ||
        scenario_resolve(sc, db, st->err, sizeof st->err) != 0) {
        cu_stderr_restore(quiet);
        rc = die(load_rc(st->err), st->err);
        goto out;
    }
    int ran = sim_run(sc, scenario_seed(base), &res, st->err, sizeof st->err);
    cu_stderr_restore(quiet);
    if (ran != 0) { rc = die(1, st->err); goto out; }
    rc = report_flatten(&res, -1, out) ? die(1, "out of memory") : 0;
out:
    sim_result_free(&res);
    if (db) store_close(db);
    scenario_delete(sc);
    free(sets);
    free(scaled);
    return rc;
}

/* The prediction band (--band; docs/bands.md): for a scenario with an LLM
 * pool, its first replication simulated again at both ends of the step-time
 * model's 90 % error.  Returns 0 or the exit status (printed). */
int run_band(const run_opts *o, run_state *st)
{
    if (!o->band) return 0;
    st->nband = band_of_report(st->shown, &st->band);
    if (!st->nband) return 0;
    int rc = run_scaled(o, st, st->band.lo, &st->band_end[0]);
    return rc ? rc : run_scaled(o, st, st->band.hi, &st->band_end[1]);
}

run_seed run_seed_of(const sim_result *res)
{
    run_seed n = { 0 };
    if (!sim_result_row(res, "", "seed_noise.batches", "value")) return n;
#define G(name) sim_result_get(res, "", "seed_noise." name, "value")
    n = (run_seed) { .measured = 1, .batches = (int) G("batches"), .phi = G("phi"),
                     .e2e_mean = G("e2e_mean"), .e2e_p99 = G("e2e_p99"), .ttft_mean = G("ttft_mean"),
                     .ttft_p99 = G("ttft_p99"), .tpot_mean = G("tpot_mean"), .tpot_p99 = G("tpot_p99"),
                     .rps = G("throughput_rps") };
#undef G
    return n;
}

/* The 90 % half-width of METRIC/STAT's seed noise: its replications', else the
 * one replication's batch means (NAN: not measured). */
static double seed90(const run_state *st, const char *metric, const char *stat)
{
    if (st->shown->replications > 1) return band_seed90(st->shown, "", metric, stat);
    const run_seed *n = &st->seed;
    if (!n->measured) return NAN;
    int p99 = !strcmp(stat, "p99");
    if (!strcmp(metric, "e2e")) return p99 ? n->e2e_p99 : n->e2e_mean;
    if (!strcmp(metric, "ttft")) return p99 ? n->ttft_p99 : n->ttft_mean;
    if (!strcmp(metric, "tpot")) return p99 ? n->tpot_p99 : n->tpot_mean;
    if (!strcmp(metric, "throughput_rps")) return n->rps;
    return NAN;
}

/* What the band's seed noise comes from, in words. */
static const char *seed_basis(const run_state *st, char *buf, size_t n)
{
    if (st->shown->replications > 1) snprintf(buf, n, "from the replications");
    else if (st->seed.measured && st->seed.batches > 0)
        snprintf(buf, n, "from the batch means of the one replication (%d batches, variance inflation x%.3g)",
                 st->seed.batches, st->seed.phi);
    else snprintf(buf, n, "not measured (one replication, too few requests for batch means)");
    return buf;
}

/* The 90 % band of METRIC/STAT (scope "") of the shown report into LO, HI. */
static void band_of_row(const run_state *st, const char *metric, const char *stat, double *lo, double *hi)
{
    band_interval(report_get(st->shown, "", metric, stat), report_get(&st->band_end[0], "", metric, stat),
                  report_get(&st->band_end[1], "", metric, stat), seed90(st, metric, stat), lo, hi);
}

static const char *const BAND_METRICS[4] = { "e2e", "ttft", "tpot", "throughput_rps" };

/* The prediction band as the JSON member "prediction_band" (with its leading comma). */
void band_json(const run_state *st, FILE *out)
{
    if (!st->nband) return;
    fprintf(out, ", \"prediction_band\": {\"level\": 0.9, \"basis\": ");
    report_json_str(out, st->band.basis);
    char sb[160];
    fprintf(out, ", \"validated\": %s, \"step_time_factors\": [%.6g, %.6g], \"seed_noise\": ",
            st->band.validated ? "true" : "false", st->band.lo, st->band.hi);
    report_json_str(out, seed_basis(st, sb, sizeof sb));
    /* The seed noise's 90 % half-widths themselves (null: not measured). */
    fputs(", \"seed_half_widths\": {", out);
    for (int m = 0; m < 4; m++) {
        int thr = m == 3;
        fprintf(out, "%s\"%s%s\": %s", m ? ", " : "", BAND_METRICS[m], thr ? "" : "_ms", thr ? "" : "{");
        for (int k = 0; k < (thr ? 1 : 2); k++) {
            const char *stat = thr ? "value" : k ? "p99" : "mean";
            double s = seed90(st, BAND_METRICS[m], stat);
            if (!thr) fprintf(out, "%s\"%s\": ", k ? ", " : "", stat);
            if (isfinite(s)) fprintf(out, "%.6g", s); else fputs("null", out);
        }
        if (!thr) fputc('}', out);
    }
    fputc('}', out);
    for (int m = 0; m < 4; m++) {
        int thr = m == 3;
        if (!thr && isnan(report_get(st->shown, "", BAND_METRICS[m], "mean"))) continue;
        fprintf(out, ", \"%s%s\": %s", BAND_METRICS[m], thr ? "" : "_ms", thr ? "" : "{");
        for (int k = 0; k < (thr ? 1 : 2); k++) {
            const char *stat = thr ? "value" : k ? "p99" : "mean";
            double lo, hi;
            band_of_row(st, BAND_METRICS[m], stat, &lo, &hi);
            if (!thr) fprintf(out, "%s\"%s\": ", k ? ", " : "", stat);
            fputc('[', out);
            if (isfinite(lo)) fprintf(out, "%.6g", lo); else fputs("null", out);
            fputs(", ", out);
            if (isfinite(hi)) fprintf(out, "%.6g", hi); else fputs("null", out);
            fputc(']', out);
        }
        if (!thr) fputc('}', out);
    }
    fputc('}', out);
}

/* The prediction band as table lines ("value (lo..hi)"). */
void band_table(const run_state *st, FILE *out)
{
    if (!st->nband) return;
    char sb[160];
    fprintf(out, "\nprediction band (90 %%; step times x%.3g..x%.3g: %s; seed noise %s):\n", st->band.lo, st->band.hi,
            st->band.basis, seed_basis(st, sb, sizeof sb));
    for (int m = 0; m < 4; m++) {
        int thr = m == 3;
        if (!thr && isnan(report_get(st->shown, "", BAND_METRICS[m], "mean"))) continue;
        fprintf(out, "  %-14s", thr ? "throughput/s" : BAND_METRICS[m]);
        for (int k = 0; k < (thr ? 1 : 2); k++) {
            const char *stat = thr ? "value" : k ? "p99" : "mean";
            double lo, hi, v = report_get(st->shown, "", BAND_METRICS[m], stat);
            band_of_row(st, BAND_METRICS[m], stat, &lo, &hi);
            char b[96];
            snprintf(b, sizeof b, isfinite(hi) ? "%.4g (%.4g..%.4g)" : "%.4g (%.4g..inf)", v, lo, hi);
            fprintf(out, "  %s %-26s", thr ? "" : stat, b);
        }
        fputc('\n', out);
    }
}

/* The effective configuration and its hash, the SLO terms, the alerts and the
 * JSON text.  Returns 0 or 1 (printed). */
