/* test_outpaths.c -- Criterion tests of output paths and of commands that must
 * not write the database (hardening issue, part "out"):
 *   - an output path (check --junit, run --timeseries, plot --out, calib export
 *     FILE) that is a FIFO, a device, "", a folder, in a missing folder or holds a
 *     control character is refused before anything runs: exit 2, one line;
 *   - a late write failure of the JUnit file (a file size limit) is exit 1 and
 *     stores nothing;
 *   - --db "" or a folder is refused by every command before anything runs;
 *   - refused input (calib import, catalog add, calib fit, baseline accept) never
 *     creates the database nor changes an existing one (no schema, no tables);
 *   - --no-store and the read-only commands never write a schema into an empty
 *     database file.
 * Each case runs ./latsim in its own temporary directory, in a forked child that
 * alarm() bounds (a FIFO that blocked would fail the test, not hang the suite),
 * and compares the database byte for byte before and after.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h2out_", "runs.db"); }

TestSuite(outpath_paths, .init = setup, .fini = tcli_teardown);
TestSuite(outpath_db, .init = setup, .fini = tcli_teardown);

/* A file's state: absent, or its bytes. */
typedef struct snap {
    int exists;
    char *bytes;
    size_t n;
} snap;

static snap take(const char *path)
{
    snap s = { access(path, F_OK) == 0, NULL, 0 };
    s.bytes = slurp(path, &s.n);
    return s;
}

/* Checks that PATH is as in S (absent if it was, else byte for byte), frees S. */
static void expect_same(snap *s, const char *path, const char *what)
{
    if (!s->exists) cr_expect_neq(access(path, F_OK), 0, "%s: %s was created", what, path);
    else {
        size_t n;
        char *now = slurp(path, &n);
        cr_expect(n == s->n && memcmp(now, s->bytes, n) == 0, "%s: %s was changed (%zu -> %zu bytes)", what, path, s->n, n);
        free(now);
    }
    free(s->bytes);
}

/* A small stable scenario with three SLO terms (a JUnit file of ~700 bytes). */
static const char *MMC =
    "[sim]\nrequests = 2000\nwarmup = 200\n[workload]\narrival = poisson\nrate = 56\n"
    "[pool cpu]\nkind = generic\nservers = 4\nservice_ms = exp(mean=50)\n"
    "[slo]\ne2e_p99_ms = 1000\ne2e_p50_ms = 500\nqueue_p99_ms = 800\n";

/* Stores one run of MMC in db (run id 1); S gets the scenario path. */
static void store_one_run(char *s, size_t n)
{
    write_file("s.ini", MMC, s, n);
    char *a[] = { "run", s, "--db", db, NULL };
    result r = run_argv(60, a);
    cr_assert_eq(r.rc, 0, "run: %s", r.err);
    result_free(&r);
}

static void make_fifo(const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo %s: %s", path, strerror(errno));
}

/* ---- output paths ------------------------------------------------------------ */

/* A FIFO as output blocked the writer for ever (check had already stored its
 * run).  Now each command refuses it up front: exit 2, one line, nothing run or
 * stored, with and without an existing database. */
Test(outpath_paths, fifo_outputs_refused_before_anything_runs)
{
    char s[256], fifo[256], fpng[256];
    write_file("s.ini", MMC, s, sizeof s);
    make_fifo("out.fifo", fifo, sizeof fifo);
    make_fifo("plot.png", fpng, sizeof fpng);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) store_one_run(s, sizeof s);
        char *cmds[][12] = {
            { "check", s, "--db", db, "--junit", fifo, NULL },
            { "run", s, "--db", db, "--timeseries", fifo, NULL },
            { "run", s, "--db", db, "--no-store", "--timeseries", fifo, NULL },
            { "plot", "1", "--db", db, "--out", fpng, NULL },
            { "calib", "export", fifo, "--db", db, NULL },
        };
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            snap before = take(db);
            result r = run_argv(30, cmds[c]);
            expect_one_line(&r, 2, "not a regular file", cmds[c][0]);
            cr_expect_eq(r.out[0], '\0', "%s printed a report: %s", cmds[c][0], r.out);
            expect_same(&before, db, cmds[c][0]);
            result_free(&r);
        }
    }
    struct stat st;
    cr_expect(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is still a FIFO");
}

/* --junit "" and --junit /dev/full ran and stored the check, then failed with
 * exit 2: now refused before running (exit 2, one line, no database). */
