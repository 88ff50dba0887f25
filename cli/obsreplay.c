/* obsreplay.c -- `latsim replay`: an observed run predicted by the simulator,
 * against what was observed (table, --json, --plot). */
#include "observed.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib.h"
#include "cliutil.h"
#include "gp.h"
#include "latsim/errmsg.h"
#include "latsim/scenario.h"
#include "latsim/store.h"
#include "obsopts.h"

static const char *REPLAY_USAGE =
    "usage: latsim replay FILE --scenario S.ini [--pool P] [--format F] [--benchmark K]\n"
    "                     [--meta M.json] [--json] [--plot DIR] [--db PATH]\n"
    "       latsim replay --run ID [--scenario S.ini] [--pool P] [--json] [--plot DIR] [--db PATH]\n"
    "\n"
    "Simulates exactly the requests of an observed run (their arrival times and token\n"
    "counts; for a sweep, one closed- or open-loop simulation per level) through the\n"
    "scenario, as a finite replay, and prints per metric (TTFT, TPOT, ITL, E2E, queue,\n"
    "where observed) and statistic (mean, p50, p90, p99) the observed value, the\n"
    "predicted one and the signed error, plus throughput (docs/observed.md).\n"
    "  FILE            an observed run, its format detected from the content unless\n"
    "                  --format F: {formats}\n"
    "  --run ID        an imported run (latsim calib list); default scenario: the stored one\n"
    "  --scenario S    the server the run is replayed on\n"
    "  --pool P        the LLM pool the requests enter (default: the scenario's workload target;\n"
    "                  the scenario needs an LLM pool, P or any)\n"
    "  --benchmark K   guidellm: the benchmark of the report (0-based) when it holds several\n"
    "  --meta M.json   the server's configuration (vLLM's resolved num_gpu_blocks, block_size,\n"
    "                  max_num_seqs, max_num_batched_tokens, parallel sizes) laid over the pool:\n"
    "                  a contradiction is one warning line; the engine's KV blocks are used\n"
    "  --json          one JSON object instead of the table\n"
    "  --plot DIR      DIR/replay-cdf.png: observed and predicted CDFs (needs gnuplot)\n"
    "Nothing is stored.  Exit status: 0, 1 runtime failure, 2 bad input.\n";

/* ---- replay: output ------------------------------------------------------- */

static const char *STAT_NAMES[4] = { "mean", "p50", "p90", "p99" };

static double obs_stat(const cobs_stats *s, int k)
{
    return k == 0 ? s->mean : k == 1 ? s->p50 : k == 2 ? s->p90 : s->p99;
}

static double pred_stat(const stat_summary *s, int k)
{
    return k == 0 ? s->mean : k == 1 ? s->p50 : k == 2 ? s->p90 : s->p99;
}

/* The signed error of PRED against OBS, %: NAN when either is unknown or OBS is 0. */
static double err_pct(double obs, double pred)
{
    return isfinite(obs) && isfinite(pred) && obs != 0 ? 100 * (pred - obs) / obs : NAN;
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.10g", v);
    else fputs("null", f);
}

/* {"observed": O, "predicted": P, "error_pct": E} and, with a band (BAND: LO,
 * HI), "band": [LO, HI] (a null end: unbounded) and "covered". */
static void json_cmp_band(FILE *f, double obs, double pred, const double *band)
{
    fputs("{\"observed\": ", f);
    json_num(f, obs);
    fputs(", \"predicted\": ", f);
    json_num(f, pred);
    if (band) {
        fputs(", \"band\": [", f);
        json_num(f, band[0]);
        fputs(", ", f);
        json_num(f, band[1]);
        fprintf(f, "], \"covered\": %s", isfinite(obs) && band_covers(band[0], band[1], obs) ? "true" : "false");
    }
    fputs(", \"error_pct\": ", f);
    json_num(f, err_pct(obs, pred));
    fputc('}', f);
}


