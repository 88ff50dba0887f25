/* cliutil.c -- helpers shared by the commands (see cliutil.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cliutil.h"
#include "latsim/errmsg.h"
#include "latsim/infile.h"
#include "latsim/plan.h"
#include "latsim/report.h"
#include "latsim/store.h"

const char *cu_db_path(const char *opt)
{
    if (opt) return opt;
    const char *e = getenv("LATSIM_DB");
    return (e && e[0]) ? e : "latsim.db";
}

void cu_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double cu_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cu_die(int code, const char *fmt, ...)
{
    /* One printable line: names and paths in MSG may hold control bytes. */
    char msg[8192], line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "latsim: %s\n", errmsg_field(msg, line, sizeof line));
    return code;
}

long cu_posint(const char *cmd, const char *opt, const char *v, long max)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < 1 || x > max) {
        cu_die(2, "%s: %s: expected a whole number from 1 to %ld, got '%s'", cmd, opt, max, v);
        return -1;
    }
    return x;
}

int cu_parse_id(const char *what, const char *v, int64_t *id, char *err, size_t errlen)
{
    /* Digits only: no sign, no blank, no hex; strtoll's saturation at
     * LLONG_MAX (errno ERANGE) is refused, not taken as an ID. */
    int ok = v[0] != '\0';
    for (const char *q = v; *q && ok; q++) ok = *q >= '0' && *q <= '9';
    long long x = 0;
    if (ok) {
        errno = 0;
        x = strtoll(v, NULL, 10);
        ok = errno == 0 && x > 0;
    }
    if (!ok) {
        errmsg_set(err, errlen, "expected a %s ID (a whole number from 1 to %lld), got '%.100s'", what, (long long) INT64_MAX, v);
        return -1;
    }
    *id = x;
    return 0;
}

int cu_parse_range(const char *spec, int step_optional, int max, cu_range *r, char *err, size_t errlen)
{
    return plan_range_parse(spec, step_optional, max, r, err, errlen);
}

void cu_range_value(const cu_range *r, int i, char *buf, size_t n) { plan_range_value(r, i, buf, n); }

int cu_check_list_value(const char *v, size_t len, size_t maxlen, char *err, size_t errlen)
{
    return plan_list_value_check(v, len, maxlen, err, errlen);
}

int cu_check_db_path(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!path[0]) {
        errmsg_set(err, errlen, "--db: empty path (give a database file)");
        return -1;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        errmsg_set(err, errlen, "%.900s: not a latsim database: %s", path,
                   S_ISDIR(st.st_mode) ? "it is a folder" : "not a regular file");
        return -1;
    }
    return 0;
}

int cu_check_db(const char *path, char *err, size_t errlen)
{
    if (cu_check_db_path(path, err, errlen) != 0) return -1;
    if (access(path, F_OK) == 0) return store_check_path(path, err, errlen);
    return cu_dir_writable(path, err, errlen);
}

/* "CMD: OPT PATH" (or "CMD: PATH" when OPT is NULL) into BUF, PATH escaped. */
static const char *out_name(const char *cmd, const char *opt, const char *path, char *buf, size_t n)
{
    char shown[1024];
    errmsg_field(path, shown, sizeof shown);
    if (opt) snprintf(buf, n, "%s: %s %s", cmd, opt, shown);
    else snprintf(buf, n, "%s: %s", cmd, shown);
    return buf;
}

int cu_check_out(const char *cmd, const char *opt, const char *path, char *err, size_t errlen)
{
    char name[1200], dir[4096], wshown[1024];
    struct stat st;
    const char *why = NULL, *where = NULL;
    if (!path[0]) {
        errmsg_set(err, errlen, "%s: %s: empty path (give a file name)", cmd, opt ? opt : "output file");
        return -1;
    }
    out_name(cmd, opt, path, name, sizeof name);
    for (const char *p = path; *p; p++)
        if ((unsigned char) *p < 0x20 || *p == 0x7f) {
            errmsg_set(err, errlen, "%s: control character in the file name", name);
            return -1;
        }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) why = "it is a folder";
        else if (!S_ISREG(st.st_mode)) why = "not a regular file";
        else if (access(path, W_OK) != 0) why = strerror(errno);
    } else if (errno != ENOENT) why = strerror(errno);
    else {
        cu_dir_of(path, dir, sizeof dir);
        where = errmsg_field(dir, wshown, sizeof wshown);
        if (stat(dir, &st) != 0) why = strerror(errno);
        else if (!S_ISDIR(st.st_mode)) why = "not a folder";
        else if (access(dir, W_OK | X_OK) != 0) why = strerror(errno);
    }
    if (!why) return 0;
    if (where) errmsg_set(err, errlen, "%s: cannot write: %s: %s", name, where, why);
    else errmsg_set(err, errlen, "%s: cannot write: %s", name, why);
    return -1;
}

