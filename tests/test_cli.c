/* test_cli.c -- Criterion tests of the command-line front end (cli/latsim.c) run as
 * a program: ./latsim, built by `make` (make test builds it), run from the
 * repository root.  Each test works in its own mkdtemp() directory under /tmp,
 * removed afterwards.
 *
 * Bad input must exit with status 2, print exactly one line on stderr that names
 * the file, the line and the key (and suggests the closest valid name where there
 * is one), and leave the database without any new run.  Good input is checked
 * through the --json report, which is parsed by the small JSON reader below.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"

#include "tbin.h"
#include "tcli.h"
#define FAST "--set sim.requests=2000 --set sim.warmup=200"

static void setup(void) { tcli_setup("/tmp/latsim_cli_", "runs.db"); }

TestSuite(cli_errors, .init = setup, .fini = tcli_teardown);
TestSuite(cli_run, .init = setup, .fini = tcli_teardown);
TestSuite(cli_help, .init = setup, .fini = tcli_teardown);

/* ---- running the program --------------------------------------------------------- */

/* Runs "./latsim ARGS" (ARGS formatted like printf; a shell command line) with its
 * output captured in files of the test directory. */
__attribute__((format(printf, 1, 2)))
static result latsim(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    result r = vrun_sh(NULL, fmt, ap);
    va_end(ap);
    return r;
}

/* Rows of table runs in the database at PATH (which must exist). */
static long long count_runs(const char *path)
{
    sqlite3 *h = NULL;
    cr_assert_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "cannot open %s", path);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT count(*) FROM runs", -1, &st, NULL), SQLITE_OK, "%s: %s", path,
                 sqlite3_errmsg(h));
    long long n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

/* Creates an empty latsim database at db (schema and catalog, no runs). */
static void make_empty_db(void)
{
    sqlite3 *h = NULL;
    char err[512];
    cr_assert_eq(store_open(db, &h, err, sizeof err), 0, "store_open: %s", err);
    store_close(h);
    cr_assert_eq(count_runs(db), 0);
}

/* The message is exactly one line, "latsim: ...\n". */
static void expect_latsim_line(const result *r)
{
    size_t n = strlen(r->err);
    cr_expect(n > 0 && r->err[n - 1] == '\n', "stderr should be one line ending in a newline: '%s'", r->err);
    cr_expect(n > 0 && strchr(r->err, '\n') == r->err + n - 1, "stderr has more than one line: '%s'", r->err);
    cr_expect(strncmp(r->err, "latsim: ", 8) == 0, "stderr should start with 'latsim: ': '%s'", r->err);
}

static void expect_contains(const char *hay, const char *needle, const char *what)
{
    cr_expect_not_null(strstr(hay, needle), "%s should contain '%s': '%s'", what, needle, hay);
}

/* ---- bad scenarios ------------------------------------------------------------------- */

/* The base scenario; line numbers matter to the messages checked below. */
static const char *BASE =
    "[sim]\n"                       /* 1 */
    "requests = 2000\n"             /* 2 */
    "warmup = 200\n"                /* 3 */
    "\n"                            /* 4 */
    "[workload]\n"                  /* 5 */
    "rate = 50\n"                   /* 6 */
    "\n"                            /* 7 */
    "[pool cpu]\n"                  /* 8 */
    "servers = 4\n"                 /* 9 */
    "service_ms = exp(mean=50)\n";  /* 10 */

/* BASE with line LINE replaced by REPLACEMENT (which ends in a newline). */
static void base_with(int line, const char *replacement, char *out, size_t n)
{
    const char *p = BASE;
    size_t k = 0;
    out[0] = '\0';
    for (int ln = 1; *p; ln++) {
        const char *nl = strchr(p, '\n');
        size_t len = (size_t) (nl - p) + 1;
        int w = ln == line ? snprintf(out + k, n - k, "%s", replacement)
                           : snprintf(out + k, n - k, "%.*s", (int) len, p);
        cr_assert(w >= 0 && (size_t) w < n - k);
        k += (size_t) w;
        p += len;
    }
}

/* Runs the scenario TEXT (written as dir/NAME) into an empty database and checks:
 * exit 2, one line naming "FILE:LINE:" and every string of NEEDLES, no run stored. */
static void expect_bad_scenario(const char *name, const char *text, int line, const char *const *needles)
{
    char path[256], where[300];
    write_file(name, text, path, sizeof path);
    make_empty_db();
    result r = latsim("run '%s' --db '%s'", path, db);
    cr_expect_eq(r.rc, 2, "exit status %d, want 2 (stderr: %s)", r.rc, r.err);
    cr_expect_eq(r.out[0], '\0', "nothing should be printed on stdout: '%s'", r.out);
    expect_latsim_line(&r);
    snprintf(where, sizeof where, "%s:%d:", path, line);
    expect_contains(r.err, where, "the message");
    for (const char *const *s = needles; *s; s++) expect_contains(r.err, *s, "the message");
    cr_expect_eq(count_runs(db), 0, "a bad scenario stored a run");
    result_free(&r);
}

