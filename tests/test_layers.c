/* test_layers.c -- the layer check (tests/check-layers.sh, `make check-layers`):
 * this tree passes it (with its objects' link edges: the one run of the whole
 * check in `make test`), and a scratch copy of the sources (include lines
 * only, no objects: a few seconds) passes it too until a back edge or an
 * include cycle is planted, which it names. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_layers_", NULL); }
static void teardown(void) { tcli_teardown(); }
TestSuite(layers, .init = setup, .fini = teardown);

/* Runs the check on ROOT into dir/out; returns its exit status, the output in *OUT (free it). */
static int check(const char *root, char **out)
{
    char cmd[512], path[256];
    snprintf(path, sizeof path, "%s/out", dir);
    snprintf(cmd, sizeof cmd, "timeout 60 tests/check-layers.sh '%s' >'%s' 2>&1", root, path);
    int rc = system(cmd);
    *out = slurp_or_fail(path, NULL);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A copy of the sources under dir/tree. */
static void copy_tree(char *root, size_t n)
{
    snprintf(root, n, "%s/tree", dir);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp -r sim calib cli '%s'/ && { [ ! -d include ] || cp -r include '%s'/; }",
             root, root, root);
    cr_assert_eq(system(cmd), 0, "copying the tree failed");
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

Test(layers, this_tree_passes)
{
    char *out;
    int rc = check(".", &out);
    cr_expect_eq(rc, 0, "check-layers failed on this tree:\n%s", out);
    cr_expect(strstr(out, "no back edge, no cycle"), "%s", out);
    free(out);
}

/* The engine including the run is a back edge: named with its file and line. */
Test(layers, a_planted_back_edge_fails)
{
    char root[256], *out;
    copy_tree(root, sizeof root);
    cr_assert_eq(check(root, &out), 0, "the copy passes before anything is planted:\n%s", out);
    free(out);
    append(root, "sim/engine/evq.c", "#include \"run/sim.h\"");
    int rc = check(root, &out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "sim/engine/evq.c:"), "the file is named:\n%s", out);
    cr_expect(strstr(out, "engine may not include run (run/sim.h)"), "the edge is named:\n%s", out);
    free(out);
}

/* A kind including another kind's folder, and scenario assembly including a kind. */
Test(layers, sideways_and_assembly_edges_fail)
{
    char root[256], *out;
    copy_tree(root, sizeof root);
    append(root, "sim/stations/router.c", "#include \"llm/llm.h\"");
    append(root, "sim/run/scenario.c", "#include \"stations/pool.h\"");
    int rc = check(root, &out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "stations may not include llm (llm/llm.h)"), "%s", out);
    cr_expect(strstr(out, "sim/run/scenario.c:") && strstr(out, "scenario assembly may not include a kind's folder"),
              "%s", out);
    free(out);
}

/* Two engine headers including each other: no layer rule is broken, the cycle is found. */
Test(layers, a_planted_cycle_fails)
{
    char root[256], *out;
    copy_tree(root, sizeof root);
    append(root, "sim/engine/stats.h", "#include \"engine/rng.h\"");
    append(root, "sim/engine/rng.h", "#include \"engine/stats.h\"");
    int rc = check(root, &out);
    cr_expect_eq(rc, 1, "%s", out);
    cr_expect(strstr(out, "module cycle:") && strstr(out, "sim/engine/stats") && strstr(out, "sim/engine/rng"),
              "the cycle names both modules:\n%s", out);
    free(out);
}