Test(outpath_paths, empty_and_device_junit_refused_up_front)
{
    char s[256];
    write_file("s.ini", MMC, s, sizeof s);
    const char *bad[] = { "", "/dev/full", "/dev/null" };
    const char *want[] = { "--junit: empty path", "/dev/full: cannot write: not a regular file",
                           "/dev/null: cannot write: not a regular file" };
    for (int i = 0; i < 3; i++) {
        char *a[] = { "check", s, "--db", db, "--junit", (char *) bad[i], NULL };
        result r = run_argv(30, a);
        expect_one_line(&r, 2, want[i], bad[i]);
        cr_expect_neq(access(db, F_OK), 0, "--junit '%s': the run was stored", bad[i]);
        result_free(&r);
    }
}

/* A JUnit file that fails while being written (here: a file size limit, EFBIG)
 * is a runtime failure, exit 1, one line naming --junit; the runs are stored only
 * after it is written, so none is: the database is not even created.  (With an
 * existing database the limit would refuse it before the run: every write of
 * SQLite's is past 1 KB.)  Without the limit the same check stores its 3 runs. */
Test(outpath_paths, late_junit_write_failure_stores_nothing)
{
    char s[256], junit[256];
    write_file("s.ini", MMC, s, sizeof s);
    snprintf(junit, sizeof junit, "%s/j.xml", dir);
    char *a[] = { "check", s, s, s, "--db", db, "--junit", junit, NULL };
    snap before = take(db);
    child_limits.fsize = 1024;                /* the XML of 3 scenarios is ~2 KB */
    result r = run_argv(60, a);
    child_limits.fsize = 0;
    expect_one_line(&r, 1, "check: --junit", "late junit failure");
    cr_expect(strstr(r.err, "File too large") != NULL, "%s", r.err);
    cr_expect_eq(r.out[0], '\0', "the table was printed: %s", r.out);
    expect_same(&before, db, "late junit failure");
    result_free(&r);
    r = run_argv(60, a);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    size_t n;
    char *x = slurp(junit, &n);
    cr_expect(n > 1024 && strstr(x, "</testsuites>") != NULL, "junit: %zu bytes", n);
    free(x);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM runs"), 3, "the 3 checked");
    result_free(&r);
}

/* plot --out in a missing folder printed gnuplot's seven lines and exited 1; a
 * name holding a newline printed a two-line error.  Now: exit 2, one line, the
 * name escaped; control characters are refused in every output path. */
Test(outpath_paths, bad_output_names_one_line)
{
    char s[256], nl[256], esc[256], tnl[256], jcr[256], enl[256];
    store_one_run(s, sizeof s);
    snprintf(nl, sizeof nl, "%s/a\nb.png", dir);
    snprintf(esc, sizeof esc, "%s/a\033[31mb.svg", dir);
    snprintf(tnl, sizeof tnl, "%s/t\nx.csv", dir);
    snprintf(jcr, sizeof jcr, "%s/j\rx.xml", dir);
    snprintf(enl, sizeof enl, "%s/e\nx.csv", dir);
    char *cmds[][12] = {
        { "plot", "1", "--db", db, "--out", "/nonexistent-latsim-dir/x.png", NULL },
        { "plot", "1", "--db", db, "--out", nl, NULL },
        { "plot", "1", "--db", db, "--out", esc, NULL },
        { "run", s, "--db", db, "--timeseries", tnl, NULL },
        { "run", s, "--db", db, "--timeseries", "", NULL },
        { "check", s, "--db", db, "--junit", "/nonexistent-latsim-dir/j.xml", NULL },
        { "check", s, "--db", db, "--junit", jcr, NULL },
        { "calib", "export", enl, "--db", db, NULL },
        { "calib", "export", "/nonexistent-latsim-dir/e.csv", "--db", db, NULL },
        { "calib", "export", dir, "--db", db, NULL },
    };
    const char *want[] = {
        "plot: --out /nonexistent-latsim-dir/x.png: cannot write: /nonexistent-latsim-dir: No such file or directory",
        "/a\\nb.png: control character in the file name",
        "/a\\x1b[31mb.svg: control character in the file name",
        "/t\\nx.csv: control character in the file name",
        "run: --timeseries: empty path",
        "check: --junit /nonexistent-latsim-dir/j.xml: cannot write: /nonexistent-latsim-dir: No such file or directory",
        "/j\\rx.xml: control character",
        "/e\\nx.csv: control character",
        "calib export: /nonexistent-latsim-dir/e.csv: cannot write: /nonexistent-latsim-dir: No such file",
        "cannot write: it is a folder",
    };
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        snap before = take(db);
        result r = run_argv(30, cmds[c]);
        expect_one_line(&r, 2, want[c], want[c]);
        cr_expect_eq(r.out[0], '\0', "%s printed: %s", want[c], r.out);
        expect_same(&before, db, want[c]);
        result_free(&r);
    }
    const char *made[] = { nl, esc, tnl, jcr, enl };
    for (int i = 0; i < 5; i++) cr_expect_neq(access(made[i], F_OK), 0, "%s was created", made[i]);
}