Test(cli_errors, base_scenario_is_good)
{
    /* The scenarios below differ from this one by one line. */
    char path[256];
    write_file("base.ini", BASE, path, sizeof path);
    result r = latsim("run '%s' --db '%s' --json", path, db);
    cr_expect_eq(r.rc, 0, "stderr: %s", r.err);
    cr_expect_eq(count_runs(db), 1);
    result_free(&r);
}

Test(cli_errors, unknown_section_suggests_closest)
{
    char text[1024];
    base_with(5, "[wrkload]\n", text, sizeof text);
    const char *needles[] = { "[wrkload]", "unknown section", "[workload]", NULL };
    expect_bad_scenario("section.ini", text, 5, needles);
}

Test(cli_errors, unknown_key_suggests_closest)
{
    char text[1024];
    base_with(9, "sevrers = 4\n", text, sizeof text);
    const char *needles[] = { "[pool cpu]", "sevrers", "unknown key", "'servers'", NULL };
    expect_bad_scenario("key.ini", text, 9, needles);
}

Test(cli_errors, unknown_key_in_sim_section)
{
    char text[1024];
    base_with(2, "reqests = 2000\n", text, sizeof text);
    const char *needles[] = { "[sim]", "reqests", "'requests'", NULL };
    expect_bad_scenario("simkey.ini", text, 2, needles);
}

Test(cli_errors, malformed_distribution)
{
    char text[1024];
    base_with(10, "service_ms = exp(mean=)\n", text, sizeof text);
    const char *n1[] = { "[pool cpu]", "service_ms", "mean", NULL };
    expect_bad_scenario("dist1.ini", text, 10, n1);

    base_with(10, "service_ms = expo(mean=50)\n", text, sizeof text);
    const char *n2[] = { "service_ms", "expo", NULL };
    expect_bad_scenario("dist2.ini", text, 10, n2);

    base_with(10, "service_ms = lognormal(mean=50, cv=abc)\n", text, sizeof text);
    const char *n3[] = { "service_ms", "cv", NULL };
    expect_bad_scenario("dist3.ini", text, 10, n3);
}

Test(cli_errors, negative_and_zero_rate)
{
    char text[1024];
    base_with(6, "rate = -5\n", text, sizeof text);
    const char *n1[] = { "[workload]", "rate", "-5", NULL };
    expect_bad_scenario("neg.ini", text, 6, n1);
    base_with(6, "rate = 0\n", text, sizeof text);
    const char *n2[] = { "[workload]", "rate", "'0'", NULL };
    expect_bad_scenario("zero.ini", text, 6, n2);
}

Test(cli_errors, zero_servers)
{
    char text[1024];
    base_with(9, "servers = 0\n", text, sizeof text);
    const char *needles[] = { "[pool cpu]", "servers", "'0'", NULL };
    expect_bad_scenario("servers.ini", text, 9, needles);
}

/* A scenario whose arrivals come from TRACE_LINE (line 6) and whose line 7 is LINE7
 * (which may hold several lines).  Small counts: the traces below are short. */
static void trace_scenario(char *out, size_t n, const char *trace_line, const char *line7)
{
    snprintf(out, n,
             "[sim]\nrequests = 100\nwarmup = 0\n\n"
             "[workload]\n"
             "%s"                 /* 6 */
             "%s"                 /* 7 */
             "arrival = trace\n"  /* 8 */
             "\n[pool cpu]\nservers = 4\nservice_ms = exp(mean=5)\n",
             trace_line, line7);
}

Test(cli_errors, missing_trace_file)
{
    char text[1024];
    trace_scenario(text, sizeof text, "trace = no_such_trace.csv\n", "\n");
    const char *needles[] = { "[workload]", "trace", "no_such_trace.csv", NULL };
    expect_bad_scenario("notrace.ini", text, 6, needles);
}

Test(cli_errors, malformed_trace_names_file_and_line)
{
    /* A bad number in the time column on line 5 of a CSV that has no token columns. */
    char csv[256], text[1024], where[300];
    write_file("bad_seconds.csv", "t\n0\n0.5\n1.25\n1.x\n2\n", csv, sizeof csv);
    trace_scenario(text, sizeof text, "trace = bad_seconds.csv\n", "time_column = t\ntime_format = seconds\n");
    snprintf(where, sizeof where, "%s:5:", csv);
    const char *needles[] = { "[workload] trace", where, "1.x", NULL };
    expect_bad_scenario("badtrace.ini", text, 6, needles);
}

