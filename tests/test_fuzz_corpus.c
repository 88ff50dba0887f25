/* test_fuzz_corpus.c -- every file of the fuzzing corpus (tests/fuzz/: seeds, the
 * inputs that crashed latsim in issue 6, and AFL++ findings once fixed) goes
 * through its fuzz target (tests/fuzz/targets.c), so a fixed crash stays fixed
 * in plain `make test` and under the sanitizers.  Each file must be handled:
 * loaded or refused with a one-line message, without a crash, abort or leak;
 * the suite's timeout bounds a hang. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "fuzz/fuzz_targets.h"

/* Runs TARGET over every file of tests/fuzz/DIR; returns how many. */
static int replay(const char *dir, int (*target)(const char *))
{
    char path[512];
    snprintf(path, sizeof path, "tests/fuzz/%s", dir);
    DIR *d = opendir(path);
    cr_assert_not_null(d, "cannot read %s (tests run from the repository root)", path);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "tests/fuzz/%s/%s", dir, e->d_name);
        cr_expect_eq(target(path), 0, "%s: an error message was not one line", path);
        n++;
    }
    closedir(d);
    return n;
}

Test(fuzz_corpus, scenarios)
{
    cr_expect_geq(replay("scenario", fuzz_scenario), 20);
}

Test(fuzz_corpus, csv_traces)
{
    cr_expect_geq(replay("csv", fuzz_trace_csv), 5);
}

Test(fuzz_corpus, observed_runs)
{
    cr_expect_geq(replay("observed", fuzz_observed), 6);
}

Test(fuzz_corpus, hf_configs)
{
    cr_expect_geq(replay("hf", fuzz_hfcfg), 4);
}

Test(fuzz_corpus, jsonl_traces)
{
    cr_expect_geq(replay("jsonl", fuzz_trace_jsonl), 2);
}

Test(fuzz_corpus, engine_logs)
{
    cr_expect_geq(replay("englog", fuzz_englog), 6);
}

Test(fuzz_corpus, server_metadata)
{
    cr_expect_geq(replay("meta", fuzz_meta), 5);
}