/* One table row: LABEL, observed, predicted (with BAND: "value (lo..hi)"), error. */
static void row_band(FILE *f, const char *metric, const char *stat, double obs, double pred, const double *band)
{
    char e[32], p[96], ob[32];
    double x = err_pct(obs, pred);
    if (isfinite(x)) snprintf(e, sizeof e, "%+.1f %%", x);
    else snprintf(e, sizeof e, "-");
    if (isfinite(pred) && band && isfinite(band[0]))
        snprintf(p, sizeof p, isfinite(band[1]) ? "%.6g (%.4g..%.4g)" : "%.6g (%.4g..inf)", pred, band[0], band[1]);
    else if (isfinite(pred)) snprintf(p, sizeof p, "%.6g", pred);
    else snprintf(p, sizeof p, "-");
    if (isfinite(obs)) snprintf(ob, sizeof ob, "%.6g", obs);
    else snprintf(ob, sizeof ob, "-");
    if (band) fprintf(f, "  %-16s %-5s %14s %34s %10s\n", metric, stat, ob, p, e);
    else fprintf(f, "  %-16s %-5s %14s %14s %10s\n", metric, stat, ob, p, e);
}


typedef struct replay_ctx {
    const char *file;         /* what was replayed (a file, or "observed run ID") */
    const char *format;       /* its format */
    const char *scenario;     /* the scenario's path */
    const char *pool;         /* --pool, NULL */
    int64_t run_id;           /* the stored run, 0 for a file */
    const char *note;         /* the reader's note */
    int json;                 /* --json: stdout holds the JSON object only */
    const cobs_replay *end[2];/* the replay at the band's low and high step-time factor (NULL: no band) */
} replay_ctx;

/* The 90 % band of predicted statistic K (0..3: mean, p50, p90, p99) of metric M
 * (K = -1: requests/s, -2: output tokens/s) of replay R into B; returns B, or
 * NULL when C has no band (docs/bands.md). */
static const double *pred_band(const replay_ctx *c, const cobs_replay *r, int m, int k, double *b)
{
    if (!c->end[0] || !c->end[1]) return NULL;
    double v[3];
    const cobs_replay *x[3] = { r, c->end[0], c->end[1] };
    for (int i = 0; i < 3; i++)
        v[i] = k == -1 ? x[i]->pred_rps : k == -2 ? x[i]->pred_tps
             : x[i]->have_pred[m] ? (k == 0 ? x[i]->pred[m].mean : k == 1 ? x[i]->pred[m].p50 : k == 2 ? x[i]->pred[m].p90
                                                                                                 : x[i]->pred[m].p99) : NAN;
    band_interval(v[0], v[1], v[2], NAN, &b[0], &b[1]);
    return b;
}

/* The six aggregates of level prediction P, in the order of the sweep tables. */
static void level_values(const cobs_level_pred *P, double *v)
{
    const double x[] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
    memcpy(v, x, sizeof x);
}

/* The 90 % band of aggregate K of sweep level I into B (its value PRED), or NULL
 * when C has no band: the level simulated at both step-time factors. */
static const double *level_band(const replay_ctx *c, size_t i, int k, double pred, double *b)
{
    if (!c->end[0]) return NULL;
    double v1[6], v2[6];
    level_values(&c->end[0]->lv[i], v1);
    level_values(&c->end[1]->lv[i], v2);
    band_interval(pred, v1[k], v2[k], NAN, &b[0], &b[1]);
    return b;
}