Test(cli_errors, malformed_trace_names_file_and_line_without_token_columns)
{
    /* The same with the token columns switched off explicitly. */
    char csv[256], text[1024], where[300];
    write_file("bad_seconds.csv", "t\n0\n0.5\n1.25\n1.x\n2\n", csv, sizeof csv);
    trace_scenario(text, sizeof text, "trace = bad_seconds.csv\n",
                   "time_column = t\ntime_format = seconds\nprompt_column = none\noutput_column = none\n");
    snprintf(where, sizeof where, "%s:5:", csv);
    const char *needles[] = { "[workload] trace", where, "1.x", NULL };
    expect_bad_scenario("badtrace2.ini", text, 6, needles);
}

Test(cli_errors, malformed_trace_datetime)
{
    char csv[256], text[1024], where[300];
    write_file("bad_time.csv",
               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2023-11-16 18:15:46.6805900,374,44\n"
               "2023-11-16 18:15:50.9951690,396,109\n"
               "2023-11-16 18:15:5x,396,109\n",
               csv, sizeof csv);
    trace_scenario(text, sizeof text, "trace = bad_time.csv\n", "\n");
    snprintf(where, sizeof where, "%s:4:", csv);
    const char *needles[] = { "[workload] trace", where, "TIMESTAMP", NULL };
    expect_bad_scenario("badtime.ini", text, 6, needles);
}

Test(cli_errors, malformed_trace_token_count)
{
    /* A bad number in the (default) ContextTokens column on line 4.  The column is
     * in the file, so this must be reported, not silently ignored. */
    char csv[256], text[1024], where[300];
    write_file("bad_tokens.csv",
               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
               "2023-11-16 18:15:46.6805900,374,44\n"
               "2023-11-16 18:15:50.9951690,396,109\n"
               "2023-11-16 18:15:51.2000000,abc,12\n"
               "2023-11-16 18:15:52.0000000,100,12\n",
               csv, sizeof csv);
    trace_scenario(text, sizeof text, "trace = bad_tokens.csv\n", "\n");
    snprintf(where, sizeof where, "%s:4:", csv);
    const char *needles[] = { "[workload] trace", where, "ContextTokens", "abc", NULL };
    expect_bad_scenario("badtokens.ini", text, 6, needles);
}

/* ---- bad databases ------------------------------------------------------------------ */

Test(cli_errors, database_in_missing_directory)
{
    result r = latsim("run scenarios/default.ini " FAST " --db /nonexistent/dir/x.db");
    cr_expect_eq(r.rc, 2, "exit status %d, want 2 (stderr: %s)", r.rc, r.err);
    expect_latsim_line(&r);
    expect_contains(r.err, "/nonexistent/dir/x.db", "the message");
    cr_expect_neq(access("/nonexistent/dir/x.db", F_OK), 0);
    result_free(&r);
}

Test(cli_errors, database_that_is_a_text_file)
{
    char path[256];
    const char *text = "this is not a database\nsecond line\n";
    write_file("notes.txt", text, path, sizeof path);
    result r = latsim("run scenarios/default.ini " FAST " --db '%s'", path);
    cr_expect_eq(r.rc, 2, "exit status %d, want 2 (stderr: %s)", r.rc, r.err);
    expect_latsim_line(&r);
    expect_contains(r.err, path, "the message");
    char *after = slurp_or_fail(path, NULL);
    cr_expect_str_eq(after, text, "the text file was modified");
    free(after);
    result_free(&r);

    /* runs and show refuse it the same way */
    r = latsim("runs --db '%s'", path);
    cr_expect_eq(r.rc, 2, "runs: exit status %d (stderr: %s)", r.rc, r.err);
    expect_contains(r.err, path, "the message");
    result_free(&r);
}

Test(cli_errors, bad_options)
{
    result r = latsim("run scenarios/default.ini --db '%s' --replications 0", db);
    cr_expect_eq(r.rc, 2);
    expect_latsim_line(&r);
    expect_contains(r.err, "--replications", "the message");
    result_free(&r);
    r = latsim("run scenarios/default.ini --db '%s' --seed -3", db);
    cr_expect_eq(r.rc, 2);
    expect_latsim_line(&r);
    result_free(&r);
    r = latsim("run scenarios/default.ini --db '%s' --frobnicate", db);
    cr_expect_eq(r.rc, 2);
    expect_contains(r.err, "--frobnicate", "the message");
    result_free(&r);
    r = latsim("run scenarios/default.ini --db '%s' --set 'pool cpu.sevrers=5'", db);
    cr_expect_eq(r.rc, 2);
    expect_latsim_line(&r);
    expect_contains(r.err, "'servers'", "the message");
    result_free(&r);
    r = latsim("run '%s/no_such.ini' --db '%s'", dir, db);
    cr_expect_eq(r.rc, 2);
    expect_latsim_line(&r);
    expect_contains(r.err, "no_such.ini", "the message");
    result_free(&r);
    cr_expect_neq(access(db, F_OK), 0, "bad input created the database");
}

