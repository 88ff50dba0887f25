/* scn.c -- typed reading of scenario keys (scn.h): each getter parses one
 * value and reports a bad one as "FILE:LINE: [section] key: message". */
#include "core/scn.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int vfail(scn_ctx *x, const cfg_entry *e, const char *section, const char *key, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

int scn_fail_at(scn_ctx *x, const cfg_entry *e, const char *section, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(x, e, section, key, fmt, ap);
    va_end(ap);
    return -1;
}

static int vfail(scn_ctx *x, const cfg_entry *e, const char *section, const char *key, const char *fmt, va_list ap)
{
    char where[512], msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    cfg_where(x->raw, e, where, sizeof where);
    const cfg_section *cs = e ? NULL : cfg_section_get(x->raw, section);
    if (cs) {                                 /* a missing key: point at its section */
        if (cs->line > 0)
            snprintf(where, sizeof where, "%s:%d", x->raw->path, cs->line);
        else
            snprintf(where, sizeof where, "--set");   /* a section only --set created */
    }
    if (key) snprintf(x->err, x->errlen, "%s: [%s] %s: %s", where, section, key, msg);
    else snprintf(x->err, x->errlen, "%s: [%s]: %s", where, section, msg);
    return -1;
}

const char *scn_entry(scn_ctx *x, const char *sec, const char *key, const cfg_entry **e)
{
    *e = cfg_get(x->raw, sec, key);
    return *e ? (*e)->value : NULL;
}

/* Reads an integer in [lo, hi]; DEF when absent. */
int scn_i64(scn_ctx *x, const char *sec, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out)
{
    const cfg_entry *e;
    const char *v = scn_entry(x, sec, key, &e);
    if (!v) { *out = def; return 0; }
    char *end;
    errno = 0;
    double d = strtod(v, &end);     /* accepts 1e6 as well as 1000000 */
    while (*end && isspace((unsigned char) *end)) end++;
    if (end == v || *end || errno || d != floor(d) || !isfinite(d))
        return scn_fail_at(x, e, sec, key, "expected a whole number, got '%s'", v);
    if (d < (double) lo || d > (double) hi || d >= 9.2e18) {
        if (hi == INT64_MAX) return scn_fail_at(x, e, sec, key, "must be >= %lld, got '%s'", (long long) lo, v);
        return scn_fail_at(x, e, sec, key, "must be between %lld and %lld, got '%s'", (long long) lo, (long long) hi, v);
    }
    *out = (int64_t) d;
    return 0;
}

int scn_int(scn_ctx *x, const char *sec, const char *key, int def, int lo, int hi, int *out)
{
    int64_t v;
    if (scn_i64(x, sec, key, def, lo, hi, &v)) return -1;
    *out = (int) v;
    return 0;
}

/* Reads a number; LO_OPEN: must be > lo, else >= lo; HI: <= hi. */
int scn_num(scn_ctx *x, const char *sec, const char *key, double def, double lo, int lo_open, double hi, double *out)
{
    const cfg_entry *e;
    const char *v = scn_entry(x, sec, key, &e);
    if (!v) { *out = def; return 0; }
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    while (*end && isspace((unsigned char) *end)) end++;
    if (end == v || *end || errno || !isfinite(d))
        return scn_fail_at(x, e, sec, key, "expected a number, got '%s'", v);
    if (lo_open ? !(d > lo) : !(d >= lo))
        return scn_fail_at(x, e, sec, key, "must be %s %g, got '%s'", lo_open ? ">" : ">=", lo, v);
    if (d > hi) return scn_fail_at(x, e, sec, key, "must be <= %g, got '%s'", hi, v);
    *out = d;
    return 0;
}

int scn_bool(scn_ctx *x, const char *sec, const char *key, int def, int *out)
{
    const cfg_entry *e;
    const char *v = scn_entry(x, sec, key, &e);
    if (!v) { *out = def; return 0; }
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "on")) *out = 1;
    else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "off")) *out = 0;
    else return scn_fail_at(x, e, sec, key, "expected yes or no, got '%s'", v);
    return 0;
}

/* Reads one of the '|'-separated CHOICES; returns its index in *OUT. */
int scn_enum(scn_ctx *x, const char *sec, const char *key, const char *choices, int def, int *out)
{
    const cfg_entry *e;
    const char *v = scn_entry(x, sec, key, &e);
    if (!v) { *out = def; return 0; }
    int i = 0;
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t) (bar - p) : strlen(p);
        if (strlen(v) == n && strncasecmp(v, p, n) == 0) { *out = i; return 0; }
        i++;
        p += n + (bar ? 1 : 0);
    }
    char list[256];
    snprintf(list, sizeof list, "%s", choices);
    for (char *q = list; *q; q++) if (*q == '|') *q = ',';
    return scn_fail_at(x, e, sec, key, "unknown value '%s' (valid: %s)", v, list);
}

int scn_str(scn_ctx *x, const char *sec, const char *key, const char *def, char *out, size_t n)
{
    const cfg_entry *e;
    const char *v = scn_entry(x, sec, key, &e);
    if (!v) v = def;
    if (strlen(v) >= n) return scn_fail_at(x, e, sec, key, "value too long (max %zu characters)", n - 1);
    snprintf(out, n, "%s", v);
    return 0;
}

int scn_dist(scn_ctx *x, const char *sec, const char *key, const char *def, dist *out)
{
    const cfg_entry *e;
    const char *v = scn_entry(x, sec, key, &e);
    if (!v && !def) return scn_fail_at(x, NULL, sec, key, "missing (required)");
    char msg[512];
    if (dist_parse(out, v ? v : def, x->raw->dir, msg, sizeof msg) != 0)
        return scn_fail_at(x, e, sec, key, "%s", msg);
    return 0;
}

const char *scn_value(scn_ctx *x, const char *sec, const char *key)
{
    const cfg_entry *e;
    return scn_entry(x, sec, key, &e);
}

int scn_fail(scn_ctx *x, const char *sec, const char *key, const char *fmt, ...)
{
    const cfg_entry *e = key ? cfg_get(x->raw, sec, key) : NULL;
    va_list ap;
    va_start(ap, fmt);
    vfail(x, e, sec, key, fmt, ap);
    va_end(ap);
    return -1;
}

int scn_fail_sec(scn_ctx *x, const char *sec, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(x, NULL, sec, key, fmt, ap);
    va_end(ap);
    return -1;
}

/* Expected self-renewing events of KEY in section SEC: UNITS x DURATION_S /
 * CYCLE_S (the mean cycle, s: CYCLE names its parts) x EACH (events per cycle),
 * refused beyond SCN_MAX_PERIODIC_EVENTS.  Returns 0 or -1 with the message. */
int scn_check_period(scn_ctx *x, const char *sec, const char *key, double units, double duration_s, double cycle_s,
                        const char *cycle, int each)
{
    double n = units * duration_s / cycle_s * each;
    if (!(n > SCN_MAX_PERIODIC_EVENTS)) return 0;
    return scn_fail(x, sec, key, "%g unit%s x %.4g s of expected simulated time / a mean cycle of %g s (%s) x %d event%s "
                "each = %.3g events, more than the %.0e a run may hold (lengthen the period or shorten the run)",
                units, units == 1 ? "" : "s", duration_s, cycle_s, cycle, each, each == 1 ? "" : "s", n,
                SCN_MAX_PERIODIC_EVENTS);
}
