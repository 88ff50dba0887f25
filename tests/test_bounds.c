/* test_bounds.c -- Criterion tests of the third hardening issue's bounds
 * and small things (issue 30): an [explore] slo term the scenario refuses is
 * attributed to the grid's file:line (not "--set:"); exclude rules that match
 * every configuration say that nothing was run; a hexadecimal number ("0x10",
 * which strtod takes for 16) is not an arrival time or a token count, in an
 * observed run's CSV or a trace's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h3small_", "runs.db"); }

TestSuite(bounds, .init = setup, .fini = tcli_teardown);

static const char *GEN =
    "[sim]\nrequests = 100\n[workload]\nrate = 10\n[pool cpu]\nservers = 2\nservice_ms = exp(mean=50)\n";

Test(bounds, explore_slo_attributed)
{
    static const char *const terms[] = { "ttft_p99_ms=abc", "e2e_p99_ms=-5", "nosuch_p99_ms=10" };
    for (size_t i = 0; i < 3; i++) {
        char text[1024], g[256];
        snprintf(text, sizeof text, "%s[explore]\npool.cpu.servers = 2,3\nslo = %s\n", GEN, terms[i]);
        write_file("g.ini", text, g, sizeof g);
        result r = run_db(30, "explore", g, NULL);
        expect_one_line(&r, 2, "g.ini:10: [explore] slo:", terms[i]);
        cr_expect(strstr(r.err, "--set") == NULL, "%s", r.err);
        cr_expect_neq(access(db, F_OK), 0);
        result_free(&r);
    }
}

Test(bounds, exclude_all_says_nothing_ran)
{
    char text[1024], g[256];
    snprintf(text, sizeof text, "%s[explore]\npool.cpu.servers = 2,3\nexclude = pool.cpu.servers=2\nexclude2 = pool.cpu.servers=3\n",
             GEN);
    write_file("g.ini", text, g, sizeof g);
    result r = run_db(60, "explore", g, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "nothing was run: the exclude rules match every configuration") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "no configuration meets the SLO") == NULL, "%s", r.out);
    result_free(&r);
    /* One configuration left: it runs, and the message is not given. */
    snprintf(text, sizeof text, "%s[explore]\npool.cpu.servers = 2,3\nexclude = pool.cpu.servers=2\n", GEN);
    write_file("g2.ini", text, g, sizeof g);
    r = run_db(60, "explore", g, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "nothing was run") == NULL, "%s", r.out);
    result_free(&r);
}

Test(bounds, hex_numbers_refused)
{
    static const char *const hex[] = { "0x10", "0X1p3", "-0x1" };
    for (size_t i = 0; i < 3; i++) {
        char text[512], p[256], want[64];
        snprintf(text, sizeof text, "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms\n0,512,4,120.5,150.5\n"
                 "%s,512,4,130.5,160.5\n1,256,8,140,190\n", hex[i]);
        write_file("h.csv", text, p, sizeof p);
        result r = run_db(30, "calib", "import", "observed", p, "--scenario", "scenarios/replay_vllm_rtx4090.ini", NULL);
        snprintf(want, sizeof want, "h.csv:3: arrival_s: '%s' is not a number", hex[i]);
        expect_one_line(&r, 2, want, hex[i]);
        cr_expect_neq(access(db, F_OK), 0);
        result_free(&r);
        /* A trace's time column. */
        char t[256], s[256], sc[512];
        snprintf(text, sizeof text, "TIMESTAMP\n0\n%s\n2\n3\n", hex[i]);
        write_file("t.csv", text, t, sizeof t);
        snprintf(sc, sizeof sc, "[sim]\nrequests = 10\n[workload]\narrival = trace\ntrace = %s\ntime_format = seconds\n"
                 "[pool cpu]\nservice_ms = exp(mean=5)\n", t);
        write_file("s.ini", sc, s, sizeof s);
        r = run_scenario(30, s, NULL);
        expect_one_line(&r, 2, "t.csv:3", hex[i]);
        result_free(&r);
    }
}