/* ---- a small JSON reader ---------------------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    double num;               /* J_NUM, J_BOOL */
    char *str;                /* J_STR */
    char **keys;              /* J_OBJ */
    struct jval *kids;        /* J_ARR, J_OBJ */
    size_t n;
} jval;

typedef struct jparser { const char *p; int ok; } jparser;

static void jws(jparser *j) { while (isspace((unsigned char) *j->p)) j->p++; }

static char *jstring(jparser *j)
{
    if (*j->p != '"') { j->ok = 0; return NULL; }
    j->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (*j->p && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            c = *j->p++;
            if (c == 'u') {                        /* only \u00XX is produced by the report */
                unsigned v;
                if (sscanf(j->p, "%4x", &v) != 1) { j->ok = 0; break; }
                j->p += 4;
                c = (char) v;
            } else if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c != '"' && c != '\\' && c != '/') { j->ok = 0; break; }
        } else if ((unsigned char) c < 0x20) { j->ok = 0; break; }
        if (n + 2 > cap) s = realloc(s, cap *= 2);
        s[n++] = c;
    }
    s[n] = '\0';
    if (*j->p != '"') j->ok = 0;
    else j->p++;
    return s;
}

static void jparse(jparser *j, jval *v)
{
    memset(v, 0, sizeof *v);
    jws(j);
    if (!j->ok) return;
    if (*j->p == '{' || *j->p == '[') {
        int obj = *j->p == '{';
        v->t = obj ? J_OBJ : J_ARR;
        j->p++;
        jws(j);
        if (*j->p == (obj ? '}' : ']')) { j->p++; return; }
        for (;;) {
            v->kids = realloc(v->kids, (v->n + 1) * sizeof *v->kids);
            if (obj) {
                v->keys = realloc(v->keys, (v->n + 1) * sizeof *v->keys);
                jws(j);
                v->keys[v->n] = jstring(j);
                jws(j);
                if (*j->p != ':') j->ok = 0;
                else j->p++;
            }
            jparse(j, &v->kids[v->n]);
            v->n++;
            if (!j->ok) return;
            jws(j);
            if (*j->p == ',') { j->p++; continue; }
            if (*j->p == (obj ? '}' : ']')) { j->p++; return; }
            j->ok = 0;
            return;
        }
    }
    if (*j->p == '"') { v->t = J_STR; v->str = jstring(j); return; }
    if (!strncmp(j->p, "true", 4)) { v->t = J_BOOL; v->num = 1; j->p += 4; return; }
    if (!strncmp(j->p, "false", 5)) { v->t = J_BOOL; v->num = 0; j->p += 5; return; }
    if (!strncmp(j->p, "null", 4)) { v->t = J_NULL; j->p += 4; return; }
    char *end;
    v->t = J_NUM;
    v->num = strtod(j->p, &end);
    if (end == j->p || !(*j->p == '-' || isdigit((unsigned char) *j->p))) j->ok = 0;
    j->p = end;
}

static void jfree(jval *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->kids[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->kids);
    free(v->keys);
    free(v->str);
}

/* Parses TEXT, which must be exactly one JSON object and a newline. */
static void json_parse_one(const char *text, jval *v)
{
    jparser j = { text, 1 };
    jparse(&j, v);
    cr_assert(j.ok, "not valid JSON near offset %ld: %.80s", (long) (j.p - text), j.p);
    cr_assert_eq(v->t, J_OBJ, "not a JSON object");
    cr_assert_str_eq(j.p, "\n", "trailing output after the JSON object: '%s'", j.p);
}

/* Member KEY of object O (asserted present, of type T unless T < 0). */
static const jval *jget(const jval *o, const char *key, int t)
{
    cr_assert_eq(o->t, J_OBJ, "looking up '%s' in a non-object", key);
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key)) {
            if (t >= 0) cr_assert_eq(o->kids[i].t, (jtype) t, "'%s' has JSON type %d, want %d", key, o->kids[i].t, t);
            return &o->kids[i];
        }
    cr_assert_fail("JSON object has no key '%s'", key);
    return NULL;
}

