/* test_public.c -- the public interface (the headers of include/latsim/ and
 * calib/calib.h; docs/architecture.md, "Public and internal headers"): each
 * public header compiles alone with nothing but include/ on the path, the layer check
 * refuses a public header or cli/ including an internal one, and the library
 * driven through the public headers alone (as this file is: it includes no
 * internal header) reads a scenario's facts and reproduces `latsim run --json`.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/sim.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "tcli.h"

#ifndef LATSIM_VERSION
#define LATSIM_VERSION "0.1"
#endif

static void setup(void) { tcli_setup("/tmp/latsim_public_", NULL); }
static void teardown(void) { tcli_teardown(); }
TestSuite(public, .init = setup, .fini = teardown);

/* Compiles a file that includes only HEADER (as #include "HEADER") from dir,
 * with -Iinclude and the library headers' flags, warnings as errors.  Returns
 * the compiler's status; its messages in *MSG (free it). */
static int compile_alone(const char *header, char **msg)
{
    char src[256], cmd[1024], log[256];
    char text[300];
    snprintf(text, sizeof text, "#include \"%s\"\nint public_header_test(void);\n", header);
    write_file("t.c", text, src, sizeof src);
    snprintf(log, sizeof log, "%s/cc.log", dir);
    const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
    snprintf(cmd, sizeof cmd, "%s -std=c17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -Iinclude "
             "$(pkg-config --cflags sqlite3 2>/dev/null) '%s' >'%s' 2>&1", cc, src, log);
    int rc = system(cmd);
    *msg = slurp(log, NULL);
    return rc;
}

/* Every public header compiles on its own: it includes what it needs, and
 * nothing of sim/ (not on the path here). */
Test(public, every_public_header_compiles_alone)
{
    DIR *d = opendir("include/latsim");
    cr_assert_not_null(d, "cannot open include/latsim (run the tests from the repository root)");
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".h")) continue;
        char h[300], *msg;
        snprintf(h, sizeof h, "latsim/%s", e->d_name);
        cr_expect_eq(compile_alone(h, &msg), 0, "%s does not compile alone:\n%s", h, msg);
        free(msg);
        n++;
    }
    closedir(d);
    cr_expect_geq(n, 9, "only %d public headers found", n);
}

/* calib.h, copied alone beside the test file: it may include only public headers. */
/* calib.h and the observed-run headers it includes (cobserved.h, cobsdb.h,
 * cobsreplay.h: its public part), with none of calib's other headers. */
Test(public, calib_h_compiles_without_the_other_calib_headers)
{
    static const char *const H[] = { "calib.h", "cobserved.h", "cobsdb.h", "cobsreplay.h", "cobsmeta.h", "cenglog.h" };
    char path[256], src[64], *msg;
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
        snprintf(src, sizeof src, "calib/%s", H[i]);
        char *text = slurp_or_fail(src, NULL);
        write_file(H[i], text, path, sizeof path);
        free(text);
    }
    cr_expect_eq(compile_alone("calib.h", &msg), 0, "calib/calib.h does not compile alone:\n%s", msg);
    free(msg);
}

/* Runs tests/check-layers.sh on ROOT; returns its output (free it). */
static char *check_layers(const char *root)
{
    char cmd[600], path[256];
    snprintf(path, sizeof path, "%s/layers.out", dir);
    snprintf(cmd, sizeof cmd, "timeout 60 tests/check-layers.sh '%s' >'%s' 2>&1", root, path);
    cr_assert_neq(system(cmd), -1, "cannot run tests/check-layers.sh");
    return slurp_or_fail(path, NULL);
}

/* Appends LINE to FILE under ROOT. */
static void append(const char *root, const char *file, const char *line)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, file);
    FILE *f = fopen(path, "a");
    cr_assert(f, "cannot open %s", path);
    fprintf(f, "%s\n", line);
    fclose(f);
}

/* A public header including an internal one, cli/ including a calib or sim
 * header: each is named; cli/ and include/ pass as they are. */
