/* test_escaping.c -- Criterion tests of the hardening issue's escaping and
 * parsing-limit items: user strings (scenario paths, pool, class and SLO names)
 * holding an ANSI escape or a Latin-1 byte come out of every JSON output as
 * valid UTF-8 JSON and out of every terminal output without a raw control byte;
 * a bare number in a distribution key is const(X); scenario lines have no
 * length limit but the file's; `latsim keys` lists each key once.  Each case
 * runs ./latsim in its own temporary directory, in a forked child bounded by
 * alarm().
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "core/dist.h"

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h2esc_", "runs.db"); }

TestSuite(escape_json, .init = setup, .fini = tcli_teardown);
TestSuite(escape_term, .init = setup, .fini = tcli_teardown);
TestSuite(escape_dist, .init = setup, .fini = tcli_teardown);
TestSuite(escape_ini, .init = setup, .fini = tcli_teardown);
TestSuite(escape_keys, .init = setup, .fini = tcli_teardown);

/* 1 when the N bytes at S are valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF). */
static int utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *) s, *e = p + n;
    while (p < e) {
        unsigned c = *p;
        int k = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (k < 0 || e - p <= k) return 0;
        for (int i = 1; i <= k; i++)
            if ((p[i] & 0xC0) != 0x80) return 0;
        if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) || (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90))
            return 0;
        p += k + 1;
    }
    return 1;
}

/* Checks that R's stdout and stderr hold no raw ESC (0x1b) and are valid UTF-8
 * (a raw 0xff is not); WHAT names the command in messages. */
static void expect_clean(const result *r, const char *what)
{
    cr_expect_null(memchr(r->out, 0x1b, r->nout), "%s: raw ESC in stdout", what);
    cr_expect_null(memchr(r->err, 0x1b, r->nerr), "%s: raw ESC in stderr", what);
    cr_expect(utf8_valid(r->out, r->nout), "%s: stdout is not valid UTF-8", what);
    cr_expect(utf8_valid(r->err, r->nerr), "%s: stderr is not valid UTF-8", what);
}

/* A small open-loop scenario whose pool, classes and [slo CLASS] sections bear
 * hostile names: pool "\x1b[32mcpu", classes "\xff" (Latin-1 y-diaeresis) and
 * "\x1b[31mred". */
static const char *HOSTILE =
    "[sim]\nrequests = 1500\nwarmup = 100\nseed = 3\n"
    "[workload]\narrival = poisson\nrate = 20\n"
    "[pool \x1b[32mcpu]\nkind = generic\nservers = 2\nservice_ms = exp(mean=40)\n"
    "[class \xff]\nshare = 0.5\n"
    "[class \x1b[31mred]\nshare = 0.5\n"
    "[slo]\ne2e_p99_ms = 5000\n"
    "[slo \xff]\ne2e_p99_ms = 5000\n"
    "[slo \x1b[31mred]\ne2e_p99_ms = 5000\n";

/* The same scenario with plain names, for the path tests. */
static const char *PLAIN =
    "[sim]\nrequests = 1500\nwarmup = 100\nseed = 3\n"
    "[workload]\narrival = poisson\nrate = 20\n"
    "[pool cpu]\nkind = generic\nservers = 2\nservice_ms = exp(mean=40)\n"
    "[slo]\ne2e_p99_ms = 5000\n";

/* Parses R's stdout as one JSON object (jansson refuses invalid UTF-8). */
static json_t *parse_out(const result *r, const char *what)
{
    json_error_t je;
    json_t *j = json_loads(r->out, 0, &je);
    cr_assert_not_null(j, "%s: stdout is not valid JSON (%s, line %d): %.300s", what, je.text, je.line, r->out);
    return j;
}

/* ---- JSON outputs ------------------------------------------------------------- */

/* run --json: the class names and the [slo CLASS] names are JSON strings, an
 * invalid UTF-8 byte as the Latin-1 code point (0xFF -> U+00FF, "\xc3\xbf" once
 * decoded), an ESC as \u001b; no raw byte of either is written. */
