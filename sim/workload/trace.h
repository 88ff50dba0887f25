/* trace.h -- traces read from CSV files (core/csvread.h) or JSON lines (jansson).
 *
 * A trace is a CSV file with a header row.  One column gives arrival times, in
 * seconds, milliseconds, or datetimes as in the Azure LLM inference traces
 * ("2023-11-16 18:15:46.6805900", read as UTC).  Optional columns give the prompt
 * and output token counts of each request, its class and its complexity score.
 * Times are shifted so that the first row arrives at 0 and must not decrease
 * from row to row.
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
    const char *class_column;    /* header (CSV) or field (JSON lines) name of each row's class, or NULL */
    const char *complexity_column; /* header (CSV) or field (JSON lines) name of each row's complexity score in
                                      [0, 1] (an empty CSV field or JSON null: none), or NULL */
    const char *adapter_column;  /* header (CSV) or field (JSON lines) name of each row's LoRA adapter number
                                    (0: the base model, 1..N; an empty CSV field or JSON null: none), or NULL */
    int jsonl;                   /* 1: JSON lines (Mooncake), else CSV */
} trace_opts;

typedef struct trace {
    size_t n;            /* rows */
    double *t;           /* arrival time of each row, seconds since the first row */
    int32_t *prompt;     /* prompt tokens per row, or NULL */
    int32_t *output;     /* output tokens per row, or NULL */
    int64_t *hash;       /* JSON lines: every row's block hash ids, row after row (one flat array), or NULL */
    size_t *hash_off;    /* row i's ids are hash[hash_off[i] .. hash_off[i+1]-1] (n + 1 entries), or NULL */
    int32_t *label;      /* class column: index into labels per row, or NULL */
    char **labels;       /* distinct class-column values, in order of first appearance */
    size_t nlabels;
    double *score;       /* complexity column: score in [0, 1] per row, NAN for none; or NULL */
    int32_t *adapter;    /* adapter column: per row the adapter it names (0: the base model, 1..N), -1 for
                            none; or NULL */
    int32_t adapter_max; /* the largest adapter the rows name (-1: none; with adapter only) */
    char *adapter_at;    /* "PATH:LINE: column 'NAME'" of the first row naming adapter_max (for messages), or NULL */
} trace;

/* Loads the whole trace (O->time_column NULL: no times, t all 0) (CSV, or JSON lines when O->jsonl: one object per line
 * with "timestamp" (ms), "input_length", "output_length", optional "hash_ids"
 * (array of integers >= 0), and the class field when O->class_column is set,
 * the complexity field (a number in [0, 1] or null) when O->complexity_column is,
 * the adapter field (a whole number >= 0 or null) when O->adapter_column is;
 * the time and token options are ignored).  Returns 0, or -1 with "PATH:LINE: message" (or "PATH: message"
 * when no line applies) in ERR; T is then empty and needs no trace_free. */
int trace_load(trace *t, const trace_opts *o, char *err, size_t errlen);
void trace_free(trace *t);

/* The JSON-lines reader behind trace_load (trace_jsonl.c, jansson). */
int trace_load_jsonl(trace *t, const trace_opts *o, char *err, size_t errlen);

/* Sets T's adapter_at to "PATH:LINE: column 'COLUMN'" (LINE <= 0: no line).
 * Returns 0, or -1 when out of memory. */
int trace_note_adapter(trace *t, const char *path, long line, const char *column);

/* Index of label S in T's labels, added when new.  Returns -1 when out of memory. */
int32_t trace_intern_label(trace *t, const char *s);

/* Keeps the rows of T arriving in [FROM_S, FROM_S + LEN_S) (seconds of the
 * trace's clock; LEN_S may be INFINITY), every column with them, the times
 * shifted so that the first kept row arrives at 0.  Cannot fail (the arrays
 * are compacted in place); T may end up with no rows. */
void trace_window(trace *t, double from_s, double len_s);

/* The busiest window of LEN_S seconds of T's arrival times: the start of the
 * one holding the most rows (the earliest such; a window starts at a row's
 * arrival) in *FROM_S, its rows in *ROWS.  A trace shorter than LEN_S: the
 * whole trace.  Returns 0, or -1 when T has no rows. */
int trace_peak(const trace *t, double len_s, double *from_s, size_t *rows);

/* Parses "seconds" | "milliseconds" | "datetime"; returns -1 on anything else. */
int trace_format_parse(const char *s, trace_time_format *out);

#endif
