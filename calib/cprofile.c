/* cprofile.c -- the operator-profile cost model (see cprofile.h).
 *
 * Building a profile selects the measurements, fits the attention model, computes
 * the cross-validated interpolation error and stores the fit with the ids of every
 * measurement used; loading (also used right after building) rebuilds the curves
 * from exactly those linked measurements, so a stored profile always evaluates
 * the same way.
 */
#include "cprofile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "engine/errmsg.h"
#include "nnls.h"

const char *const cprofile_part_names[CP_NPARTS] = {
    "linear", "embedding", "attention_prefill", "attention_decode", "allreduce", "cpu",
};

const char *const cprofile_attn_names[CP_NATTN] = {
    "prefill_ms_per_layer", "prefill_ms_per_mpair", "prefill_ms_per_ktok",
    "decode_ms_per_layer", "decode_ms_per_mkv", "decode_ms_per_seq",
};

/* ---- curves ----------------------------------------------------------------------- */

typedef struct xy {
    double x, y;
} xy;

static int cmp_xy(const void *a, const void *b)
{
    double d = ((const xy *)a)->x - ((const xy *)b)->x;
    return d < 0 ? -1 : d > 0;
}

void cp_curve_free(cp_curve *c)
{
    if (c->it)
        gsl_interp_free(c->it);
    free(c->x);
    free(c->y);
    memset(c, 0, sizeof *c);
}

int cp_curve_build(cp_curve *c, const double *x, const double *y, size_t n, int proportional)
{
    memset(c, 0, sizeof *c);
    c->proportional = proportional;
    if (n == 0)
        return 0;
    xy *p = malloc(n * sizeof *p);
    c->x = malloc(n * sizeof *c->x);
    c->y = malloc(n * sizeof *c->y);
    if (!p || !c->x || !c->y) {
        free(p);
        cp_curve_free(c);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (xy){ x[i], y[i] };
    qsort(p, n, sizeof *p, cmp_xy);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double s = 0;
        for (; j < n && p[j].x == p[i].x; j++)
            s += p[j].y;
        c->x[m] = p[i].x;
        c->y[m] = s / (double)(j - i);
        m++;
        i = j;
    }
    free(p);
    c->n = m;
    if (m >= 2) {
        c->it = gsl_interp_alloc(m >= 3 ? gsl_interp_steffen : gsl_interp_linear, m);
        if (!c->it || gsl_interp_init(c->it, c->x, c->y, m) != GSL_SUCCESS) {
            cp_curve_free(c);
            return -1;
        }
    }
    return 0;
}

double cp_curve_eval(const cp_curve *c, double x, int *extrap)
{
    if (c->n == 0)
        return 0;
    if (x <= c->x[0] || c->n == 1) {
        if (x < c->x[0] && extrap)
            *extrap = 1;
        return c->n == 1 && x > c->x[0] && c->proportional ? c->y[0] * x / c->x[0] : c->y[0];
    }
    size_t n = c->n;
    if (x > c->x[n - 1]) {
        if (extrap)
            *extrap = 1;
        if (c->proportional)
            return c->y[n - 1] * x / c->x[n - 1];
        double slope = (c->y[n - 1] - c->y[n - 2]) / (c->x[n - 1] - c->x[n - 2]);
        return c->y[n - 1] + fmax(slope, 0) * (x - c->x[n - 1]);
    }
    return gsl_interp_eval(c->it, c->x, c->y, x, NULL);
}

/* ---- evaluation ------------------------------------------------------------------- */

double cprofile_linear_ms(const cprofile *p, double tokens)
{
    return cp_curve_eval(&p->lin, tokens, NULL);
}

int cprofile_op_class(const char *name)
{
    if (!strcmp(name, "attn_pre_proj")) return CP_CLS_QKV;
    if (!strcmp(name, "attn_post_proj")) return CP_CLS_OUT;
    if (!strncmp(name, "mlp_", 4)) return CP_CLS_MLP;
    return CP_CLS_NORM;
}

