/* test_llm_util.c -- an LLM pool's utilisation is the stepping share of its
 * replicas, and mfu_busy / mbu_busy are MFU and MBU over that stepping time:
 * mfu = mfu_busy x utilization exactly (without fleet keys the window's
 * replica-seconds are replicas x window), and at a light load the replicas
 * idle (utilisation well below 1) while their steps' own MFU stays put. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tbin.h"
#include "tcli.h"

static void setup(void) { tcli_setup("/tmp/latsim_lutil_", NULL); }
TestSuite(llm_util, .init = setup, .fini = tcli_teardown);

/* The chat pool's metric NAME from `run --json` of chat_plan.ini at RATE req/s. */
static void pool_metrics(const char *rate, double *util, double *mfu, double *mbu, double *mfu_b, double *mbu_b)
{
    char set[64];
    snprintf(set, sizeof set, "workload.rate=%s", rate);
    result r = run(110, "run", "scenarios/chat_plan.ini", "--no-store", "--json", "--set", set, "--set", "sim.requests=3000", NULL);
    cr_assert_eq(r.rc, 0, "rc %d: %s", r.rc, r.err);
    json_t *j = json_loads(r.out, 0, NULL);
    cr_assert(j);
    json_t *p = json_object_get(json_object_get(j, "pools"), "chat");
    cr_assert(p);
    *util = json_number_value(json_object_get(p, "busy_share"));
    *mfu = json_number_value(json_object_get(p, "mfu"));
    *mbu = json_number_value(json_object_get(p, "mbu"));
    *mfu_b = json_number_value(json_object_get(p, "mfu_busy"));
    *mbu_b = json_number_value(json_object_get(p, "mbu_busy"));
    json_decref(j);
    result_free(&r);
}

Test(llm_util, busy_mfu_times_utilisation_is_mfu, .timeout = 120)
{
    double u, f, b, fb, bb, u2, f2, b2, fb2, bb2;
    pool_metrics("50", &u, &f, &b, &fb, &bb);
    pool_metrics("0.5", &u2, &f2, &b2, &fb2, &bb2);
    /* JSON prints 6 significant digits: products agree to about 1e-5. */
    cr_expect(fabs(fb * u - f) <= 2e-5 * f, "mfu %.6g != mfu_busy %.6g x utilization %.6g", f, fb, u);
    cr_expect(fabs(bb * u - b) <= 2e-5 * b, "mbu %.6g != mbu_busy %.6g x utilization %.6g", b, bb, u);
    cr_expect(fabs(fb2 * u2 - f2) <= 2e-5 * f2, "light: mfu %.6g != %.6g x %.6g", f2, fb2, u2);
    cr_expect(fabs(bb2 * u2 - b2) <= 2e-5 * b2, "light: mbu %.6g != %.6g x %.6g", b2, bb2, u2);
    cr_expect(fb > 0 && fb <= 1 && bb > 0 && bb <= 1, "busy shares in (0, 1]: %g %g", fb, bb);
    /* 0.5 req/s on 3 replicas that serve about 50 (a request decodes for seconds): they idle a good share of the time. */
    cr_expect(u2 < 0.8 * u, "utilisation at 0.5 req/s %g, at 50 req/s %g", u2, u);
    cr_expect(f2 < fb2, "light: MFU over the window %g below the steps' own %g", f2, fb2);
}
