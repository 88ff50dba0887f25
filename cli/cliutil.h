/* cliutil.h -- what the commands share (run, calib, and the planner commands
 * sweep, plan, check, compare, plot): database path and checks, option values,
 * storing a task's result as a run.  (Their entry points: commands.h; their
 * options: cliopt.h.) */
#ifndef LATSIM_CLIUTIL_H
#define LATSIM_CLIUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "latsim/infile.h"
#include "latsim/plan.h"
#include "latsim/slo.h"
#include "latsim/store.h"

#ifndef LATSIM_VERSION
#define LATSIM_VERSION "0.1"
#endif

/* --db PATH, else $LATSIM_DB, else ./latsim.db. */
const char *cu_db_path(const char *opt);

/* Current UTC time as ISO 8601 into BUF. */
void cu_now(char *buf, size_t n);

/* Wall-clock seconds since an arbitrary origin. */
double cu_clock(void);

/* Parses a positive whole number for option OPT; returns it, or -1 after
 * printing "latsim: CMD: OPT: ..." on stderr. */
long cu_posint(const char *cmd, const char *opt, const char *v, long max);

/* Parses run (or sweep, plan) ID V strictly: digits only, 1 to INT64_MAX.
 * Returns 0 with *ID set, or -1 with ERR ("expected a WHAT ID (a whole number
 * from 1 to 9223372036854775807), got 'V'"). */
int cu_parse_id(const char *what, const char *v, int64_t *id, char *err, size_t errlen);

/* A FROM:TO:STEP range of an option (sweep --vary, plan --search, --tp):
 * latsim/plan.h's plan_range; the cu_ calls below are its plan_range_*. */
typedef plan_range cu_range;

/* Parses SPEC, "FROM:TO:STEP" (or "FROM:TO", STEP 1, when STEP_OPTIONAL) into
 * R: every part a finite number, STEP > 0, FROM <= TO, at most MAX values, and
 * successive values distinct at 10 significant digits.  Returns 0, or -1 with
 * ERR naming the bad part ("FROM 'nan' is not a finite number"). */
int cu_parse_range(const char *spec, int step_optional, int max, cu_range *r, char *err, size_t errlen);

/* Value I of R as text (%.10g) into BUF (N bytes). */
void cu_range_value(const cu_range *r, int i, char *buf, size_t n);

/* Checks entry V (LEN bytes, not NUL-terminated) of an a,b,c list: not empty,
 * shorter than MAXLEN, and not a number that is not finite (nan, inf, 1e999;
 * a word such as a scheduler name is fine).  Returns 0, or -1 with ERR. */
int cu_check_list_value(const char *v, size_t len, size_t maxlen, char *err, size_t errlen);

/* Stores task T's result O as a run (its configuration re-read from T's file
 * and overrides), with the SLO terms and sweep point X (may be NULL).  Returns
 * 0 with *ID set, or -1 + ERR. */
int cu_save_task(sqlite3 *db, const task *t, const task_out *o, const slo_result *slo, planstore_extra *x,
                 int64_t *id, char *err, size_t errlen);

/* Prints "latsim: MSG" as one printable line (errmsg_field) and returns CODE. */
int cu_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Opens the database for writing before any simulation (so that an unusable
 * path is bad input, exit 2, and nothing runs).  Returns 0 or -1 + ERR. */
int cu_open_rw(const char *path, sqlite3 **db, char *err, size_t errlen);

/* Checks, without creating or changing it, that the database at PATH will be
 * writable after the simulations (cu_check_db_path, then store_check_path or
 * cu_dir_writable).  Returns 0 or -1 + ERR. */
int cu_check_db(const char *path, char *err, size_t errlen);

/* Checks the database path PATH of any command before anything is opened or
 * run: not empty, and when it exists a regular file (not a folder, FIFO or
 * device).  Returns 0, or -1 + ERR ("--db: empty path ...", "PATH: not a latsim
 * database: it is a folder"). */
int cu_check_db_path(const char *path, char *err, size_t errlen);

/* Checks the output file PATH of option OPT ("--junit"; NULL for a positional
 * argument) of command CMD ("check") before anything runs or is stored: not empty, no control
 * character, an existing PATH a regular file that can be written, a new one's
 * folder existing and writable.  Returns 0, or -1 + ERR ("CMD: OPT PATH: cannot
 * write: not a regular file", PATH escaped). */
int cu_check_out(const char *cmd, const char *opt, const char *path, char *err, size_t errlen);

/* The one check of an input file PATH of option OPT (NULL for a positional
 * argument) of command CMD, before any work: a regular file (not a folder,
 * FIFO or device) of at most MAX bytes (latsim/infile.h's INFILE_MAX_*).
 * Returns 0, or -1 + ERR ("CMD: OPT: PATH: not a regular file (a FIFO)"). */
