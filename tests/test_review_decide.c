/* test_review_decide.c -- a design review that decides (issue 36): `latsim
 * compare` and `latsim report --html` give each design's SLO verdict per term
 * with its margin (and at the prediction band's pessimistic end with --band),
 * the gateway and cache quality (hit rates, false hits, misroutes), the
 * classes and routes tables, better / worse by each metric's direction in
 * colour-blind-safe colours with a legend, numbers for people (thousands, no
 * exponents, s or ms per column, "n/a" for a change to or from 0), titles and
 * descriptions from [sim], energy per request and per 1000 output tokens; the
 * page's pictures keep one colour per design, show each CDF's tail on a log
 * axis, and no two labels of a picture overlap or leave its frame. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_decide_", "runs.db"); }

TestSuite(decide, .init = setup, .fini = tcli_teardown);

/* One 8B pool: every request on the same model. */
static const char *POOL =
    "[sim]\ntitle = One pool\ndescription = every request on Llama-3-8B\nrequests = 1500\n"
    "[workload]\nrate = 4\nprompt_tokens = lognormal(mean=600, cv=1.0)\noutput_tokens = lognormal(mean=200, cv=1.0)\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nmax_seq_len = 8192\ntruncate = yes\n"
    "[slo]\nttft_p99_ms = 400\ne2e_p99_ms = 60000\n";

/* A gateway: a result cache before a complexity router and two models; the
 * title has markup that must show as text. */
static const char *GATEWAY =
    "[sim]\ntitle = Gateway <script>alert(1)</script> & cache\ndescription = cache, then small or large by complexity\n"
    "requests = 1500\n"
    "[workload]\nrate = 4\nprompt_tokens = lognormal(mean=600, cv=1.0)\noutput_tokens = lognormal(mean=200, cv=1.0)\n"
    "target = cache\n"
    "[pool cache]\nkind = result_cache\nintents = 3000\nintent_zipf = 1.0\nfalse_hit_rate = 0.05\nnext = gw\n"
    "[pool gw]\nkind = router\npolicy = complexity\ncomplexity_cut = 0.6\nnext = small, large\n"
    "[pool small]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nmax_seq_len = 8192\ntruncate = yes\n"
    "[pool large]\nkind = llm\nmodel = llama-3-70b\ngpu = h100\ntp = 4\nmax_seq_len = 8192\ntruncate = yes\n"
    "[slo]\nttft_p99_ms = 400\ne2e_p99_ms = 60000\n";

/* No LLM: M/M/4 at rho 0.5, no TTFT. */
static const char *CPU =
    "[sim]\nrequests = 2000\n[workload]\nrate = 20\n[pool cpu]\nservers = 4\nservice_ms = exp(mean=100)\n"
    "[slo]\ne2e_p99_ms = 1000\n";

static json_t *parse(const result *r)
{
    cr_assert_eq(r->rc, 0, "exit %d: %s", r->rc, r->err);
    json_error_t je;
    json_t *j = json_loadb(r->out, r->nout, 0, &je);
    cr_assert_not_null(j, "not JSON (%s): %.400s", je.text, r->out);
    return j;
}

/* The row NAME of array MEMBER ("headline", "quality") of compare's JSON J. */
static json_t *jrow(json_t *j, const char *member, const char *name)
{
    json_t *h = json_object_get(j, member);
    for (size_t i = 0; i < json_array_size(h); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(h, i), "metric")), name)) return json_array_get(h, i);
    return NULL;
}