void cprofile_linear_classes(const cprofile *p, double tokens, double out[CP_NCLS])
{
    for (int k = 0; k < CP_NCLS; k++) out[k] = cp_curve_eval(&p->cls[k], tokens, NULL);
}

double cprofile_step_ms(const cprofile *p, const cost_step *s, double *parts, int *extrap)
{
    double part[CP_NPARTS] = { 0 };
    double tokens = (double)s->prefill_tokens + (double)cost_step_decode_tokens(s);
    double L = p->model.layers, sum = 0;
    int ex = 0;
    if (tokens > 0) {
        part[CP_LINEAR] = L * cp_curve_eval(&p->lin, tokens, &ex);
        part[CP_EMB] = cp_curve_eval(&p->emb, tokens, &ex);
        part[CP_ATTN_PREFILL] = cprofile_attn_prefill_ms(p, s);
        part[CP_ATTN_DECODE] = cprofile_attn_decode_ms(p, s);
        if (p->tp > 1)
            part[CP_ALLREDUCE] = 2 * L * cp_curve_eval(&p->ar, tokens * p->model.hidden * 2, &ex);
        part[CP_CPU] = cp_curve_eval(&p->cpu, (double)s->prefill_seqs + s->decode_seqs, NULL);
    }
    for (int k = 0; k < CP_NPARTS; k++) {
        sum += part[k];
        if (parts)
            parts[k] = part[k];
    }
    if (extrap)
        *extrap = ex;
    return sum;
}

/* ---- loading ---------------------------------------------------------------------- */

typedef struct vec {
    double *x, *y;           /* points */
    size_t n, cap;           /* used, allocated */
} vec;

static int vec_push(vec *v, double x, double y)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? 2 * v->cap : 256;
        double *a = realloc(v->x, nc * sizeof *a);
        if (!a)
            return -1;
        v->x = a;
        double *b = realloc(v->y, nc * sizeof *b);
        if (!b)
            return -1;
        v->y = b;
        v->cap = nc;
    }
    v->x[v->n] = x;
    v->y[v->n] = y;
    v->n++;
    return 0;
}

static void vec_free(vec *v)
{
    free(v->x);
    free(v->y);
    memset(v, 0, sizeof *v);
}

/* Sums the operator rows of one CSV row ((file, line) groups) into LIN and EMB,
 * and by class (cprofile_op_class) into CLS[CP_NCLS] (NULL: not). */