Test(public, check_layers_keeps_the_public_headers_public)
{
    char root[256], cmd[800];
    /* A copy of the sources (include lines only: layers/this_tree_passes checks the tree itself). */
    snprintf(root, sizeof root, "%s/tree", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp -r sim calib cli include '%s'/", root, root);
    cr_assert_eq(system(cmd), 0, "copying the tree failed");
    char *before = check_layers(root);
    cr_expect(!strstr(before, "\ncli/") && strncmp(before, "cli/", 4), "cli/ breaks a rule:\n%s", before);
    cr_expect(!strstr(before, "include/latsim/"), "include/latsim breaks a rule:\n%s", before);
    free(before);
    append(root, "include/latsim/sim.h", "#include \"run/sim.h\"");
    append(root, "include/latsim/slo.h", "#include \"calib.h\"");
    append(root, "cli/run.c", "#include \"cdb.h\"");
    append(root, "cli/info.c", "#include \"core/catalog.h\"");
    char *out = check_layers(root);
    cr_expect(strstr(out, "include/latsim/sim.h:") && strstr(out, "public may not include run (run/sim.h)"), "%s", out);
    cr_expect(strstr(out, "include/latsim/slo.h:") && strstr(out, "public may not include calib (calib.h)"), "%s", out);
    cr_expect(strstr(out, "cli/run.c:") && strstr(out, "cli may not include calib (cdb.h)"), "%s", out);
    cr_expect(strstr(out, "cli/info.c:") && strstr(out, "cli may not include core (core/catalog.h)"), "%s", out);
    free(out);
}

/* Loads TEXT as scenario NAME into a new scenario; fails the test when it does not load. */
static scenario *load_text(const char *name, const char *text)
{
    char err[1024] = "";
    scenario *s = scenario_new();
    cr_assert_not_null(s);
    int rc = scenario_load_text(s, name, text, NULL, 0, err, sizeof err);
    cr_assert_eq(rc, 0, "%s does not load: %s", name, err);
    return s;
}

#define THREE_POOLS \
    "[sim]\nrequests = 1000\nwarmup = 100\nseed = 7\n" \
    "[workload]\narrival = poisson\nrate = 50\n" \
    "[pool front]\nservers = 2\nservice_ms = exp(mean=10)\nnext = back\n" \
    "[pool back]\nservers = 3\nservice_ms = lognormal(mean=20, cv=0.5)\nqueue_limit = 5\nnext = last\n" \
    "[pool last]\nservers = 4\nservice_ms = const(1)\n" \
    "[slo]\ne2e_p99_ms = 500\nheadroom = 1.5\n"

/* What a front end reads of a scenario, through the accessors. */
Test(public, accessors_read_the_scenario)
{
    scenario *s = load_text("three.ini", THREE_POOLS);
    cr_expect_eq(scenario_seed(s), 7);
    scenario_set_seed(s, 11);
    cr_expect_eq(scenario_seed(s), 11);
    cr_expect_eq(scenario_warmup(s), 100);
    cr_expect_eq(scenario_ts_interval(s), 0);
    scenario_set_ts_interval(s, 60);
    cr_expect_eq(scenario_ts_interval(s), 60);
    cr_expect_eq(scenario_arrival_kind(s), SCENARIO_ARRIVAL_RATE);
    cr_expect_eq(scenario_rate(s), 50);
    cr_expect_eq(scenario_users(s), 0);
    cr_assert_eq(scenario_npools(s), 3);
    const char *names[3] = { "front", "back", "last" };
    const int lines[3] = { 8, 12, 17 }, servers[3] = { 2, 3, 4 };
    for (int i = 0; i < 3; i++) {
        cr_expect_str_eq(scenario_pool_name(s, i), names[i]);
        cr_expect_eq(scenario_pool_line(s, i), lines[i], "pool %s: line %d", names[i], scenario_pool_line(s, i));
        cr_expect_str_eq(scenario_pool_kind(s, i), "generic");
        cr_expect_eq(scenario_pool_servers(s, i), servers[i]);
    }
    double mean = 0, cv = 0;
    cr_expect_eq(scenario_pool_service(s, 1, &mean, &cv), 0);
    cr_expect_float_eq(mean, 20, 1e-12);
    cr_expect_float_eq(cv, 0.5, 1e-12);
    /* front and back see every request; back's queue_limit may thin what reaches last. */
    cr_expect_eq(scenario_pool_whole_inflow(s, 0), 1);
    cr_expect_eq(scenario_pool_whole_inflow(s, 1), 1);
    cr_expect_eq(scenario_pool_whole_inflow(s, 2), 0);
    cr_expect_eq(scenario_has_section(s, "pool back"), 1);
    cr_expect_eq(scenario_has_section(s, "pool nope"), 0);
    int ng = -1, nm = -1;
    scenario_gpus(s, &ng);
    scenario_models(s, &nm);
    cr_expect(ng == 0 && nm == 0, "catalog additions: %d gpus, %d models", ng, nm);
    const slo_spec *slo = scenario_slo(s);
    cr_assert_eq(slo->n, 1);
    cr_expect_str_eq(slo->t[0].key, "e2e_p99_ms");
    cr_expect_float_eq(slo->headroom, 1.5, 1e-12);
    slo_spec taken;
    scenario_take_slo(s, &taken);
    cr_expect_eq(taken.n, 1);
    cr_expect_eq(scenario_slo(s)->n, 0, "the scenario keeps no terms once taken");
    slo_free(&taken);
    scenario_delete(s);
    scenario_delete(NULL);
}

/* The arrival kinds a front end branches on, and an LLM pool's facts. */
Test(public, arrival_kinds_and_kind_names)
{
    scenario *s = load_text("sched.ini", "[workload]\narrival = poisson\n"
                            "rate = diurnal(mean=100, peak_to_trough=2, period=1h, peak_at=30m)\n"
                            "[pool p]\nservice_ms = exp(mean=1)\n");
    cr_expect_eq(scenario_arrival_kind(s), SCENARIO_ARRIVAL_SCHEDULE);
    scenario_delete(s);
    s = load_text("users.ini", "[workload]\nusers = 4\nthink_ms = exp(mean=10)\n[pool p]\nservice_ms = exp(mean=1)\n");
    cr_expect_eq(scenario_arrival_kind(s), SCENARIO_ARRIVAL_USERS);
    cr_expect_eq(scenario_users(s), 4);
    scenario_delete(s);
    s = load_text("llm.ini", "[workload]\nrate = 1\n[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n");
    cr_expect_str_eq(scenario_pool_kind(s, 0), "llm");
    double mean, cv;
    cr_expect_eq(scenario_pool_service(s, 0, &mean, &cv), -1, "an LLM pool has no service time over servers");
    cr_expect_eq(scenario_pool_servers(s, 0), 0);
    scenario_delete(s);
    char err[1024] = "";
    s = scenario_new();
    cr_assert_eq(scenario_load(s, "scenarios/azure_conv_trace.ini", NULL, 0, err, sizeof err), 0, "%s", err);
    cr_expect_eq(scenario_arrival_kind(s), SCENARIO_ARRIVAL_TRACE);
    cr_expect(scenario_speedup(s) > 0);
    scenario_delete(s);
    cr_expect_eq(scenario_file_has_section("scenarios/default.ini", "pool cpu", err, sizeof err), 1);
    cr_expect_eq(scenario_file_has_section("scenarios/default.ini", "pool gpu", err, sizeof err), 0);
    cr_expect_eq(scenario_file_has_section("scenarios/no-such-file.ini", "sim", err, sizeof err), -1);
    cr_expect(strstr(err, "no-such-file.ini"), "the message names the file: %s", err);
}

/* S with the member "NAME": VALUE (a number or a string) replaced by "NAME": 0,
 * for every occurrence (wall time and version differ between runs and builds). */
static void blank_member(char *s, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\": ", name);
    for (char *p = strstr(s, key); p; p = strstr(p + 1, key)) {
        char *v = p + strlen(key), *end = v;
        if (*end == '"') { end++; while (*end && *end != '"') end++; if (*end) end++; }
        else while (*end && *end != ',' && *end != '}' && *end != ' ' && *end != '\n') end++;
        *v = '0';
        memmove(v + 1, end, strlen(end) + 1);
    }
}