static double jval(json_t *row, const char *member, size_t i)
{
    json_t *v = json_array_get(json_object_get(row, member), i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The stored value of METRIC/STAT of SCOPE in run RUN. */
static double stored(int run, const char *scope, const char *metric, const char *stat)
{
    char q[400];
    snprintf(q, sizeof q, "SELECT CAST(value * 1e6 AS INTEGER) FROM run_stats WHERE run_id = %d AND replication = -1 AND scope = '%s'"
             " AND metric = '%s' AND stat = '%s'", run, scope, metric, stat);
    return (double) db_count(db, q) / 1e6;
}

static void run_ok(const char *path)
{
    result r = run_db(180, "run", path, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* compare: the SLO verdict of every term with its margin (= limit - value),
 * at the band's pessimistic end with --band (slower, so a smaller margin);
 * the gateway's quality rows equal to its stored rows; better / worse by
 * direction; titles and descriptions; energy per request and per 1k tokens. */
Test(decide, compare_slo_quality_direction, .timeout = 300)
{
    char pool[256], gw[256];
    write_file("pool.ini", POOL, pool, sizeof pool);
    write_file("gw.ini", GATEWAY, gw, sizeof gw);
    run_ok(pool);
    run_ok(gw);
    result r = run_db(180, "compare", "1", "2", "--json", NULL);
    json_t *j = parse(&r);
    json_t *ds = json_object_get(j, "designs");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ds, 0), "title")), "One pool");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ds, 0), "description")), "every request on Llama-3-8B");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ds, 1), "title")), "Gateway <script>alert(1)</script> & cache");
    /* SLO: two terms per design, margin = limit - value, met = margin >= 0. */
    json_t *slo = json_object_get(j, "slo");
    cr_assert_eq(json_array_size(slo), 2, "%s", r.out);
    for (size_t i = 0; i < 2; i++) {
        json_t *terms = json_object_get(json_object_get(json_array_get(slo, i), "run"), "terms");
        cr_assert_eq(json_array_size(terms), 2);
        for (size_t k = 0; k < 2; k++) {
            json_t *t = json_array_get(terms, k);
            double lim = json_number_value(json_object_get(t, "limit")), v = json_number_value(json_object_get(t, "value"));
            /* Both numbers printed to 6 significant digits (%g): each is off by up to half a unit
             * of its 6th digit, so 1e-5 of the limit bounds the difference. */
            cr_expect_float_eq(json_number_value(json_object_get(t, "margin")), lim - v, 1e-5 * lim);
            cr_expect_eq(json_is_true(json_object_get(t, "met")), v <= lim);
        }
        /* the value is the stored TTFT p99 */
        json_t *t0 = json_array_get(terms, 0);
        cr_expect_str_eq(json_string_value(json_object_get(t0, "term")), "ttft_p99_ms");
        cr_expect_float_eq(json_number_value(json_object_get(t0, "value")), stored((int) i + 1, "", "ttft", "p99"), 1e-3);
    }
    /* Quality: the cache's hit rate (%) and false hits, the router's misroutes, as stored. */
    json_t *hr = jrow(j, "quality", "cache: cache hit rate"), *fh = jrow(j, "quality", "cache: cache false hits");
    json_t *ms = jrow(j, "quality", "gw: misroute share"), *sgc = jrow(j, "quality", "gw: misroute small got complex");
    cr_assert(hr && fh && ms && sgc, "quality rows missing: %s", r.out);
    cr_expect(isnan(jval(hr, "values", 0)), "design A has no cache");
    cr_expect_float_eq(jval(hr, "values", 1), 100 * stored(2, "cache", "hit_rate", "value"), 1e-3);
    cr_expect_float_eq(jval(fh, "values", 1), stored(2, "cache", "false_hits", "value"), 1e-6);
    cr_expect_gt(jval(fh, "values", 1), 0, "false_hit_rate = 0.05 gives false hits");
    double s[4] = { stored(2, "gw", "small_got_simple", "value"), stored(2, "gw", "small_got_complex", "value"),
                    stored(2, "gw", "large_got_simple", "value"), stored(2, "gw", "large_got_complex", "value") };
    cr_expect_gt(s[0] + s[3], 0);
    cr_expect_float_eq(jval(ms, "values", 1), 100 * (s[1] + s[2]) / (s[0] + s[1] + s[2] + s[3]), 1e-6);
    cr_expect_str_eq(json_string_value(json_object_get(ms, "better")), "lower");
    cr_expect_str_eq(json_string_value(json_object_get(hr, "better")), "higher");
    /* Direction: the gateway costs more per hour (five GPUs against one): worse; its cache answers
     * most requests at once: a lower E2E P50, better (neither replicated: told, not starred). */
    json_t *cost = jrow(j, "headline", "cost"), *e50 = jrow(j, "headline", "e2e p50");
    cr_assert(cost && e50);
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(cost, "judgement"), 1)), "worse");
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(e50, "judgement"), 1)), "better");
    cr_expect_str_eq(json_string_value(json_object_get(jrow(j, "headline", "throughput"), "better")), "higher");
    /* Energy per request (J) and per 1000 output tokens (kJ = J per token), as stored. */
    json_t *epr = jrow(j, "headline", "energy per request"), *ept = jrow(j, "headline", "energy per 1k output tokens");
    cr_assert(epr && ept, "%s", r.out);
    cr_expect_str_eq(json_string_value(json_object_get(ept, "unit")), "kJ");
    cr_expect_float_eq(jval(epr, "values", 0), stored(1, "", "joules_per_request", "value"), 1e-3);
    cr_expect_float_eq(jval(ept, "values", 1), stored(2, "", "joules_per_output_token", "value"), 1e-3);
    json_decref(j);
    result_free(&r);

    /* The text: verdict lines with margins, the quality section, better / worse words. */
    r = run_db(180, "compare", "1", "2", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "slo verdicts") && strstr(r.out, "ttft_p99_ms") && strstr(r.out, ", margin "), "%s", r.out);
    cr_expect(strstr(r.out, "gateway and cache quality") != NULL);
    cr_expect(strstr(r.out, " worse") && strstr(r.out, " better"), "%s", r.out);
    cr_expect(strstr(r.out, "      One pool\n") && strstr(r.out, "      every request on Llama-3-8B\n"), "%s", r.out);
    cr_expect(strstr(r.out, "e+0") == NULL, "exponent notation: %s", r.out);
    /* The quality table's columns line up under its header, its longest name
     * ("gw: misroute small got complex (req)") included: design A's value (or
     * "-") ends where the header's "A" does. */
    const char *qh = strstr(r.out, "\n  gateway and cache quality");
    cr_assert_not_null(qh);
    qh++;
    const char *qe = strchr(qh, '\n');
    int acol = -1;
    for (const char *c = qh; c < qe; c++)
        if (*c == 'A' && c[-1] == ' ' && (c[1] == ' ' || c[1] == '\n')) { acol = (int) (c - qh); break; }
    cr_assert_gt(acol, 0, "no column A in %.*s", (int) (qe - qh), qh);
    int rows = 0;
    for (const char *l = qe + 1; *l && *l != '\n'; l = strchr(l, '\n') + 1) {
        const char *e = strchr(l, '\n');
        cr_assert(e);
        cr_expect(e - l > acol + 1 && l[acol] != ' ' && l[acol + 1] == ' ', "not under A: %.*s", (int) (e - l), l);
        rows++;
    }
    cr_expect_gt(rows, 5, "%s", r.out);
    result_free(&r);

    /* --band: the files run again at the pessimistic end of their band: slower steps, a higher TTFT P99. */
    r = run_db(300, "compare", pool, gw, "--replications", "1", "--band", "--json", NULL);
    j = parse(&r);
    slo = json_object_get(j, "slo");
    for (size_t i = 0; i < 2; i++) {
        json_t *d = json_array_get(slo, i), *be = json_object_get(d, "band_end");
        cr_assert_not_null(be, "no band end for design %zu: %s", i, r.out);
        cr_expect_gt(json_number_value(json_object_get(be, "step_time_factor")), 1.2);
        json_t *t = json_array_get(json_object_get(json_object_get(d, "run"), "terms"), 0);
        json_t *tb = json_array_get(json_object_get(json_object_get(be, "slo"), "terms"), 0);
        cr_expect_gt(json_number_value(json_object_get(tb, "value")), json_number_value(json_object_get(t, "value")));
        cr_expect_lt(json_number_value(json_object_get(tb, "margin")), json_number_value(json_object_get(t, "margin")));
    }
    json_decref(j);
    result_free(&r);
    /* Without --band: none. */
    r = run_db(300, "compare", pool, gw, "--replications", "1", "--json", NULL);
    j = parse(&r);
    cr_expect_null(json_object_get(json_array_get(json_object_get(j, "slo"), 0), "band_end"));
    json_decref(j);
    result_free(&r);
}

