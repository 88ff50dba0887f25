/* test_catalog_hf.c -- `latsim catalog add --hf CONFIG.json --name NAME`: the
 * model is stored with the parameter count computed from its geometry, and a
 * bad config or a missing --name is one line, exit 2, no database written. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_cathf_", "c.db"); }
static void teardown(void) { tcli_teardown(); }
TestSuite(catalog_hf, .init = setup, .fini = teardown);

Test(catalog_hf, add_stores_the_computed_count)
{
    result r = run_db(60, "catalog", "add", "--hf", "tests/data/hf/qwen2.5-7b.json", "--name", "my-qwen", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "added model my-qwen"), "%s", r.out);
    cr_expect(strstr(r.out, "7.616e+09 parameters"), "the published 7,615,616,512: %s", r.out);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM models WHERE name = 'my-qwen' AND params = 7615616512 AND builtin = 0"
                              " AND layers = 28 AND kv_heads = 4"), 1);
    r = run_db(60, "catalog", NULL);
    cr_expect(strstr(r.out, "my-qwen"), "listed: %s", r.out);
    result_free(&r);
    /* The weights may be given. */
    r = run_db(60, "catalog", "add", "--hf", "tests/data/hf/qwen2.5-7b.json", "--name", "q-fp8", "--weights", "fp8", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    cr_expect_eq(db_count(db, "SELECT count(*) FROM models WHERE name = 'q-fp8' AND weights = 'fp8'"), 1);
}

Test(catalog_hf, bad_input_is_one_line_and_writes_nothing)
{
    char path[256];
    write_file("bad.json", "{\"hidden_size\": 64}", path, sizeof path);
    result r = run_db(60, "catalog", "add", "--hf", path, "--name", "x", NULL);
    expect_one_line(&r, 2, "field num_hidden_layers: missing", "bad config");
    result_free(&r);
    r = run_db(60, "catalog", "add", "--hf", "tests/data/hf/qwen2.5-7b.json", NULL);
    expect_one_line(&r, 2, "missing --name NAME", "no name");
    result_free(&r);
    r = run_db(60, "catalog", "--hf", "tests/data/hf/qwen2.5-7b.json", "--name", "x", NULL);
    expect_one_line(&r, 2, "go with 'add --hf", "without add");
    result_free(&r);
    cr_expect_neq(access(db, F_OK), 0, "no database was created");
}