/* Load, resolve, run, flatten, JSON: through the public headers alone the
 * library prints what `latsim run --json` prints, and store_config gives the
 * scenario hash the program reports, whether from the loaded scenario or read
 * again from the file. */
Test(public, the_public_api_reproduces_latsim_run)
{
    const char *file = "scenarios/default.ini";
    const char *sets[] = { "sim.requests=20000", "workload.rate=60" };
    char err[2048] = "";
    scenario *s = scenario_new();
    cr_assert_not_null(s);
    cr_assert_eq(scenario_load(s, file, sets, 2, err, sizeof err), 0, "%s", err);
    sqlite3 *db = NULL;
    cr_assert_eq(store_open_lookup(NULL, &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(s, db, err, sizeof err), 0, "%s", err);
    store_close(db);
    sim_result res;
    cr_assert_eq(sim_run(s, scenario_seed(s), &res, err, sizeof err), 0, "%s", err);
    report rep = { 0 };
    cr_assert_eq(report_flatten(&res, -1, &rep), 0);
    cr_expect(sim_result_pool(&res, 0) != NULL && sim_result_pool(&res, 1) == NULL, "one pool");
    store_config c, c2;
    cr_assert_eq(store_config_of(s, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(store_config_read(file, sets, 2, &c2, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c.hash, c2.hash, "the hash of the loaded scenario and of the file read again");
    cr_expect_eq(c.n, c2.n);
    cr_expect_str_eq(c.text, c2.text);
    char *json = NULL, *extra = NULL;
    size_t jl = 0, el = 0;
    FILE *mem = open_memstream(&extra, &el);
    cr_assert_not_null(mem);
    fputs("\"scenario\": ", mem);
    report_json_str(mem, file);
    fprintf(mem, ", \"scenario_hash\": \"%016llx\", \"seed\": %llu, \"version\": \"%s\"", (unsigned long long) c.hash,
            (unsigned long long) scenario_seed(s), LATSIM_VERSION);
    fclose(mem);
    mem = open_memstream(&json, &jl);
    cr_assert_not_null(mem);
    report_json(&rep, extra, mem);
    fclose(mem);
    result r = run(60, "run", file, "--set", sets[0], "--set", sets[1], "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, 0, "latsim run: exit %d: %s", r.rc, r.err);
    blank_member(json, "wall_time_s");
    blank_member(json, "version");
    blank_member(r.out, "wall_time_s");
    blank_member(r.out, "version");
    cr_expect_str_eq(json, r.out, "the public API's JSON differs from latsim run's");
    cr_expect(isfinite(report_get(&rep, "", "e2e", "p99")), "the run reports an E2E P99");
    result_free(&r);
    free(json);
    free(extra);
    store_config_free(&c2);
    store_config_free(&c);
    report_free(&rep);
    sim_result_free(&res);
    scenario_delete(s);
}

/* The Layout table of docs/architecture.md has a row for include/latsim/ and
 * for each public header, and names none that does not exist (test_docs.c
 * checks sim/, calib/ and cli/ the same way). */
Test(public, layout_table_lists_every_public_header)
{
    char *arch = slurp_or_fail("docs/architecture.md", NULL);
    cr_expect(strstr(arch, "\n| `include/latsim/` |"), "the Layout table has no row for include/latsim/");
    DIR *d = opendir("include/latsim");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char row[300];
        snprintf(row, sizeof row, "\n| `include/latsim/%s` |", e->d_name);
        cr_expect(strstr(arch, row), "include/latsim/%s is missing from the Layout table of docs/architecture.md "
                  "(add a row: | `include/latsim/%s` | one line from its opening comment |)", e->d_name, e->d_name);
    }
    closedir(d);
    for (const char *p = strstr(arch, "\n| `include/latsim/"); p; p = strstr(p + 1, "\n| `include/latsim/")) {
        const char *name = p + strlen("\n| `"), *end = strchr(name, '`');
        cr_assert_not_null(end);
        char path[300];
        snprintf(path, sizeof path, "%.*s", (int) (end - name), name);
        FILE *f = fopen(path, "r");
        cr_expect(f || path[strlen(path) - 1] == '/', "the Layout table lists %s, which does not exist", path);
        if (f) fclose(f);
    }
    free(arch);
}