static const char *LAT_METRICS[] = { "e2e", "queue", "service" };
static const char *LAT_STATS[] = { "mean", "p50", "p90", "p95", "p99", "p999", "max" };

/* The latency_ms member of O: e2e/queue/service (or those of NMETRICS) x every stat. */
static void expect_latency(const jval *o, int from, int to, int want_numbers)
{
    const jval *lat = jget(o, "latency_ms", J_OBJ);
    for (int m = from; m < to; m++) {
        const jval *x = jget(lat, LAT_METRICS[m], J_OBJ);
        for (int s = 0; s < 7; s++) {
            const jval *v = jget(x, LAT_STATS[s], -1);
            if (want_numbers)
                cr_expect_eq(v->t, J_NUM, "latency_ms.%s.%s is not a number", LAT_METRICS[m], LAT_STATS[s]);
        }
    }
}

/* ---- good runs ------------------------------------------------------------------ */

static void run_default_json(const char *extra, jval *v)
{
    result r = latsim("run scenarios/default.ini --json --db '%s' " FAST " %s", db, extra);
    cr_assert_eq(r.rc, 0, "exit status %d (stderr: %s)", r.rc, r.err);
    cr_expect_eq(r.err[0], '\0', "stderr should be empty: '%s'", r.err);
    json_parse_one(r.out, v);
    result_free(&r);
}

Test(cli_run, json_report_has_every_key)
{
    jval v;
    run_default_json("", &v);
    cr_expect_str_eq(jget(&v, "scenario", J_STR)->str, "scenarios/default.ini");
    cr_expect_eq(jget(&v, "seed", J_NUM)->num, 1);
    cr_expect_gt(strlen(jget(&v, "version", J_STR)->str), 0);
    cr_expect_eq(jget(&v, "requests", J_NUM)->num, 2000);
    cr_expect_eq(jget(&v, "rejected", J_NUM)->num, 0);
    cr_expect_eq(jget(&v, "timed_out", J_NUM)->num, 0);
    cr_expect_gt(jget(&v, "sim_time_s", J_NUM)->num, 0);
    cr_expect_geq(jget(&v, "wall_time_s", J_NUM)->num, 0);
    cr_expect_gt(jget(&v, "events", J_NUM)->num, 2 * 2000);
    double tp = jget(&v, "throughput_rps", J_NUM)->num;
    cr_expect(tp > 40 && tp < 72, "throughput %g req/s for an offered 56", tp);
    cr_expect_eq(jget(&v, "saturated", J_BOOL)->num, 0);
    expect_latency(&v, 0, 3, 1);
    const jval *lat = jget(&v, "latency_ms", J_OBJ);
    double e2e = jget(jget(lat, "e2e", J_OBJ), "mean", J_NUM)->num;
    double q = jget(jget(lat, "queue", J_OBJ), "mean", J_NUM)->num;
    double s = jget(jget(lat, "service", J_OBJ), "mean", J_NUM)->num;
    cr_expect(fabs(e2e - (q + s)) < 1e-4 * e2e, "e2e mean %g != queue %g + service %g", e2e, q, s);
    const jval *pools = jget(&v, "pools", J_OBJ);
    const jval *cpu = jget(pools, "cpu", J_OBJ);
    double u = jget(cpu, "busy_share", J_NUM)->num;
    cr_expect(u > 0.5 && u < 0.9, "busy share %g for an offered 0.7", u);
    cr_expect_eq(jget(cpu, "saturated", J_BOOL)->num, 0);
    expect_latency(cpu, 1, 3, 1);
    cr_expect_eq(count_runs(db), 1);
    jfree(&v);
}

Test(cli_run, set_changes_the_result)
{
    jval a, b;
    run_default_json("", &a);
    run_default_json("--set 'pool cpu.servers=5'", &b);
    const jval *la = jget(&a, "latency_ms", J_OBJ), *lb = jget(&b, "latency_ms", J_OBJ);
    double qa = jget(jget(la, "queue", J_OBJ), "mean", J_NUM)->num;
    double qb = jget(jget(lb, "queue", J_OBJ), "mean", J_NUM)->num;
    cr_expect_lt(qb, qa, "a fifth server should cut the mean wait (%g -> %g)", qa, qb);
    double ua = jget(jget(jget(&a, "pools", J_OBJ), "cpu", J_OBJ), "busy_share", J_NUM)->num;
    double ub = jget(jget(jget(&b, "pools", J_OBJ), "cpu", J_OBJ), "busy_share", J_NUM)->num;
    cr_expect_lt(ub, ua, "utilization with 5 servers %g should be below %g with 4", ub, ua);
    cr_expect_eq(count_runs(db), 2);
    jfree(&a);
    jfree(&b);
}

