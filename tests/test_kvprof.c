/* test_kvprof.c -- a decode pool's KV link priced by a measured send/recv
 * profile (kv_link_profile, sim/llm/kvlink.c), end to end through the program:
 * the real Vidur H100 DGX send_recv.csv (tests/data/vidur_h100_dgx_send_recv.csv,
 * an unchanged copy of ../shared/data/profiles/vidur/network/h100_dgx/send_recv.csv,
 * MIT, tests/data/vidur_LICENSE) is imported by `latsim calib import vidur` into
 * a scratch database; a lone request's transfer of B bytes must take the
 * profile's time at B: the medians of the CSV rows with devices_per_node = D
 * (the later row of a repeated size), linear in log(size) between the two
 * measured sizes around B, past the largest S the bandwidth between S/2 and S --
 * computed here from the CSV itself, to the nanosecond the event clock rounds
 * to. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "run/sim.h"
#include "tcli.h"
#include "tsim.h"

#define SEND_RECV "tests/data/vidur_h100_dgx_send_recv.csv"
#define KV_BYTES_TOKEN 131072.0   /* llama-3-8b: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes */

static void setup(void)
{
    tcli_setup("/tmp/latsim_kvprof_", "k.db");
    cimp_link_register();   /* in-process runs read stored profiles as the program does */
}

TestSuite(kvprof, .init = setup, .fini = tcli_teardown);

/* The profile of the CSV's rows with devices_per_node DPN, sizes ascending. */
typedef struct prof {
    int n;
    double b[1100], ms[1100];
} prof;

static void read_csv(int dpn, prof *p)
{
    FILE *f = fopen(SEND_RECV, "r");
    cr_assert_not_null(f, "cannot open " SEND_RECV);
    char line[1024];
    int cmed = -1, cw = -1, csz = -1, cdpn = -1;
    p->n = 0;
    for (int row = 0; fgets(line, sizeof line, f); row++) {
        char *fld[32];
        int nf = 0;
        line[strcspn(line, "\r\n")] = '\0';
        for (char *s = line; nf < 32;) {   /* split on commas, empty fields kept */
            fld[nf++] = s;
            char *c = strchr(s, ',');
            if (!c) break;
            *c = '\0';
            s = c + 1;
        }
        if (row == 0) {
            for (int i = 0; i < nf; i++) {
                if (!strcmp(fld[i], "time_stats.send_recv.median")) cmed = i;
                if (!strcmp(fld[i], "num_workers")) cw = i;
                if (!strcmp(fld[i], "size")) csz = i;
                if (!strcmp(fld[i], "devices_per_node")) cdpn = i;
            }
            cr_assert(cmed >= 0 && cw >= 0 && csz >= 0 && cdpn >= 0, "header of " SEND_RECV);
            continue;
        }
        if (atoi(fld[cdpn]) != dpn || atoi(fld[cw]) != 2) continue;
        double b = atof(fld[csz]), ms = atof(fld[cmed]);
        int i = 0;
        while (i < p->n && p->b[i] < b) i++;
        if (i < p->n && p->b[i] == b) { p->ms[i] = ms; continue; }   /* a repeated size: the later row */
        cr_assert_lt(p->n, 1100);
        memmove(&p->b[i + 1], &p->b[i], (size_t) (p->n - i) * sizeof p->b[0]);
        memmove(&p->ms[i + 1], &p->ms[i], (size_t) (p->n - i) * sizeof p->ms[0]);
        p->b[i] = b;
        p->ms[i] = ms;
        p->n++;
    }
    fclose(f);
}

/* The profile's time at B bytes, ms (by hand: no latsim code). */
static double at(const prof *p, double b)
{
    int n = p->n;
    if (b <= p->b[0]) return p->ms[0];
    if (b > p->b[n - 1]) {   /* past the largest size S: the bandwidth between S/2 and S */
        double s = p->b[n - 1], t1 = p->ms[n - 1], t0 = at(p, s / 2);
        return t1 > t0 ? t1 + (b - s) * (t1 - t0) / (s / 2) : t1 * b / s;
    }
    int i = 1;
    while (p->b[i] < b) i++;
    return p->ms[i - 1] + (log(b) - log(p->b[i - 1])) / (log(p->b[i]) - log(p->b[i - 1])) * (p->ms[i] - p->ms[i - 1]);
}

/* Imports the CSV as a Vidur network profile (cluster h100_dgx) into db. */
static void import(void)
{
    char path[512];
    size_t len;
    char *csv = slurp_or_fail(SEND_RECV, &len);
    write_file("v/network/h100_dgx/send_recv.csv", csv, path, sizeof path);
    free(csv);
    write_file("v/compute/README", "no operator profiles: the network only\n", path, sizeof path);
    char vdir[256];
    snprintf(vdir, sizeof vdir, "%s/v", dir);
    result r = run_db(60, "calib", "import", "vidur", vdir, "--gpu", "h100", NULL);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "imported 1988 measurements"), "%s", r.out);
    result_free(&r);
}

