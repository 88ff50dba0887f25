/* tcli.c -- the shared harness of the tests that run the latsim program
 * (tcli.h).  It defines no Test(): the Makefile links every test source into the
 * one test binary. */
#include "tcli.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tbin.h"

char dir[64];
char db[128];
struct child_limits child_limits;
static char prefix_of_dir[48];   /* the PREFIX of tcli_setup, checked again by tcli_teardown */

void tcli_setup(const char *prefix, const char *dbname)
{
    cr_assert_eq(access(LATSIM, X_OK), 0, "%s not found: run `make` first (tests run from the repository root)",
                 LATSIM);
    cr_assert(strlen(prefix) < sizeof prefix_of_dir && strlen(prefix) + 7 <= sizeof dir, "prefix too long: %s", prefix);
    strcpy(prefix_of_dir, prefix);
    snprintf(dir, sizeof dir, "%sXXXXXX", prefix);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
    if (dbname) snprintf(db, sizeof db, "%s/%s", dir, dbname);
    else db[0] = '\0';
    memset(&child_limits, 0, sizeof child_limits);
}

void tcli_teardown(void)
{
    char cmd[256];
    size_t k = strlen(prefix_of_dir);
    if (!dir[0] || k == 0 || strncmp(dir, prefix_of_dir, k) != 0) return;
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

char *slurp_or_null(const char *path, size_t *len)
{
    if (len) *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, k;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) { cap *= 2; buf = realloc(buf, cap); cr_assert_not_null(buf); }
    }
    buf[n] = '\0';
    fclose(f);
    if (len) *len = n;
    return buf;
}

char *slurp(const char *path, size_t *len)
{
    char *s = slurp_or_null(path, len);
    if (!s) {
        s = strdup("");
        cr_assert_not_null(s);
    }
    return s;
}

char *slurp_or_fail(const char *path, size_t *len)
{
    char *s = slurp_or_null(path, len);
    cr_assert_not_null(s, "cannot read %s", path);
    return s;
}

result run_argv(unsigned limit, char *const *args)
{
    char o[128], e[128];
    snprintf(o, sizeof o, "%s/stdout", dir);
    snprintf(e, sizeof e, "%s/stderr", dir);
    char *argv[64];
    int n = 0;
    argv[n++] = (char *) LATSIM;
    for (; args[n - 1] && n < 63; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fi = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || fi < 0) _exit(120);
        dup2(fi, 0); dup2(fo, 1); dup2(fe, 2);
        if (child_limits.fsize > 0) {
            struct rlimit rl = { child_limits.fsize, child_limits.fsize };
            signal(SIGXFSZ, SIG_IGN);     /* kept across execv */
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(122);
        }
        if (child_limits.as > 0) {
            struct rlimit rl = { child_limits.as, child_limits.as };
            setrlimit(RLIMIT_AS, &rl);
        }
        alarm(limit);                     /* kept across execv */
        execv(LATSIM, argv);
        _exit(121);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) cr_assert_eq(errno, EINTR);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    result r = { WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), NULL, 0, NULL, 0,
                 (double) (t1.tv_sec - t0.tv_sec) + 1e-9 * (double) (t1.tv_nsec - t0.tv_nsec) };
    r.out = slurp(o, &r.nout);
    r.err = slurp(e, &r.nerr);
    return r;
}

result run(unsigned limit, const char *first, ...)
{
    char *args[60];
    int n = 0;
    args[n++] = (char *) first;
    va_list ap;
    va_start(ap, first);
    for (char *a; (a = va_arg(ap, char *)) != NULL && n < 58;) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return run_argv(limit, args);
}

result run_db(unsigned limit, const char *first, ...)
{
    char *args[64];
    int n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 60; a = va_arg(ap, const char *)) args[n++] = (char *) a;
    va_end(ap);
    args[n++] = "--db";
    args[n++] = db;
    args[n] = NULL;
    return run_argv(limit, args);
}

result run_scenario(unsigned limit, const char *file, ...)
{
    char *args[60];
    int n = 0;
    args[n++] = "run";
    args[n++] = (char *) file;
    args[n++] = "--db";
    args[n++] = db;
    va_list ap;
    va_start(ap, file);
    for (char *a; (a = va_arg(ap, char *)) != NULL && n < 58;) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    return run_argv(limit, args);
}

result vrun_sh(const char *tail, const char *fmt, va_list ap)
{
    char args[4096], cmd[4800], o[128], e[128];
    int k = vsnprintf(args, sizeof args, fmt, ap);
    cr_assert(k >= 0 && (size_t) k < sizeof args, "command line too long");
    snprintf(o, sizeof o, "%s/stdout", dir);
    snprintf(e, sizeof e, "%s/stderr", dir);
    k = snprintf(cmd, sizeof cmd, "%s %s%s%s >'%s' 2>'%s' </dev/null", LATSIM, args, tail ? " " : "",
                 tail ? tail : "", o, e);
    cr_assert(k >= 0 && (size_t) k < sizeof cmd, "command line too long");
    int st = system(cmd);
    cr_assert_neq(st, -1, "system() failed");
    result r = { WIFEXITED(st) ? WEXITSTATUS(st) : -1, NULL, 0, NULL, 0, 0.0 };
    r.out = slurp_or_fail(o, &r.nout);
    r.err = slurp_or_fail(e, &r.nerr);
    return r;
}

void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

int lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

void write_file(const char *name, const char *text, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    for (char *p = strchr(path + strlen(dir) + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

int same_bytes(const char *path, const char *bytes, size_t len)
{
    size_t n;
    char *now = slurp_or_null(path, &n);
    int same = now && n == len && memcmp(now, bytes, len) == 0;
    free(now);
    return same;
}

long long db_count(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    long long n = -1;
    cr_assert_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK, "cannot open %s", path);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

void write_foreign_db(const char *path)
{
    sqlite3 *h;
    cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(h, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(h);
}

void expect_one_line(const result *r, int rc, const char *want, const char *what)
{
    cr_expect_eq(r->rc, rc, "%s: exit %d, wanted %d; stderr: %s", what, r->rc, rc, r->err);
    cr_expect_eq(lines(r->err), 1, "%s: stderr is not one line: %s", what, r->err);
    if (want) cr_expect(strstr(r->err, want) != NULL, "%s: stderr lacks '%s': %s", what, want, r->err);
}