static int load_ops(sqlite3 *db, const char *scope, int64_t key, const char *model, const char *gpu,
                    int tp, vec *lin, vec *emb, vec *cls)
{
    double c[CP_NCLS] = { 0 };
    char sql[768];
    /* One point per CSV row (file, line) or, for live measurements (no file), per
     * run (measured_at) and token count. */
    snprintf(sql, sizeof sql, "SELECT m.file || '|' || m.measured_at, m.line, m.name, m.tokens, m.time_ms"
             " FROM calib_meas m WHERE m.what = 'op' AND %s ORDER BY m.file, m.measured_at, m.line,"
             " m.tokens, m.id", scope);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (key)
        sqlite3_bind_int64(st, 1, key);
    else {
        sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, gpu, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, tp);
    }
    char file[1024] = "";
    long line = -1;
    double tok = 0, sum = 0, e = 0;
    int have = 0, have_emb = 0, rc = 0, s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        const char *f = (const char *)sqlite3_column_text(st, 0);
        long ln = sqlite3_column_int64(st, 1);
        if (have && (ln != line || strcmp(f ? f : "", file) != 0 || sqlite3_column_double(st, 3) != tok)) {
            if (vec_push(lin, tok, sum) || (have_emb && vec_push(emb, tok, e)))
                rc = -1;
            for (int k = 0; cls && k < CP_NCLS; k++)
                if (vec_push(&cls[k], tok, c[k]))
                    rc = -1;
            have = have_emb = 0;
            sum = e = 0;
            memset(c, 0, sizeof c);
        }
        snprintf(file, sizeof file, "%s", f ? f : "");
        line = ln;
        tok = sqlite3_column_double(st, 3);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        if (name && strcmp(name, "emb") == 0) {
            e = sqlite3_column_double(st, 4);
            have_emb = 1;
        } else {
            sum += sqlite3_column_double(st, 4);
            c[cprofile_op_class(name ? name : "")] += sqlite3_column_double(st, 4);
        }
        have = 1;
    }
    if (have && (vec_push(lin, tok, sum) || (have_emb && vec_push(emb, tok, e))))
        rc = -1;
    for (int k = 0; have && cls && k < CP_NCLS; k++)
        if (vec_push(&cls[k], tok, c[k]))
            rc = -1;
    if (s != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

/* X and Y columns of linked measurements WHAT of fit ID. */
static int load_xy(sqlite3 *db, int64_t id, const char *what, const char *xcol, vec *v)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT m.%s, m.time_ms FROM calib_fit_meas f JOIN calib_meas m ON"
             " m.id = f.meas_id WHERE f.fit_id = ? AND m.what = '%s' ORDER BY m.id", xcol, what);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int s, rc = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        if (vec_push(v, sqlite3_column_double(st, 0), sqlite3_column_double(st, 1)))
            rc = -1;
    if (s != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

/* Heads per GPU x head_dim of a geometry name "q64_kv8_d128" measured at TP. */
static int geometry(const char *name, int tp, double *q, double *kv)
{
    int qh, kvh, d;
    if (sscanf(name, "q%d_kv%d_d%d", &qh, &kvh, &d) != 3 || tp < 1)
        return -1;
    *q = (double)qh / tp * d;
    *kv = fmax(1.0, (double)kvh / tp) * d;
    return 0;
}

void cprofile_free(cprofile *p)
{
    cp_curve_free(&p->lin);
    cp_curve_free(&p->emb);
    cp_curve_free(&p->ar);
    cp_curve_free(&p->cpu);
    for (int k = 0; k < CP_NCLS; k++)
        cp_curve_free(&p->cls[k]);
}

int cprofile_load(sqlite3 *db, int64_t id, cprofile *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    int s = cdb_load_fit(db, id, &p->fit, err, errlen);
    if (s != 0)
        return s;
    if (strcmp(p->fit.kind, "profile") != 0) {
        errmsg_set(err, errlen, "calibrated model %lld is of kind %s, not profile", (long long)id,
                   p->fit.kind);
        return 1;
    }
    char e2[512];
    if (catalog_model(db, p->fit.model, &p->model, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "calibrated model %lld: %s", (long long)id, e2);
        return -1;
    }
    p->tp = atoi(p->fit.tps);
    for (int i = 0; i < p->fit.ncoef; i++)
        for (int k = 0; k < CP_NATTN; k++)
            if (strcmp(p->fit.coef[i].name, cprofile_attn_names[k]) == 0)
                p->attn[k] = p->fit.coef[i].value;
    vec lin = { 0 }, emb = { 0 }, ar = { 0 }, cpu = { 0 }, cls[CP_NCLS] = { { 0 } };
    int rc = -1;
    if (load_ops(db, "m.id IN (SELECT meas_id FROM calib_fit_meas WHERE fit_id = ?)", id, NULL,
                 NULL, 0, &lin, &emb, cls) ||
        load_xy(db, id, "allreduce", "bytes", &ar) || load_xy(db, id, "cpu_overhead", "batch", &cpu)) {
        errmsg_set(err, errlen, "calibrated model %lld: cannot read its measurements: %s",
                   (long long)id, sqlite3_errmsg(db));
        goto done;
    }
    /* The attention measurements' geometry sets the scaling to this model. */
    sqlite3_stmt *st = NULL;
    double qm = 0, kvm = 0;
    if (sqlite3_prepare_v2(db, "SELECT m.name, m.tp FROM calib_fit_meas f JOIN calib_meas m ON"
                           " m.id = f.meas_id WHERE f.fit_id = ? AND m.what LIKE 'attn_%' LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW)
            geometry((const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1), &qm, &kvm);
    }
    sqlite3_finalize(st);
    if (qm <= 0 || lin.n == 0) {
        errmsg_set(err, errlen, "calibrated model %lld: its operator or attention measurements are "
                   "missing from the database", (long long)id);
        goto done;
    }
    int tp = p->tp >= 1 ? p->tp : 1;
    p->q_scale = (double)p->model.heads / tp * p->model.head_dim / qm;
    p->kv_scale = fmax(1.0, (double)p->model.kv_heads / tp) * p->model.head_dim / kvm;
    if (cp_curve_build(&p->lin, lin.x, lin.y, lin.n, 1) || cp_curve_build(&p->emb, emb.x, emb.y, emb.n, 1) ||
        cp_curve_build(&p->ar, ar.x, ar.y, ar.n, 0) || cp_curve_build(&p->cpu, cpu.x, cpu.y, cpu.n, 0)) {
        errmsg_set(err, errlen, "out of memory");
        cprofile_free(p);
        goto done;
    }
    for (int k = 0; k < CP_NCLS; k++)
        if (cp_curve_build(&p->cls[k], cls[k].x, cls[k].y, cls[k].n, 1)) {
            errmsg_set(err, errlen, "out of memory");
            cprofile_free(p);
            goto done;
        }
    rc = 0;
done:
    for (int k = 0; k < CP_NCLS; k++)
        vec_free(&cls[k]);
    vec_free(&lin);
    vec_free(&emb);
    vec_free(&ar);
    vec_free(&cpu);
    return rc;
}

/* ---- building --------------------------------------------------------------------- */

typedef struct ids {
    int64_t *v;              /* measurement ids */
    size_t n, cap;           /* used, allocated */
} ids;

static int ids_push(ids *d, int64_t id)
{
    if (d->n == d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 1024;
        int64_t *a = realloc(d->v, nc * sizeof *a);
        if (!a)
            return -1;
        d->v = a;
        d->cap = nc;
    }
    d->v[d->n++] = id;
    return 0;
}

/* Appends the ids returned by SQL (text parameters P1..P3, int parameter INT at 4). */
static int collect(sqlite3 *db, const char *sql, const char *p1, const char *p2, int i3, ids *d)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (p1) sqlite3_bind_text(st, 1, p1, -1, SQLITE_STATIC);
    if (p2) sqlite3_bind_text(st, 2, p2, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, i3);
    int s, rc = 0;
    while ((s = sqlite3_step(st)) == SQLITE_ROW)
        if (ids_push(d, sqlite3_column_int64(st, 0)))
            rc = -1;
    if (s != SQLITE_DONE)
        rc = -1;
    sqlite3_finalize(st);
    return rc;
}

/* Fits one attention phase (prefill: PRE = 1) on the GPU's measurements of
 * geometry GEO; fills C[0..2], their standard errors and the CV error. */
static int fit_attn(sqlite3 *db, const char *gpu, const char *geo, int pre, double *c, double *se,
                    double *cv, ids *d, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT id, batch, tokens, context, time_ms FROM calib_meas WHERE"
                           " what = ? AND gpu = ? AND name = ? AND time_ms > 0 ORDER BY id", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, pre ? "attn_prefill" : "attn_decode", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, gpu, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, geo, -1, SQLITE_STATIC);
    vec a = { 0 }, b = { 0 };   /* a: (f1, f2), b: (y, unused) */
    int s, rc = -1;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        double B = sqlite3_column_double(st, 1), T = sqlite3_column_double(st, 2),
               K = sqlite3_column_double(st, 3), y = sqlite3_column_double(st, 4);
        double f1 = pre ? B * (T * K + T * (T + 1) / 2) / 1e6 : B * (K + 1) / 1e6;
        double f2 = pre ? B * T / 1e3 : B;
        if (vec_push(&a, f1, f2) || vec_push(&b, y, 0) || ids_push(d, sqlite3_column_int64(st, 0)))
            goto done;
    }
    if (s != SQLITE_DONE)
        goto done;
    if (a.n < 4) {
        errmsg_set(err, errlen, "profile: %zu attention %s measurements on %s (need at least 4): "
                   "import attention profiles (latsim calib import vidur DIR)", a.n,
                   pre ? "prefill" : "decode", gpu);
        rc = -2;
        goto done;
    }
    gsl_matrix *X = gsl_matrix_alloc(a.n, 3);
    gsl_vector *y = gsl_vector_alloc(a.n), *w = gsl_vector_alloc(a.n);
    if (X && y && w) {
        for (size_t i = 0; i < a.n; i++) {
            gsl_matrix_set(X, i, 0, 1);
            gsl_matrix_set(X, i, 1, a.x[i]);
            gsl_matrix_set(X, i, 2, a.y[i]);
            gsl_vector_set(y, i, b.x[i]);
            gsl_vector_set(w, i, 1 / (b.x[i] * b.x[i]));
        }
        nnls_result r;
        if (nnls_fit(X, y, w, NULL, &r, err, errlen) == 0) {
            for (int k = 0; k < 3; k++) {
                c[k] = r.b[k];
                se[k] = r.status[k] == NNLS_FITTED ? r.se[k] : 0;
            }
            *cv = nnls_cv_mape(X, y, w, NULL, a.n < 5 ? a.n : 5, err, errlen);
            rc = 0;
        }
    }
    gsl_matrix_free(X);
    gsl_vector_free(y);
    gsl_vector_free(w);
