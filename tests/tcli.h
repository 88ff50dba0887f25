/* tcli.h -- the shared harness of the Criterion tests that run the latsim
 * program (LATSIM, tests/tbin.h) as a child process.
 *
 * Each test gets its own temporary directory (tcli_setup / tcli_teardown, the
 * .init and .fini of its suite).  run_argv() runs the program in a forked child
 * with stdin /dev/null and stdout and stderr in files of that directory, killed
 * by alarm() after a limit so that a hang fails the test instead of hanging the
 * suite; child_limits adds resource limits to the child.  vrun_sh() is the
 * older way: a shell command line through system(), not bounded in time.
 *
 * Criterion runs every test in its own process, so the globals below belong to
 * one test.  Helpers that check something fail the test through cr_assert
 * (setup problems) or cr_expect (the checks themselves). */
#ifndef LATSIM_TCLI_H
#define LATSIM_TCLI_H
#include <stdarg.h>
#include <stddef.h>
#include <sys/resource.h>

extern char dir[64];          /* this test's temporary directory ("" before tcli_setup) */
extern char db[128];          /* dir/DBNAME of tcli_setup ("" without one); not created here */

/* Resource limits of the children of run_argv(); tcli_setup resets them to none. */
struct child_limits {
    rlim_t fsize;   /* > 0: RLIMIT_FSIZE, bytes (a "full disk": SIGXFSZ ignored, writes fail with EFBIG) */
    rlim_t as;      /* > 0: RLIMIT_AS, bytes (address space: allocations beyond it fail) */
};
extern struct child_limits child_limits;

/* Checks that LATSIM is executable, makes the test's directory PREFIX + a
 * unique suffix (mkdtemp; PREFIX like "/tmp/latsim_cli_", at most 40 bytes),
 * sets db to dir/DBNAME (DBNAME NULL: db is "") and resets child_limits.
 * Fails the test (cr_assert) when it cannot. */
void tcli_setup(const char *prefix, const char *dbname);

/* Removes the directory of tcli_setup (made writable first, so that tests may
 * chmod parts of it); does nothing when it was not made under its PREFIX. */
void tcli_teardown(void);

/* The bytes of PATH, NUL-terminated (*LEN, when LEN is not NULL, their count
 * without the NUL), in malloc'd memory; "" (allocated, *LEN 0) when it cannot
 * be read. */
char *slurp(const char *path, size_t *len);

/* The same, but NULL (*LEN 0) when PATH cannot be read. */
char *slurp_or_null(const char *path, size_t *len);

/* The same, but fails the test (cr_assert "cannot read PATH") when PATH cannot be read. */
char *slurp_or_fail(const char *path, size_t *len);

/* One run of the program. */
typedef struct result {
    int rc;        /* exit status; 128 + signal when killed (alarm: 128 + SIGALRM); vrun_sh: -1 when killed */
    char *out;     /* stdout, NUL-terminated, malloc'd ("" when there was none) */
    size_t nout;   /* its length, bytes */
    char *err;     /* stderr, the same */
    size_t nerr;   /* its length, bytes */
    double wall;   /* seconds the run took (wall clock, monotonic); 0 for vrun_sh */
} result;

/* Runs LATSIM with the NULL-terminated ARGS (argv[0] excluded, at most 62) in a
 * child that alarm() kills after LIMIT seconds, under child_limits; stdin is
 * /dev/null, stdout and stderr go to dir/stdout and dir/stderr.  The child
 * exits 120 when it cannot open those, 121 when execv fails and 122 when it
 * cannot set the file-size limit.  Free the result with result_free(). */
result run_argv(unsigned limit, char *const *args);

/* run_argv(LIMIT) of FIRST and the further arguments, NULL-terminated (at most 58 in all). */
result run(unsigned limit, const char *first, ...);

/* run_argv(LIMIT) of the NULL-terminated arguments followed by "--db" db (at most 60 before them). */
result run_db(unsigned limit, const char *first, ...);

/* run_argv(LIMIT) of "run" FILE "--db" db and the further NULL-terminated arguments (at most 54). */
result run_scenario(unsigned limit, const char *file, ...);

/* Runs the shell command line "LATSIM ARGS TAIL >dir/stdout 2>dir/stderr
 * </dev/null" through system(), ARGS formatted from FMT and AP like vprintf
 * (at most 4095 bytes), TAIL appended after a space unless NULL; not bounded
 * in time.  rc is -1 when the shell did not exit normally; the test fails
 * when the output files cannot be read. */
result vrun_sh(const char *tail, const char *fmt, va_list ap);

/* Frees the output of R (not R itself). */
void result_free(result *r);

/* The number of '\n' in S. */
int lines(const char *s);

/* Writes TEXT to dir/NAME, making the directories of NAME as needed; the path
 * goes to PATH (N bytes).  Fails the test when it cannot. */
void write_file(const char *name, const char *text, char *path, size_t n);

/* 1 when PATH holds exactly the LEN bytes BYTES, else 0 (also when it cannot be read). */
int same_bytes(const char *path, const char *bytes, size_t len);

/* The first column of the first row of SQL (an integer, such as a count(*)) on
 * the SQLite database at PATH, opened read-only; -1 when SQL fails or gives no
 * row.  Fails the test (cr_assert) when PATH cannot be opened. */
long long db_count(const char *path, const char *sql);

/* Creates at PATH an SQLite database that is not latsim's (one table, notes,
 * holding 'mine'); fails the test when it cannot. */
void write_foreign_db(const char *path);

/* Expects (cr_expect) exit status RC and exactly one line on stderr, holding
 * WANT unless that is NULL; the messages start with WHAT. */
void expect_one_line(const result *r, int rc, const char *want, const char *what);

#endif
