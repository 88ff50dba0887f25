/* ccsv.h -- reading a calibration table: a CSV file with a header row, one row
 * at a time.
 *
 * The calibration importers read measurement tables with it: ccsv_read() is the
 * simulator's CSV reader (core/csvread.h) with one more rule (a header naming a
 * column twice is refused); the helpers find columns by header name and convert
 * cells, writing one-line errors of the form "FILE:LINE: column NAME: what is wrong".
 */
#ifndef LATSIM_CCSV_H
#define LATSIM_CCSV_H

#include <stddef.h>
#include "core/csvread.h"

typedef csvread_row ccsv_row;    /* path, line, field/nfield, header/nheader */

/* Called for every data row; returns 0 to go on, -1 to stop (after writing its
 * own message into ERR). */
typedef csvread_fn ccsv_fn;

/* Reads PATH, checking that every row has as many fields as the header, and calls
 * FN for each data row.  Returns 0, or -1 with "PATH:LINE: ..." in ERR (what
 * csvread_file refuses: an unreadable file, one that is not a regular file, a
 * line too long, a malformed row, a cell holding a NUL byte, an empty file; a
 * header naming a column twice; or FN's error), made one printable line. */
int ccsv_read(const char *path, ccsv_fn fn, void *ctx, char *err, size_t errlen);

/* Index of the header column NAME (exact match), or -1. */
int ccsv_col(const ccsv_row *row, const char *name);

/* Converts the cell of column COL (an index from ccsv_col) to a finite number
 * written in decimal ([+-]digits[.digits][e[+-]digits]; no hexadecimal, inf or
 * nan).  Returns 0, or -1 with "PATH:LINE: column NAME: 'cell' is not a number"
 * (or "... is out of range" when a double cannot hold it: overflow, or an
 * underflow to a subnormal or 0) in ERR. */
int ccsv_num(const ccsv_row *row, int col, double *out, char *err, size_t errlen);

/* The same for a number in [LO, HI]; a number outside says "'cell' is out of
 * range (expected LO to HI UNIT)" (UNIT may be ""). */
int ccsv_range(const ccsv_row *row, int col, double lo, double hi, const char *unit, double *out,
               char *err, size_t errlen);

/* The same for a whole number in [lo, hi]; the message says the range. */
int ccsv_int(const ccsv_row *row, int col, long lo, long hi, long *out, char *err, size_t errlen);

#endif
