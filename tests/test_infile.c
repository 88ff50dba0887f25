/* test_infile.c -- Criterion tests of the third hardening issue's inputs and
 * outputs that are not regular files (issue 30, "hangs on FIFO and device
 * inputs"): every input path of every command (observed runs, scenarios given
 * with --scenario, nccl/power/steps/meas tables, a Vidur folder, explore grids,
 * Hugging Face configs, plan --trace) and every output path (export --csv DIR,
 * replay --plot DIR, report --html) goes through one check before any work: a
 * FIFO, a device, a folder or an oversized file is refused at once with one
 * line, exit 2, the database not created.  report --html writes a temporary
 * file and renames it, so a full disk leaves the page it replaces intact.
 * Each run is a forked child bounded by alarm(): a FIFO that blocked would fail
 * the test instead of hanging the suite.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "latsim/infile.h"
#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h3io_", "runs.db"); }

TestSuite(infile_in, .init = setup, .fini = tcli_teardown);
TestSuite(infile_out, .init = setup, .fini = tcli_teardown);

#define REAL_INI "scenarios/replay_vllm_rtx4090.ini"
#define REAL_RUN "tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl"

/* A small generic scenario: export and report run it in well under a second. */
static const char *SMALL =
    "[sim]\nrequests = 300\nwarmup = 30\n[workload]\narrival = poisson\nrate = 20\n"
    "[pool cpu]\nkind = generic\nservers = 2\nservice_ms = exp(mean=50)\n";

/* Makes dir/NAME a FIFO; its path into PATH. */
static void make_fifo(const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    cr_assert_eq(mkfifo(path, 0644), 0, "mkfifo %s", path);
}

/* Makes dir/NAME a sparse file of BYTES bytes; its path into PATH. */
static void make_sparse(const char *name, long long bytes, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (off_t) bytes), 0);
    close(fd);
}

/* Runs ARGS (NULL-terminated, "@" replaced by BAD) with --db: exit 2 within
 * 5 s, one line holding WANT and naming BAD's file name, no database. */
static void refuse(const char *bad, const char *want, const char *const *args)
{
    char *argv[24];
    int n = 0;
    for (; args[n]; n++) argv[n] = (char *) (strcmp(args[n], "@") ? args[n] : bad);
    argv[n++] = "--db";
    argv[n++] = db;
    argv[n] = NULL;
    result r = run_argv(10, argv);
    char what[512];
    snprintf(what, sizeof what, "%s %s on %s", args[0], args[1] ? args[1] : "", bad);
    expect_one_line(&r, 2, want, what);
    const char *base = strrchr(bad, '/') ? strrchr(bad, '/') + 1 : bad;
    cr_expect(strstr(r.err, base) != NULL, "%s: the message does not name %s: %s", what, base, r.err);
    cr_expect_lt(r.wall, 5.0, "%s: refused only after %.1f s", what, r.wall);
    cr_expect_neq(access(db, F_OK), 0, "%s: the database was created", what);
    result_free(&r);
}

/* Every input position of every command that reads one. */
static const char *const *const INPUTS[] = {
    (const char *const[]) { "calib", "import", "observed", "@", "--scenario", REAL_INI, NULL },
    (const char *const[]) { "calib", "import", "observed", REAL_RUN, "--scenario", "@", NULL },
    (const char *const[]) { "replay", "@", "--scenario", REAL_INI, NULL },
    (const char *const[]) { "replay", REAL_RUN, "--scenario", "@", NULL },
    (const char *const[]) { "calib", "import", "nccl", "@", "--gpu", "h100", NULL },
    (const char *const[]) { "calib", "import", "power", "@", NULL },
    (const char *const[]) { "calib", "import", "steps", "@", NULL },
    (const char *const[]) { "calib", "import", "meas", "@", NULL },
    (const char *const[]) { "explore", "@", NULL },
    (const char *const[]) { "catalog", "add", "--hf", "@", "--name", "m-x", NULL },
    (const char *const[]) { "run", "@", NULL },
    (const char *const[]) { "plan", REAL_INI, "--trace", "@", NULL },
    /* merged after the first check went in: engine logs and server metadata */
    (const char *const[]) { "calib", "import", "engine-log", "@", "--scenario", REAL_INI, NULL },
    (const char *const[]) { "calib", "import", "engine-log", REAL_RUN, "--scenario", "@", NULL },
    (const char *const[]) { "calib", "import", "observed", REAL_RUN, "--scenario", REAL_INI, "--meta", "@", NULL },
    (const char *const[]) { "replay", REAL_RUN, "--scenario", REAL_INI, "--meta", "@", NULL },
};
#define NINPUTS (sizeof INPUTS / sizeof INPUTS[0])