int cu_check_in(const char *cmd, const char *opt, const char *path, long long max, char *err, size_t errlen)
{
    char e[1400];
    if (!path || !path[0]) {
        errmsg_set(err, errlen, "%s: %s: empty path (give a file name)", cmd, opt ? opt : "input file");
        return -1;
    }
    if (infile_check(path, max, e, sizeof e) == 0) return 0;
    if (opt) errmsg_set(err, errlen, "%s: %s %s", cmd, opt, e);
    else errmsg_set(err, errlen, "%s: %s", cmd, e);
    return -1;
}

int cu_check_in_dir(const char *cmd, const char *opt, const char *dir, char *err, size_t errlen)
{
    char shown[1024], name[1200];
    struct stat st;
    const char *why = NULL;
    if (!dir || !dir[0]) {
        errmsg_set(err, errlen, "%s: %s: empty path (give a folder)", cmd, opt ? opt : "input folder");
        return -1;
    }
    if (stat(dir, &st) != 0) why = strerror(errno);
    else if (!S_ISDIR(st.st_mode)) why = infile_kind(st.st_mode);
    if (!why) return 0;
    errmsg_field(dir, shown, sizeof shown);
    if (opt) snprintf(name, sizeof name, "%s: %s %s", cmd, opt, shown);
    else snprintf(name, sizeof name, "%s: %s", cmd, shown);
    errmsg_set(err, errlen, "%s: not a readable folder: %s", name, why);
    return -1;
}

int cu_check_out_dir(const char *cmd, const char *opt, const char *dir, const char *const *names,
                     char *err, size_t errlen)
{
    char name[1200], path[4096];
    struct stat st;
    if (!dir || !dir[0]) {
        errmsg_set(err, errlen, "%s: %s: empty path (give a folder)", cmd, opt ? opt : "output folder");
        return -1;
    }
    if (stat(dir, &st) != 0) {
        /* Created later: its parent must take it (cu_check_out's test of a new file). */
        return cu_check_out(cmd, opt, dir, err, errlen);
    }
    if (!S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        errmsg_set(err, errlen, "%s: cannot write: %s", out_name(cmd, opt, dir, name, sizeof name),
                   !S_ISDIR(st.st_mode) ? "not a folder" : strerror(errno));
        return -1;
    }
    for (size_t i = 0; names && names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (cu_check_out(cmd, opt, path, err, errlen) != 0) return -1;
    }
    return 0;
}

FILE *cu_open_out(const char *cmd, const char *opt, const char *path, char *err, size_t errlen)
{
    if (cu_check_out(cmd, opt, path, err, errlen) != 0) return NULL;
    /* O_NONBLOCK: a FIFO put there since the check fails at once (ENXIO)
     * instead of waiting for a reader; truncated only once known to be a file. */
    int fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
    struct stat st;
    const char *why = NULL;
    if (fd < 0) why = errno == ENXIO ? "not a regular file" : strerror(errno);
    else if (fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (ftruncate(fd, 0) != 0) why = strerror(errno);
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) why = strerror(errno);
    FILE *f = why ? NULL : fdopen(fd, "w");
    if (!why && !f) why = strerror(errno);
    if (why) {
        char name[1200];
        if (fd >= 0) close(fd);
        errmsg_set(err, errlen, "%s: cannot write: %s", out_name(cmd, opt, path, name, sizeof name), why);
    }
    return f;
}

int cu_close_out(const char *cmd, const char *opt, const char *path, FILE *f, char *err, size_t errlen)
{
    int e = 0;
    if (fflush(f) != 0) e = errno ? errno : EIO;
    else if (ferror(f)) e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
    if (!e) return 0;
    char name[1200];
    errmsg_set(err, errlen, "%s: cannot write: %s", out_name(cmd, opt, path, name, sizeof name), strerror(e));
    return -1;
}

FILE *cu_open_tmp_out(const char *cmd, const char *opt, const char *path, char *tmp, size_t n, char *err, size_t errlen)
{
    char name[1200];
    if (cu_check_out(cmd, opt, path, err, errlen) != 0) return NULL;
    if ((size_t) snprintf(tmp, n, "%s.XXXXXX", path) >= n) {
        errmsg_set(err, errlen, "%s: cannot write: name too long", out_name(cmd, opt, path, name, sizeof name));
        return NULL;
    }
    int fd = mkstemp(tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        int e = errno;
        if (fd >= 0) { close(fd); unlink(tmp); }
        errmsg_set(err, errlen, "%s: cannot write: %s", out_name(cmd, opt, path, name, sizeof name), strerror(e));
        return NULL;
    }
    fchmod(fd, 0644);
    return f;
}