Test(cli_run, replications_report_ci95)
{
    jval v;
    run_default_json("--replications 3", &v);
    cr_expect_eq(jget(&v, "replications", J_NUM)->num, 3);
    const jval *ci = jget(&v, "ci95", J_OBJ);
    double w = jget(ci, "throughput_rps", J_NUM)->num;
    cr_expect_gt(w, 0, "the throughput's 95%% half-width should be positive");
    /* 2 000 requests a replication: 2 beyond P99.9, too few for its interval
     * (issue 30; 20 needed): null, and the note says what it needs. */
    const jval *lat = jget(ci, "latency_ms", J_OBJ);
    for (int m = 0; m < 3; m++)
        for (int s = 0; s < 7; s++)
            cr_expect_eq(jget(jget(lat, LAT_METRICS[m], J_OBJ), LAT_STATS[s], -1)->t, s == 5 ? J_NULL : J_NUM,
                         "ci95 latency_ms.%s.%s", LAT_METRICS[m], LAT_STATS[s]);
    cr_expect(strstr(jget(&v, "interval_note", J_STR)->str, "P99.9 20000"), "%s", jget(&v, "interval_note", J_STR)->str);
    cr_expect_gt(jget(jget(jget(ci, "latency_ms", J_OBJ), "e2e", J_OBJ), "mean", J_NUM)->num, 0);
    jget(ci, "pools", J_OBJ);
    cr_expect_eq(count_runs(db), 1);
    jfree(&v);
}

Test(cli_run, seed_option_is_reported_and_reproducible)
{
    jval a, b, c;
    run_default_json("--seed 42", &a);
    run_default_json("--seed 42", &b);
    run_default_json("--seed 43", &c);
    cr_expect_eq(jget(&a, "seed", J_NUM)->num, 42);
    double ea = jget(jget(jget(&a, "latency_ms", J_OBJ), "e2e", J_OBJ), "mean", J_NUM)->num;
    double eb = jget(jget(jget(&b, "latency_ms", J_OBJ), "e2e", J_OBJ), "mean", J_NUM)->num;
    double ec = jget(jget(jget(&c, "latency_ms", J_OBJ), "e2e", J_OBJ), "mean", J_NUM)->num;
    cr_expect_eq(ea, eb);
    cr_expect_neq(ea, ec);
    jfree(&a);
    jfree(&b);
    jfree(&c);
}

Test(cli_run, runs_lists_and_show_prints_the_stored_run)
{
    result r = latsim("run scenarios/default.ini --db '%s' " FAST, db);
    cr_assert_eq(r.rc, 0, "stderr: %s", r.err);
    expect_contains(r.out, "run 1 stored", "the table output");
    result_free(&r);
    cr_expect_eq(count_runs(db), 1);

    r = latsim("runs --db '%s'", db);
    cr_expect_eq(r.rc, 0, "stderr: %s", r.err);
    expect_contains(r.out, "scenarios/default.ini", "latsim runs");
    /* one header line and one line for the run, whose first field is its id */
    int lines = 0, has_id = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        lines++;
        long id;
        if (sscanf(line, " %ld", &id) == 1 && id == 1) has_id = 1;
    }
    cr_expect_eq(lines, 2, "latsim runs printed %d lines", lines);
    cr_expect(has_id, "latsim runs does not list run 1");
    result_free(&r);

    r = latsim("show 1 --db '%s'", db);
    cr_expect_eq(r.rc, 0, "stderr: %s", r.err);
    expect_contains(r.out, "run 1", "latsim show 1");
    expect_contains(r.out, "scenarios/default.ini", "latsim show 1");
    expect_contains(r.out, "[pool cpu]", "latsim show 1");
    expect_contains(r.out, "requests = 2000", "latsim show 1 (the effective configuration)");
    expect_contains(r.out, "e2e", "latsim show 1");
    result_free(&r);

    r = latsim("show 2 --db '%s'", db);
    cr_expect_eq(r.rc, 2, "show of a missing run: exit %d", r.rc);
    expect_latsim_line(&r);
    result_free(&r);
}

/* A scenario replaying the Azure conversation trace (300 rows) into a generic pool. */
static void azure_scenario(char *out, size_t n, const char *trace)
{
    snprintf(out, n,
             "[sim]\nrequests = 250\nwarmup = 20\n\n"
             "[workload]\narrival = trace\ntrace = %s\n\n"
             "[pool cpu]\nservers = 2\nservice_ms = exp(mean=50)\n",
             trace);
}