/* A change to or from 0 is no percentage: a stored ITL P50 of 0 (tokens in
 * bursts) shows "n/a", not -100 %, in compare and on the page. */
Test(decide, zero_is_not_minus_100_percent, .timeout = 300)
{
    char pool[256], html[256];
    write_file("pool.ini", POOL, pool, sizeof pool);
    run_ok(pool);
    run_ok(pool);
    char q[200];
    snprintf(q, sizeof q, "UPDATE run_stats SET value = 0 WHERE run_id = 2 AND scope = '' AND metric = 'itl' AND stat = 'p50'");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sqlite3 %s \"%s\"", db, q);
    cr_assert_eq(system(cmd), 0, "sqlite3 failed");
    result r = run_db(120, "compare", "1", "2", "--json", NULL);
    json_t *j = parse(&r);
    json_t *itl = jrow(j, "headline", "itl p50");
    cr_assert_not_null(itl);
    cr_expect_eq(jval(itl, "values", 1), 0);
    cr_expect(json_is_null(json_array_get(json_object_get(itl, "diff_pct"), 1)), "a percentage to 0: %s", r.out);
    json_decref(j);
    result_free(&r);
    r = run_db(120, "compare", "1", "2", NULL);
    const char *line = strstr(r.out, "itl p50 (ms)");
    cr_assert_not_null(line, "%s", r.out);
    cr_expect(strstr(line, "n/a") && strstr(line, "n/a") < strchr(line, '\n'), "%s", r.out);
    cr_expect(strstr(r.out, "-100.0%") == NULL, "%s", r.out);
    result_free(&r);
    snprintf(html, sizeof html, "%s/z.html", dir);
    r = run_db(120, "report", "1", "2", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    const char *row = strstr(page, "<tr><th>itl p50</th>");
    cr_assert_not_null(row);
    char *end = strstr(row, "</tr>");
    cr_assert_not_null(end);
    *end = '\0';
    cr_expect(strstr(row, ">n/a<") != NULL && strstr(row, "-100") == NULL, "%s", row);
    free(page);
}

/* ---- the page ------------------------------------------------------------- */

/* 1 when some table cell of PAGE holds a number in exponent notation (3.4e+04), WHAT then the place. */
static int exponent_in_cells(const char *page, char *what, size_t n)
{
    for (const char *p = strstr(page, "<td"); p; p = strstr(p + 1, "<td")) {
        const char *e = strstr(p, "</td>");
        if (!e) break;
        for (const char *c = p; c + 2 < e; c++) {
            if (*c == '<') {   /* not in tags: attributes hold colours like #8e0e00 */
                while (c < e && *c != '>') c++;
                continue;
            }
            /* printf's %g writes a signed exponent: 3.429e+04, 1e-05 (a temporary folder's name may hold "5eA") */
            if (c + 3 < e && c[0] >= '0' && c[0] <= '9' && (c[1] == 'e' || c[1] == 'E') && (c[2] == '+' || c[2] == '-') &&
                c[3] >= '0' && c[3] <= '9') {
                snprintf(what, n, "%.*s", (int) (e - c < 80 ? e - c : 80), c > p + 40 ? c - 40 : p);
                return 1;
            }
        }
    }
    return 0;
}

/* The table of PAGE from its opening tag OPEN to its end (malloc'd), NULL when absent. */
static char *table(const char *page, const char *open)
{
    const char *a = strstr(page, open);
    if (!a) return NULL;
    const char *b = strstr(a, "</table>");
    if (!b) return NULL;
    return strndup(a, (size_t) (b - a));
}