/* run --timeseries used to create (truncate) the CSV before simulating: a run
 * refused afterwards (here: a --db folder) left an empty file.  Now nothing is
 * created unless the run goes through. */
Test(outpath_paths, timeseries_not_created_by_a_refused_run)
{
    char s[256], csv[256], sub[256];
    write_file("s.ini", MMC, s, sizeof s);
    snprintf(csv, sizeof csv, "%s/t.csv", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    char *a[] = { "run", s, "--db", sub, "--timeseries", csv, NULL };
    result r = run_argv(30, a);
    expect_one_line(&r, 2, "it is a folder", "run --db folder");
    cr_expect_neq(access(csv, F_OK), 0, "the CSV was created by a refused run");
    result_free(&r);
    char *b[] = { "run", s, "--db", db, "--timeseries", csv, NULL };
    r = run_argv(30, b);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    size_t n;
    char *x = slurp(csv, &n);
    cr_expect(n > 0 && strncmp(x, "\"t_start_s\"", 11) == 0, "%s", x);
    free(x);
    result_free(&r);
}

/* ---- the database path ------------------------------------------------------- */

/* --db "" simulated first, then failed (run: exit 1 after the report); --db
 * FOLDER was refused with SQLite's words.  Every command now refuses both before
 * running anything: exit 2, one line, nothing on stdout, the folder untouched. */
Test(outpath_db, empty_and_folder_db_refused_by_every_command)
{
    char s[256], sub[256], steps[256];
    write_file("s.ini", MMC, s, sizeof s);
    write_file("steps.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\nllama-3-8b,h100,1,prefill,1,128,12.5\n",
               steps, sizeof steps);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    const char *paths[] = { "", sub };
    const char *want[] = { "--db: empty path", "sub: not a latsim database: it is a folder" };
    char png[256];
    snprintf(png, sizeof png, "%s/x.png", dir);
    for (int p = 0; p < 2; p++) {
        char *d = (char *) paths[p];
        char *cmds[][14] = {
            { "run", s, "--db", d, NULL },
            { "run", s, "--no-store", "--db", d, NULL },
            { "sweep", s, "--vary", "workload.rate=10,20", "--db", d, NULL },
            { "sweep", s, "--vary", "workload.rate=10,20", "--no-store", "--db", d, NULL },
            { "check", s, "--db", d, NULL },
            { "check", s, "--no-store", "--db", d, NULL },
            { "plan", s, "--target-rate", "10", "--db", d, NULL },
            { "compare", s, s, "--db", d, NULL },
            { "runs", "--db", d, NULL },
            { "show", "1", "--db", d, NULL },
            { "catalog", "--db", d, NULL },
            { "catalog", "add", s, "--db", d, NULL },
            { "baseline", "list", "--db", d, NULL },
            { "baseline", "accept", "1", "--db", d, NULL },
            { "plot", "1", "--db", d, "--out", png, NULL },
            { "calib", "list", "--db", d, NULL },
            { "calib", "import", "steps", steps, "--db", d, NULL },
            { "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", "--db", d, NULL },
            { "calib", "export", "-", "--db", d, NULL },
            { "cost", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--prefill", "128", "--db", d, NULL },
        };
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s --db '%s'", cmds[c][0], cmds[c][1], d);
            result r = run_argv(30, cmds[c]);
            expect_one_line(&r, 2, want[p], what);
            cr_expect_eq(r.out[0], '\0', "%s printed (ran?): %s", what, r.out);
            result_free(&r);
        }
    }
    cr_expect_neq(access(png, F_OK), 0, "plot wrote %s", png);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", sub);
    cr_expect_eq(system(cmd), 0, "something was written into the folder %s", sub);
}

/* ---- refused input writes nothing -------------------------------------------- */

/* A refused `calib import steps`, `calib import vidur` or `catalog add` created an
 * 86 KB / 49 KB database when there was none, and added the calibration tables to
 * one that had none.  Now input is read and checked before the database is opened
 * for writing: no file, or the same bytes. */
Test(outpath_db, refused_imports_and_catalog_add_write_nothing)
{
    char s[256], steps[256], empty_dir[256], cat[256], cat2[256], none[256];
    write_file("bad.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\nllama-3-8b,h100,1,prefill,1,128,fast\n",
               steps, sizeof steps);
    snprintf(empty_dir, sizeof empty_dir, "%s/vidur", dir);
    cr_assert_eq(mkdir(empty_dir, 0755), 0);
    write_file("cat.ini", "[gpu g1]\nbf16_tflops = -5\nmem_gib = 80\nmem_bw_gbs = 3000\n", cat, sizeof cat);
    write_file("cat2.ini", "[gpu g1]\nbf16_tflops = 500\nmem_gib = 80\nmem_bw_gbs = 3000\nlink_gbs = 400\n"
               "[model m1]\nparams_b = 0\n", cat2, sizeof cat2);
    write_file("none.ini", "[workload]\nrate = 1\n", none, sizeof none);
    char *cmds[][10] = {
        { "calib", "import", "steps", steps, "--db", db, NULL },
        { "calib", "import", "vidur", empty_dir, "--db", db, NULL },
        { "calib", "import", "meas", steps, "--db", db, NULL },
        { "catalog", "add", cat, "--db", db, NULL },
        { "catalog", "add", cat2, "--db", db, NULL },       /* the first entry is good, the second not */
        { "catalog", "add", none, "--db", db, NULL },
    };
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) store_one_run(s, sizeof s);       /* a database without calibration tables */
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            char what[128];
            snprintf(what, sizeof what, "%s %s %s (%s database)", cmds[c][0], cmds[c][1], cmds[c][2], pass ? "existing" : "no");
            snap before = take(db);
            result r = run_argv(30, cmds[c]);
            expect_one_line(&r, 2, NULL, what);
            expect_same(&before, db, what);
            result_free(&r);
        }
    }
    /* The same paths still write when the input is good: a new database is created. */
    char good[256], gcat[256], db2[256];
    snprintf(db2, sizeof db2, "%s/new.db", dir);
    write_file("good.csv", "model,gpu,tp,phase,batch_size,tokens,step_ms\nllama-3-8b,h100,1,prefill,1,128,12.5\n",
               good, sizeof good);
    write_file("gcat.ini", "[gpu g1]\nbf16_tflops = 500\nmem_gib = 80\nmem_bw_gbs = 3000\nlink_gbs = 400\n", gcat, sizeof gcat);
    char *ok1[] = { "calib", "import", "steps", good, "--db", db2, NULL };
    result r = run_argv(30, ok1);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "imported 1 measurements") != NULL, "%s", r.out);
    result_free(&r);
    char *ok2[] = { "catalog", "add", gcat, "--db", db2, NULL };
    r = run_argv(30, ok2);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect_eq(strcmp(r.out, "added gpu g1\n"), 0, "printed once: %s", r.out);
    result_free(&r);
    char *ls[] = { "catalog", "--db", db2, NULL };
    r = run_argv(30, ls);
    cr_expect(r.rc == 0 && strstr(r.out, "g1") != NULL, "%s%s", r.out, r.err);
    result_free(&r);
}

