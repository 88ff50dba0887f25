/* nnls.c -- non-negative weighted least squares with GSL (see nnls.h).
 *
 * Columns are scaled to unit weighted norm before the rank test and the solve
 * (coefficients are scaled back), so terms in very different units (ms per GB,
 * ms per TFLOP, ms per hop) are treated alike.  The rank test keeps column j
 * when the smallest singular value of [kept columns, column j] exceeds 1e-7 of
 * the largest.
 */
#include "nnls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "engine/errmsg.h"

#define RANK_TOL 1e-7

/* Smallest / largest singular value of the columns COLS of A (n x m). */
static double cond_ratio(const gsl_matrix *A, const size_t *cols, size_t m)
{
    size_t n = A->size1;
    if (n < m)
        return 0;
    gsl_matrix *B = gsl_matrix_alloc(n, m);
    gsl_matrix *V = gsl_matrix_alloc(m, m);
    gsl_vector *S = gsl_vector_alloc(m), *work = gsl_vector_alloc(m);
    double ratio = 0;
    if (B && V && S && work) {
        for (size_t j = 0; j < m; j++)
            for (size_t i = 0; i < n; i++)
                gsl_matrix_set(B, i, j, gsl_matrix_get(A, i, cols[j]));
        if (gsl_linalg_SV_decomp(B, V, S, work) == GSL_SUCCESS) {
            double mx = gsl_vector_max(S), mn = gsl_vector_min(S);
            ratio = mx > 0 ? mn / mx : 0;
        }
    }
    gsl_matrix_free(B);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(work);
    return ratio;
}

/* Unconstrained weighted fit of y on the columns SET (m of them) of A; fills
 * b[SET[j]] and, when COV is not NULL, the m x m covariance.  Returns 0 or -1. */
static int wls(const gsl_matrix *A, const gsl_vector *y, const gsl_vector *w, const size_t *set,
               size_t m, double *b, gsl_matrix **cov, double *chi2)
{
    size_t n = A->size1;
    gsl_matrix *Xs = gsl_matrix_alloc(n, m), *C = gsl_matrix_alloc(m, m);
    gsl_vector *c = gsl_vector_alloc(m);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, m);
    int rc = -1;
    double chisq = 0;
    if (Xs && C && c && ws) {
        for (size_t j = 0; j < m; j++)
            for (size_t i = 0; i < n; i++)
                gsl_matrix_set(Xs, i, j, gsl_matrix_get(A, i, set[j]));
        if (gsl_multifit_wlinear(Xs, w, y, c, C, &chisq, ws) == GSL_SUCCESS) {
            for (size_t j = 0; j < m; j++)
                b[set[j]] = gsl_vector_get(c, j);
            rc = 0;
        }
    }
    if (rc == 0 && cov) {
        *cov = C;
        C = NULL;
    }
    if (chi2)
        *chi2 = chisq;
    gsl_matrix_free(Xs);
    gsl_matrix_free(C);
    gsl_vector_free(c);
    if (ws)
        gsl_multifit_linear_free(ws);
    return rc;
}

double nnls_predict(const gsl_matrix *X, size_t i, const double *b)
{
    double s = 0;
    for (size_t j = 0; j < X->size2; j++)
        s += gsl_matrix_get(X, i, j) * b[j];
    return s;
}

