/* fuzz_targets.h -- fuzz targets over one input file (see targets.c). */
#ifndef LATSIM_FUZZ_TARGETS_H
#define LATSIM_FUZZ_TARGETS_H

/* Each returns 0 when the input was handled (accepted or refused with a
 * one-line message), -1 when a message was not one line. */
int fuzz_scenario(const char *path);
int fuzz_trace_csv(const char *path);
int fuzz_trace_jsonl(const char *path);
int fuzz_observed(const char *path);
int fuzz_hfcfg(const char *path);
int fuzz_englog(const char *path);
int fuzz_meta(const char *path);

#endif
