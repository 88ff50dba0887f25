/* report.c -- `latsim report RUN|FILE ... --html OUT.html`: one self-contained
 * HTML page for a design review of up to 8 designs (stored runs, or scenario
 * files run here), each named by its [sim] title and in one colour on every
 * picture: the headline table (compare's, with the differences to the first
 * design, the CI flags, and better / worse by each metric's direction in
 * blue / orange with a legend), each design's SLO verdict per term with its
 * margin (and at its prediction band's end with --band) and its goodput when
 * a plan or a sweep simulated it, the gateway and cache quality, the CDFs of
 * TTFT, TPOT and E2E of every design overlaid with the SLO limits and their
 * tail views (1 - CDF, log axis), the breakdown shares, each design's pools
 * and their cost models, its routes and request classes, the time series of
 * runs that recorded one, the plan's verdicts and frontier when a run comes
 * from a plan, and the scenario text of each design.  Numbers are written for
 * people (design_fmt: thousands, no exponents; ms or s per column).
 *
 * `latsim report explore [ID] --html OUT.html`: the same kind of page for a
 * stored exploration (latsim explore): headline, the frontier picture, the
 * best configuration, the Pareto set, every configuration, the skipped ones.
 *
 * The pictures are gnuplot's SVG (gp.h, scripts in plots/) written into the
 * page: no file beside it, no network fetch, no JavaScript.  Every text that
 * comes from user data (paths, names, the scenario text) is escaped.
 *
 * This file: the options, the page's outline (write_page) and the command;
 * the tables are reptables.c's, the HTML parts and pictures rephtml.c's, the
 * page of an exploration repexplore.c's.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "design.h"
#include "gp.h"
#include "latsim/errmsg.h"
#include "latsim/infile.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"

#include "rephtml.h"
#include "reptables.h"
#include "repexplore.h"
enum { O_HTML = 1, O_REPS, O_SEED, O_JOBS, O_BAND };

static const cli_opt OPTS[] = {
    { "html", O_HTML, "OUT.html", "the page to write", CLI_REQUIRED },
    { "replications", O_REPS, "N", "runs of each scenario file (default 1; seeds seed..seed+N-1)", 0 },
    { "seed", O_SEED, "N", "the first seed (default 1)", 0 },
    { "set", CLI_SET, "S.K=V", "override key K of section S in every scenario file (repeatable)", CLI_REPEAT },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    { "band", O_BAND, NULL, "also run each scenario file with an LLM pool at the pessimistic end of its 90 % prediction "
      "band and judge its SLO there (docs/bands.md)", 0 },
    CLI_OPT_DB,
    { NULL },
};

static const cli_cmd CMD = {
    "report", "RUN|FILE... | explore [ID]",
    "Writes one self-contained HTML page reviewing up to 8 designs (stored run IDs or\n"
    "scenario files, run here; named by their [sim] title): the headline table with\n"
    "each design's difference from the first, whether it is beyond the confidence\n"
    "intervals and better or worse by the metric's direction, each design's SLO\n"
    "verdict per term with its margin (--band: also at its prediction band's end)\n"
    "and goodput when planned or swept, the gateway and cache quality, overlaid CDFs\n"
    "of TTFT, TPOT and E2E with the SLO limits and their tails on a log axis, where\n"
    "the time goes, the pools and their cost models, routes and request classes,\n"
    "the time series of runs that recorded one, and each design's scenario.\n"
    "Pictures are inline SVG drawn by gnuplot (Debian: gnuplot-nox).\n"
    "`latsim report explore [ID] --html OUT.html` instead writes the page of stored\n"
    "exploration ID (latsim explore; the last one in --db without ID): its headline,\n"
    "the Pareto frontier of cost against the SLO metric, the best configuration, the\n"
    "Pareto set, every configuration and the skipped ones.\n",
    "", OPTS, 32, 0,
};


static int report_opt(void *ctx, int id, const char *v)
{
    report_opts *o = ctx;
    if (id == O_HTML) { o->html = v; return 0; }
    if (id == O_BAND) { o->band = 1; return 0; }
    const char *name = id == O_REPS ? "--replications" : id == O_JOBS ? "--jobs" : "--seed";
    long x = cu_posint("report", name, v, id == O_SEED ? 2147483647L : 10000);
    if (x < 0) return 2;
    if (id == O_REPS) o->reps = (int) x;
    else if (id == O_JOBS) o->jobs = (int) x;
    else o->seed = (uint64_t) x;
    return 0;
}


static int write_page(FILE *out, const design *d, int n, const design_how *how, const char *dir)
{
    int k = 0;
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>latsim design review</title>\n"
                 "<style>%s</style>\n</head>\n<body>\n<h1>Design review</h1>\n"
                 "<p class=\"note\">Written by latsim %s.</p>\n", CSS, LATSIM_VERSION);
    fputs("<h2 id=\"designs\">Designs</h2>\n<table id=\"designs-table\"><thead><tr><th>design</th><th>description</th>"
          "<th>scenario</th><th>source</th><th>replications</th></tr></thead><tbody>\n", out);
    for (int i = 0; i < n; i++) {
        fputs("<tr><th>", out);
        rh_dname(out, &d[i]);
        fputs("</th><td style=\"text-align:left\">", out);
        rh_esc(out, d[i].desc ? d[i].desc : "");
        fputs("</td><td style=\"text-align:left\">", out);
        rh_esc(out, d[i].path ? d[i].path : d[i].arg);
        if (d[i].run_id) fprintf(out, "</td><td>run %lld</td>", (long long) d[i].run_id);
        else fputs("</td><td>simulated now</td>", out);
        fprintf(out, "<td>%d</td></tr>\n", d[i].rep.replications);
    }
    fputs("</tbody></table>\n<h2 id=\"headline-title\">Headline</h2>\n", out);
    rt_headline(out, d, n);
    if (rt_slo_verdicts(out, d, n, how->dbpath) != 0) return -1;
    rt_quality(out, d, n);
    fputs("<h2 id=\"cdf\">Latency distributions</h2>\n", out);
    fputs("<p class=\"note\">Each metric twice: its CDF, then its tail (1 - CDF on a log axis: the share of requests"
          " slower than x; P99 where a curve crosses 0.01, P99.9 at 0.001).  Each design keeps its colour on every"
          " picture.</p>\n", out);
    static const struct { const char *m, *title, *tail; } CDFS[] = {
        { "ttft", "TTFT: time to first token, every design", "TTFT tail: share of requests slower (1 - CDF, log scale)" },
        { "tpot", "TPOT: time per output token, every design", "TPOT tail: share of requests slower (1 - CDF, log scale)" },
        { "e2e", "E2E: end-to-end latency, every design", "E2E tail: share of requests slower (1 - CDF, log scale)" },
    };
    for (int c = 0; c < 3; c++) {
        rh_cdf_picture(out, d, n, CDFS[c].m, CDFS[c].title, 0, dir, &k);
        rh_cdf_picture(out, d, n, CDFS[c].m, CDFS[c].tail, 1, dir, &k);
    }
    fputs("<h2 id=\"breakdown\">Where the time goes</h2>\n", out);
    rt_shares(out, d, n, "breakdown", "E2E");
    rt_shares(out, d, n, "ttft_breakdown", "TTFT");
    fputs("<h2 id=\"pools\">Pools and cost models</h2>\n", out);
    for (int i = 0; i < n; i++) rt_pools(out, &d[i]);
    for (int i = 0; i < n; i++) rt_op_shares(out, &d[i]);
    int anyroute = 0;
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < d[i].rep.n && !anyroute; j++) anyroute = rt_is_route(d[i].rep.rows[j].scope);
    if (anyroute) {
        fputs("<h2 id=\"routes\">Routes</h2>\n", out);
        for (int i = 0; i < n; i++) rt_routes(out, &d[i]);
    }
    int anyclass = 0;
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < d[i].rep.n && !anyclass; j++) anyclass = rt_is_class(d[i].rep.rows[j].scope);
    if (anyclass) {
        fputs("<h2 id=\"classes\">Request classes</h2>\n", out);
        for (int i = 0; i < n; i++) rt_classes(out, &d[i]);
        fputs("<p class=\"note\">cache hit rate: of the class's requests that looked up a result cache, the share it"
              " answered (false hits included, as the pool's); cache false hits: answers to another question;"
              " abandoned: the share whose client stopped waiting.</p>\n", out);
    }
    int anyts = 0;
    for (int i = 0; i < n; i++) anyts |= d[i].run_id != 0;
    if (anyts) {
        fputs("<h2 id=\"timeseries\">Time series</h2>\n", out);
        long before = ftell(out);
        for (int i = 0; i < n; i++) if (d[i].run_id) rh_ts_picture(out, &d[i], how->dbpath, dir, &k);
        if (ftell(out) == before) fputs("<p class=\"note\">No run recorded one (latsim run --timeseries).</p>\n", out);
    }
    int anyplan = 0;
    for (int i = 0; i < n; i++) anyplan |= d[i].run_id != 0;
    if (anyplan) {
        int64_t seen[DESIGN_MAX];
        int nseen = 0, shown = 0;
        mbuf m;
        if (rh_mb_open(&m) == 0) {   /* the section only when a run comes from a plan */
            for (int i = 0; i < n; i++) shown += rt_plan_section(m.f, &d[i], how->dbpath, seen, &nseen, dir, &k);
            fflush(m.f);
            if (shown) {
                fputs("<h2 id=\"plan\">Plan</h2>\n", out);
                fwrite(m.p, 1, m.n, out);
            }
            rh_mb_close(&m);
        }
    }
    fputs("<h2 id=\"scenarios\">Scenarios</h2>\n", out);
    for (int i = 0; i < n; i++) {
        fputs("<h3>", out);
        rh_dname(out, &d[i]);
        fputs(" (", out);
        rh_esc(out, d[i].path ? d[i].path : d[i].arg);
        fputs(")</h3>\n<pre>", out);
        rh_esc(out, d[i].text ? d[i].text : "(not stored)");
        fputs("</pre>\n", out);
    }
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? -1 : 0;
}