static void print_table(const replay_ctx *c, const cobs_run *run, const cobs_replay *r)
{
    printf("replay of %s (%s, %zu %s) through %s%s%s\n", ERRMSG_SHOWN(c->file), c->format,
           run->nreq ? run->nreq : run->nlvl, run->nreq ? "requests" : "levels", ERRMSG_SHOWN(c->scenario),
           c->pool ? ", pool " : "", c->pool ? ERRMSG_SHOWN(c->pool) : "");
    if (c->note && c->note[0]) printf("note: %s\n", ERRMSG_SHOWN(c->note));
    if (r->note[0]) printf("note: %s\n", r->note);
    if (r->cost[0]) printf("cost model: %s\n", ERRMSG_SHOWN(r->cost));
    if (run->nlvl) {
        if (c->end[0]) printf("prediction band (90 %%): step times x%.3g..x%.3g (%s)\n", r->band.lo, r->band.hi, r->band.basis);
        printf("\n  %-12s %-20s %14s %*s %10s\n", run->lvl[0].closed ? "concurrency" : "rate", "metric", "observed",
               c->end[0] ? 34 : 14, c->end[0] ? "predicted (band)" : "predicted", "error");
        for (size_t i = 0; i < run->nlvl; i++) {
            const cobs_level *L = &run->lvl[i];
            const cobs_level_pred *P = &r->lv[i];
            const char *names[] = { "ttft_ms mean", "itl_ms mean", "tpot_ms mean", "e2e_ms mean", "ttft_ms p99",
                                    "output_tokens_per_s" };
            const double ob[] = { L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps };
            const double pr[] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
            int first = 1;
            for (int k = 0; k < 6; k++) {
                if (isnan(ob[k])) continue;
                char lv[32] = "";
                if (first) snprintf(lv, sizeof lv, "%g", L->load);
                first = 0;
                char e[32], p[64];
                double x = err_pct(ob[k], pr[k]), b[2];
                const double *bd = isfinite(pr[k]) ? level_band(c, i, k, pr[k], b) : NULL;
                snprintf(e, sizeof e, isfinite(x) ? "%+.1f %%" : "-", x);
                if (bd && isfinite(bd[0]))
                    snprintf(p, sizeof p, isfinite(bd[1]) ? "%.6g (%.4g..%.4g)" : "%.6g (%.4g..inf)", pr[k], bd[0], bd[1]);
                else
                    snprintf(p, sizeof p, isfinite(pr[k]) ? "%.6g" : (P->saturated ? "saturated" : "-"), pr[k]);
                printf("  %-12s %-20s %14.6g %*s %10s\n", lv, names[k], ob[k], c->end[0] ? 34 : 14, p, e);
            }
        }
        printf("\n%zu simulations, %llu events, %.2f s\n", run->nlvl, (unsigned long long) r->events, r->wall_s);
        return;
    }
    printf("simulated: %llu of %zu requests served", (unsigned long long) r->served, r->nreq);
    if (r->rejected) printf(", %llu rejected or lost", (unsigned long long) r->rejected);
    printf(" in %.4g s (observed %.4g s)", r->pred_window_s, r->obs_window_s);
    if (r->backlog_grew) printf("; the backlog grew (peak queue %llu at t = %.4g s)", (unsigned long long) r->peak_queue,
                                r->peak_queue_at_s);
    if (c->end[0]) printf("\nprediction band (90 %%): step times x%.3g..x%.3g (%s)", r->band.lo, r->band.hi, r->band.basis);
    if (c->end[0]) printf("\n\n  %-16s %-5s %14s %34s %10s\n", "metric", "stat", "observed", "predicted (band)", "error");
    else printf("\n\n  %-16s %-5s %14s %14s %10s\n", "metric", "stat", "observed", "predicted", "error");
    static const char *const label[COBS_NMETRICS] = { "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "queue_ms" };
    double b[2];
    char unobserved[128] = "";
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0) {
            snprintf(unobserved + strlen(unobserved), sizeof unobserved - strlen(unobserved), "%s%s",
                     unobserved[0] ? ", " : "", cobs_metric_name((cobs_metric) m));
            continue;
        }
        for (int k = 0; k < 4; k++)
            row_band(stdout, k == 0 ? label[m] : "", STAT_NAMES[k], obs_stat(&r->obs[m], k),
                     r->have_pred[m] ? pred_stat(&r->pred[m], k) : NAN, pred_band(c, r, m, k, b));
    }
    row_band(stdout, "requests/s", "", r->obs_rps, r->pred_rps, pred_band(c, r, 0, -1, b));
    row_band(stdout, "output tokens/s", "", r->obs_tps, r->pred_tps, pred_band(c, r, 0, -2, b));
    if (unobserved[0]) printf("not observed in this run: %s\n", unobserved);
}

