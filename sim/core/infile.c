/* infile.c -- the one check of a file a command reads (infile.h). */
#include "latsim/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/errmsg.h"

const char *infile_kind(unsigned mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
           : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a plain file";
}

/* The checks on ST of PATH.  Returns 0, or -1 with ERR. */
static int check_stat(const char *path, const struct stat *st, long long max, char *err, size_t errlen)
{
    char shown[1024];
    if (!S_ISREG(st->st_mode)) {
        errmsg_set(err, errlen, "%s: not a regular file (%s)", errmsg_field(path, shown, sizeof shown),
                   infile_kind(st->st_mode));
        return -1;
    }
    if (max > 0 && (long long) st->st_size > max) {
        errmsg_set(err, errlen, "%s: %lld bytes, larger than the %lld MB this input may hold",
                   errmsg_field(path, shown, sizeof shown), (long long) st->st_size, max >> 20);
        return -1;
    }
    return 0;
}

int infile_check(const char *path, long long max, char *err, size_t errlen)
{
    char shown[1024];
    struct stat st;
    if (!path || !path[0]) {
        errmsg_set(err, errlen, "empty file name");
        return -1;
    }
    if (stat(path, &st) != 0) {
        errmsg_set(err, errlen, "%s: cannot open: %s", errmsg_field(path, shown, sizeof shown), strerror(errno));
        return -1;
    }
    return check_stat(path, &st, max, err, errlen);
}

FILE *infile_open(const char *path, long long max, char *err, size_t errlen)
{
    char shown[1024];
    struct stat st;
    if (!path || !path[0]) {
        errmsg_set(err, errlen, "empty file name");
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        errmsg_set(err, errlen, "%s: cannot open: %s", errmsg_field(path, shown, sizeof shown), strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        errmsg_set(err, errlen, "%s: cannot read: %s", errmsg_field(path, shown, sizeof shown), strerror(errno));
        close(fd);
        return NULL;
    }
    if (check_stat(path, &st, max, err, errlen) != 0) {
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        errmsg_set(err, errlen, "%s: cannot open: %s", errmsg_field(path, shown, sizeof shown), strerror(errno));
        close(fd);
    }
    return f;
}