/* A refused fit (nothing to fit) or baseline accept (no such run) rolls back
 * everything, the calibration and planner tables it would have created included. */
Test(outpath_db, refused_fit_and_baseline_accept_change_nothing)
{
    char s[256];
    store_one_run(s, sizeof s);
    char *cmds[][12] = {
        { "calib", "fit", "--model", "llama-3-8b", "--gpu", "h100", "--db", db, NULL },
        { "calib", "fit", "profile", "--model", "llama-3-8b", "--gpu", "h100", "--tp", "1", "--db", db, NULL },
        { "baseline", "accept", "999", "--db", db, NULL },
    };
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        snap before = take(db);
        result r = run_argv(30, cmds[c]);
        expect_one_line(&r, 2, NULL, cmds[c][1]);
        expect_same(&before, db, cmds[c][1]);
        result_free(&r);
    }
    /* An empty file: refused the same way, and still empty. */
    char empty[256];
    write_file("empty.db", "", empty, sizeof empty);
    char *acc[] = { "baseline", "accept", "1", "--db", empty, NULL };
    snap before = take(empty);
    result r = run_argv(30, acc);
    expect_one_line(&r, 2, "no run 1", "baseline accept on an empty file");
    expect_same(&before, empty, "baseline accept on an empty file");
    result_free(&r);
}