Test(decide, html_verdicts_quality_classes_direction, .timeout = 300)
{
    char pool[256], gw[256], html[256];
    write_file("pool.ini", POOL, pool, sizeof pool);
    write_file("gw.ini", GATEWAY, gw, sizeof gw);
    run_ok(pool);
    run_ok(gw);
    snprintf(html, sizeof html, "%s/review.html", dir);
    result r = run_db(300, "report", "1", "2", "scenarios/chat_day_classes.ini", "--set", "sim.requests=1500", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    /* Titles and descriptions, escaped. */
    cr_expect(strstr(page, "One pool") && strstr(page, "every request on Llama-3-8B"));
    cr_expect(strstr(page, "Gateway &lt;script&gt;alert(1)&lt;/script&gt; &amp; cache") != NULL, "the title escaped");
    cr_expect(strstr(page, "<script") == NULL);
    /* SLO verdicts: every term of both designs, value and margin with units; C has none. */
    char *slo = table(page, "<table id=\"slo-verdicts\">");
    cr_assert_not_null(slo, "no SLO table");
    int terms = 0;
    for (const char *p = strstr(slo, "ttft_p99_ms"); p; p = strstr(p + 1, "ttft_p99_ms")) terms++;
    cr_expect_eq(terms, 2, "%s", slo);
    cr_expect(strstr(slo, "60,000 ms") != NULL, "the limit with its unit and thousands: %s", slo);
    cr_expect(strstr(slo, "no [slo]") != NULL, "design C has none");
    cr_expect(strstr(slo, ">met<") != NULL);
    free(slo);
    /* Gateway quality, the classes and the routes. */
    char *q = table(page, "<table id=\"quality-table\">");
    cr_assert_not_null(q);
    cr_expect(strstr(q, "cache: cache hit rate") && strstr(q, "cache: cache false hits") && strstr(q, "gw: misroute share"), "%s", q);
    free(q);
    cr_expect(strstr(page, "<table class=\"classes\">") && strstr(page, "<tr><th>chat</th>") && strstr(page, "<tr><th>classify</th>"),
              "the classes table");
    char *ct = table(page, "<table class=\"classes\">");
    cr_expect(ct && !strstr(ct, "cache hit rate"), "a cache column where no class passes a cache");
    free(ct);
    cr_expect(strstr(page, "<table class=\"routes\">") && strstr(page, "<tr><th>gw</th><th>small</th>"), "the routes table");
    /* Direction: B's cost per hour is worse than A's, its E2E P50 better; a legend says so. */
    char *h = table(page, "<table id=\"headline\">");
    cr_assert_not_null(h);
    const char *cost = strstr(h, "<tr><th>cost</th>"), *e50 = strstr(h, "<tr><th>e2e p50</th>");
    cr_assert(cost && e50);
    cr_expect(strstr(cost, "class=\"worse") && strstr(cost, "class=\"worse") < strstr(cost, "</tr>"), "cost not worse");
    cr_expect(strstr(e50, "class=\"better") && strstr(e50, "class=\"better") < strstr(e50, "</tr>"), "e2e p50 not better");
    cr_expect(strstr(h, "pink") == NULL && strstr(page, "#ffe0e0") == NULL, "the old one-colour highlight");
    free(h);
    cr_expect(strstr(page, "class=\"note legend\"") && strstr(page, "#cfe2f3") && strstr(page, "#fdd0a2"),
              "the blue / orange legend");
    /* Numbers for people: no exponent in any cell; thousands separated. */
    char what[256];
    cr_expect(!exponent_in_cells(page, what, sizeof what), "exponent notation in a cell: %s", what);
    cr_expect(strstr(page, "<td>1,500</td>") != NULL, "1500 requests shown as 1,500");
    free(page);
}

/* Two request classes behind a result cache; a class name with markup. */
static const char *CACHED_CLASSES =
    "[sim]\ntitle = Cached classes\nrequests = 1500\n[workload]\nrate = 4\ntarget = cache\n"
    "[class faq <b>&amp;</b>]\nshare = 0.7\nprompt_tokens = lognormal(mean=300, cv=0.5)\n"
    "output_tokens = lognormal(mean=100, cv=0.5)\nintents = 5000\n"
    "[class news]\nshare = 0.3\nprompt_tokens = lognormal(mean=300, cv=0.5)\noutput_tokens = lognormal(mean=100, cv=0.5)\n"
    "intents = 50000\n"
    "[pool cache]\nkind = result_cache\nfalse_hit_rate = 0.02\nnext = chat\n"
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nmax_seq_len = 8192\ntruncate = yes\n";

/* The row of class NAME (as the page writes it, escaped) in classes table T,
 * up to its end (malloc'd), NULL when absent. */
static char *class_row(const char *t, const char *name)
{
    char th[200];
    snprintf(th, sizeof th, "<tr><th>%s</th>", name);
    const char *a = strstr(t, th);
    if (!a) return NULL;
    const char *b = strstr(a, "</tr>");
    return b ? strndup(a, (size_t) (b - a)) : NULL;
}

/* The classes table: each class's result-cache hit rate (as a percentage) and
 * false hits, equal to the run's stored rows; the class name escaped. */
Test(decide, html_class_cache_hit_rates, .timeout = 300)
{
    char cls[256], pool[256], html[256];
    write_file("cls.ini", CACHED_CLASSES, cls, sizeof cls);
    write_file("pool.ini", POOL, pool, sizeof pool);
    run_ok(cls);
    snprintf(html, sizeof html, "%s/classes.html", dir);
    result r = run_db(300, "report", "1", pool, "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    char *t = table(page, "<table class=\"classes\">");
    cr_assert_not_null(t, "no classes table");
    cr_expect(strstr(t, "<th>cache hit rate %</th>") && strstr(t, "<th>cache false hits</th>"), "%s", t);
    cr_expect(strstr(page, "faq <b>") == NULL, "a class name not escaped");
    static const struct { const char *scope, *shown; } C[] = {
        { "class:faq <b>&amp;</b>", "faq &lt;b&gt;&amp;amp;&lt;/b&gt;" }, { "class:news", "news" },
    };
    double rate[2];
    for (int i = 0; i < 2; i++) {
        char *row = class_row(t, C[i].shown);
        cr_assert_not_null(row, "no row of %s: %s", C[i].shown, t);
        rate[i] = stored(1, C[i].scope, "cache_hit_rate", "value");
        double fh = stored(1, C[i].scope, "cache_false_hits", "value");
        cr_assert(rate[i] > 0 && rate[i] < 1, "%s: hit rate %g", C[i].scope, rate[i]);
        char want[64];
        snprintf(want, sizeof want, "<td>%.4g</td>", 100 * rate[i]);   /* 4 significant digits (10..100 %) */
        cr_expect(strstr(row, want) != NULL, "%s: no %s in %s", C[i].scope, want, row);
        snprintf(want, sizeof want, "<td>%.0f</td>", fh);
        cr_expect(strstr(row, want) != NULL, "%s: no %s in %s", C[i].scope, want, row);
        free(row);
    }
    /* The classes differ: the one with fewer intents hits more often. */
    cr_expect_gt(rate[0], rate[1] + 0.05, "faq %g vs news %g", rate[0], rate[1]);
    char what[256];
    cr_expect(!exponent_in_cells(page, what, sizeof what), "exponent notation in a cell: %s", what);
    free(t);
    free(page);
}

/* Clients who give up (patience_s): their share of the requests is a quality
 * row, lower better, equal to the stored abandoned / requests; a design
 * without patience has none (-). */
Test(decide, abandoned_share_of_impatient_clients, .timeout = 300)
{
    char pool[256], imp[256];
    write_file("pool.ini", POOL, pool, sizeof pool);
    write_file("imp.ini", "[sim]\nrequests = 1500\n[workload]\nrate = 30\npatience_s = exp(mean=1)\n"
               "[pool cpu]\nservers = 2\nservice_ms = exp(mean=100)\n", imp, sizeof imp);
    run_ok(pool);
    result r = run_db(120, "run", imp, NULL);
    cr_assert(r.rc == 0 || r.rc == 3, "%s", r.err);
    result_free(&r);
    r = run_db(120, "compare", "1", "2", "--json", NULL);
    json_t *j = parse(&r);
    json_t *ab = jrow(j, "quality", "abandoned share (client's patience)");
    cr_assert_not_null(ab, "no abandoned row: %s", r.out);
    double want = 100 * stored(2, "", "abandoned", "value") / stored(2, "", "requests", "value");
    cr_expect_gt(want, 1, "clients gave up at 1.5 x the servers' capacity (%g %%)", want);
    /* printed to 6 significant digits (%g): within 1e-5 relative */
    cr_expect_float_eq(jval(ab, "values", 1), want, 1e-5 * want, "%g vs %g", jval(ab, "values", 1), want);
    cr_expect_str_eq(json_string_value(json_object_get(ab, "better")), "lower");
    json_decref(j);
    result_free(&r);
}

/* ---- pictures ------------------------------------------------------------- */

/* One text label of an SVG: its box, px, as its four corners (a label
 * rotated by rotate(deg) is a rotated rectangle) and their bounds. */
typedef struct box {
    double cx[4], cy[4];      /* corners, in order around the box */
    double x0, y0, x1, y1;    /* their bounds */
    char text[120];
} box;

/* The text labels of gnuplot's SVG S (up to MAX) into B; *W, *H the picture's
 * size.  A label's box: 0.55 em per character (Sans), from 0.8 em above its
 * baseline to 0.2 em below, placed by its text-anchor and rotated as written.
 * Returns their number. */
static int labels(const char *s, box *b, int max, double *w, double *h)
{
    *w = *h = 0;
    const char *v = strstr(s, "viewBox=\"");
    if (v) sscanf(v + 9, "%*f %*f %lf %lf", w, h);
    int n = 0;
    for (const char *g = strstr(s, "<g transform=\"translate("); g && n < max; g = strstr(g + 1, "<g transform=\"translate(")) {
        double x, y, fs = 12, rot = 0;
        if (sscanf(g, "<g transform=\"translate(%lf,%lf)", &x, &y) != 2) continue;
        const char *gend = strchr(g, '>');
        const char *t = strstr(g, "<text>"), *te = t ? strstr(t, "</text>") : NULL;
        if (!gend || !t || !te || t > strstr(g + 1, "</g>")) continue;
        const char *r = strstr(g, "rotate(");
        if (r && r < gend) sscanf(r, "rotate(%lf)", &rot);
        const char *f = strstr(g, "font-size=\"");
        if (f && f < gend) sscanf(f, "font-size=\"%lf", &fs);
        const char *a = strstr(g, "text-anchor=\"");
        char anchor = a && a < gend ? a[13] : 's';   /* s(tart), m(iddle), e(nd) */
        /* the characters shown: tags dropped, an entity one character */
        int len = 0, k = 0;
        for (const char *c = t + 6; c < te; c++) {
            if (*c == '<') { while (c < te && *c != '>') c++; continue; }
            if (*c == '&') { while (c < te && *c != ';') c++; }
            if (k < (int) sizeof b[n].text - 1) b[n].text[k++] = *c == '&' ? '?' : *c;
            len++;
        }
        b[n].text[k] = '\0';
        if (len == 0) continue;
        double tw = 0.55 * fs * len, lo = anchor == 'm' ? -tw / 2 : anchor == 'e' ? -tw : 0;
        double lx[4] = { lo, lo + tw, lo + tw, lo }, ly[4] = { -0.8 * fs, -0.8 * fs, 0.2 * fs, 0.2 * fs };
        double th = rot * M_PI / 180, cs = cos(th), sn = sin(th);
        b[n].x0 = b[n].y0 = INFINITY;
        b[n].x1 = b[n].y1 = -INFINITY;
        for (int q = 0; q < 4; q++) {
            b[n].cx[q] = x + lx[q] * cs - ly[q] * sn;
            b[n].cy[q] = y + lx[q] * sn + ly[q] * cs;
            b[n].x0 = fmin(b[n].x0, b[n].cx[q]);
            b[n].x1 = fmax(b[n].x1, b[n].cx[q]);
            b[n].y0 = fmin(b[n].y0, b[n].cy[q]);
            b[n].y1 = fmax(b[n].y1, b[n].cy[q]);
        }
        n++;
    }
    return n;
}

/* 1 when boxes A and B overlap by more than SLACK px (separating axes: the
 * edge normals of both rectangles). */
static int overlap(const box *a, const box *b, double slack)
{
    const box *r[2] = { a, b };
    for (int k = 0; k < 2; k++)
        for (int e = 0; e < 2; e++) {
            double nx = -(r[k]->cy[e + 1] - r[k]->cy[e]), ny = r[k]->cx[e + 1] - r[k]->cx[e], l = hypot(nx, ny);
            if (l == 0) continue;
            nx /= l;
            ny /= l;
            double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
            for (int q = 0; q < 4; q++) {
                double pa = a->cx[q] * nx + a->cy[q] * ny, pb = b->cx[q] * nx + b->cy[q] * ny;
                amin = fmin(amin, pa), amax = fmax(amax, pa), bmin = fmin(bmin, pb), bmax = fmax(bmax, pb);
            }
            if (amax - slack <= bmin || bmax - slack <= amin) return 0;   /* a separating axis */
        }
    return 1;
}

/* The pairs of labels of SVG S that overlap and the labels that leave its
 * frame, described in WHY.  Returns their number. */
static int clashes(const char *s, char *why, size_t n)
{
    static box b[600];
    double w, h;
    int nb = labels(s, b, 600, &w, &h), bad = 0;
    why[0] = '\0';
    for (int i = 0; i < nb; i++) {
        if (w > 0 && (b[i].x0 < -1 || b[i].x1 > w + 1 || b[i].y0 < -1 || b[i].y1 > h + 1)) {
            bad++;
            size_t l = strlen(why);
            snprintf(why + l, n - l, "[%s] leaves the %gx%g frame (%.0f..%.0f, %.0f..%.0f); ", b[i].text, w, h, b[i].x0, b[i].x1,
                     b[i].y0, b[i].y1);
        }
        for (int j = i + 1; j < nb; j++) {
            /* 1 px of slack: touching boxes are legible */
            if (overlap(&b[i], &b[j], 1)) {
                bad++;
                size_t l = strlen(why);
                snprintf(why + l, n - l, "[%s] overlaps [%s]; ", b[i].text, b[j].text);
            }
        }
    }
    return bad;
}

/* The checker sees an overlap: two labels at one place, and one beyond the frame. */
Test(decide, label_checker_sees_overlaps)
{
    const char *svg =
        "<svg viewBox=\"0 0 600 400\">"
        "<g transform=\"translate(100,100)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"start\">\n<text>first label</text>\n</g>"
        "<g transform=\"translate(110,104)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"start\">\n<text>second label</text>\n</g>"
        "<g transform=\"translate(300,200)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"middle\">\n<text>apart</text>\n</g>"
        "</svg>";
    char why[1000];
    cr_expect_eq(clashes(svg, why, sizeof why), 1, "%s", why);
    const char *off = "<svg viewBox=\"0 0 600 400\"><g transform=\"translate(590,100)\" stroke=\"none\" font-size=\"12.00\""
                      " text-anchor=\"start\">\n<text>runs off the frame</text>\n</g></svg>";
    cr_expect_eq(clashes(off, why, sizeof why), 1, "%s", why);
    /* Two lines of one label rotated by -25 degrees, 1.2 em apart: no overlap; 0.5 em apart: one. */
    const char *rot = "<svg viewBox=\"0 0 600 400\">"
        "<g transform=\"translate(100,100) rotate(-25)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"start\">\n<text>34.5</text>\n</g>"
        "<g transform=\"translate(106.1,113.0) rotate(-25)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"start\">\n<text>queue 0.62 ms</text>\n</g>"
        "</svg>";
    cr_expect_eq(clashes(rot, why, sizeof why), 0, "%s", why);
    const char *rot2 = "<svg viewBox=\"0 0 600 400\">"
        "<g transform=\"translate(100,100) rotate(-25)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"start\">\n<text>34.5</text>\n</g>"
        "<g transform=\"translate(102.5,105.4) rotate(-25)\" stroke=\"none\" font-size=\"12.00\" text-anchor=\"start\">\n<text>queue 0.62 ms</text>\n</g>"
        "</svg>";
    cr_expect_eq(clashes(rot2, why, sizeof why), 1, "%s", why);
}

/* The SVGs of PAGE, each checked: no two labels overlap, none leaves its frame. */
static void check_labels(const char *page, const char *what)
{
    int k = 0;
    for (const char *p = strstr(page, "<svg"); p; p = strstr(p + 1, "<svg")) {
        const char *e = strstr(p, "</svg>");
        cr_assert_not_null(e);
        char *svg = strndup(p, (size_t) (e - p + 6));
        char why[4000];
        k++;
        cr_expect_eq(clashes(svg, why, sizeof why), 0, "%s, picture %d: %s", what, k, why);
        free(svg);
    }
    cr_expect_gt(k, 0, "%s: no picture", what);
}

/* The SVG of PAGE whose text holds TITLE (malloc'd), NULL when none. */
static char *picture_of(const char *page, const char *title)
{
    const char *t = strstr(page, title);
    if (!t) return NULL;
    const char *a = NULL;
    for (const char *p = strstr(page, "<svg"); p && p < t; p = strstr(p + 1, "<svg")) a = p;
    const char *e = strstr(t, "</svg>");
    return a && e ? strndup(a, (size_t) (e - a + 6)) : NULL;
}

static int have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* The CDFs: each metric's picture and its tail (1 - CDF, log axis, ticks at
 * P90, P99, P99.9); each design in its own colour on every picture, also
 * where an earlier design has no curve (A without TTFT: B keeps orange). */
