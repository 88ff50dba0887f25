/* main.c -- AFL++ / replay driver: `fuzz_main TARGET FILE...` runs each FILE
 * through TARGET (scenario, csv or jsonl; see targets.c) and aborts when a
 * target reports a message that is not one line, so that AFL++ records it as a
 * crash.  Exit 0 when every file was handled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s scenario|csv|jsonl|observed|hf|englog|meta FILE...\n", argv[0]);
        return 2;
    }
    int (*target)(const char *) = !strcmp(argv[1], "scenario") ? fuzz_scenario
                                  : !strcmp(argv[1], "csv")    ? fuzz_trace_csv
                                  : !strcmp(argv[1], "jsonl")  ? fuzz_trace_jsonl
                                  : !strcmp(argv[1], "observed") ? fuzz_observed
                                  : !strcmp(argv[1], "hf")     ? fuzz_hfcfg
                                  : !strcmp(argv[1], "englog") ? fuzz_englog
                                  : !strcmp(argv[1], "meta")   ? fuzz_meta : NULL;
    if (!target) {
        fprintf(stderr, "%s: unknown target '%s'\n", argv[0], argv[1]);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (target(argv[i]) != 0) {
            fprintf(stderr, "%s: %s: an error message is not one line\n", argv[0], argv[i]);
            abort();
        }
    return 0;
}