/* A FIFO with no writer, under each input's usual file name: refused at once. */
Test(infile_in, fifo_everywhere)
{
    static const char *const names[] = { "run.jsonl", "run.csv", "g.ini", "config.json" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char p[256];
        make_fifo(names[k], p, sizeof p);
        for (size_t i = 0; i < NINPUTS; i++) refuse(p, "not a regular file (a FIFO)", INPUTS[i]);
    }
}

/* Devices: /dev/zero (endless), /dev/null (empty, but not a file). */
Test(infile_in, devices_everywhere)
{
    for (size_t i = 0; i < NINPUTS; i++) {
        refuse("/dev/zero", "not a regular file (a character device)", INPUTS[i]);
        refuse("/dev/null", "not a regular file (a character device)", INPUTS[i]);
    }
}

/* A folder where a file is expected; and a Vidur profile that is a FIFO or a
 * file where a folder is expected. */
Test(infile_in, folders_and_vidur)
{
    char d[256], f[256], z[256];
    snprintf(d, sizeof d, "%s/sub", dir);
    cr_assert_eq(mkdir(d, 0755), 0);
    for (size_t i = 0; i < NINPUTS; i++) refuse(d, "not a regular file (a directory)", INPUTS[i]);
    make_fifo("prof", f, sizeof f);
    write_file("plain.csv", "a,b\n1,2\n", z, sizeof z);
    static const char *const vidur[] = { "calib", "import", "vidur", "@", NULL };
    refuse(f, "not a readable folder: a FIFO", vidur);
    refuse(z, "not a readable folder", vidur);
    refuse("/dev/zero", "not a readable folder: a character device", vidur);
}

/* Oversized inputs (sparse files: nothing is written to disk): refused by
 * their size before a byte is read. */
Test(infile_in, size_bounds)
{
    char p[256];
    make_sparse("config.json", INFILE_MAX_JSON + 1, p, sizeof p);
    static const char *const hf[] = { "catalog", "add", "--hf", "@", "--name", "m-x", NULL };
    refuse(p, "larger than the 16 MB this input may hold", hf);
    make_sparse("g.ini", INFILE_MAX_SCENARIO + 4096, p, sizeof p);
    static const char *const ex[] = { "explore", "@", NULL };
    refuse(p, "larger than the 16 MB this input may hold", ex);
    make_sparse("run.jsonl", INFILE_MAX_OBSERVED + 1, p, sizeof p);
    static const char *const obs[] = { "calib", "import", "observed", "@", "--scenario", REAL_INI, NULL };
    static const char *const rep[] = { "replay", "@", "--scenario", REAL_INI, NULL };
    refuse(p, "larger than the 1024 MB this input may hold", obs);
    refuse(p, "larger than the 1024 MB this input may hold", rep);
    make_sparse("nccl.txt", INFILE_MAX_TABLE + 1, p, sizeof p);
    static const char *const nccl[] = { "calib", "import", "nccl", "@", "--gpu", "h100", NULL };
    refuse(p, "larger than the 256 MB this input may hold", nccl);
    /* Just below a bound the size is not what is refused. */
    make_sparse("small.json", 1000, p, sizeof p);
    result r = run_db(10, "catalog", "add", "--hf", p, "--name", "m-x", NULL);
    cr_expect_eq(r.rc, 2);
    cr_expect(strstr(r.err, "larger than") == NULL, "%s", r.err);
    result_free(&r);
}

/* ---- outputs ------------------------------------------------------------------ */

/* export --csv DIR: a FIFO named like any file it writes is refused before the
 * run, nothing written in DIR. */
