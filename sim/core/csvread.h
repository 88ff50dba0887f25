/* csvread.h -- the one CSV reader: a file with a header row, one row at a time
 * (libcsv).
 *
 * Traces (workload/trace.c), empirical distributions' columns (csv_read_column,
 * below, for core/dist.c) and the calibration importers (calib/ccsv.c) all read
 * CSV through csvread_file().  The file is fed to libcsv's csv_parse() a line at
 * a time, so every row knows the 1-based line it starts on (the header is line
 * 1; a row whose quoted cell spans lines is named by its first line).  libcsv
 * trims unquoted spaces and tabs, skips empty lines and takes "\r\n" as one line
 * end.  The reader refuses, with one line "PATH:LINE: message" in ERR:
 *   - a path that is not a regular file once symbolic links are followed (a
 *     directory, FIFO or device: opened without blocking, then refused);
 *   - a line longer than CSVREAD_MAX_LINE bytes (memory does not grow without
 *     limit on a file that is one endless line);
 *   - a cell holding a NUL byte (not text; C strings would cut it short);
 *   - a data row whose number of cells differs from the header's;
 *   - an empty file (no header row).
 * A UTF-8 byte order mark before the first column name is dropped.  On a file
 * of several columns, a row that is one empty cell (a line holding only "") is
 * taken for a blank line and skipped.  Every message is made one printable line
 * (errmsg_field: control characters and invalid UTF-8 escaped), whoever wrote it.
 */
#ifndef LATSIM_CSVREAD_H
#define LATSIM_CSVREAD_H

#include <stddef.h>

#define CSVREAD_MAX_LINE (1 << 20)   /* longest line accepted, bytes (its newline not counted) */

typedef struct csvread_row {
    const char *path;        /* file name, for messages */
    long line;               /* 1-based line the row starts on */
    char **field;            /* the row's cells (NUL-terminated; the header's names for the header) */
    size_t nfield;           /* how many */
    char **header;           /* the header's column names */
    size_t nheader;          /* how many */
} csvread_row;

/* Called with a row; returns 0 to go on, or -1 to stop after writing its own
 * message into ERR (csvread_fail). */
typedef int (*csvread_fn)(void *ctx, const csvread_row *row, char *err, size_t errlen);

/* Reads PATH: calls ON_HEADER (NULL: none) once with the header row, then ON_ROW
 * for each data row, both with CTX.  Returns 0, or -1 with the message in ERR
 * (the reader's own, see above, or a callback's). */
int csvread_file(const char *path, csvread_fn on_header, csvread_fn on_row, void *ctx,
                 char *err, size_t errlen);

/* Writes "PATH:LINE: message" into ERR ("PATH: message" when LINE <= 0), ROW
 * naming the file.  Returns -1 (for `return csvread_fail(...)`). */
__attribute__((format(printf, 5, 6)))
int csvread_fail(const csvread_row *row, long line, char *err, size_t errlen, const char *fmt, ...);

/* Index of the header column NAME (exact match; the first of two), or -1. */
int csvread_col(const csvread_row *row, const char *name);

/* The same, writing "PATH: no column 'NAME' (columns: a, b, c)" into ERR when
 * there is none. */
int csvread_need_col(const csvread_row *row, const char *name, char *err, size_t errlen);

/* Parses all of S as a finite real number (strtod).  Returns 0, or -1 when S is
 * empty, has trailing text or is out of range. */
int csvread_real(const char *s, double *out);

/* Reads one numeric column (finite numbers >= 0) of a CSV file with a header
 * (empirical() distributions).  Returns 0 with a malloc'ed array in *VALUES of
 * *N values, or -1 with "PATH:LINE: message" in ERR (no such column, a cell that
 * is not a number or is negative, no data rows). */
int csv_read_column(const char *path, const char *column, double **values, size_t *n,
                    char *err, size_t errlen);

#endif