static void print_json(const replay_ctx *c, const cobs_run *run, const cobs_replay *r)
{
    FILE *f = stdout;
    fputs("{\"file\": ", f);
    report_json_str(f, c->file);
    fputs(", \"format\": ", f);
    report_json_str(f, c->format);
    fputs(", \"run_id\": ", f);
    if (c->run_id) fprintf(f, "%lld", (long long) c->run_id);
    else fputs("null", f);
    fputs(", \"scenario\": ", f);
    report_json_str(f, c->scenario);
    fputs(", \"pool\": ", f);
    if (c->pool) report_json_str(f, c->pool);
    else fputs("null", f);
    fputs(", \"note\": ", f);
    report_json_str(f, c->note ? c->note : "");
    fputs(", \"replay_note\": ", f);
    report_json_str(f, r->note);
    fputs(", \"cost_model\": ", f);
    report_json_str(f, r->cost);
    fprintf(f, ", \"events\": %llu, \"wall_s\": %.6g", (unsigned long long) r->events, r->wall_s);
    if (run->nlvl) {
        fputs(", \"levels\": [", f);
        for (size_t i = 0; i < run->nlvl; i++) {
            const cobs_level *L = &run->lvl[i];
            const cobs_level_pred *P = &r->lv[i];
            fprintf(f, "%s{\"%s\": %.10g, \"input_tokens\": %d, \"output_tokens\": %d, \"requests\": %llu, \"saturated\": %s, "
                    "\"metrics\": {", i ? ", " : "", L->closed ? "concurrency" : "rate", L->load, (int) L->input_tokens,
                    (int) L->output_tokens, (unsigned long long) P->requests, P->saturated ? "true" : "false");
            const char *names[] = { "ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_p99_ms", "output_tokens_per_s" };
            const double ob[] = { L->ttft_ms, L->itl_ms, L->tpot_ms, L->e2e_ms, L->ttft_p99_ms, L->output_tps };
            const double pr[] = { P->ttft_ms, P->itl_ms, P->tpot_ms, P->e2e_ms, P->ttft_p99_ms, P->output_tps };
            int first = 1;
            for (int k = 0; k < 6; k++) {
                if (isnan(ob[k])) continue;
                fprintf(f, "%s\"%s\": ", first ? "" : ", ", names[k]);
                double b[2];
                json_cmp_band(f, ob[k], pr[k], isfinite(pr[k]) ? level_band(c, i, k, pr[k], b) : NULL);
                first = 0;
            }
            fputs("}}", f);
        }
        fputs("]", f);
        if (c->end[0]) {
            fprintf(f, ", \"prediction_band\": {\"level\": 0.9, \"basis\": ");
            report_json_str(f, r->band.basis);
            fprintf(f, ", \"validated\": %s, \"step_time_factors\": [%.6g, %.6g]}", r->band.validated ? "true" : "false",
                    r->band.lo, r->band.hi);
        }
        fputs("}\n", f);
        return;
    }
    fprintf(f, ", \"requests\": %zu, \"simulated\": {\"served\": %llu, \"rejected\": %llu, \"window_s\": ", r->nreq,
            (unsigned long long) r->served, (unsigned long long) r->rejected);
    json_num(f, r->pred_window_s);
    fprintf(f, ", \"backlog_grew\": %s, \"peak_queue\": %llu, \"peak_queue_at_s\": ", r->backlog_grew ? "true" : "false",
            (unsigned long long) r->peak_queue);
    json_num(f, r->peak_queue_at_s);
    fputs("}, \"observed_window_s\": ", f);
    json_num(f, r->obs_window_s);
    if (c->end[0]) {
        fprintf(f, ", \"prediction_band\": {\"level\": 0.9, \"basis\": ");
        report_json_str(f, r->band.basis);
        fprintf(f, ", \"validated\": %s, \"step_time_factors\": [%.6g, %.6g]}", r->band.validated ? "true" : "false",
                r->band.lo, r->band.hi);
    }
    fputs(", \"metrics\": {", f);
    int first = 1;
    double b[2];
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0) continue;
        fprintf(f, "%s\"%s_ms\": {\"n\": %zu", first ? "" : ", ", cobs_metric_name((cobs_metric) m), r->obs[m].n);
        first = 0;
        for (int k = 0; k < 4; k++) {
            fprintf(f, ", \"%s\": ", STAT_NAMES[k]);
            json_cmp_band(f, obs_stat(&r->obs[m], k), r->have_pred[m] ? pred_stat(&r->pred[m], k) : NAN, pred_band(c, r, m, k, b));
        }
        fputc('}', f);
    }
    fputs("}, \"throughput\": {\"requests_per_s\": ", f);
    json_cmp_band(f, r->obs_rps, r->pred_rps, pred_band(c, r, 0, -1, b));
    fputs(", \"output_tokens_per_s\": ", f);
    json_cmp_band(f, r->obs_tps, r->pred_tps, pred_band(c, r, 0, -2, b));
    fputs("}}\n", f);
}