int nnls_fit(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
             nnls_result *r, char *err, size_t errlen)
{
    size_t n = X->size1, p = X->size2;
    memset(r, 0, sizeof *r);
    r->p = p;
    if (p > NNLS_MAX_P) {
        errmsg_set(err, errlen, "fit: too many terms (%zu)", p);
        return -1;
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_matrix *A = gsl_matrix_alloc(n, p);
    int rc = -1;
    if (!A) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    /* Scale each column to unit weighted norm. */
    double scale[NNLS_MAX_P];
    for (size_t j = 0; j < p; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++) {
            double v = gsl_matrix_get(X, i, j);
            s += gsl_vector_get(w, i) * v * v;
        }
        scale[j] = s > 0 ? sqrt(s) : 0;
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(A, i, j, scale[j] > 0 ? gsl_matrix_get(X, i, j) / scale[j] : 0);
    }
    /* The rank test runs on the weighted columns. */
    gsl_matrix *Aw = gsl_matrix_alloc(n, p);
    if (!Aw) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(Aw, i, j, sqrt(gsl_vector_get(w, i)) * gsl_matrix_get(A, i, j));
    size_t kept[NNLS_MAX_P], nk = 0;
    for (size_t j = 0; j < p; j++) {
        r->aliased_with[j] = -1;
        r->status[j] = NNLS_ALIASED;
        if ((use && !use[j]) || scale[j] == 0)
            continue;
        kept[nk] = j;
        if (cond_ratio(Aw, kept, nk + 1) > RANK_TOL) {
            r->status[j] = NNLS_FITTED;
            nk++;
        } else {
            /* Name the kept term whose removal frees this one: the last that restores rank. */
            for (size_t q = nk; q-- > 0;) {
                size_t alt[NNLS_MAX_P], m = 0;
                for (size_t t = 0; t < nk; t++)
                    if (t != q)
                        alt[m++] = kept[t];
                alt[m++] = j;
                if (cond_ratio(Aw, alt, m) > RANK_TOL) {
                    r->aliased_with[j] = (int)kept[q];
                    break;
                }
            }
        }
    }
    gsl_matrix_free(Aw);
    r->kept = nk;

    /* Lawson-Hanson on the kept columns of A. */
    double x[NNLS_MAX_P] = { 0 }, s[NNLS_MAX_P];
    int inP[NNLS_MAX_P] = { 0 };
    gsl_vector *res = gsl_vector_alloc(n);
    if (!res) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    for (int outer = 0; outer < 3 * NNLS_MAX_P; outer++) {
        for (size_t i = 0; i < n; i++)
            gsl_vector_set(res, i, gsl_vector_get(y, i) - nnls_predict(A, i, x));
        double best = 0;
        int t = -1;
        for (size_t k = 0; k < nk; k++) {
            size_t j = kept[k];
            if (inP[j])
                continue;
            double g = 0;
            for (size_t i = 0; i < n; i++)
                g += gsl_matrix_get(A, i, j) * gsl_vector_get(w, i) * gsl_vector_get(res, i);
            if (g > best) {
                best = g;
                t = (int)j;
            }
        }
        if (t < 0 || best <= 1e-12 * (1 + gsl_blas_dnrm2(y)))
            break;
        inP[t] = 1;
        for (int inner = 0; inner < 3 * NNLS_MAX_P; inner++) {
            size_t set[NNLS_MAX_P], m = 0;
            for (size_t k = 0; k < nk; k++)
                if (inP[kept[k]])
                    set[m++] = kept[k];
            memset(s, 0, sizeof s);
            if (wls(A, y, w, set, m, s, NULL, NULL) != 0) {
                errmsg_set(err, errlen, "fit: the weighted least-squares solve failed");
                gsl_vector_free(res);
                goto done;
            }
            int allpos = 1;
            for (size_t k = 0; k < m; k++)
                if (s[set[k]] <= 0)
                    allpos = 0;
            if (allpos) {
                memcpy(x, s, sizeof x);
                break;
            }
            double alpha = 1;
            for (size_t k = 0; k < m; k++) {
                size_t j = set[k];
                if (s[j] <= 0 && x[j] - s[j] > 0) {
                    double a = x[j] / (x[j] - s[j]);
                    if (a < alpha)
                        alpha = a;
                }
            }
            for (size_t k = 0; k < m; k++) {
                size_t j = set[k];
                x[j] += alpha * (s[j] - x[j]);
                if (x[j] <= 1e-15) {
                    x[j] = 0;
                    inP[j] = 0;
                }
            }
        }
    }
    gsl_vector_free(res);

    /* Final unconstrained fit on the free set gives the covariance. */
    size_t set[NNLS_MAX_P], m = 0;
    for (size_t k = 0; k < nk; k++)
        if (inP[kept[k]] && x[kept[k]] > 0)
            set[m++] = kept[k];
    gsl_matrix *cov = NULL;
    double chi2 = 0;
    memset(s, 0, sizeof s);
    if (m > 0 && wls(A, y, w, set, m, s, &cov, &chi2) != 0) {
        errmsg_set(err, errlen, "fit: the weighted least-squares solve failed");
        goto done;
    }
    for (size_t k = 0; k < nk; k++)
        if (!(inP[kept[k]] && x[kept[k]] > 0))
            r->status[kept[k]] = NNLS_BOUND;
    double dof = (double)n - (double)m;
    double s2 = dof > 0 ? chi2 / dof : NAN;
    for (size_t k = 0; k < m; k++) {
        size_t j = set[k];
        r->b[j] = s[j] / scale[j];
        r->se[j] = sqrt(gsl_matrix_get(cov, k, k) * s2) / scale[j];
    }
    gsl_matrix_free(cov);
    r->free = m;
    r->chi2 = chi2;
    /* Statistics on the original scale. */
    double mean = 0, ssr = 0, sst = 0, ape = 0;
    for (size_t i = 0; i < n; i++)
        mean += gsl_vector_get(y, i) / (double)n;
    for (size_t i = 0; i < n; i++) {
        double yi = gsl_vector_get(y, i), e = yi - nnls_predict(X, i, r->b);
        ssr += e * e;
        sst += (yi - mean) * (yi - mean);
        ape += fabs(e) / fabs(yi);
    }
    r->r2 = sst > 0 ? 1 - ssr / sst : NAN;
    r->mape = 100 * ape / (double)n;
    rc = 0;
done:
    gsl_matrix_free(A);
    gsl_set_error_handler(old);
    return rc;
}

