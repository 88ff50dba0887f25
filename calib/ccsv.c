/* ccsv.c -- calibration tables read with the simulator's CSV reader, and their
 * cells converted (see ccsv.h). */
#include "ccsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/errmsg.h"

#define FIELD_SHOWN 64  /* bytes of a cell quoted in a message (escaped, cut with "...") */

/* The header row: a column named twice would be read from one of them silently. */
static int check_header(void *ctx, const csvread_row *row, char *err, size_t errlen)
{
    (void) ctx;
    for (size_t j = 1; j < row->nheader; j++)
        for (size_t i = 0; i < j; i++)
            if (row->header[j][0] && strcmp(row->header[i], row->header[j]) == 0) {
                char name[FIELD_SHOWN];
                return csvread_fail(row, row->line, err, errlen,
                                    "column %s: named twice in the header (columns %zu and %zu)",
                                    errmsg_field(row->header[j], name, sizeof name), i + 1, j + 1);
            }
    return 0;
}

int ccsv_read(const char *path, ccsv_fn fn, void *ctx, char *err, size_t errlen)
{
    return csvread_file(path, check_header, fn, ctx, err, errlen);
}

int ccsv_col(const ccsv_row *row, const char *name)
{
    return csvread_col(row, name);
}

/* 1 when S is a decimal number: [+-]digits[.digits] or [+-].digits, then an
 * optional exponent e[+-]digits; nothing else (no spaces, hexadecimal, inf, nan). */
static int decimal(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (s[i] == '.')
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (!digits)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        if (!(s[i] >= '0' && s[i] <= '9'))
            return 0;
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    }
    return s[i] == '\0';
}

/* Parses the decimal cell S.  Returns 0 with *OUT set, 1 when it is not a decimal
 * number, 2 when a double cannot hold it (overflow, or underflow to a subnormal or
 * 0 of a nonzero number: *OUT is then +-inf or +-0, for a range check). */
static int parse_decimal(const char *s, double *out)
{
    if (!decimal(s))
        return 1;
    errno = 0;
    double v = strtod(s, NULL);
    int neg = s[0] == '-';
    if (errno == ERANGE || !isfinite(v) || (v != 0 && !isnormal(v))) {
        *out = fabs(v) >= 1 ? (neg ? -INFINITY : INFINITY) : (neg ? -0.0 : 0.0);
        return 2;
    }
    *out = v;
    return 0;
}

int ccsv_num(const ccsv_row *row, int col, double *out, char *err, size_t errlen)
{
    const char *s = row->field[col];
    double v;
    int k = parse_decimal(s, &v);
    if (k != 0) {
        char shown[FIELD_SHOWN];
        snprintf(err, errlen, "%s:%ld: column %s: '%s' is %s", row->path, row->line,
                 row->header[col], errmsg_field(s, shown, sizeof shown),
                 k == 1 ? "not a number" : "out of range (beyond what a double holds)");
        return -1;
    }
    *out = v;
    return 0;
}

int ccsv_range(const ccsv_row *row, int col, double lo, double hi, const char *unit, double *out,
               char *err, size_t errlen)
{
    const char *s = row->field[col];
    double v;
    int k = parse_decimal(s, &v);
    if (k == 1)
        return ccsv_num(row, col, out, err, errlen);
    if (k == 2 || v < lo || v > hi) {
        char shown[FIELD_SHOWN];
        snprintf(err, errlen, "%s:%ld: column %s: '%s' is out of range (expected %g to %g%s%s)",
                 row->path, row->line, row->header[col], errmsg_field(s, shown, sizeof shown), lo,
                 hi, unit && unit[0] ? " " : "", unit ? unit : "");
        return -1;
    }
    *out = v;
    return 0;
}

int ccsv_int(const ccsv_row *row, int col, long lo, long hi, long *out, char *err, size_t errlen)
{
    const char *s = row->field[col];
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        char shown[FIELD_SHOWN];
        snprintf(err, errlen, "%s:%ld: column %s: '%s' is not a whole number in %ld..%ld",
                 row->path, row->line, row->header[col], errmsg_field(s, shown, sizeof shown), lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}
