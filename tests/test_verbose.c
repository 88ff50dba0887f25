/* test_verbose.c -- `latsim run --verbose`: the answer-changing settings on
 * stderr with their values, marked set or default, and the report unchanged. */
#include <criterion/criterion.h>
#include <string.h>
#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_verbose_", NULL); }
TestSuite(verbose, .init = setup, .fini = tcli_teardown);

Test(verbose, defaults_listed_report_unchanged, .timeout = 120)
{
    result a = run(110, "run", "scenarios/gateway_prefix_cache.ini", "--no-store", "--json", "--set", "sim.requests=300", NULL);
    result b = run(110, "run", "scenarios/gateway_prefix_cache.ini", "--no-store", "--json", "--set", "sim.requests=300",
                   "--verbose", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect(strstr(b.err, "[pool chat] block_tokens = 16 (default)") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "[sim] warmup = automatic (default)") != NULL, "%s", b.err);
    cr_expect(strstr(b.err, "max_batch_tokens = ") != NULL, "%s", b.err);
    cr_expect(strstr(a.err, "settings that change answers") == NULL, "without --verbose nothing is listed");
    /* The report does not depend on --verbose, wall time aside. */
    const char *wa = strstr(a.out, "\"wall_time_s\""), *wb = strstr(b.out, "\"wall_time_s\"");
    cr_assert(wa && wb);
    cr_expect(wa - a.out == wb - b.out && !strncmp(a.out, b.out, (size_t) (wa - a.out)), "reports differ before wall_time_s");
    result_free(&a);
    result_free(&b);
    result c = run(110, "run", "scenarios/gateway_prefix_cache.ini", "--no-store", "--set", "sim.requests=300", "--set",
                   "pool chat.block_tokens=32", "--set", "pool chat.scheduler=chunked", "--set", "sim.warmup=50", "--verbose", NULL);
    cr_assert_eq(c.rc, 0, "%s", c.err);
    cr_expect(strstr(c.err, "[pool chat] block_tokens = 32 (set)") != NULL, "%s", c.err);
    cr_expect(strstr(c.err, "[pool chat] chunk_tokens = 512 (default)") != NULL, "%s", c.err);
    cr_expect(strstr(c.err, "[sim] warmup = 50 (set)") != NULL, "%s", c.err);
    result_free(&c);
}