Test(infile_out, export_fifo_in_folder)
{
    char s[256], out[256], f[300];
    write_file("s.ini", SMALL, s, sizeof s);
    static const char *const files[] = { "system.csv", "latency.csv", "cdf.csv", "timeseries.csv" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(out, sizeof out, "%s/out%zu", dir, i);
        cr_assert_eq(mkdir(out, 0755), 0);
        snprintf(f, sizeof f, "out%zu/%s", i, files[i]);
        char p[300];
        make_fifo(f, p, sizeof p);
        result r = run_db(10, "export", s, "--csv", out, NULL);
        expect_one_line(&r, 2, "cannot write: not a regular file", files[i]);
        cr_expect(strstr(r.err, files[i]) != NULL, "%s", r.err);
        cr_expect_lt(r.wall, 5.0);
        char sys[320];
        snprintf(sys, sizeof sys, "%s/system.csv", out);
        if (i > 0) cr_expect_neq(access(sys, F_OK), 0, "%s: system.csv written before the refusal", files[i]);
        result_free(&r);
    }
    /* /dev/zero as the folder, a file as the folder. */
    result r = run_db(10, "export", s, "--csv", "/dev/zero", NULL);
    expect_one_line(&r, 2, "not a folder", "/dev/zero");
    result_free(&r);
}

/* replay --plot DIR whose PNG is a FIFO or a folder: refused before the replay. */
Test(infile_out, replay_plot_fifo)
{
    char out[256], p[300];
    snprintf(out, sizeof out, "%s/plots", dir);
    cr_assert_eq(mkdir(out, 0755), 0);
    make_fifo("plots/replay-cdf.png", p, sizeof p);
    result r = run_db(10, "replay", REAL_RUN, "--scenario", REAL_INI, "--plot", out, NULL);
    expect_one_line(&r, 2, "replay: --plot", "fifo png");
    cr_expect(strstr(r.err, "replay-cdf.png: cannot write: not a regular file") != NULL, "%s", r.err);
    cr_expect_lt(r.wall, 5.0);
    result_free(&r);
    unlink(p);
    cr_assert_eq(mkdir(p, 0755), 0);
    r = run_db(10, "replay", REAL_RUN, "--scenario", REAL_INI, "--plot", out, NULL);
    expect_one_line(&r, 2, "replay-cdf.png: cannot write: it is a folder", "folder png");
    result_free(&r);
    /* A folder under a missing one cannot be created: refused before the replay too. */
    snprintf(out, sizeof out, "%s/no/such/plots", dir);
    r = run_db(10, "replay", REAL_RUN, "--scenario", REAL_INI, "--plot", out, NULL);
    expect_one_line(&r, 2, "cannot write", "missing parent");
    cr_expect_lt(r.wall, 5.0);
    result_free(&r);
}

/* report --html: a FIFO is refused; on a full disk (a file size limit) the page
 * it replaces is left byte for byte, and no temporary file stays behind. */
Test(infile_out, report_html_atomic)
{
    char s[256], f[256], h[256];
    write_file("s.ini", SMALL, s, sizeof s);
    make_fifo("p.html", f, sizeof f);
    result r = run_db(10, "report", s, "--html", f, NULL);
    expect_one_line(&r, 2, "--html", "fifo html");
    cr_expect(strstr(r.err, "not a regular file") != NULL, "%s", r.err);
    result_free(&r);
    static const char OLD[] = "<!DOCTYPE html><p>the previous page</p>\n";
    write_file("old.html", OLD, h, sizeof h);
    child_limits.fsize = 20000;     /* the page is larger: its write fails part-way */
    r = run_db(60, "report", s, "--html", h, NULL);
    cr_expect_eq(r.rc, 1, "a failed write is a runtime failure: rc %d: %s", r.rc, r.err);
    cr_expect_eq(lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "nothing written") != NULL, "%s", r.err);
    cr_expect(same_bytes(h, OLD, sizeof OLD - 1), "the previous page was changed");
    result_free(&r);
    child_limits.fsize = 0;
    /* Nothing left beside it but the files this test made. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c 'old.html.'", dir);
    FILE *p = popen(cmd, "r");
    int left = -1;
    cr_assert(p);
    cr_expect_eq(fscanf(p, "%d", &left), 1);
    pclose(p);
    cr_expect_eq(left, 0, "a temporary page was left behind");
    /* Without the limit the page is written whole. */
    r = run_db(60, "report", s, "--html", h, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    size_t n;
    char *page = slurp(h, &n);
    cr_expect(strstr(page, "</html>") != NULL, "the page is not whole");
    free(page);
    result_free(&r);
}
