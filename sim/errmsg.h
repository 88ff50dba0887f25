/* errmsg.h -- writing a one-line error message into a caller's buffer.
 *
 * Modules report errors as (char *err, size_t errlen) pairs; errmsg_set()
 * fills one, doing nothing when the caller passed no buffer.
 */
#ifndef LATSIM_ERRMSG_H
#define LATSIM_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4)))
static inline void errmsg_set(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Copies S into BUF (size N) as one printable line: control characters and DEL
 * become \n, \r, \t or \xNN (an ANSI escape sequence cannot act on the
 * terminal), and text beyond N - 4 bytes is cut and marked "...".  Returns BUF. */
static inline const char *errmsg_field(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    if (n == 0) return buf;
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;
        char esc[5];
        size_t m;
        if (c == '\n') m = (size_t) snprintf(esc, sizeof esc, "\\n");
        else if (c == '\r') m = (size_t) snprintf(esc, sizeof esc, "\\r");
        else if (c == '\t') m = (size_t) snprintf(esc, sizeof esc, "\\t");
        else if (c < 0x20 || c == 0x7f) m = (size_t) snprintf(esc, sizeof esc, "\\x%02x", c);
        else { esc[0] = (char) c; esc[1] = '\0'; m = 1; }
        if (k + m + 4 > n) {               /* no room for it and "..." */
            if (n >= 4) { memcpy(buf + (k < n - 4 ? k : n - 4), "...", 4); return buf; }
            break;
        }
        memcpy(buf + k, esc, m);
        k += m;
    }
    buf[k < n ? k : n - 1] = '\0';
    return buf;
}

#endif