/* ---- replay: plot --------------------------------------------------------- */

/* Writes the datablocks and variables of replay.gp to F. */
static void plot_data(FILE *f, const replay_ctx *c, const cobs_replay *r)
{
    char metrics[128] = "";
    fputs("$obs << EOD\n", f);
    int first = 1;
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0 || !r->have_pred[m]) continue;
        if (!first) fputs("\n\n", f);
        first = 0;
        snprintf(metrics + strlen(metrics), sizeof metrics - strlen(metrics), "%s%s", metrics[0] ? " " : "",
                 cobs_metric_name((cobs_metric) m));
        size_t n = r->obs[m].n, step = n > 4000 ? n / 2000 : 1;   /* at most a few thousand points */
        for (size_t k = 0; k < n; k += step)
            if (r->obs_sorted[m][k] > 0) fprintf(f, "%.9g %.6g\n", r->obs_sorted[m][k], (double) (k + 1) / (double) n);
        if (r->obs_sorted[m][n - 1] > 0) fprintf(f, "%.9g 1\n", r->obs_sorted[m][n - 1]);
    }
    fputs("EOD\n$pred << EOD\n", f);
    first = 1;
    for (int m = 0; m < COBS_NMETRICS; m++) {
        if (r->obs[m].n == 0 || !r->have_pred[m]) continue;
        if (!first) fputs("\n\n", f);
        first = 0;
        const stat_summary *s = &r->pred[m];
        for (int k = 0; k < STAT_NCDF; k++)
            if (s->cdf[k] > 0) fprintf(f, "%.9g %.6g\n", s->cdf[k], stat_cdf_probs[k]);
        if (s->max > 0) fprintf(f, "%.9g 1\n", s->max);
    }
    fputs("EOD\n", f);
    fprintf(f, "metrics = '%s'\ntitle_text = ", metrics);
    char title[2600];
    snprintf(title, sizeof title, "Observed vs predicted: %s through %s", c->file, c->scenario);
    gp_quote(f, title);
    fputc('\n', f);
}

/* Draws DIR/replay-cdf.png.  Returns 0 (also when gnuplot is missing: a note
 * says so) or the exit status (printed). */
static int plot_replay(const char *dir, const replay_ctx *c, const cobs_run *run, const cobs_replay *r)
{
    char m[5200], scripts[4096], out[4200], script[4400];
    if (run->nlvl) return oo_say(0, "note: --plot draws the CDFs of a request run; a sweep's aggregates have none (no plot)"), 0;
    if (!gp_on_path()) return oo_say(0, "note: --plot: gnuplot not found (Debian: gnuplot-nox): no plot drawn"), 0;
    if (cu_plots_dir("replay.gp", scripts, sizeof scripts) != 0)
        return oo_say(1, "replay: --plot: plots/replay.gp not found (set LATSIM_PLOTS to the plots folder)");
    struct stat sb;
    if (stat(dir, &sb) != 0 && mkdir(dir, 0777) != 0) {
        snprintf(m, sizeof m, "replay: --plot %s: cannot create the folder: %s", dir, strerror(errno));
        return oo_say(2, m);
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(m, sizeof m, "replay: --plot %s: not a folder", dir);
        return oo_say(2, m);
    }
    snprintf(out, sizeof out, "%s/replay-cdf.png", dir);
    snprintf(script, sizeof script, "%s/replay.gp", scripts);
    gp_proc g;
    char gm[256];
    if (gp_open(&g, gm, sizeof gm) != 0) {
        snprintf(m, sizeof m, "replay: --plot: gnuplot: %s", gm);
        return oo_say(1, m);
    }
    fputs("set terminal pngcairo size 1200,850 font 'Sans,10'\nset output ", g.in);
    gp_quote(g.in, out);
    fputs("\nset encoding utf8\n", g.in);
    plot_data(g.in, c, r);
    fputs("load ", g.in);
    gp_quote(g.in, script);
    fputs("\nunset output\nexit\n", g.in);
    char last[512];
    int st = gp_close(&g, last, sizeof last);
    if (st != 0 || stat(out, &sb) != 0 || sb.st_size == 0) {
        snprintf(m, sizeof m, "replay: --plot: gnuplot failed drawing %.4200s%s%.500s", out, last[0] ? ": " : "", last);
        return oo_say(1, m);
    }
    fprintf(c->json ? stderr : stdout, "wrote %s\n", ERRMSG_SHOWN(out));
    return 0;
}

