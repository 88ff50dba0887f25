/* trace.h -- arrival traces read from CSV files (libcsv).
 *
 * A trace is a CSV file with a header row.  One column gives arrival times, in
 * seconds, milliseconds, or datetimes as in the Azure LLM inference traces
 * ("2023-11-16 18:15:46.6805900", read as UTC).  Optional columns give the prompt
 * and output token counts of each request.  Times are shifted so that the first
 * row arrives at 0 and must not decrease from row to row.
 */
#ifndef LATSIM_TRACE_H
#define LATSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { TRACE_SECONDS, TRACE_MILLISECONDS, TRACE_DATETIME } trace_time_format;

typedef struct trace_opts {
    const char *path;            /* CSV file */
    const char *time_column;     /* header name of the arrival-time column */
    trace_time_format format;
    const char *prompt_column;   /* header name or NULL: no prompt tokens */
    const char *output_column;   /* header name or NULL: no output tokens */
} trace_opts;

typedef struct trace {
    size_t n;            /* rows */
    double *t;           /* arrival time of each row, seconds since the first row */
    int32_t *prompt;     /* prompt tokens per row, or NULL */
    int32_t *output;     /* output tokens per row, or NULL */
} trace;

/* Loads the whole trace.  Returns 0, or -1 with "PATH:LINE: message" (or "PATH: message"
 * when no line applies) in ERR; T is then empty and needs no trace_free. */
int trace_load(trace *t, const trace_opts *o, char *err, size_t errlen);
void trace_free(trace *t);

/* Parses "seconds" | "milliseconds" | "datetime"; returns -1 on anything else. */
int trace_format_parse(const char *s, trace_time_format *out);

/* Reads one numeric column of a CSV file with a header (used by empirical()).
 * Returns 0 with a malloc'ed array in *VALUES, or -1 with "PATH:LINE: message". */
int csv_read_column(const char *path, const char *column, double **values, size_t *n,
                    char *err, size_t errlen);

#endif