done:
    sqlite3_finalize(st);
    vec_free(&a);
    vec_free(&b);
    return rc;
}

/* Held-out interpolation error of a curve: point i in fold i % K predicted from
 * the other folds (the first and last points stay in every fit, so the held-out
 * points are interpolated, as the profile is used). */
static double curve_cv(const vec *v, size_t k)
{
    cp_curve all;
    if (cp_curve_build(&all, v->x, v->y, v->n, 1) != 0 || all.n < 3) {
        cp_curve_free(&all);
        return NAN;
    }
    if (all.n < k + 2)
        k = all.n - 2;   /* few points: fewer folds, each still holding interior points out */
    double ape = 0;
    size_t cnt = 0;
    double *x = malloc(all.n * sizeof *x), *y = malloc(all.n * sizeof *y);
    for (size_t f = 0; x && y && f < k; f++) {
        size_t m = 0;
        for (size_t i = 0; i < all.n; i++)
            if (i == 0 || i == all.n - 1 || i % k != f) {
                x[m] = all.x[i];
                y[m] = all.y[i];
                m++;
            }
        cp_curve c;
        if (cp_curve_build(&c, x, y, m, 1) != 0)
            break;
        for (size_t i = 1; i + 1 < all.n; i++)
            if (i % k == f) {
                ape += fabs(cp_curve_eval(&c, all.x[i], NULL) - all.y[i]) / all.y[i];
                cnt++;
            }
        cp_curve_free(&c);
    }
    free(x);
    free(y);
    cp_curve_free(&all);
    return cnt ? 100 * ape / (double)cnt : NAN;
}