/* ---- replay ----------------------------------------------------------------- */

int replay_main(int argc, char **argv)
{
    static const int allowed[] = { O_SCENARIO, O_POOL, O_FORMAT, O_DB, O_PLOT, O_RUN, O_BENCH, O_JSON, O_HELP, O_META, 0 };
    obs_opts o;
    int rc = oo_parse("replay", argc, argv, REPLAY_USAGE, allowed, &o);
    if (rc) return rc == 1 ? 0 : rc;
    char err[2048];
    if (o.run && o.file) return oo_say(2, "replay: give FILE or --run ID, not both");
    if (!o.run && !o.file) return oo_say(2, "replay: missing FILE or --run ID (see latsim replay --help)");
    if (!o.run && !o.scenario) return oo_say(2, "replay: --scenario S.ini is required: the server to replay the run on");
    if (o.run && (o.format || o.benchmark >= 0)) return oo_say(2, "replay: --format and --benchmark are for a FILE, not --run");
    int64_t run_id = 0;
    if (o.run && cu_parse_id("observed run", o.run, &run_id, err, sizeof err) != 0) {
        char m[2200];
        snprintf(m, sizeof m, "replay: --run: %s (see latsim calib list)", err);
        return oo_say(2, m);
    }
    if (o.plot && !o.plot[0]) return oo_say(2, "replay: --plot: empty folder name");
    const char *path = cu_db_path(o.db);
    if (cu_check_db_path(path, err, sizeof err) != 0) return oo_say(2, err);
    /* The one check of every input and output before any work. */
    static const char *const PLOTS[] = { "replay-cdf.png", NULL };
    if ((o.file && cu_check_in("replay", NULL, o.file, INFILE_MAX_OBSERVED, err, sizeof err) != 0)
        || (o.scenario && cu_check_in("replay", "--scenario", o.scenario, INFILE_MAX_SCENARIO, err, sizeof err) != 0)
        || (o.meta && cu_check_in("replay", "--meta", o.meta, INFILE_MAX_JSON, err, sizeof err) != 0)
        || (o.plot && cu_check_out_dir("replay", "--plot", o.plot, PLOTS, err, sizeof err) != 0))
        return oo_say(2, err);
    cobs_run run = { 0 };
    cobs_stored h;
    char *text = NULL;
    char *eff = NULL;   /* the scenario's text without its [workload] when that did not load, else NULL */
    char msets[16][128];   /* --meta: the values laid over the pool (apply_meta) */
    int nmsets = 0;
    sqlite3 *db = NULL;
    scenario *sc = scenario_new();
    if (!sc) return oo_say(1, "out of memory");
    cobs_replay r = { 0 }, rb[2] = { { 0 }, { 0 } };
    scenario *bsc[2] = { NULL, NULL };
    const char *scenario_name = o.scenario;
    if (run_id) {
        if ((rc = oo_open_readonly(path, &db)) != 0) return rc;
        int s = cobsdb_load(db, run_id, &h, &run, o.scenario ? NULL : &text, err, sizeof err);
        if (s != 0) { rc = oo_say(s == 1 ? 2 : 1, err); goto out; }
        if (!o.scenario) scenario_name = h.scenario_path;
    } else {
        if ((rc = oo_read_file(&o, &run)) != 0) goto out;
        if (store_open_lookup(path, &db, err, sizeof err) != 0) { rc = oo_say(2, err); goto out; }
    }
    {
        /* The replay replaces the workload: a [workload] that does not load (a
         * copied scenario whose trace is elsewhere) is loaded without it. */
        char lerr[2048];
        int s = text ? scenario_load_text(sc, scenario_name, text, NULL, 0, lerr, sizeof lerr)
                     : scenario_load(sc, scenario_name, NULL, 0, lerr, sizeof lerr);
        if (s != 0 && strstr(lerr, "[workload]")) {
            char *file = text ? NULL : oo_read_all(scenario_name);
            char *alt = oo_replay_text(text ? text : file ? file : "");
            scenario_delete(sc);
            sc = scenario_new();
            if (!sc) { free(alt); free(file); rc = oo_say(1, "out of memory"); goto out; }
            s = !alt || !(text || file) ? -1 : scenario_load_text(sc, scenario_name, alt, NULL, 0, lerr, sizeof lerr);
            if (s == 0) fprintf(stderr, "latsim: replay: %s: its [workload] is not used (%s)\n", ERRMSG_SHOWN(scenario_name),
                                "the observed requests replace it");
            if (s == 0) eff = alt;   /* the text every later load of the scenario uses (--meta, the band) */
            else free(alt);
            free(file);
        }
        if (s != 0) { rc = oo_say(strstr(lerr, "out of memory") ? 1 : 2, lerr); goto out; }
    }
    if (o.meta && (rc = oo_apply_meta(o.meta, scenario_name, eff ? eff : text, o.pool, db, &sc, msets, &nmsets)) != 0) goto out;
    rc = cobs_replay_run(&run, sc, o.pool, db, &r, err, sizeof err);
    if (rc) { oo_say(rc, err); goto out; }
    /* The prediction band: the replay again with every LLM pool's step times
     * at both ends of its cost model's 90 % error (docs/bands.md). */
    for (int k = 0; k < 2 && r.nband > 0; k++) {
        int np = scenario_npools(sc), n = 0;
        const char *sets[64 + 16];
        char buf[64][200];
        for (int i = 0; i < nmsets; i++) sets[n++] = msets[i];   /* --meta's values, as the replay had them */
        for (int i = 0; i < np && n < 64 + nmsets; i++) {
            if (!scenario_pool_takes(sc, i, "step_time_scale")) continue;
            const char *own = scenario_pool_value(sc, i, "step_time_scale");
            double f = (k ? r.band.hi : r.band.lo) * (own && strtod(own, NULL) > 0 ? strtod(own, NULL) : 1);
            int b = n - nmsets;
            snprintf(buf[b], sizeof buf[b], "pool %s.step_time_scale=%.17g", scenario_pool_name(sc, i), f);
            sets[n++] = buf[b];
        }
        if (!(bsc[k] = scenario_new())) { rc = oo_say(1, "out of memory"); goto out; }
        if ((rc = oo_load_scenario_sets(scenario_name, eff ? eff : text, sets, n, bsc[k])) != 0) goto out;
        int quiet = cu_stderr_quiet();    /* its warnings were said by the replay itself */
        rc = cobs_replay_run(&run, bsc[k], o.pool, db, &rb[k], err, sizeof err);
        cu_stderr_restore(quiet);
        if (rc) { oo_say(rc, err); goto out; }
    }
    char label[64];
    snprintf(label, sizeof label, "observed run %lld", (long long) run_id);
    replay_ctx c = { .file = run_id ? label : o.file, .format = cobs_format_name(run.format), .scenario = scenario_name,
                     .pool = o.pool, .run_id = run_id, .note = run.note, .json = o.json,
                     .end = { bsc[1] ? &rb[0] : NULL, bsc[1] ? &rb[1] : NULL } };
    if (o.json) print_json(&c, &run, &r);
    else print_table(&c, &run, &r);
    fflush(stdout);
    if (o.plot) rc = plot_replay(o.plot, &c, &run, &r);
out:
    free(eff);
    cobs_replay_free(&r);
    for (int k = 0; k < 2; k++) { cobs_replay_free(&rb[k]); scenario_delete(bsc[k]); }
    scenario_delete(sc);
    if (db) store_close(db);
    free(text);
    cobs_free(&run);
    return rc;
}
