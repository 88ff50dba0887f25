/* test_obs_refusals.c -- Criterion tests of the third hardening issue's observed
 * runs that imported but could not be replayed (issue 30): a run of one
 * request, a burst whose requests all arrive at one instant (vLLM's
 * request_rate inf without start times), class labels the scenario lacks, and
 * TTFTs of 0 (which a fit cannot use) are refused at import, in one line
 * naming the user's file and line (never the replay's temporary trace), the
 * database byte for byte what it was; replay refuses the same runs the same
 * way.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_h3obs_", "runs.db"); }

TestSuite(obs_refuse_import, .init = setup, .fini = tcli_teardown);

#define REAL_INI "scenarios/replay_vllm_rtx4090.ini"
#define GOOD "tests/data/observed/shapes/generic.csv"
#define HDR "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms\n"
#define HDRC "arrival_s,input_tokens,output_tokens,ttft_ms,e2e_ms,class\n"

/* Imports GOOD so that the database exists; returns its bytes (*N). */
static char *seed_db(size_t *n)
{
    result r = run_db(60, "calib", "import", "observed", "tests/data/observed/vllm_rtx4090_llama31_8b_requests.jsonl",
                      "--scenario", REAL_INI, NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
    return slurp_or_fail(db, n);
}

/* FILE (dir/NAME holding TEXT) through SCENARIO: import and replay both exit
 * 2, one line holding WANT and the file's name, never the temporary trace;
 * the database unchanged.  With REPLAY_OK the replay is expected to succeed. */
static void refused(const char *name, const char *text, const char *scenario, const char *want, int replay_ok)
{
    char p[256];
    write_file(name, text, p, sizeof p);
    size_t n;
    char *before = seed_db(&n);
    result r = run_db(60, "calib", "import", "observed", p, "--scenario", scenario, NULL);
    expect_one_line(&r, 2, want, name);
    cr_expect(strstr(r.err, name) != NULL, "%s: the message does not name the file: %s", name, r.err);
    cr_expect(strstr(r.err, "latsim-replay") == NULL, "%s: names the temporary trace: %s", name, r.err);
    cr_expect(same_bytes(db, before, n), "%s: the database changed", name);
    result_free(&r);
    r = run_db(60, "replay", p, "--scenario", scenario, NULL);
    if (replay_ok) cr_expect_eq(r.rc, 0, "%s: replay: %s", name, r.err);
    else {
        expect_one_line(&r, 2, want, name);
        cr_expect(strstr(r.err, "latsim-replay") == NULL, "%s: names the temporary trace: %s", name, r.err);
    }
    result_free(&r);
    free(before);
}

Test(obs_refuse_import, one_request)
{
    refused("one.csv", HDR "0.0,512,4,120.5,150.5\n", REAL_INI, "one.csv: 1 request: a replay needs at least 2", 0);
    refused("one.jsonl", "{\"arrival_s\": 3.5, \"input_tokens\": 100, \"output_tokens\": 10, \"ttft_ms\": 50, \"e2e_ms\": 90}\n",
            REAL_INI, "one.jsonl: 1 request", 0);
}

/* Bursts of 2, 3 and 200 requests at one instant (0 s, and 17.25 s: the
 * instant need not be the origin). */
Test(obs_refuse_import, burst_at_one_instant)
{
    refused("b2.csv", HDR "0,512,4,120.5,150.5\n0,512,4,130.5,160.5\n", REAL_INI,
            "b2.csv: all 2 requests arrive at the same instant", 0);
    refused("b3.csv", HDR "17.25,512,4,120.5,150.5\n17.25,512,4,130.5,160.5\n17.25,256,8,140,190\n", REAL_INI,
            "b3.csv: all 3 requests arrive at the same instant", 0);
    char big[20000] = HDR;
    for (int i = 0; i < 200; i++) {
        size_t l = strlen(big);
        snprintf(big + l, sizeof big - l, "0,%d,%d,%d,%d\n", 100 + i, 5 + i % 7, 100 + i, 400 + i);
    }
    refused("b200.csv", big, REAL_INI, "b200.csv: all 200 requests arrive at the same instant", 0);
    /* Two instants are a workload: imported. */
    char p[256];
    write_file("two.csv", HDR "0,512,4,120.5,150.5\n0,512,4,130.5,160.5\n0.5,256,8,140,190\n", p, sizeof p);
    result r = run_db(60, "calib", "import", "observed", p, "--scenario", REAL_INI, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* A scenario with classes: a label it lacks, or a request without a label,
 * is refused naming the request's line of the user's file. */
Test(obs_refuse_import, class_labels)
{
    char ini[256], text[8192];
    size_t n;
    char *base = slurp_or_fail(REAL_INI, &n);
    /* The scenario's relative trace path: resolved against its own folder. */
    char cwd[1024];
    cr_assert(getcwd(cwd, sizeof cwd));
    char *t = strstr(base, "../tests/");
    cr_assert(t, "the scenario's trace path moved");
    snprintf(text, sizeof text, "%.*s%s/%s[class chat]\nshare = 0.5\n[class batch]\nshare = 0.5\n", (int) (t - base), base, cwd,
             t + 3);
    free(base);
    write_file("cls.ini", text, ini, sizeof ini);
    refused("c1.csv", HDRC "0,512,4,120.5,150.5,chat\n0.5,512,4,130.5,160.5,zzz\n1,256,8,140,190,chat\n", ini,
            "c1.csv:3: class 'zzz' is not a [class] of", 0);
    refused("c2.csv", HDRC "0,512,4,120.5,150.5,chat\n0.5,512,4,130.5,160.5,batch\n1,256,8,140,190,\n", ini,
            "c2.csv:4: the request carries no class", 0);
    /* Every label known: imported. */
    char p[256];
    write_file("c3.csv", HDRC "0,512,4,120.5,150.5,chat\n0.5,512,4,130.5,160.5,batch\n1,256,8,140,190,chat\n", p,
               sizeof p);
    result r = run_db(60, "calib", "import", "observed", p, "--scenario", ini, NULL);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    result_free(&r);
}

/* TTFT = 0: refused at import (a fit's relative error would be NaN), named by
 * line; a replay of the file still runs. */
Test(obs_refuse_import, ttft_zero)
{
    refused("t0.csv", HDR "0,512,4,120,150\n0.5,512,4,0,160.5\n1,256,8,140,190\n", REAL_INI,
            "t0.csv:3: ttft_ms = 0: a first token needs a prefill", 1);
    refused("t1.csv", HDR "0,512,4,0,150\n0.5,512,4,0,160.5\n1,256,8,0,190\n", REAL_INI, "t1.csv:2: ttft_ms = 0", 1);
}