/* Checks that the measurements D->v[FROM..] hold sane times (cdb.h): a set whose
 * operators all took 0 ms (or 1e300) builds a model that predicts nothing.
 * Returns 0, 1 with "profile: FILE:LINE: ..." in ERR naming the first bad one, or
 * -1 on a database error. */
static int check_times(sqlite3 *db, const ids *d, size_t from, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT time_ms, file, line, what, name FROM calib_meas WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    for (size_t i = from; i < d->n && rc == 0; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, d->v[i]);
        if (sqlite3_step(st) != SQLITE_ROW) {
            rc = -1;
            break;
        }
        double t = sqlite3_column_double(st, 0);
        if (t >= CDB_MS_MIN && t <= CDB_MS_MAX)
            continue;
        const char *file = (const char *)sqlite3_column_text(st, 1);
        char where[320], f[256];
        if (file && file[0] && sqlite3_column_int64(st, 2) > 0)
            snprintf(where, sizeof where, "%s:%lld", errmsg_field(file, f, sizeof f),
                     (long long)sqlite3_column_int64(st, 2));
        else
            snprintf(where, sizeof where, "measurement %lld", (long long)d->v[i]);
        errmsg_set(err, errlen, "profile: %s: %s %s took %g ms, outside %g to %g ms: not a "
                   "measured time (correct it and import again into a fresh database; nothing stored)",
                   where, (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
                   t, CDB_MS_MIN, CDB_MS_MAX);
        rc = 1;
    }
    sqlite3_finalize(st);
    return rc;
}