double nnls_cv_mape(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
                    size_t k, char *err, size_t errlen)
{
    size_t n = X->size1, p = X->size2;
    if (k < 2 || n < k)
        return NAN;
    double ape = 0;
    for (size_t f = 0; f < k; f++) {
        size_t ntr = 0;
        for (size_t i = 0; i < n; i++)
            if (i % k != f)
                ntr++;
        gsl_matrix *Xt = gsl_matrix_alloc(ntr, p);
        gsl_vector *yt = gsl_vector_alloc(ntr), *wt = gsl_vector_alloc(ntr);
        if (!Xt || !yt || !wt) {
            gsl_matrix_free(Xt);
            gsl_vector_free(yt);
            gsl_vector_free(wt);
            errmsg_set(err, errlen, "out of memory");
            return NAN;
        }
        for (size_t i = 0, r = 0; i < n; i++) {
            if (i % k == f)
                continue;
            for (size_t j = 0; j < p; j++)
                gsl_matrix_set(Xt, r, j, gsl_matrix_get(X, i, j));
            gsl_vector_set(yt, r, gsl_vector_get(y, i));
            gsl_vector_set(wt, r, gsl_vector_get(w, i));
            r++;
        }
        nnls_result fr;
        int s = nnls_fit(Xt, yt, wt, use, &fr, err, errlen);
        gsl_matrix_free(Xt);
        gsl_vector_free(yt);
        gsl_vector_free(wt);
        if (s != 0)
            return NAN;
        for (size_t i = f; i < n; i += k) {
            double yi = gsl_vector_get(y, i);
            ape += fabs(yi - nnls_predict(X, i, fr.b)) / fabs(yi);
        }
    }
    return 100 * ape / (double)n;
}

/* ---- outliers ---------------------------------------------------------------------- */

#define BIG_RESIDUAL 1e3   /* |log(y / yhat)| of a point predicted <= 0 (e^1000: any) */

/* Fits the rows with FACTOR > 0 (weights w x factor); B receives p coefficients.
 * Returns 0, or -1 + ERR. */
static int fit_rows(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
                    const double *factor, double *b, char *err, size_t errlen)
{
    size_t n = X->size1, p = X->size2, m = 0;
    for (size_t i = 0; i < n; i++)
        m += factor[i] > 0;
    memset(b, 0, p * sizeof *b);
    if (m == 0)
        return 0;
    gsl_matrix *Xs = gsl_matrix_alloc(m, p);
    gsl_vector *ys = gsl_vector_alloc(m), *ws = gsl_vector_alloc(m);
    int rc = -1;
    if (!Xs || !ys || !ws) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    for (size_t i = 0, r = 0; i < n; i++) {
        if (!(factor[i] > 0))
            continue;
        for (size_t j = 0; j < p; j++)
            gsl_matrix_set(Xs, r, j, gsl_matrix_get(X, i, j));
        gsl_vector_set(ys, r, gsl_vector_get(y, i));
        gsl_vector_set(ws, r, gsl_vector_get(w, i) * factor[i]);
        r++;
    }
    nnls_result fr;
    if (nnls_fit(Xs, ys, ws, use, &fr, err, errlen) == 0) {
        memcpy(b, fr.b, p * sizeof *b);
        rc = 0;
    }
done:
    gsl_matrix_free(Xs);
    gsl_vector_free(ys);
    gsl_vector_free(ws);
    return rc;
}

/* Log residuals of every point under B into R; returns the median of |R|. */
static double log_residuals(const gsl_matrix *X, const gsl_vector *y, const double *b, double *r,
                            double *tmp)
{
    size_t n = X->size1;
    for (size_t i = 0; i < n; i++) {
        double yh = nnls_predict(X, i, b), yi = gsl_vector_get(y, i);
        r[i] = yh > 0 && yi > 0 ? log(yi / yh) : BIG_RESIDUAL;
        if (!isfinite(r[i]) || fabs(r[i]) > BIG_RESIDUAL)
            r[i] = r[i] < 0 ? -BIG_RESIDUAL : BIG_RESIDUAL;
        tmp[i] = fabs(r[i]);
    }
    gsl_sort(tmp, 1, n);
    return gsl_stats_median_from_sorted_data(tmp, 1, n);
}

