/* cobsrd.h -- the readers of observed runs' internals shared by their files:
 * the reader's state, the checks every request passes, the JSON value readers,
 * and each format family's reader.
 *
 * The readers are three files: cobsread.c (the reader's state and checks,
 * JSON values and JSON lines, detection, the formats as rows, cobs_read and
 * the statistics), cobscsv.c (the CSV formats) and cobsjson.c (the
 * one-document JSON formats: vllm, guidellm).  Internal to them.
 */
#ifndef LATSIM_COBSRD_H
#define LATSIM_COBSRD_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "cobserved.h"

#define COBS_MAX_MS 1e9          /* longest time accepted, ms (11.6 days): beyond it, a unit error */
#define COBS_MAX_TOKENS 100000000 /* most tokens per request accepted */
#define MAX_LINE (1 << 22)       /* longest line accepted, bytes (an itl_ms list of 100 000 gaps fits) */

/* One read in progress: the file, the run being filled, the error. */
typedef struct rd {
    const char *path;         /* the file, for messages */
    const cobs_read_opts *o;  /* the options */
    cobs_run *run;            /* what is being filled */
    size_t cap;               /* capacity of run->req or run->lvl */
    char *err;                /* the caller's message buffer */
    size_t errlen;
    int status;               /* 0 so far; 2 bad input; 1 out of memory */
    size_t skipped;           /* aiperf: errored or cancelled records skipped */
} rd;

/* What a reader calls each field of a request, for messages ("ttfts" and an
 * index for one JSON document; a column or key name otherwise). */
typedef struct names {
    const char *arrival, *input, *output, *ttft, *e2e, *queue, *itl;
} names;

/* A CSV file being read (cobscsv.c): its current row and what the format keeps. */
typedef struct csv_rows {
    rd *r;
    char **f;                 /* the current row's fields (NUL-terminated copies) */
    size_t n, cap;
    long line;                /* line being parsed */
    long row_line;            /* line the current row began on */
    int (*row)(struct csv_rows *c);   /* called for every row (the header first) */
    int failed;
    /* what the format's row function keeps */
    int col[16];              /* header column index of each wanted column, -1 absent */
    size_t ncols;             /* header width */
    int header_done;
    void *arg;
} csv_rows;


/* ---- cobsread.c -------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
int bad(rd *r, long line, const char *fmt, ...);

int oom(rd *r);

__attribute__((format(printf, 2, 3)))
void add_note(cobs_run *run, const char *fmt, ...);

/* A new, zeroed request at the end of run->req (queue NAN).  NULL when full or
 * out of memory (status set). */
cobs_req *new_req(rd *r, long line);

/* "NAME" or "NAME[I]" (I >= 0) into BUF. */
const char *fld(char *buf, size_t n, const char *name, long index);

/* A time of field NAME, ms: finite, >= 0, at most COBS_MAX_MS.  Returns 0 or -1 (message set). */
int check_ms(rd *r, long line, const char *name, long index, double v, const char *unit);

/* Checks request Q as read (times in ms, arrival in s, any origin).  N names
 * its fields; INDEX >= 0 for a list entry of one JSON document (messages then
 * name no line but NAME[INDEX]), else messages name Q's line.
 * Returns 0 or -1 (message set). */
int check_req(rd *r, const cobs_req *q, const names *N, long index);

/* 1 when V is a JSON number, 0 otherwise. */
int is_num(const json_t *v);

/* A whole number >= 0 (an integer, or a real without a fraction) from V into
 * *OUT.  Returns 0, or -1 with the message for field NAME (FIELD printed). */
int j_tokens(rd *r, long line, const json_t *v, const char *name, int32_t *out);

/* A number from V into *OUT (times: checked later).  Returns 0, or -1 (message for NAME). */
int j_num(rd *r, long line, const json_t *v, const char *name, double *out);

/* A list of gaps (numbers, times SCALE to ms) from array V into Q.  Returns 0 or -1. */
int j_gaps(rd *r, long line, const json_t *v, const char *name, double scale, cobs_req *q);

/* The generic format's field names (JSON lines and CSV alike). */
extern const names GENERIC_NAMES;

/* ---- cobscsv.c ---------------------------------------------------------------- */

/* libcsv's field callback: appends the field to the row of csv_rows DATA
 * (detect() uses it to read a CSV header). */
void on_field(void *s, size_t len, void *data);

/* Feeds F to libcsv line by line, calling C->row per row.  Returns 0 or -1. */
int read_csv(csv_rows *c, FILE *f);

/* The row functions (csv_rows.row) of the generic per-request CSV and of
 * the sweep summaries.  Return 0 or -1 with the message set. */
int generic_csv_row(csv_rows *c);

int sweep_csv_row(csv_rows *c);

/* ---- cobsjson.c --------------------------------------------------------------- */

/* Reads ROOT, one vLLM benchmark result or one guidellm report, into R's
 * run.  Return 0 or -1 with the message set. */
int read_vllm(rd *r, const json_t *root);

int read_guidellm(rd *r, const json_t *root);

#endif
