/* latsim/errmsg.h -- writing a one-line error message into a caller's buffer
 * (public: the library and the front end use the same helpers).
 *
 * Modules report errors as (char *err, size_t errlen) pairs; errmsg_set()
 * fills one, doing nothing when the caller passed no buffer.
 */
#ifndef LATSIM_PUBLIC_ERRMSG_H
#define LATSIM_PUBLIC_ERRMSG_H

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

/* Length of the valid UTF-8 sequence starting with the byte >= 0x80 at S (2 to
 * 4 bytes), or 0 when the bytes there are not one (overlong forms, surrogates
 * and code points past U+10FFFF included). */
static inline int errmsg_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (n == 0) return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))) return 0;
    if (n == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))) return 0;
    return n;
}

/* Copies S into BUF (size N) as one printable line: control characters and DEL
 * become \n, \r, \t or \xNN (an ANSI escape sequence cannot act on the
 * terminal), as do each byte that is not part of valid UTF-8 (a Latin-1 0xFF is
 * "\xff") and the two bytes of a C1 control character (U+0080 to U+009F, e.g.
 * "\xc2\x9b"); other UTF-8 text is kept.  Text beyond N - 4 bytes is cut and
 * marked "...".  A NULL S is shown as "".  Returns BUF. */
static inline const char *errmsg_field(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    if (n == 0) return buf;
    if (!s) s = "";
    for (const unsigned char *p = (const unsigned char *) s; *p;) {
        unsigned char c = *p;
        char esc[9];
        size_t m, used = 1;                /* bytes of ESC to write, bytes of S they stand for */
        int u = c >= 0x80 ? errmsg_utf8_len(p) : 1;
        if (c == '\n') m = (size_t) snprintf(esc, sizeof esc, "\\n");
        else if (c == '\r') m = (size_t) snprintf(esc, sizeof esc, "\\r");
        else if (c == '\t') m = (size_t) snprintf(esc, sizeof esc, "\\t");
        else if (c < 0x20 || c == 0x7f || u == 0) m = (size_t) snprintf(esc, sizeof esc, "\\x%02x", c);
        else if (c == 0xC2 && p[1] < 0xA0) { m = (size_t) snprintf(esc, sizeof esc, "\\xc2\\x%02x", p[1]); used = 2; }
        else { memcpy(esc, p, (size_t) u); m = used = (size_t) u; }
        if (k + m + 4 > n) {               /* no room for it and "..." */
            if (n >= 4) { memcpy(buf + (k < n - 4 ? k : n - 4), "...", 4); return buf; }
            break;
        }
        memcpy(buf + k, esc, m);
        k += m;
        p += used;
    }
    buf[k < n ? k : n - 1] = '\0';
    return buf;
}

/* Room for a user-supplied name or path shown by ERRMSG_SHOWN (cut beyond it). */
#define ERRMSG_SHOWN_MAX 2048

/* S (a name, path or value from the user) as errmsg_field shows it, for a
 * printf argument on a terminal: the copy is in a buffer that lives until the
 * end of the enclosing block. */
#define ERRMSG_SHOWN(s) errmsg_field((s), (char[ERRMSG_SHOWN_MAX]) { 0 }, ERRMSG_SHOWN_MAX)

#endif