int cu_commit_out(const char *cmd, const char *opt, const char *path, const char *tmp, FILE *f, int failed,
                  char *err, size_t errlen)
{
    char name[1200];
    int e = 0;
    if (fflush(f) != 0 || ferror(f)) e = errno ? errno : EIO;
    if (!e && fsync(fileno(f)) != 0 && errno != EINVAL) e = errno;
    if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
    if (!e && failed) e = EIO;
    if (!e && rename(tmp, path) != 0) e = errno;
    if (!e) return 0;
    unlink(tmp);
    errmsg_set(err, errlen, "%s: cannot write: %s (nothing written)", out_name(cmd, opt, path, name, sizeof name),
               strerror(e));
    return -1;
}

int cu_write_db(const char *path, cu_write_fn fn, void *arg, sqlite3 **keep, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int rc;
    if (keep) *keep = NULL;
    if (cu_check_db_path(path, err, errlen) != 0) return 2;
    int existed = access(path, F_OK) == 0;
    if (!existed) {
        /* Validated on an empty database in memory first: refused input never
         * creates the file. */
        if (cu_dir_writable(path, err, errlen) != 0) return 2;
        if (store_open_tx(":memory:", &db, err, errlen) != 0) return 1;
        rc = fn(db, 1, arg, err, errlen);
        store_close(db);
        db = NULL;
        if (rc != 0) return rc;
    }
    if (store_open_tx(path, &db, err, errlen) != 0) { rc = 2; goto out; }
    rc = fn(db, 0, arg, err, errlen);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        errmsg_set(err, errlen, "%.900s: cannot commit: %s", path, sqlite3_errmsg(db));
        rc = 1;
    }
    if (rc != 0) {
        if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        store_close(db);
        db = NULL;
    }
out:
    if (rc != 0 && !existed) {
        /* Opening created it: rolled back, it is empty; remove it again. */
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) unlink(path);
    }
    if (rc == 0 && keep) *keep = db;
    else store_close(db);
    return rc;
}

void cu_dir_of(const char *path, char *dir, size_t n)
{
    snprintf(dir, n, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) dir[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(dir, n, ".");
}

int cu_dir_writable(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    cu_dir_of(path, dir, sizeof dir);
    if (access(dir, W_OK) != 0) {
        errmsg_set(err, errlen, "%.900s: cannot create database: %.900s: %s", path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

int cu_open_rw(const char *path, sqlite3 **db, char *err, size_t errlen)
{
    if (store_open(path, db, err, errlen) != 0) return -1;
    if (store_check_writable(*db, path, err, errlen) != 0) { store_close(*db); *db = NULL; return -1; }
    return 0;
}

int cu_save_task(sqlite3 *db, const task *t, const task_out *o, const slo_result *slo, planstore_extra *x,
                 int64_t *id, char *err, size_t errlen)
{
    return task_save_run(db, t, o, slo, x, id, err, errlen);
}

void cu_relabel(char *err, size_t errlen, const char *opt, const char *section, const char *key)
{
    plan_relabel(err, errlen, opt, section, key);
}

int cu_plots_dir(const char *script, char *out, size_t n)
{
    const char *env = getenv("LATSIM_PLOTS");
    char test[4400];
    if (env && env[0]) {
        snprintf(out, n, "%s", env);
        snprintf(test, sizeof test, "%.4000s/%s", out, script);
        return access(test, R_OK) == 0 ? 0 : -1;
    }
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        const char *rel[] = { "plots", "../../plots" };
        for (int i = 0; i < 2; i++) {
            snprintf(test, sizeof test, "%.4000s/%s/%s", exe, rel[i], script);
            if (access(test, R_OK) == 0) {
                snprintf(out, n, "%.*s", (int) (strlen(test) - strlen(script) - 1), test);
                return 0;
            }
        }
    }
    snprintf(out, n, "plots");
    snprintf(test, sizeof test, "plots/%s", script);
    return access(test, R_OK) == 0 ? 0 : -1;
}

int cu_stderr_quiet(void)
{
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (saved < 0 || null < 0 || dup2(null, 2) < 0) {
        if (saved >= 0) close(saved);
        if (null >= 0) close(null);
        return -1;
    }
    close(null);
    return saved;
}

void cu_stderr_restore(int saved)
{
    if (saved < 0) return;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}
