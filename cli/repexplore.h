/* repexplore.h -- `latsim report explore [ID] --html OUT.html`: the review page
 * of a stored exploration. */
#ifndef LATSIM_CLI_REPEXPLORE_H
#define LATSIM_CLI_REPEXPLORE_H

#include <stdint.h>
#include "cliopt.h"
typedef struct report_opts {
    const char *html;
    int reps, jobs;
    int band;                 /* --band */
    uint64_t seed;
} report_opts;

/* Writes the page of the exploration A names (the last one without an ID)
 * to O->html.  Returns the exit status (after one line when not 0). */
int explore_report(const cli_args *a, const report_opts *o);

#endif