static void expect_trace_run(const char *scenario_path)
{
    result r = latsim("run '%s' --json --db '%s'", scenario_path, db);
    cr_assert_eq(r.rc, 0, "exit status %d (stderr: %s)", r.rc, r.err);
    jval v;
    json_parse_one(r.out, &v);
    cr_expect_eq(jget(&v, "requests", J_NUM)->num, 250);
    cr_expect_gt(jget(&v, "sim_time_s", J_NUM)->num, 0);
    expect_latency(&v, 0, 3, 1);
    jfree(&v);
    result_free(&r);
}

Test(cli_run, azure_trace_scenario)
{
    char trace[PATH_MAX], text[PATH_MAX + 256], path[256];
    cr_assert_not_null(realpath("tests/data/AzureLLMInferenceTrace_conv.csv", trace),
                       "tests/data/AzureLLMInferenceTrace_conv.csv missing (tests run from the repository root)");
    azure_scenario(text, sizeof text, trace);
    write_file("azure_abs.ini", text, path, sizeof path);
    expect_trace_run(path);

    /* A relative trace path resolves against the scenario's directory. */
    char *csv = slurp_or_fail(trace, NULL), copy[256];
    write_file("conv.csv", csv, copy, sizeof copy);
    free(csv);
    azure_scenario(text, sizeof text, "conv.csv");
    write_file("azure_rel.ini", text, path, sizeof path);
    expect_trace_run(path);
    cr_expect_eq(count_runs(db), 2);
}

/* ---- help ------------------------------------------------------------------------ */

static void expect_options(const char *text, const char *what)
{
    static const char *opts[] = { "--seed", "--set", "--json", "--db", "--replications" };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) expect_contains(text, opts[i], what);
}

Test(cli_help, run_help_mentions_every_option)
{
    result r = latsim("run --help");
    cr_expect_eq(r.rc, 0);
    expect_options(r.out, "latsim run --help");
    result_free(&r);
}

Test(cli_help, top_level_help_mentions_every_option)
{
    result r = latsim("--help");
    cr_expect_eq(r.rc, 0);
    expect_contains(r.out, "run", "latsim --help");
    expect_options(r.out, "latsim --help");
    result_free(&r);
}

Test(cli_help, usage_errors_exit_2)
{
    result r = latsim("%s", "");
    cr_expect_eq(r.rc, 2);
    result_free(&r);
    r = latsim("frobnicate");
    cr_expect_eq(r.rc, 2);
    expect_latsim_line(&r);
    result_free(&r);
    r = latsim("run");
    cr_expect_eq(r.rc, 2);
    expect_latsim_line(&r);
    result_free(&r);
}

/* ---- workload input errors (issue 9) ----------------------------------------------- */

Test(cli_errors, schedule_out_of_order_or_negative)
{
    char text[1024];
    base_with(6, "rate = schedule(0s:20, 10m:60, 5m:35)\n", text, sizeof text);
    const char *n1[] = { "[workload] rate", "out of order", "5m", NULL };
    expect_bad_scenario("order.ini", text, 6, n1);
    base_with(6, "rate = ramp(0s:20, 10m:-4)\n", text, sizeof text);
    const char *n2[] = { "[workload] rate", "negative", "-4", NULL };
    expect_bad_scenario("negsched.ini", text, 6, n2);
    base_with(6, "rate = diurnal(mean=40, peak_to_trough=0.5)\n", text, sizeof text);
    const char *n3[] = { "[workload] rate", "peak_to_trough", NULL };
    expect_bad_scenario("diurnal.ini", text, 6, n3);
}

Test(cli_errors, users_together_with_rate)
{
    char text[1024];
    base_with(7, "users = 5\n", text, sizeof text);
    const char *needles[] = { "[workload] users", "rate", NULL };
    expect_bad_scenario("users.ini", text, 7, needles);
}

Test(cli_errors, class_shares)
{
    char text[1024];
    snprintf(text, sizeof text, "%s[class a]\nshare = -1\n", BASE);          /* lines 11, 12 */
    const char *n1[] = { "[class a] share", "-1", NULL };
    expect_bad_scenario("negshare.ini", text, 12, n1);
    snprintf(text, sizeof text, "%s[class a]\nshare = 0\n[class b]\nshare = 0\n", BASE);
    const char *n2[] = { "share", "0", NULL };
    expect_bad_scenario("zeroshare.ini", text, 11, n2);
}