int cu_check_in(const char *cmd, const char *opt, const char *path, long long max, char *err, size_t errlen);

/* The same for a folder of inputs DIR (a Vidur profile): it exists and is a
 * folder.  Returns 0, or -1 + ERR. */
int cu_check_in_dir(const char *cmd, const char *opt, const char *dir, char *err, size_t errlen);

/* Checks the output folder DIR of option OPT of command CMD, and the files
 * NAMES (NULL-terminated) that will be written in it, before any work: DIR an
 * existing writable folder (or absent, with a writable folder above it: it is
 * created later), and each DIR/NAME absent or a writable regular file
 * (cu_check_out).  Returns 0, or -1 + ERR. */
int cu_check_out_dir(const char *cmd, const char *opt, const char *dir, const char *const *names,
                     char *err, size_t errlen);

/* Opens the output file PATH for writing (truncated) after cu_check_out,
 * without ever blocking: a FIFO or device put there since is refused.  Returns
 * the stream, or NULL + ERR. */
FILE *cu_open_out(const char *cmd, const char *opt, const char *path, char *err, size_t errlen);

/* Closes F, opened by cu_open_out.  Returns 0, or -1 + ERR when a write, the
 * flush or the close failed (a full disk, a file size limit). */
int cu_close_out(const char *cmd, const char *opt, const char *path, FILE *f, char *err, size_t errlen);

/* Opens a temporary file beside the output PATH (after cu_check_out), named
 * into TMP (N bytes), for a page written whole or not at all: cu_commit_out
 * renames it onto PATH.  Returns the stream, or NULL + ERR. */
FILE *cu_open_tmp_out(const char *cmd, const char *opt, const char *path, char *tmp, size_t n, char *err, size_t errlen);

/* Closes F of cu_open_tmp_out and, when every write, the flush and the close
 * succeeded and FAILED is 0, renames TMP onto PATH; otherwise removes TMP and
 * PATH is what it was.  Returns 0, or -1 + ERR (a full disk). */
int cu_commit_out(const char *cmd, const char *opt, const char *path, const char *tmp, FILE *f, int failed,
                  char *err, size_t errlen);

/* One write to the database: does its work on DB inside the transaction of
 * store_open_tx, DRY 1 on a validating pass (print nothing).  Returns 0, or the
 * exit status (2 bad input, 1 runtime failure) with ERR set. */
typedef int (*cu_write_fn)(sqlite3 *db, int dry, void *arg, char *err, size_t errlen);

/* Runs FN on the database at PATH in one transaction that also creates the
 * schema, and commits it when FN returns 0: when FN refuses (or anything
 * fails), the file is byte for byte what it was.  When PATH does not exist, FN
 * runs first on an empty in-memory database (DRY 1), so that refused input
 * never creates the file.  KEEP (may be NULL) receives the committed database,
 * for the caller to read and close.  Returns FN's status, 2 when PATH cannot be
 * opened, 1 when the commit fails; ERR says why. */
int cu_write_db(const char *path, cu_write_fn fn, void *arg, sqlite3 **keep, char *err, size_t errlen);

/* Checks that the database file PATH (which does not exist yet) can be created:
 * that the folder it would be in is writable.  Returns 0, or -1 + ERR
 * ("PATH: cannot create database: DIR: reason"). */
int cu_dir_writable(const char *path, char *err, size_t errlen);

/* The folder PATH is in, into DIR (N bytes): "." for a bare name, "/" for a
 * file at the root. */
void cu_dir_of(const char *path, char *dir, size_t n);

/* ERR came from loading a scenario with the assignment SECTION.KEY=... that
 * option OPT ("--vary", "--search") made: the loader calls every command-line
 * assignment "--set"; when ERR is about [SECTION] KEY it is renamed OPT. */
void cu_relabel(char *err, size_t errlen, const char *opt, const char *section, const char *key);

/* The plots/ folder holding SCRIPT (a gnuplot script of plots/) into OUT (N
 * bytes): $LATSIM_PLOTS, else beside the executable (or two levels up, for
 * build/VARIANT/latsim), else ./plots.  Returns 0, or -1 when SCRIPT is not there. */
int cu_plots_dir(const char *script, char *out, size_t n);

/* Silences stderr (points it at /dev/null) while a scenario already run once is
 * loaded and run again (the prediction band's ends: its warnings were said the
 * first time).  Returns the saved descriptor for cu_stderr_restore, or -1
 * (nothing changed). */
int cu_stderr_quiet(void);

/* Gives stderr back after cu_stderr_quiet (SAVED -1: nothing to do). */
void cu_stderr_restore(int saved);

#endif