Test(decide, cdf_tail_views_and_design_colours, .timeout = 300)
{
    if (!have_gnuplot()) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but gnuplot is not installed");
        cr_skip_test("gnuplot is not installed: no picture to check");
    }
    char cpu[256], pool[256], html[256];
    write_file("cpu.ini", CPU, cpu, sizeof cpu);
    write_file("pool.ini", POOL, pool, sizeof pool);
    snprintf(html, sizeof html, "%s/cdf.html", dir);
    result r = run_db(300, "report", cpu, pool, "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    /* TTFT, TPOT (B only) and E2E (both), each with its tail view. */
    int svgs = 0, tails = 0;
    for (const char *p = strstr(page, "<svg"); p; p = strstr(p + 1, "<svg")) svgs++;
    for (const char *p = strstr(page, "1 - CDF, log scale)</text>"); p; p = strstr(p + 1, "1 - CDF, log scale)</text>")) tails++;
    cr_expect_eq(svgs, 6, "%d pictures", svgs);
    cr_expect_geq(tails, 3, "%d tail views", tails);
    cr_expect(strstr(page, "0.01 (P99)") && strstr(page, "0.001 (P99.9)"), "the tail's ticks");
    /* Colours: A #0072B2 = rgb(0,114,178), B #D55E00 = rgb(213,94,0). */
    char *t = picture_of(page, "TTFT: time to first token, every design");
    cr_assert_not_null(t);
    cr_expect(strstr(t, "rgb(213,  94,   0)") != NULL, "B's TTFT curve is not B's orange");
    cr_expect(strstr(t, "rgb(  0, 114, 178)") == NULL, "B drawn in A's blue where A has no TTFT");
    free(t);
    t = picture_of(page, "E2E: end-to-end latency, every design");
    cr_assert_not_null(t);
    cr_expect(strstr(t, "rgb(213,  94,   0)") && strstr(t, "rgb(  0, 114, 178)"), "both designs' colours on E2E");
    free(t);
    /* The swatches of the tables in the same colours. */
    cr_expect(strstr(page, "class=\"sw\" style=\"background:#0072B2\"") && strstr(page, "class=\"sw\" style=\"background:#D55E00\""));
    check_labels(page, "the review page");
    free(page);
}

