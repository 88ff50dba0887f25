/* calibcli.h -- what the front end's calibrator commands share (cli/calib.c:
 * latsim calib; cli/costcmd.c: latsim cost): one-line errors, whole-number
 * options, the database opened read-only. */
#ifndef LATSIM_CLI_CALIBCLI_H
#define LATSIM_CLI_CALIBCLI_H

#include <stddef.h>
#include <sqlite3.h>

/* Prints "latsim: MSG" as one printable line (control characters escaped). */
void cal_say(const char *msg);

/* cal_say(MSG); returns CODE. */
int cal_fail(int code, const char *msg);

/* Parses V, the value of option OPT, as a whole number in LO..HI into *OUT.
 * Returns 0, or -1 with the message in ERR. */
int cal_parse_long(const char *opt, const char *v, long lo, long hi, long *out, char *err, size_t n);
/* Opens an existing latsim database read-only (list, show, export, cost): nothing
 * is created or written, an empty or foreign file is refused unchanged, and a
 * database without calibration tables reads as holding none. */
int cal_open_readonly(const char *path, sqlite3 **db, char *err, size_t n);

#endif