/* ---- --no-store and look-ups ------------------------------------------------- */

/* run --no-store wrote the schema into an empty database file (it opened it for
 * catalog look-ups read-write); so did sweep/check --no-store, and any run
 * refused after the look-up.  Now the file stays empty; a foreign SQLite file is
 * refused unchanged. */
Test(outpath_db, no_store_and_lookups_never_write)
{
    char s[256], empty[256], foreign[256], badgpu[256], png[256];
    write_file("s.ini", MMC, s, sizeof s);
    snprintf(png, sizeof png, "%s/x.png", dir);
    write_file("empty.db", "", empty, sizeof empty);
    write_file("badgpu.ini", "[workload]\nrate = 1\n[pool chat]\nkind = llm\ngpu = nosuchgpu\nmodel = llama-3-8b\n",
               badgpu, sizeof badgpu);
    snprintf(foreign, sizeof foreign, "%s/foreign.db", dir);
    write_foreign_db(foreign);
    char *ok[][10] = {
        { "run", s, "--no-store", "--db", empty, NULL },
        { "sweep", s, "--vary", "workload.rate=10,20", "--no-store", "--db", empty, NULL },
        { "check", s, "--no-store", "--db", empty, NULL },
        { "compare", s, s, "--db", empty, NULL },
    };
    for (size_t c = 0; c < sizeof ok / sizeof ok[0]; c++) {
        snap before = take(empty);
        result r = run_argv(60, ok[c]);
        cr_expect_eq(r.rc, 0, "%s: exit %d: %s", ok[c][0], r.rc, r.err);
        expect_same(&before, empty, ok[c][0]);
        result_free(&r);
    }
    struct { const char *file; char *args[10]; } bad[] = {
        { empty, { "run", badgpu, "--db", empty, NULL } },              /* refused by the catalog look-up */
        { empty, { "run", badgpu, "--no-store", "--db", empty, NULL } },
        { foreign, { "run", s, "--no-store", "--db", foreign, NULL } },
        { foreign, { "check", s, "--no-store", "--db", foreign, NULL } },
        { empty, { "plot", "1", "--db", empty, "--out", png, NULL } },
        { empty, { "baseline", "list", "--db", empty, NULL } },
        { empty, { "compare", "1", s, "--db", empty, NULL } },
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        snap before = take(bad[c].file);
        result r = run_argv(60, bad[c].args);
        expect_one_line(&r, 2, NULL, bad[c].args[0]);
        expect_same(&before, bad[c].file, bad[c].args[0]);
        result_free(&r);
    }
    /* Storing into the empty file is still allowed: it gets the schema and the run. */
    char *st[] = { "run", s, "--db", empty, NULL };
    result r = run_argv(60, st);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    struct stat sb;
    cr_expect(stat(empty, &sb) == 0 && sb.st_size > 0, "the run was stored");
    result_free(&r);
}

/* gnuplot's own messages were printed as they came (several lines): a failure
 * of gnuplot is now one line, exit 1, ending with gnuplot's last message. */
Test(outpath_paths, gnuplot_failure_is_one_line)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) cr_skip_test("gnuplot is not installed");
    char s[256], plots[256], script[300], png[256];
    store_one_run(s, sizeof s);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    cr_assert_eq(mkdir(plots, 0755), 0);
    snprintf(script, sizeof script, "%s/cdf.gp", plots);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fputs("print 'first line of noise'\nplot latsim_no_such_function(x)\n", f);
    fclose(f);
    snprintf(png, sizeof png, "%s/x.png", dir);
    char *a[] = { "plot", "1", "--db", db, "--out", png, NULL };
    setenv("LATSIM_PLOTS", plots, 1);
    result r = run_argv(60, a);
    unsetenv("LATSIM_PLOTS");
    expect_one_line(&r, 1, "plot: gnuplot failed (exit 1) drawing", "broken script");
    cr_expect(strstr(r.err, "latsim_no_such_function") != NULL, "%s", r.err);
    result_free(&r);
}
