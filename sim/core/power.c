/* power.c -- board power against busy share, and energy over a window (power.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/csvread.h"
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
        if (!(w >= 0) || !(w <= POWER_MAX_W)) {
            errmsg_set(err, errlen, "watts %g: expected a value from 0 to %g W (one board)", w, POWER_MAX_W);
            return -1;
        }
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

#define POWER_BINS 21         /* utilisation bins of 0.05 centred on 0, 0.05, ..., 1 */

typedef struct load_ctx {
    const char *gpu;          /* the pool's GPU */
    int cu, cw, cg;           /* columns: utilization, watts, gpu (-1: none) */
    double su[POWER_BINS], sw[POWER_BINS];   /* sums per bin */
    long n[POWER_BINS];       /* samples per bin */
    long rows;                /* rows of GPU */
} load_ctx;

/* Adds sample (U, W) to its bin. */
static void bin_add(load_ctx *c, double u, double w)
{
    int b = (int) floor(u * (POWER_BINS - 1) + 0.5);
    c->su[b] += u;
    c->sw[b] += w;
    c->n[b]++;
    c->rows++;
}

/* C from the bins of X (at least one sample): a point per bin with samples. */
static void bins_to_curve(const load_ctx *x, power_curve *c)
{
    memset(c, 0, sizeof *c);
    for (int b = 0; b < POWER_BINS; b++)
        if (x->n[b] > 0) {
            double u = x->su[b] / (double) x->n[b];
            if (c->n > 0 && !(u > c->u[c->n - 1])) u = nextafter(c->u[c->n - 1], 2);   /* bins are ordered */
            c->u[c->n] = u;
            c->w[c->n] = x->sw[b] / (double) x->n[b];
            c->n++;
        }
}

static int load_header(void *vctx, const csvread_row *row, char *err, size_t errlen)
{
    load_ctx *c = vctx;
    if ((c->cu = csvread_need_col(row, "utilization", err, errlen)) < 0) return -1;
    if ((c->cw = csvread_need_col(row, "watts", err, errlen)) < 0) return -1;
    c->cg = csvread_col(row, "gpu");
    return 0;
}

static int load_row(void *vctx, const csvread_row *row, char *err, size_t errlen)
{
    load_ctx *c = vctx;
    if (c->cg >= 0 && strcasecmp(row->field[c->cg], c->gpu)) return 0;
    double u, w;
    if (csvread_real(row->field[c->cu], &u) || !(u >= 0 && u <= 1))
        return csvread_fail(row, row->line, err, errlen, "column utilization: '%s' is not a busy share in [0, 1]", row->field[c->cu]);
    if (csvread_real(row->field[c->cw], &w) || !(w >= 0) || !(w <= POWER_MAX_W))
        return csvread_fail(row, row->line, err, errlen, "column watts: '%s' is not a power from 0 to %g W", row->field[c->cw],
                            POWER_MAX_W);
    bin_add(c, u, w);
    return 0;
}

int power_curve_load(const char *path, const char *dir, const char *gpu, power_curve *c, char *err, size_t errlen)
{
    char full[4096];
    if (path[0] != '/' && dir && dir[0]) snprintf(full, sizeof full, "%s/%s", dir, path);
    else snprintf(full, sizeof full, "%s", path);
    load_ctx x = { .gpu = gpu, .cg = -1 };
    if (csvread_file(full, load_header, load_row, &x, err, errlen) != 0) return -1;
    if (x.rows == 0) {
        errmsg_set(err, errlen, "%s: no rows%s%s (columns utilization, watts%s)", full, x.cg >= 0 ? " for gpu " : "",
                   x.cg >= 0 ? gpu : "", x.cg >= 0 ? ", gpu" : "");
        return -1;
    }
    bins_to_curve(&x, c);
    return 0;
}

static power_rows_fn rows_loader;   /* the calibrator's (power_set_loader) */

void power_set_loader(power_rows_fn fn) { rows_loader = fn; }

static void stored_add(void *ctx, double u, double w)
{
    load_ctx *c = ctx;
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    bin_add(c, u, w);
}

int power_curve_stored(sqlite3 *db, const char *gpu, power_curve *c, char *err, size_t errlen)
{
    load_ctx x = { .gpu = gpu, .cg = -1 };
    int n = rows_loader && db ? rows_loader(db, gpu, stored_add, &x, err, errlen) : 0;
    if (n < 0) return -1;
    if (x.rows == 0) {
        errmsg_set(err, errlen, "calib: no power samples of GPU %s in the calibration store (import them: latsim calib "
                   "import power FILE.csv --gpu %s)", gpu, gpu);
        return -1;
    }
    bins_to_curve(&x, c);
    /* Monotone: pool adjacent violators (watts decreasing with utilisation) into
     * their sample-weighted mean, the pooled points keeping their utilisations. */
    double wt[POWER_MAX_POINTS], lvl[POWER_MAX_POINTS];
    int len[POWER_MAX_POINTS], nb = 0;
    for (int b = 0, i = 0; b < POWER_BINS; b++) {
        if (x.n[b] == 0) continue;
        lvl[nb] = c->w[i++];
        wt[nb] = (double) x.n[b];
        len[nb] = 1;
        nb++;
        while (nb > 1 && lvl[nb - 2] > lvl[nb - 1]) {
            double W = wt[nb - 2] + wt[nb - 1];
            lvl[nb - 2] = (lvl[nb - 2] * wt[nb - 2] + lvl[nb - 1] * wt[nb - 1]) / W;
            wt[nb - 2] = W;
            len[nb - 2] += len[nb - 1];
            nb--;
        }
    }
    for (int k = 0, i = 0; k < nb; k++)
        for (int j = 0; j < len[k]; j++) c->w[i++] = lvl[k];
    c->from_db = 1;
    return 0;
}