/* A JSON-lines trace whose line 2 is LINE2 (lines 1 and 3 are good). */
static void jsonl_trace_scenario(const char *line2, char *text, size_t n)
{
    char path[256];
    char trace[1024];
    snprintf(trace, sizeof trace,
             "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n%s\n"
             "{\"timestamp\": 20, \"input_length\": 700, \"output_length\": 9, \"hash_ids\": [0, 2]}\n", line2);
    write_file("t.jsonl", trace, path, sizeof path);
    trace_scenario(text, n, "trace = t.jsonl\n", "\n");
}

Test(cli_errors, jsonl_trace_errors_name_the_line)
{
    char text[1024];
    const char *bad[] = {
        "{\"timestamp\": 10, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]",   /* cut short */
        "{\"timestamp\": 10, \"input_length\": 600, \"hash_ids\": [0, 1]}",                       /* no output_length */
        "{\"timestamp\": 10, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, \"x\"]}",
        "{\"timestamp\": 10, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1.5]}",
    };
    const char *what[] = { "not JSON", "output_length", "hash_ids", "hash_ids" };
    for (int i = 0; i < 4; i++) {
        jsonl_trace_scenario(bad[i], text, sizeof text);
        const char *needles[] = { "[workload] trace", "t.jsonl:2:", what[i], NULL };
        expect_bad_scenario("jsonl.ini", text, 6, needles);
    }
}

Test(cli_run, jsonl_trace_reports_repeat_token_share)
{
    char text[1024], path[256];
    jsonl_trace_scenario("{\"timestamp\": 10, \"input_length\": 800, \"output_length\": 7, \"hash_ids\": [0, 1]}", text,
                         sizeof text);
    /* Three requests; the second repeats 2 x 512 of its 800 tokens, the third one
     * block (0) of 700: (800 + 512) / (600 + 800 + 700). */
    char *p = strstr(text, "requests = 100");
    cr_assert_not_null(p);
    memcpy(p, "requests = 3  ", 14);
    write_file("rts.ini", text, path, sizeof path);
    result r = latsim("run '%s' --db '%s' --json", path, db);
    cr_assert_eq(r.rc, 0, "stderr: %s", r.err);
    jval v;
    json_parse_one(r.out, &v);
    const jval *share = jget(&v, "repeat_token_share", J_NUM);
    cr_expect(fabs(share->num - (800.0 + 512.0) / 2100.0) < 1e-5, "repeat_token_share %g", share->num);
    jfree(&v);
    result_free(&r);
}

Test(cli_errors, trace_class_and_order_errors)
{
    char text[1024], path[256];
    write_file("c.csv", "TIMESTAMP,kind\n2023-11-16 18:15:46.0,a\n2023-11-16 18:15:47.0,zz\n", path, sizeof path);
    /* Row 2 names a class the scenario does not define. */
    snprintf(text, sizeof text,
             "[sim]\nrequests = 2000\nwarmup = 200\n\n[workload]\nrate = 50\nclass_column = kind\ntrace = c.csv\n"
             "[pool cpu]\nservers = 4\nservice_ms = exp(mean=50)\n[class a]\n");
    const char *n1[] = { "[workload] class_column", "'zz'", "[class zz]", NULL };
    expect_bad_scenario("cls.ini", text, 7, n1);
    /* Shuffled order needs times from a process, not from the trace. */
    snprintf(text, sizeof text,
             "[sim]\nrequests = 1\nwarmup = 0\n\n[workload]\narrival = trace\ntrace_order = shuffle\ntrace = c.csv\n"
             "[pool cpu]\nservers = 4\nservice_ms = exp(mean=50)\n");
    const char *n2[] = { "[workload] trace_order", "shuffle", NULL };
    expect_bad_scenario("order.ini", text, 7, n2);
}

/* runs, show, catalog and keys print their own help (not the program's), and
 * no help prints a printf escape such as a literal "%%". */
Test(cli_help, each_command_has_its_own_help)
{
    static const struct { const char *cmd, *first; } cases[] = {
        { "runs", "usage: latsim runs [--db PATH]" },
        { "show", "usage: latsim show RUN [--db PATH]" },
        { "catalog", "usage: latsim catalog [--db PATH]" },
        { "keys", "usage: latsim keys" },
        { "check", "usage: latsim check [FILE...]" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = latsim("%s --help", cases[i].cmd);
        cr_expect_eq(r.rc, 0, "%s --help: exit %d", cases[i].cmd, r.rc);
        cr_expect(strncmp(r.out, cases[i].first, strlen(cases[i].first)) == 0, "%s --help begins '%.60s'", cases[i].cmd, r.out);
        cr_expect(strstr(r.out, "%%") == NULL, "%s --help prints '%%%%'", cases[i].cmd);
        result_free(&r);
    }
    result r = latsim("keys extra");
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, "keys: unexpected argument") != NULL, "%s", r.err);
    result_free(&r);
}
