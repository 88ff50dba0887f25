/* values.c -- the values of a searched or varied key (latsim/plan.h): a
 * FROM:TO:STEP range or an a,b,c list, as plan --search/--tp/--replicas,
 * sweep --vary and [explore] axes give them, and the renaming of a scenario
 * error about such an assignment after the option that made it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/errmsg.h"
#include "latsim/plan.h"

/* Parses range part NAME (TEXT, LEN bytes) into *X.  Returns 0 or -1 + ERR. */
static int range_part(const char *name, const char *text, size_t len, double *x, char *err, size_t errlen)
{
    char buf[128];
    if (len == 0) { errmsg_set(err, errlen, "%s is empty", name); return -1; }
    if (len >= sizeof buf) { errmsg_set(err, errlen, "%s '%.40s...' is too long", name, text); return -1; }
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    *x = strtod(buf, &end);
    if (end == buf || *end || buf[0] == ' ' || buf[0] == '\t') {
        errmsg_set(err, errlen, "%s '%s' is not a number", name, buf);
        return -1;
    }
    if (!isfinite(*x)) {                      /* nan, inf, and 1e999 (HUGE_VAL) */
        errmsg_set(err, errlen, "%s '%s' is not a finite number", name, buf);
        return -1;
    }
    return 0;
}

int plan_range_parse(const char *spec, int step_optional, int max, plan_range *r, char *err, size_t errlen)
{
    const char *names[3] = { "FROM", "TO", "STEP" };
    double v[3] = { 0, 0, 1 };
    const char *p = spec;
    int k = 0;
    for (;; k++) {
        size_t len = strcspn(p, ":");
        if (k == 3) {
            errmsg_set(err, errlen, "expected FROM:TO%s (e.g. 1:40:2), got more than three parts", step_optional ? "[:STEP]" : ":STEP");
            return -1;
        }
        if (range_part(names[k], p, len, &v[k], err, errlen) != 0) return -1;
        if (!p[len]) break;
        p += len + 1;
    }
    if (k < 1 || (k < 2 && !step_optional)) {
        errmsg_set(err, errlen, "expected FROM:TO%s (e.g. 1:40:2)", step_optional ? "[:STEP]" : ":STEP");
        return -1;
    }
    double a = v[0], b = v[1], st = v[2];
    if (!(st > 0)) { errmsg_set(err, errlen, "STEP must be > 0, got %.10g", st); return -1; }
    if (b < a) { errmsg_set(err, errlen, "empty range: TO %.10g is below FROM %.10g", b, a); return -1; }
    /* (TO - FROM) / STEP may overflow to inf (FROM -1e308, TO 1e308): too many. */
    double cnt = floor((b - a) / st + 1e-9) + 1;
    if (!(cnt <= max)) {
        if (isfinite(cnt)) errmsg_set(err, errlen, cnt < 1e15 ? "%.0f values (at most %d): use a larger STEP or a narrower range"
                                                              : "%.4g values (at most %d): use a larger STEP or a narrower range", cnt, max);
        else errmsg_set(err, errlen, "too many values (at most %d): use a larger STEP or a narrower range", max);
        return -1;
    }
    *r = (plan_range) { a, b, st, (int) cnt };
    /* A STEP far below FROM's precision gives the same value again. */
    char prev[64], cur[64];
    for (int i = 0; i < r->n; i++) {
        plan_range_value(r, i, cur, sizeof cur);
        if (i > 0 && !strcmp(prev, cur)) {
            errmsg_set(err, errlen, "STEP %.10g is too small for FROM %.10g: the values repeat (%s) at 10 significant digits", st, a, cur);
            return -1;
        }
        memcpy(prev, cur, sizeof prev);
    }
    return 0;
}

void plan_range_value(const plan_range *r, int i, char *buf, size_t n)
{
    snprintf(buf, n, "%.10g", r->from + i * r->step);
}

int plan_list_value_check(const char *v, size_t len, size_t maxlen, char *err, size_t errlen)
{
    if (len == 0) { errmsg_set(err, errlen, "empty value in the list"); return -1; }
    if (len >= maxlen) { errmsg_set(err, errlen, "value '%.40s...' is longer than %zu characters", v, maxlen - 1); return -1; }
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int) len, v);
    char *end;
    double x = strtod(buf, &end);
    if (end != buf && !*end && !isfinite(x)) {      /* a number, but nan, inf or 1e999 */
        errmsg_set(err, errlen, "value '%s' is not a finite number", buf);
        return -1;
    }
    return 0;
}

void plan_relabel(char *err, size_t errlen, const char *opt, const char *section, const char *key)
{
    char about[400];
    snprintf(about, sizeof about, "[%s] %s:", section, key);
    if (strncmp(err, "--set: ", 7) != 0 || !strstr(err, about)) return;
    char tail[2048];
    snprintf(tail, sizeof tail, "%s", err + 5);          /* ": [section] key: ..." */
    snprintf(err, errlen, "%s%s", opt, tail);
}