Test(escape_json, run_json_escapes_class_and_slo_names)
{
    char s[256];
    write_file("s.ini", HOSTILE, s, sizeof s);
    result r = run(60, "run", s, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    expect_clean(&r, "run --json");
    cr_expect_null(memchr(r.out, 0xff, r.nout), "raw 0xff in run --json");
    cr_expect(strstr(r.out, "\"\\u00ff\"") != NULL, "0xff not written as \\u00ff: %.400s", r.out);
    json_t *j = parse_out(&r, "run --json");
    json_t *cls = json_object_get(j, "classes");
    cr_assert(json_is_object(cls));
    cr_expect_not_null(json_object_get(cls, "\xc3\xbf"), "class 0xff does not round-trip as U+00FF");
    cr_expect_not_null(json_object_get(cls, "\x1b[31mred"), "class ESC[31mred does not round-trip");
    cr_expect_not_null(json_object_get(json_object_get(j, "pools"), "\x1b[32mcpu"));
    json_t *terms = json_object_get(json_object_get(j, "slo"), "terms");
    cr_assert(json_is_array(terms));
    int ff = 0, red = 0;
    for (size_t i = 0; i < json_array_size(terms); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(terms, i), "class"));
        cr_assert_not_null(c);
        ff += !strcmp(c, "\xc3\xbf");
        red += !strcmp(c, "\x1b[31mred");
    }
    cr_expect_eq(ff, 1, "the [slo 0xff] term's class");
    cr_expect_eq(red, 1, "the [slo ESC[31mred] term's class");
    json_decref(j);
    result_free(&r);
}

/* sweep, plan and compare --json on a scenario whose file name is Latin-1
 * (0xFF): valid UTF-8 JSON naming the file "\u00ff.ini"; and the JSON stored
 * with the run and the sweep in the database is valid too. */
Test(escape_json, latin1_file_name_in_every_json_output)
{
    char s[256];
    write_file("\xff.ini", PLAIN, s, sizeof s);
    char want[300];
    snprintf(want, sizeof want, "%s/\xc3\xbf.ini", dir);

    result r = run(60, "sweep", s, "--vary", "workload.rate=10,20", "--json", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "sweep: exit %d: %s", r.rc, r.err);
    expect_clean(&r, "sweep --json");
    json_t *j = parse_out(&r, "sweep --json");
    cr_expect_str_eq(json_string_value(json_object_get(j, "scenario")), want);
    json_decref(j);
    result_free(&r);

    r = run(60, "run", s, "--json", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "run: exit %d: %s", r.rc, r.err);
    j = parse_out(&r, "run --json");
    cr_expect_str_eq(json_string_value(json_object_get(j, "scenario")), want);
    json_decref(j);
    result_free(&r);

    r = run(120, "plan", s, "--target-rate", "10", "--json", "--no-store", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "plan: exit %d: %s", r.rc, r.err);
    expect_clean(&r, "plan --json");
    j = parse_out(&r, "plan --json");
    cr_expect_str_eq(json_string_value(json_object_get(j, "scenario")), want);
    json_decref(j);
    result_free(&r);

    r = run(60, "compare", s, s, "--replications", "2", "--json", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "compare: exit %d: %s", r.rc, r.err);
    expect_clean(&r, "compare --json");
    j = parse_out(&r, "compare --json");
    cr_expect_str_eq(json_string_value(json_object_get(j, "a")), want);
    json_decref(j);
    result_free(&r);

    /* Every JSON text stored (the sweep's points through cu_save_task, the run
     * through run) parses. */
    sqlite3 *h;
    cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(h, "SELECT json FROM runs UNION ALL SELECT json FROM sweeps", -1, &st, NULL), SQLITE_OK);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *) sqlite3_column_text(st, 0);
        cr_assert_not_null(t);
        json_error_t je;
        json_t *x = json_loads(t, 0, &je);
        cr_expect_not_null(x, "stored JSON %d does not parse: %s", n, je.text);
        if (x) cr_expect_str_eq(json_string_value(json_object_get(x, "scenario")), want);
        json_decref(x);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    cr_expect_geq(n, 4, "runs of the sweep, the run and the sweep itself: %d", n);
}

/* compare --json of two stored runs: the metric names built from the pool name
 * (ESC[32mcpu.busy_share) are escaped. */