/* In a real browser: the page of a design whose title holds markup renders
 * with that title as text (no script element, no console message) and its
 * screenshot is far from blank. */
Test(decide, chromium_escaped_title_not_blank, .timeout = 300)
{
    char gw[256], cpu[256], html[256];
    write_file("gw.ini", GATEWAY, gw, sizeof gw);
    write_file("cpu.ini", CPU, cpu, sizeof cpu);
    snprintf(html, sizeof html, "%s/page.html", dir);
    result r = run_db(300, "report", gw, cpu, "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    if (system("command -v chromium >/dev/null 2>&1") != 0) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but chromium is not installed");
        cr_skip_test("chromium is not installed (an optional package of .ci/packages): the page was not rendered");
    }
    char cmd[2048], dom[300], log[300], png[300], blank[300], bhtml[300], base[400];
    snprintf(dom, sizeof dom, "%s/dom.html", dir);
    snprintf(log, sizeof log, "%s/console.log", dir);
    snprintf(png, sizeof png, "%s/shot.png", dir);
    snprintf(blank, sizeof blank, "%s/blank.png", dir);
    snprintf(bhtml, sizeof bhtml, "%s/blank.html", dir);
    FILE *b = fopen(bhtml, "w");
    cr_assert_not_null(b);
    fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body></body></html>\n", b);
    fclose(b);
    snprintf(base, sizeof base, "timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=%s/profile", dir);
    snprintf(cmd, sizeof cmd, "%s --enable-logging=stderr --v=0 --dump-dom file://%s >%s 2>%s", base, html, dom, log);
    cr_assert_eq(system(cmd), 0, "chromium --dump-dom failed: %s", slurp(log, NULL));
    char *d = slurp_or_fail(dom, NULL), *l = slurp_or_fail(log, NULL);
    /* The DOM's serialisation escapes text: the title is text, not an element. */
    cr_expect(strstr(d, "Gateway &lt;script&gt;alert(1)&lt;/script&gt; &amp; cache") != NULL, "the title is not shown as text");
    cr_expect(strstr(d, "<script") == NULL, "a script element in the DOM");
    cr_expect(strstr(d, "id=\"slo-verdicts\"") && strstr(d, "id=\"quality-table\""), "the verdicts and quality tables");
    cr_expect(strstr(l, "CONSOLE") == NULL && strstr(l, "Uncaught") == NULL && strstr(l, "net::ERR") == NULL, "console: %s", l);
    free(d);
    free(l);
    snprintf(cmd, sizeof cmd, "%s --screenshot=%s --window-size=1200,2400 file://%s >/dev/null 2>%s", base, png, html, log);
    cr_assert_eq(system(cmd), 0, "chromium --screenshot failed");
    snprintf(cmd, sizeof cmd, "%s --screenshot=%s --window-size=1200,2400 file://%s >/dev/null 2>%s", base, blank, bhtml, log);
    cr_assert_eq(system(cmd), 0, "chromium --screenshot (blank) failed");
    struct stat s1, s2;
    cr_assert_eq(stat(png, &s1), 0);
    cr_assert_eq(stat(blank, &s2), 0);
    /* A PNG of one colour compresses to a few kB whatever its size; text, tables and curves do not. */
    cr_expect_gt(s1.st_size, 10 * s2.st_size, "screenshot %lld bytes, a blank page's %lld", (long long) s1.st_size,
                 (long long) s2.st_size);
}

