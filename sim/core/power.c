/* power.c -- board power against busy share, and energy over a window (power.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/power.h"
#include "engine/errmsg.h"

int power_curve_parse(const char *text, power_curve *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *p = text;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        char *end;
        double u = strtod(p, &end);
        if (end == p || *end != ':') {
            errmsg_set(err, errlen, "expected points u:w separated by commas (e.g. \"0:90, 1:700\"), got '%s'", text);
            return -1;
        }
        p = end + 1;
        double w = strtod(p, &end);
        if (end == p) {
            errmsg_set(err, errlen, "expected points u:w separated by commas (e.g. \"0:90, 1:700\"), got '%s'", text);
            return -1;
        }
        p = end;
        while (*p == ' ' || *p == '\t') p++;
        if (*p && *p != ',') {
            errmsg_set(err, errlen, "expected points u:w separated by commas (e.g. \"0:90, 1:700\"), got '%s'", text);
            return -1;
        }
        if (!(u >= 0 && u <= 1)) { errmsg_set(err, errlen, "utilisation %g outside [0, 1]", u); return -1; }
        if (!(w >= 0) || !isfinite(w)) { errmsg_set(err, errlen, "watts %g: expected a finite value >= 0", w); return -1; }
        if (c->n > 0 && !(u > c->u[c->n - 1])) {
            errmsg_set(err, errlen, "utilisation %g after %g: the points must be in increasing utilisation", u, c->u[c->n - 1]);
            return -1;
        }
        if (c->n == POWER_MAX_POINTS) { errmsg_set(err, errlen, "more than %d points", POWER_MAX_POINTS); return -1; }
        c->u[c->n] = u;
        c->w[c->n] = w;
        c->n++;
    }
    if (c->n == 0) { errmsg_set(err, errlen, "no points (expected u:w, u:w, ...)"); return -1; }
    return 0;
}

double power_at(const gpu_spec *g, const power_curve *c, double u)
{
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    if (c && c->n > 0) {
        if (u <= c->u[0]) return c->w[0];
        for (int i = 1; i < c->n; i++)
            if (u <= c->u[i]) return c->w[i - 1] + (c->w[i] - c->w[i - 1]) * (u - c->u[i - 1]) / (c->u[i] - c->u[i - 1]);
        return c->w[c->n - 1];
    }
    if (!(g->max_w > 0)) return NAN;
    return g->idle_w + (g->max_w - g->idle_w) * u;
}

double power_energy_j(const gpu_spec *g, const power_curve *c, int n_gpu, double powered_s, double busy_s)
{
    if (!(c && c->n > 0) && !(g->max_w > 0)) return NAN;
    if (!(powered_s > 0)) return 0;
    if (!(c && c->n > 0))   /* linear: summed exactly, without the division */
        return n_gpu * (g->idle_w * powered_s + (g->max_w - g->idle_w) * (busy_s < powered_s ? busy_s : powered_s));
    return n_gpu * powered_s * power_at(g, c, busy_s / powered_s);
}