Test(escape_json, compare_json_metric_names)
{
    char s[256];
    write_file("s.ini", HOSTILE, s, sizeof s);
    result r = run(60, "run", s, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    result_free(&r);
    r = run(60, "run", s, "--seed", "4", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    result_free(&r);
    r = run(60, "compare", "1", "2", "--json", "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    expect_clean(&r, "compare --json");
    json_t *j = parse_out(&r, "compare --json");
    json_t *m = json_object_get(j, "metrics");
    int found = 0;
    for (size_t i = 0; i < json_array_size(m); i++)
        found += !strcmp(json_string_value(json_object_get(json_array_get(m, i), "metric")), "\x1b[32mcpu.busy_share");
    cr_expect_eq(found, 1, "the pool's utilisation row");
    json_decref(j);
    result_free(&r);
}

/* ---- terminal outputs ---------------------------------------------------------- */

/* Every table output of a scenario whose path, pool, classes and SLO classes
 * hold ESC and 0xFF: no raw ESC on stdout or stderr, valid UTF-8, and the names
 * shown escaped ("\x1b[32mcpu"). */
Test(escape_term, tables_escape_paths_and_names)
{
    char s[256];
    write_file("\x1b[31mx.ini", HOSTILE, s, sizeof s);
    static const char *shown_path = "\\x1b[31mx.ini";
    result r = run(60, "run", s, "--db", db, NULL);
    cr_assert_eq(r.rc, 0, "run: exit %d: %s", r.rc, r.err);
    expect_clean(&r, "run");
    cr_expect(strstr(r.out, "pool \\x1b[32mcpu (generic)") != NULL, "run: the pool's header: %s", r.out);
    cr_expect(strstr(r.out, "class \\xff\n") != NULL, "run: class 0xff shown as \\xff");
    cr_expect(strstr(r.out, "\\x1b[31mred.e2e_p99_ms") != NULL, "run: the SLO term line");
    cr_expect(strstr(r.out, shown_path) != NULL, "run: the title");
    result_free(&r);

    struct { const char *what; const char *args[12]; int rc; const char *shown; } cases[] = {
        { "runs", { "runs", "--db", db }, 0, shown_path },
        { "show", { "show", "1", "--db", db }, 0, "[pool \\x1b[32mcpu]" },
        { "baseline accept", { "baseline", "accept", "1", "--db", db }, 0, NULL },
        { "baseline list", { "baseline", "list", "--db", db }, 0, shown_path },
        { "check FILE", { "check", s, "--db", db }, 0, shown_path },
        { "check (stored)", { "check", "--db", db }, 0, shown_path },
        { "sweep", { "sweep", s, "--vary", "workload.rate=10,20", "--db", db }, 0, shown_path },
        { "compare files", { "compare", s, s, "--replications", "2", "--db", db }, 0, "pool \\x1b[32mcpu (generic)" },
        { "compare runs", { "compare", "1", "2", "--all", "--db", db }, 0, "\\x1b[32mcpu.busy_share" },
        { "plan", { "plan", s, "--target-rate", "10", "--no-store", "--db", db }, 0, shown_path },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        r = run_argv(120, (char *const *) cases[i].args);
        cr_expect_eq(r.rc, cases[i].rc, "%s: exit %d: %s", cases[i].what, r.rc, r.err);
        expect_clean(&r, cases[i].what);
        if (cases[i].shown) cr_expect(strstr(r.out, cases[i].shown) != NULL, "%s: '%s' not shown: %s", cases[i].what, cases[i].shown, r.out);
        result_free(&r);
    }
}

/* A sweep whose --vary values hold ESC (the header and rows echo them), and
 * error messages quoting a hostile path (cu_die): escaped too. */
Test(escape_term, vary_values_and_error_paths)
{
    char s[256];
    write_file("s.ini", HOSTILE, s, sizeof s);
    result r = run(60, "sweep", s, "--vary", "pool \x1b[32mcpu.servers=2,3", "--no-store", NULL);
    cr_expect_eq(r.rc, 0, "sweep: exit %d: %s", r.rc, r.err);
    expect_clean(&r, "sweep --vary ESC");
    cr_expect(strstr(r.out, "pool \\x1b[32mcpu.servers") != NULL, "sweep: the key column: %s", r.out);
    result_free(&r);

    char missing[256];
    snprintf(missing, sizeof missing, "%s/\x1b[31mnone.ini", dir);
    const char *cmds[][8] = {
        { "check", missing, "--no-store", NULL },
        { "compare", missing, s, "--replications", "1", NULL },
        { "sweep", missing, "--vary", "workload.rate=1,2", "--no-store", NULL },
        { "plan", missing, "--target-rate", "10", "--no-store", NULL },
        { "run", missing, "--no-store", NULL },
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        r = run_argv(60, (char *const *) cmds[i]);
        cr_expect_eq(r.rc, 2, "%s: exit %d: %s", cmds[i][0], r.rc, r.err);
        expect_clean(&r, cmds[i][0]);
        cr_expect(strstr(r.err, "\\x1b[31mnone.ini") != NULL, "%s: the path not quoted escaped: %s", cmds[i][0], r.err);
        result_free(&r);
    }
}

/* ---- a bare number is const(X) -------------------------------------------------- */

/* The closed-loop scenario of the issue, with think_ms written as TEXT. */
static void closed_loop(const char *think, char *path, size_t n)
{
    char text[512];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 1500\nwarmup = 100\nseed = 7\n"
             "[workload]\nusers = 4\nthink_ms = %s\n"
             "[pool cpu]\nkind = generic\nservers = 2\nservice_ms = exp(mean=20)\n", think);
    write_file("c.ini", text, path, n);
}

/* The --json object of RES without what differs between two spellings of one
 * scenario (its path and hash, the version, the wall time). */
static json_t *results_of(const result *res)
{
    json_t *j = parse_out(res, "run --json");
    json_object_del(j, "scenario");
    json_object_del(j, "scenario_hash");
    json_object_del(j, "version");
    json_object_del(j, "wall_time_s");
    return j;
}

Test(escape_dist, think_ms_zero_is_const_zero)
{
    char s[256];
    closed_loop("0", s, sizeof s);
    result a = run(60, "run", s, "--json", "--no-store", NULL);
    cr_assert_eq(a.rc, 0, "think_ms = 0 refused: %s", a.err);
    closed_loop("const(0)", s, sizeof s);
    result b = run(60, "run", s, "--json", "--no-store", NULL);
    cr_assert_eq(b.rc, 0, "think_ms = const(0): %s", b.err);
    json_t *ja = results_of(&a), *jb = results_of(&b);
    cr_expect(json_equal(ja, jb), "think_ms = 0 and const(0) give different results");
    cr_expect_gt(json_integer_value(json_object_get(ja, "served")), 0);
    json_decref(ja);
    json_decref(jb);
    result_free(&a);
    result_free(&b);

    /* Spaces around it, and another number, the same way. */
    closed_loop("  2.5  ", s, sizeof s);
    a = run(60, "run", s, "--json", "--no-store", NULL);
    cr_assert_eq(a.rc, 0, "think_ms = 2.5: %s", a.err);
    closed_loop("const(2.5)", s, sizeof s);
    b = run(60, "run", s, "--json", "--no-store", NULL);
    ja = results_of(&a);
    jb = results_of(&b);
    cr_expect(json_equal(ja, jb), "think_ms = 2.5 and const(2.5) give different results");
    json_decref(ja);
    json_decref(jb);
    result_free(&a);
    result_free(&b);
}

/* Validation stays: a bare number is refused exactly as its const() is (same
 * message, file:line and key), exit 2, no database. */
Test(escape_dist, bare_number_refused_as_its_const)
{
    static const struct { const char *bare, *as_const; } cases[] = {
        { "think_ms = -1", "think_ms = const(-1)" },
        { "service_ms = 0", "service_ms = const(0)" },          /* mean service time must be > 0 */
        { "service_ms = -3", "service_ms = const(-3)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2][512], s[256];
        const char *spell[2] = { cases[i].bare, cases[i].as_const };
        result r[2];
        for (int k = 0; k < 2; k++) {
            if (!strncmp(spell[k], "think_ms", 8))           /* a [workload] key */
                snprintf(text[k], sizeof text[k],
                         "[sim]\nrequests = 500\nwarmup = 50\n[workload]\nusers = 2\n%s\n"
                         "[pool cpu]\nkind = generic\nservers = 2\nservice_ms = exp(mean=20)\n", spell[k]);
            else                                              /* a [pool cpu] key */
                snprintf(text[k], sizeof text[k],
                         "[sim]\nrequests = 500\nwarmup = 50\n[workload]\nrate = 10\n"
                         "[pool cpu]\nkind = generic\nservers = 2\n%s\n", spell[k]);
            write_file("b.ini", text[k], s, sizeof s);
            r[k] = run(60, "run", s, "--db", db, NULL);
        }
        cr_expect_eq(r[0].rc, 2, "'%s': exit %d: %s", cases[i].bare, r[0].rc, r[0].err);
        cr_expect_str_eq(r[0].err, r[1].err, "'%s' and '%s' refused differently", cases[i].bare, cases[i].as_const);
        cr_expect(strstr(r[0].err, "b.ini:") != NULL, "no file:line: %s", r[0].err);
        cr_expect_neq(access(db, F_OK), 0, "the database was created");
        result_free(&r[0]);
        result_free(&r[1]);
    }
}

/* dist_parse itself: a bare number is the const distribution of it; text that
 * is not one number is refused as before. */
Test(escape_dist, dist_parse_bare_numbers)
{
    char err[256];
    dist d;
    static const struct { const char *spec; double v; } ok[] = { { "0", 0 }, { " 42 ", 42 }, { "1e3", 1000 }, { "0.25\n", 0.25 } };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cr_assert_eq(dist_parse(&d, ok[i].spec, NULL, err, sizeof err), 0, "'%s': %s", ok[i].spec, err);
        cr_expect_eq(d.family, DIST_CONST, "'%s'", ok[i].spec);
        cr_expect_eq(d.mean, ok[i].v, "'%s'", ok[i].spec);
        cr_expect_eq(d.cv, 0);
        cr_expect_eq(dist_max(&d), ok[i].v);
        dist_free(&d);
    }
    cr_expect_eq(dist_parse(&d, "5 ms", NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "expected FAMILY(...)") != NULL, "%s", err);
    cr_expect_eq(dist_parse(&d, "-2", NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "const: value must be >= 0") != NULL, "%s", err);
}

/* ---- line length ---------------------------------------------------------------- */

/* A 10 000-character line (a service_ms value padded with leading zeros) loads
 * and runs as the short one does, and lines after it keep their numbers. */
Test(escape_ini, line_of_10000_characters)
{
    const char *head = "[sim]\nrequests = 1000\nwarmup = 100\n[workload]\nrate = 10\n"
                       "[pool cpu]\nkind = generic\nservers = 2\n";
    size_t len = 10000;
    char *line = malloc(len + 2);
    cr_assert_not_null(line);
    const char *pre = "service_ms = exp(mean=", *post = "40)";
    size_t k = strlen(pre);
    memcpy(line, pre, k);
    while (k < len - strlen(post)) line[k++] = '0';
    memcpy(line + k, post, strlen(post));
    k += strlen(post);
    cr_assert_eq(k, len);
    line[k++] = '\n';
    line[k] = '\0';
    size_t n = strlen(head) + strlen(line) + 64;
    char *text = malloc(n), s[256];
    cr_assert_not_null(text);
    snprintf(text, n, "%s%s", head, line);
    write_file("long.ini", text, s, sizeof s);
    result a = run(60, "run", s, "--json", "--no-store", NULL);
    cr_assert_eq(a.rc, 0, "the 10 000-character line: exit %d: %s", a.rc, a.err);
    char t[256];
    snprintf(text, n, "%sservice_ms = exp(mean=40)\n", head);
    write_file("short.ini", text, t, sizeof t);
    result b = run(60, "run", t, "--json", "--no-store", NULL);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    json_t *ja = results_of(&a), *jb = results_of(&b);
    cr_expect(json_equal(ja, jb), "the padded value gives other results than exp(mean=40)");
    json_decref(ja);
    json_decref(jb);
    result_free(&a);
    result_free(&b);

    /* A bad key on the line after it is reported on line 10. */
    snprintf(text, n, "%s%sbogus_key = 1\n", head, line);
    write_file("long.ini", text, s, sizeof s);
    a = run(60, "run", s, "--no-store", NULL);
    cr_expect_eq(a.rc, 2, "exit %d: %s", a.rc, a.err);
    cr_expect(strstr(a.err, "long.ini:10:") != NULL, "line number after the long line: %s", a.err);
    result_free(&a);
    free(line);
    free(text);
}

/* A router whose next list names 500 pools (about 3 000 characters on one
 * line) loads and runs: every pool gets its round-robin share. */
Test(escape_ini, router_with_500_next_pools)
{
    size_t n = 64 * 1024;
    char *text = malloc(n), s[256];
    cr_assert_not_null(text);
    size_t k = (size_t) snprintf(text, n, "[sim]\nrequests = 2000\nwarmup = 0\n[workload]\nrate = 100\n"
                                          "[pool gw]\nkind = router\npolicy = round_robin\nnext = ");
    for (int i = 0; i < 500; i++) k += (size_t) snprintf(text + k, n - k, "%spool%03d", i ? ", " : "", i);
    k += (size_t) snprintf(text + k, n - k, "\n");
    for (int i = 0; i < 500; i++)
        k += (size_t) snprintf(text + k, n - k, "[pool pool%03d]\nkind = generic\nservers = 1\nservice_ms = exp(mean=50)\n", i);
    cr_assert_lt(k, n - 1);
    write_file("r.ini", text, s, sizeof s);
    result r = run(120, "run", s, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "exit %d: %s", r.rc, r.err);
    json_t *j = parse_out(&r, "run --json");
    json_t *pools = json_object_get(j, "pools");
    cr_expect_eq(json_object_size(pools), 501);
    int fed = 0;
    for (int i = 0; i < 500; i++) {
        char name[16];
        snprintf(name, sizeof name, "pool%03d", i);
        fed += json_integer_value(json_object_get(json_object_get(pools, name), "arrivals")) > 0;
    }
    cr_expect_eq(fed, 500, "pools that received requests: %d of 500", fed);
    json_decref(j);
    result_free(&r);
    free(text);
}

/* A line longer than the scenario size cap (16 MB) is refused by that cap. */
Test(escape_ini, line_beyond_the_file_cap_is_refused)
{
    char s[256];
    snprintf(s, sizeof s, "%s/huge.ini", dir);
    FILE *f = fopen(s, "w");
    cr_assert_not_null(f);
    fputs("[sim]\nrequests = 10\n; ", f);
    static char chunk[1 << 16];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 17 * 16; i++) cr_assert_eq(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
    fputs("\n", f);
    fclose(f);
    result r = run(60, "run", s, "--db", db, NULL);
    cr_expect_eq(r.rc, 2, "exit %d: %s", r.rc, r.err);
    cr_expect(strstr(r.err, "scenario larger than 16 MB") != NULL, "%s", r.err);
    cr_expect_neq(access(db, F_OK), 0, "the database was created");
    result_free(&r);
}

/* ---- latsim keys ------------------------------------------------------------------ */

/* Within each section of `latsim keys` (a line not indented starts one), every
 * key is listed once; cost_id (shared by three cost rows) appears once. */
Test(escape_keys, each_key_listed_once)
{
    result r = run(30, "keys", NULL);
    cr_assert_eq(r.rc, 0);
    char *save = NULL, seen[256][64];
    int nseen = 0, sections = 0, cost_id = 0;
    for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (l[0] != ' ') { nseen = 0; sections++; continue; }
        char key[64];
        if (sscanf(l, " %63s", key) != 1) continue;
        cost_id += !strcmp(key, "cost_id");
        for (int i = 0; i < nseen; i++) cr_expect_str_neq(seen[i], key, "key '%s' listed twice in section %d", key, sections);
        cr_assert_lt(nseen, 256);
        snprintf(seen[nseen++], sizeof seen[0], "%s", key);
    }
    cr_expect_gt(sections, 5);
    cr_expect_eq(cost_id, 1, "cost_id listed %d times", cost_id);
    result_free(&r);
}