/* The frontier of a plan over two pools on the page: each point labelled with
 * its full configuration (both pools named), no two labels overlapping, the
 * chosen one inside the frame. */
Test(decide, plan_frontier_labels_full_names, .timeout = 300)
{
    if (!have_gnuplot()) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but gnuplot is not installed");
        cr_skip_test("gnuplot is not installed: no picture to check");
    }
    char two[256], html[256];
    write_file("two.ini", "[sim]\nrequests = 3000\nseed = 1\n[workload]\nrate = 8\ntarget = front\n"
               "[pool front]\nservice_ms = exp(mean=50)\nusd_per_hour = 1\nnext = back\n"
               "[pool back]\nservice_ms = exp(mean=100)\nusd_per_hour = 2\n[slo]\ne2e_p99_ms = 900\n", two, sizeof two);
    result r = run_db(300, "plan", two, "--search", "pool front.servers=1:8", "--search", "pool back.servers=1:8", "--no-sensitivity",
                      "--target-rate", "8", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    snprintf(html, sizeof html, "%s/plan.html", dir);
    r = run_db(120, "report", "1", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    char *svg = picture_of(page, "Cost against SLO, plan 1");
    cr_assert_not_null(svg, "no frontier picture");
    cr_expect(strstr(svg, "front.servers=") && strstr(svg, "back.servers="), "a label without its pool's name");
    char why[4000];
    cr_expect_eq(clashes(svg, why, sizeof why), 0, "%s", why);
    free(svg);
    free(page);
}

/* latsim plot RUN RUN --kind cdf: a colour per run (not one per curve), a
 * dash per metric; and the sweep's and the breakdown's pictures keep their
 * labels apart and inside the frame. */
Test(decide, plot_runs_colour_per_run_and_labels, .timeout = 300)
{
    if (!have_gnuplot()) {
        cr_assert(getenv("CI") == NULL || strcmp(getenv("CI"), "true"), "CI=true but gnuplot is not installed");
        cr_skip_test("gnuplot is not installed: no picture to check");
    }
    char pool[256], gw[256], svg[256], cpu[256];
    write_file("pool.ini", POOL, pool, sizeof pool);
    write_file("gw.ini", GATEWAY, gw, sizeof gw);
    write_file("cpu.ini", CPU, cpu, sizeof cpu);
    run_ok(pool);
    run_ok(gw);
    snprintf(svg, sizeof svg, "%s/cdf.svg", dir);
    result r = run_db(120, "plot", "1", "2", "--kind", "cdf", "--out", svg, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *s = slurp_or_fail(svg, NULL);
    /* 6 curves (TTFT, TPOT, E2E of each run), 2 colours */
    int blue = 0, orange = 0, other = 0;
    for (const char *p = strstr(s, "stroke='rgb("); p; p = strstr(p + 1, "stroke='rgb(")) {
        if (!strncmp(p, "stroke='rgb(  0, 114, 178)'", 27)) blue++;
        else if (!strncmp(p, "stroke='rgb(213,  94,   0)'", 27)) orange++;
        else if (strncmp(p, "stroke='rgb(  0,   0,   0)'", 27)) other++;
    }
    cr_expect(blue > 0 && orange > 0 && other == 0, "blue %d, orange %d, other colours %d", blue, orange, other);
    cr_expect(strstr(s, "stroke-dasharray") != NULL, "no dash per metric");
    char why[4000];
    cr_expect_eq(clashes(s, why, sizeof why), 0, "cdf: %s", why);
    free(s);
    /* The sweep: P50/P99 against the rate, the goodput line and its label. */
    r = run_db(300, "sweep", cpu, "--vary", "workload.rate=4,8,12,16,20,24,28,32,36", NULL);
    cr_assert(r.rc == 0 || r.rc == 3, "%s", r.err);
    result_free(&r);
    snprintf(svg, sizeof svg, "%s/load.svg", dir);
    r = run_db(120, "plot", "sweep", "1", "--out", svg, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    s = slurp_or_fail(svg, NULL);
    cr_expect_eq(clashes(s, why, sizeof why), 0, "sweep: %s", why);
    free(s);
    /* Its breakdown: a bar per point (more than 8: smaller labels that fit their bars). */
    snprintf(svg, sizeof svg, "%s/sbd.svg", dir);
    r = run_db(120, "plot", "sweep", "1", "--kind", "breakdown", "--out", svg, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    s = slurp_or_fail(svg, NULL);
    cr_expect_eq(clashes(s, why, sizeof why), 0, "sweep breakdown: %s", why);
    cr_expect(strstr(s, "font-size=\"7.00\"") != NULL, "the bars' labels not made smaller for many bars");
    free(s);
    /* The breakdown of the gateway run: a bar per pool. */
    snprintf(svg, sizeof svg, "%s/bd.svg", dir);
    r = run_db(120, "plot", "2", "--kind", "breakdown", "--out", svg, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    s = slurp_or_fail(svg, NULL);
    cr_expect_eq(clashes(s, why, sizeof why), 0, "breakdown: %s", why);
    free(s);
}

/* Goodput of swept designs: the highest swept rate meeting the SLO (M/M/4,
 * mean 100 ms, P99 E2E <= 1 s: 30 req/s meets it, 45 is beyond capacity), in compare
 * (text and JSON) and on the page. */
Test(decide, goodput_of_a_swept_design, .timeout = 300)
{
    char cpu[256], html[256];
    write_file("cpu.ini", CPU, cpu, sizeof cpu);
    result r = run_db(300, "sweep", cpu, "--vary", "workload.rate=10,20,30,45", NULL);
    cr_assert(r.rc == 0 || r.rc == 3, "%s", r.err);
    result_free(&r);
    double met = (double) db_count(db, "SELECT CAST(max(rate) * 1000 AS INTEGER) FROM sweep_points WHERE sweep_id = 1 AND slo_met = 1") / 1000;
    cr_assert_geq(met, 30, "30 req/s meets the SLO");
    cr_assert_lt(met, 40, "beyond the capacity (40 req/s) it cannot meet it");
    r = run_db(120, "compare", "1", "2", "--json", NULL);
    json_t *j = parse(&r);
    json_t *g = json_object_get(json_array_get(json_object_get(j, "slo"), 0), "goodput");
    cr_assert_not_null(g, "%s", r.out);
    cr_expect_float_eq(json_number_value(json_object_get(g, "rate_rps")), met, 1e-3 * met);   /* JSON: 6 digits */
    cr_expect_eq(json_integer_value(json_object_get(g, "sweep")), 1);
    cr_expect_gt(json_number_value(json_object_get(g, "missed_at_rps")), met);
    json_decref(j);
    result_free(&r);
    r = run_db(120, "compare", "1", "2", NULL);
    cr_expect(strstr(r.out, "goodput (sweep 1): ") != NULL, "%s", r.out);
    result_free(&r);
    snprintf(html, sizeof html, "%s/g.html", dir);
    r = run_db(120, "report", "1", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    cr_expect(strstr(page, "class=\"goodput\">goodput: <b>") != NULL, "no goodput on the page");
    free(page);
}

/* The review as shipped: the four designs of scenarios/ (a 70B pool,
 * the gateway with a result cache and complexity routing, disaggregated
 * prefill and decode, speculative decoding) on one page: each named by its
 * [sim] title with its description, SLO verdicts for those with an [slo], the
 * gateway's quality and its classes' cache hit rates, energy per request and
 * per 1k tokens, no exponent in any cell, and no two labels of any picture
 * overlapping. */
Test(decide, four_shipped_designs_page, .timeout = 300)
{
    char html[256];
    snprintf(html, sizeof html, "%s/four.html", dir);
    result r = run_db(300, "report", "scenarios/chat_plan.ini", "scenarios/gateway_three_models.ini", "scenarios/pd_disagg.ini",
                      "scenarios/spec_decode.ini", "--set", "sim.requests=1500", "--html", html, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    char *page = slurp_or_fail(html, NULL);
    static const char *const TITLES[] = { "A 70B pool", "Gateway: result cache and complexity routing",
                                          "Disaggregated prefill and decode", "Speculative decoding" };
    char *designs = table(page, "<table");   /* the first: the designs */
    cr_assert_not_null(designs);
    for (int i = 0; i < 4; i++) cr_expect(strstr(designs, TITLES[i]) != NULL, "no title %s", TITLES[i]);
    cr_expect(strstr(designs, "a semantic result cache, then a classifier") != NULL, "no description");
    free(designs);
    char *slo = table(page, "<table id=\"slo-verdicts\">");
    cr_assert_not_null(slo);
    cr_expect(strstr(slo, "ttft_p99_ms") && strstr(slo, "no [slo]"), "%s", slo);
    free(slo);
    char *q = table(page, "<table id=\"quality-table\">");
    cr_assert_not_null(q);
    cr_expect(strstr(q, "cache: cache hit rate") && strstr(q, "gateway: misroute share"), "%s", q);
    free(q);
    char *c = table(page, "<table class=\"classes\">");
    cr_assert_not_null(c);
    cr_expect(strstr(c, "cache hit rate %") && strstr(c, "<tr><th>analysis</th>"), "%s", c);
    free(c);
    char *h = table(page, "<table id=\"headline\">");
    cr_assert_not_null(h);
    cr_expect(strstr(h, "energy per request") && strstr(h, "energy per 1k output tokens"), "no energy per request / 1k tokens");
    free(h);
    char what[256];
    cr_expect(!exponent_in_cells(page, what, sizeof what), "exponent notation in a cell: %s", what);
    if (have_gnuplot()) {
        check_labels(page, "the four designs' page");
        /* A's and C's TTFT P99 limits (800 and 500 ms) both labelled, on the CDF and on its tail. */
        char *t = picture_of(page, "TTFT: time to first token, every design");
        cr_assert_not_null(t);
        cr_expect(strstr(t, "ttft p99 &lt;= 800 ms") && strstr(t, "ttft p99 &lt;= 500 ms"), "an SLO label missing");
        free(t);
    }
    free(page);
}