/* Indices of the K points with the smallest (DIR > 0) or largest (DIR < 0) V. */
static void extremes(const double *v, size_t n, size_t k, int dir, size_t *out)
{
    for (size_t q = 0; q < k; q++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (size_t t = 0; t < q && !taken; t++)
                taken = out[t] == i;
            if (!taken && (best == n || (dir > 0 ? v[i] < v[best] : v[i] > v[best])))
                best = i;
        }
        out[q] = best;
    }
}

int nnls_outliers(const gsl_matrix *X, const gsl_vector *y, const gsl_vector *w, const int *use,
                  int *flag, double *pred, char *err, size_t errlen)
{
    size_t n = X->size1, p = X->size2, kept = 0;
    for (size_t i = 0; i < n; i++) {
        flag[i] = 0;
        if (pred)
            pred[i] = NAN;
    }
    for (size_t j = 0; j < p; j++)
        kept += !use || use[j];
    if (p > NNLS_MAX_P)
        return errmsg_set(err, errlen, "fit: too many terms (%zu)", p), -1;
    if (n < kept + 3)
        return 0;
    double *fac = malloc(n * sizeof *fac), *r = malloc(n * sizeof *r), *tmp = malloc(n * sizeof *tmp);
    double *yv = malloc(n * sizeof *yv), *absr = malloc(n * sizeof *absr);
    int rc = -1;
    if (!fac || !r || !tmp || !yv || !absr) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    double b[NNLS_MAX_P], best_b[NNLS_MAX_P], best = INFINITY;
    /* 1. Starts.  The few points a start leaves out: J of each kind, J small
     * enough that most points stay in every start. */
    size_t J = (n - kept) / 4;
    if (J < 1) J = 1;
    if (J > 5) J = 5;
    size_t lo[5], hi[5], far[5];
    for (size_t i = 0; i < n; i++) {
        fac[i] = 1;
        yv[i] = gsl_vector_get(y, i);
    }
    if (fit_rows(X, y, w, use, fac, b, err, errlen) != 0)
        goto done;
    best = log_residuals(X, y, b, r, tmp);
    memcpy(best_b, b, sizeof b);
    for (size_t i = 0; i < n; i++)
        absr[i] = fabs(r[i]);
    extremes(yv, n, J, 1, lo);
    extremes(yv, n, J, -1, hi);
    extremes(absr, n, J, -1, far);
    const size_t *sets[3] = { lo, hi, far };
    for (int kind = 0; kind < 3; kind++)
        for (size_t q = 0; q <= J; q++) {   /* q < J: leave out point q alone; q == J: all J */
            if (J == 1 && q == J)
                continue;
            for (size_t i = 0; i < n; i++)
                fac[i] = 1;
            for (size_t t = 0; t < J; t++)
                if (q == J || t == q)
                    fac[sets[kind][t]] = 0;
            if (fit_rows(X, y, w, use, fac, b, err, errlen) != 0)
                goto done;
            double med = log_residuals(X, y, b, r, tmp);
            if (med < best) {
                best = med;
                memcpy(best_b, b, sizeof b);
            }
        }
    /* 2. Bisquare iterations from the best start. */
    double R = log(NNLS_OUTLIER_RATIO);
    memcpy(b, best_b, sizeof b);
    for (int it = 0; it < 50; it++) {
        double s = 1.4826 * log_residuals(X, y, b, r, tmp);
        R = fmax(NNLS_OUTLIER_K * s, log(NNLS_OUTLIER_RATIO));
        for (size_t i = 0; i < n; i++) {
            double u = r[i] / R;
            fac[i] = fabs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0;
        }
        double nb[NNLS_MAX_P];
        if (fit_rows(X, y, w, use, fac, nb, err, errlen) != 0)
            goto done;
        double change = 0;
        for (size_t i = 0; i < n; i++) {
            double a = nnls_predict(X, i, b), c = nnls_predict(X, i, nb);
            change = fmax(change, fabs(c - a) / fmax(fabs(a), 1e-300));
        }
        memcpy(b, nb, sizeof b);
        if (change < 1e-9)
            break;
    }
    /* 3. Outliers: beyond R at convergence. */
    double s = 1.4826 * log_residuals(X, y, b, r, tmp);
    R = fmax(NNLS_OUTLIER_K * s, log(NNLS_OUTLIER_RATIO));
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        if (pred)
            pred[i] = nnls_predict(X, i, b);
        if (fabs(r[i]) >= R) {
            flag[i] = 1;
            count++;
        }
    }
    rc = count;
done:
    free(fac);
    free(r);
    free(tmp);
    free(yv);
    free(absr);
    return rc;
}