int report_main(int argc, char **argv)
{
    report_opts o = { NULL, 1, 0, 0, 0 };
    cli_args a;
    int rc = cli_parse(&CMD, argc, argv, &a, report_opt, &o);
    if (rc != CLI_GO) return rc;
    if (a.npos >= 1 && !strcmp(a.pos[0], "explore")) return explore_report(&a, &o);
    if (a.npos < 1) return cu_die(2, "report: expected one or more run IDs or scenario files (see latsim report --help)");
    if (a.npos > DESIGN_MAX) return cu_die(2, "report: at most %d designs, got %d", DESIGN_MAX, a.npos);
    char err[1024];
    if (cu_check_out("report", "--html", o.html, err, sizeof err) != 0) return cu_die(2, "%s", err);
    size_t hl = strlen(o.html);
    if (hl < 6 || strcasecmp(o.html + hl - 5, ".html")) return cu_die(2, "report: --html %s: the name must end in .html", o.html);
    const char *dbpath = cu_db_path(a.db);
    if (cu_check_db_path(dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    char dir[4096];
    int havedir = cu_plots_dir("review_cdf.gp", dir, sizeof dir) == 0;
    design_how how = { o.reps, o.seed, a.sets, a.nsets, o.jobs, dbpath, o.band };
    design d[DESIGN_MAX];
    memset(d, 0, sizeof d);
    int n = a.npos;
    rc = 0;
    int loaded = 0;
    for (; loaded < n && !rc; loaded++) rc = design_load(a.pos[loaded], &how, (char) ('A' + loaded), "report", &d[loaded]);
    if (rc) {
        for (int i = 0; i < loaded - 1; i++) design_free(&d[i]);
        return rc;
    }
    char tmp[4200];
    FILE *f = cu_open_tmp_out("report", "--html", o.html, tmp, sizeof tmp, err, sizeof err);
    if (!f) rc = cu_die(1, "%s", err);
    else {
        int bad = write_page(f, d, n, &how, havedir ? dir : NULL);
        if (cu_commit_out("report", "--html", o.html, tmp, f, bad, err, sizeof err) != 0) rc = cu_die(1, "%s", err);
        else printf("wrote %s\n", ERRMSG_SHOWN(o.html));
    }
    for (int i = 0; i < n; i++) design_free(&d[i]);
    return rc;
}