/* A lone request's kv_transfer_ms (3 requests 1000 s apart, prompt P) with the
 * decode pool's LINK keys; RC its exit status, ERR its stderr (when not NULL). */
static double transfer_ms(int P, const char *link, int want_rc, char *err, size_t errlen)
{
    char text[2048], path[512];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(%d)\noutput_tokens = const(5)\ntarget = pre\n"
             "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\nrole = prefill\nnext = dec\n"
             "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\nrole = decode\n%s\n", P, link);
    write_file("s.ini", text, path, sizeof path);
    result r = run_scenario(60, path, "--json", "--no-store", NULL);
    cr_assert_eq(r.rc, want_rc, "%s", r.err);
    if (err) snprintf(err, errlen, "%s", r.err);
    double v = NAN;
    const char *d = strstr(r.out, "\"dec\": {");
    const char *k = d ? strstr(d, "\"kv_transfer_ms\": ") : NULL;
    if (k) v = atof(k + strlen("\"kv_transfer_ms\": "));
    result_free(&r);
    return v;
}

/* The same in-process, at full precision: the scenario's [sim] cost_db is the
 * scratch database. */
static double transfer_ms_exact(int P, const char *link)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 3\nwarmup = 0\ncost_db = %s\n[workload]\narrival = constant\nrate = 0.001\n"
             "prompt_tokens = const(%d)\noutput_tokens = const(5)\ntarget = pre\n"
             "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\nrole = prefill\nnext = dec\n"
             "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = roofline\nrole = decode\n%s\n",
             db, P, link);
    sim_result res;
    tsim_run("/tmp/test_kvprof.ini", text, 1, &res);
    cr_assert_eq(tsim_n(&res, "served"), 3);
    double v = tsim_pv(&res, 1, "kv_transfer_ms");
    cr_expect(isnan(tsim_pv(&res, 1, "kv_link_gbs")), "no bandwidth with a profile");
    sim_result_free(&res);
    return v;
}

Test(kvprof, transfer_takes_the_measured_time)
{
    import();
    cr_expect_eq(db_count(db, "SELECT count(*) FROM calib_meas WHERE source = 'vidur' AND what = 'send_recv'"
                              " AND gpu = 'h100_dgx' AND tp = 2 AND name = 'dpn1'"), 994);
    prof p1, p2;
    read_csv(1, &p1);
    read_csv(2, &p2);
    cr_assert_eq(p1.n, 993);   /* 994 rows, one size measured twice */
    cr_assert_eq(p2.n, 993);
    /* 300 tokens: 39.3 MB, between two measured sizes; 1000: 131 MB, past the
     * largest (67.1 MB); 1: 131 kB, near the small end; the latency is the
     * profile's, so kv_link_latency_ms plays no part. */
    const int P[] = { 300, 1000, 1 };
    for (int i = 0; i < 3; i++) {
        double b = P[i] * KV_BYTES_TOKEN;
        double got = transfer_ms_exact(P[i], "kv_link_profile = h100_dgx");
        cr_expect(fabs(got - at(&p1, b)) < 2e-6, "P %d, dpn1: %.9f ms, the profile %.9f", P[i], got, at(&p1, b));
        got = transfer_ms_exact(P[i], "kv_link_profile = h100_dgx\nkv_link_profile_dpn = 2");
        cr_expect(fabs(got - at(&p2, b)) < 2e-6, "P %d, dpn2: %.9f ms, the profile %.9f", P[i], got, at(&p2, b));
    }
    /* The program (its own registration, --db): the same, to the 6 digits of --json. */
    double got = transfer_ms(300, "kv_link_profile = h100_dgx", 0, NULL, 0), want = at(&p1, 300 * KV_BYTES_TOKEN);
    cr_expect(fabs(got - want) < 1e-5 * want, "latsim run: %.9f ms, the profile %.9f", got, want);
}

Test(kvprof, errors)
{
    char err[1024];
    /* Nothing stored (no import): one line naming the key and how to import one. */
    transfer_ms(300, "kv_link_profile = h100_dgx", 2, err, sizeof err);
    cr_expect(strstr(err, "kv_link_profile: no send_recv profile of 'h100_dgx' (2 GPUs, devices_per_node 1)"), "%s", err);
    cr_expect(strstr(err, "latsim calib import vidur"), "%s", err);
    cr_expect_eq(lines(err), 1, "%s", err);
    import();
    transfer_ms(300, "kv_link_profile = h100_dgx\nkv_link_profile_dpn = 4", 2, err, sizeof err);
    cr_expect(strstr(err, "devices_per_node 4"), "%s", err);
    transfer_ms(300, "kv_link_profile = h100_dgx\nkv_link_gbs = 10", 2, err, sizeof err);
    cr_expect(strstr(err, "kv_link_gbs: kv_link_profile prices the transfers"), "%s", err);
}
