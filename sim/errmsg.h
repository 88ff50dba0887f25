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

#endif