int cprofile_build(sqlite3 *db, const char *model, const char *gpu, int tp, const char *tool,
                   cprofile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    model_spec m;
    gpu_spec g;
    char e2[512];
    if (catalog_model(db, model, &m, e2, sizeof e2) != 0 || catalog_gpu(db, gpu, &g, e2, sizeof e2) != 0) {
        errmsg_set(err, errlen, "profile: %s", e2);
        return -1;
    }
    ids d = { 0 };
    vec lin = { 0 }, emb = { 0 };
    int rc = -1;
    cdb_fit *f = &out->fit;
    const char *sqlerr = NULL;
    /* Operators of this model at this TP degree. */
    if (collect(db, "SELECT id FROM calib_meas WHERE what = 'op' AND model = ?1 AND gpu = ?2 AND tp = ?3"
                " ORDER BY id", m.name, g.name, tp, &d) ||
        load_ops(db, "m.model = ?1 AND m.gpu = ?2 AND m.tp = ?3", 0, m.name, g.name, tp, &lin, &emb, NULL)) {
        sqlerr = sqlite3_errmsg(db);
        goto done;
    }
    if (lin.n < 3) {
        errmsg_set(err, errlen, "profile: no operator measurements of %s on %s at tp %d (import a "
                   "profile: latsim calib import vidur DIR)", m.name, g.name, tp);
        goto done;
    }
    int ct = check_times(db, &d, 0, err, errlen);
    if (ct != 0) {
        if (ct < 0)
            sqlerr = sqlite3_errmsg(db);
        goto done;
    }
    /* Attention: this GPU's measurements, the geometry closest to the model's (exact
     * heads first); without any on this GPU, another GPU's carried over by datasheet
     * ratios (prefill by peak FLOP/s, decode by memory bandwidth). */
    char geo[64] = "", agpu[48] = "";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name, gpu FROM calib_meas WHERE what = 'attn_prefill'"
                           " GROUP BY gpu, name ORDER BY (gpu = ?) DESC, (name LIKE ? ESCAPE '\\') DESC,"
                           " count(*) DESC, gpu LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        char like[64];
        snprintf(like, sizeof like, "q%d\\_kv%d\\_%%", m.heads, m.kv_heads);
        sqlite3_bind_text(st, 1, g.name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, like, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW) {
            snprintf(geo, sizeof geo, "%s", (const char *)sqlite3_column_text(st, 0));
            snprintf(agpu, sizeof agpu, "%s", (const char *)sqlite3_column_text(st, 1));
        }
    }
    sqlite3_finalize(st);
    if (!geo[0]) {
        errmsg_set(err, errlen, "profile: no attention measurements on %s (import attention "
                   "profiles: latsim calib import vidur DIR)", g.name);
        goto done;
    }
    double c[6], se[6], cvp = NAN, cvd = NAN;
    size_t from = d.n;
    int s = fit_attn(db, agpu, geo, 1, c, se, &cvp, &d, err, errlen);
    if (s == 0)
        s = fit_attn(db, agpu, geo, 0, c + 3, se + 3, &cvd, &d, err, errlen);
    if (s == -1)
        sqlerr = sqlite3_errmsg(db);
    if (s != 0)
        goto done;
    if ((ct = check_times(db, &d, from, err, errlen)) != 0) {
        if (ct < 0)
            sqlerr = sqlite3_errmsg(db);
        goto done;
    }
    /* An attention fit without a held-out error is degenerate (e.g. every time the
     * same, or the fit failed); its error itself is reported in the note (the
     * model's own error, checked below, is the operators'). */
    if (!isfinite(cvp) || !isfinite(cvd)) {
        errmsg_set(err, errlen, "profile: the %s attention fit on %s (%s) has no cross-validated error "
                   "(degenerate measurements): nothing stored", !isfinite(cvp) ? "prefill" : "decode",
                   agpu, geo);
        goto done;
    }
    char carried[128] = "";
    if (strcasecmp(agpu, g.name) != 0) {
        gpu_spec a;
        if (catalog_gpu(db, agpu, &a, e2, sizeof e2) != 0) {
            errmsg_set(err, errlen, "profile: attention measured on %s: %s", agpu, e2);
            goto done;
        }
        double rc_ = a.bf16_tflops / g.bf16_tflops, rm = a.mem_bw_gbs / g.mem_bw_gbs;
        for (int k = 1; k <= 2; k++) {
            c[k] *= rc_;
            se[k] *= rc_;
            c[3 + k] *= rm;
            se[3 + k] *= rm;
        }
        snprintf(carried, sizeof carried, ", carried from %s by datasheet ratios %.3g (compute) %.3g (memory)",
                 agpu, rc_, rm);
    }
    /* All-reduce: the GPU's cluster with all TP GPUs in one node, DGX first. */
    char cluster[64] = "";
    if (tp > 1) {
        char like[64], dpn[32];
        snprintf(like, sizeof like, "%s\\_%%", g.name);
        snprintf(dpn, sizeof dpn, "dpn%d", tp);
        if (sqlite3_prepare_v2(db, "SELECT gpu FROM calib_meas WHERE what = 'allreduce' AND gpu LIKE ?"
                               " ESCAPE '\\' AND name = ? AND tp = ? GROUP BY gpu ORDER BY"
                               " (gpu LIKE '%dgx') DESC, gpu LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, like, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(st, 2, dpn, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int(st, 3, tp);
            if (sqlite3_step(st) == SQLITE_ROW)
                snprintf(cluster, sizeof cluster, "%s", (const char *)sqlite3_column_text(st, 0));
        }
        sqlite3_finalize(st);
        if (!cluster[0]) {
            errmsg_set(err, errlen, "profile: no all-reduce measurements over %d %s GPUs in one node "
                       "(import network profiles: latsim calib import vidur DIR)", tp, g.name);
            goto done;
        }
        char q[64];
        snprintf(q, sizeof q, "dpn%d", tp);
        if (collect(db, "SELECT id FROM calib_meas WHERE what = 'allreduce' AND gpu = ?1 AND name = ?2"
                    " AND tp = ?3 ORDER BY id", cluster, q, tp, &d)) {
            sqlerr = sqlite3_errmsg(db);
            goto done;
        }
    }
    /* CPU overhead: this GPU, model and TP first, else the closest rows stored. */
    char cpu_model[48] = "", cpu_gpu[48] = "";
    int cpu_tp = 0;
    if (sqlite3_prepare_v2(db, "SELECT model, gpu, tp FROM calib_meas WHERE what = 'cpu_overhead'"
                           " ORDER BY (gpu = ?1) DESC, (model = ?2) DESC, (tp = ?3) DESC, id LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, g.name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, m.name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, tp);
        if (sqlite3_step(st) == SQLITE_ROW) {
            snprintf(cpu_model, sizeof cpu_model, "%s", (const char *)sqlite3_column_text(st, 0));
            snprintf(cpu_gpu, sizeof cpu_gpu, "%s", (const char *)sqlite3_column_text(st, 1));
            cpu_tp = sqlite3_column_int(st, 2);
        }
    }
    sqlite3_finalize(st);
    if (cpu_tp && collect(db, "SELECT id FROM calib_meas WHERE what = 'cpu_overhead' AND model = ?1"
                          " AND gpu = ?2 AND tp = ?3 ORDER BY id", cpu_model, cpu_gpu, cpu_tp, &d)) {
        sqlerr = sqlite3_errmsg(db);
        goto done;
    }
    if ((ct = check_times(db, &d, from, err, errlen)) != 0) {
        if (ct < 0)
            sqlerr = sqlite3_errmsg(db);
        goto done;
    }

    snprintf(f->kind, sizeof f->kind, "profile");
    snprintf(f->model, sizeof f->model, "%s", m.name);
    snprintf(f->gpu, sizeof f->gpu, "%s", g.name);
    snprintf(f->weights, sizeof f->weights, "%s", "bf16");
    snprintf(f->tps, sizeof f->tps, "%d", tp);
    /* The operators' source: vidur, cpu, cuda... */
    snprintf(f->source, sizeof f->source, "vidur");
    if (sqlite3_prepare_v2(db, "SELECT source FROM calib_meas WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, d.v[0]);
        if (sqlite3_step(st) == SQLITE_ROW)
            snprintf(f->source, sizeof f->source, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    snprintf(f->tool, sizeof f->tool, "%s", tool ? tool : "");
    f->n_points = (int)d.n;
    f->r2 = NAN;
    f->mape = curve_cv(&lin, 5);
    f->folds = lin.n >= 7 ? 5 : (int)lin.n - 2;
    /* Never a model whose error makes it useless (cdb.h): this is the error cost
     * and calib list report. */
    if (!CDB_MAPE_USABLE(f->mape)) {
        char e[32];
        snprintf(e, sizeof e, isfinite(f->mape) ? "%.3g %%" : "unknown", f->mape);
        errmsg_set(err, errlen, "profile: the operator sums of %s on %s at tp %d have a cross-validated "
                   "interpolation error of %s (%zu token counts), above the %.0f %% limit of a usable "
                   "model: nothing stored", m.name, g.name, tp, e, lin.n, CDB_MAPE_LIMIT);
        goto done;
    }
    f->tok_max = lin.n ? lin.x[lin.n - 1] : 0;
    for (size_t i = 0; i < lin.n; i++)
        f->tok_max = fmax(f->tok_max, lin.x[i]);
    snprintf(f->note, sizeof f->note, "cv_mape: linear operators, held-out token counts; attention "
             "%s (cv %.1f %% prefill, %.1f %% decode%s)%s%s; cpu %s %s tp %d", geo, cvp, cvd, carried,
             cluster[0] ? "; all-reduce " : "", cluster, cpu_tp ? cpu_model : "none",
             cpu_gpu, cpu_tp);
    for (int k = 0; k < CP_NATTN; k++) {
        cdb_coef *cc = &f->coef[k];
        snprintf(cc->name, sizeof cc->name, "%s", cprofile_attn_names[k]);
        cc->value = c[k];
        cc->se = se[k];
        snprintf(cc->status, sizeof cc->status, "%s", se[k] > 0 ? "fitted" : "bound");
    }
    f->ncoef = CP_NATTN;
    if (cdb_save_fit(db, f, d.v, d.n, err, errlen) != 0)
        goto done;
    int64_t id = f->id;
    rc = cprofile_load(db, id, out, err, errlen) == 0 ? 0 : -1;
done:
    if (sqlerr && rc != 0)
        errmsg_set(err, errlen, "profile: %s", sqlerr);
    free(d.v);
    vec_free(&lin);
    vec_free(&emb);
    return rc;
}
