/* provenance.h -- what every number stands on: the cost model of each LLM
 * pool of a report (kind, stored id, source, measured error, range), printed
 * by run, sweep, plan, check and compare as a table line (the JSON member:
 * latsim/prov.h),
 * and the one warning on stderr, once per command, when a pool's step times
 * are the uncalibrated datasheet roofline (docs/calibration.md, "What a
 * prediction stands on"). */
#ifndef LATSIM_PROVENANCE_H
#define LATSIM_PROVENANCE_H

#include <stddef.h>
#include <stdio.h>
#include "latsim/prov.h"
#include "latsim/report.h"

/* The cost model of pool SCOPE of R in words into BUF ("roofline
 * (datasheet, uncalibrated)", "fitted 3 (steps-csv, cv_mape 4.2 %,
 * interpolated)").  Returns 1 when it is the uncalibrated roofline, 0 for any
 * other model, -1 when SCOPE has no cost model (not an LLM pool; BUF empty). */
int prov_describe(const report *r, const char *scope, char *buf, size_t n);

/* Prints one line per LLM pool of R to OUT: "INDENTcost model [pool P]: ...".
 * Returns the number of pools using the uncalibrated roofline. */
int prov_table(const report *r, const char *indent, FILE *out);

/* Prints the warning line on stderr when a pool of R uses the uncalibrated
 * roofline, at most once per process (a command, however many runs it makes).
 * Returns 1 when a pool of R does (warned now or before), else 0. */
int prov_warn(const report *r);

/* The warning line itself (without "latsim: warning: " and the newline). */
extern const char prov_warning[];

#endif
