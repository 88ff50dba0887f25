/* dist.c -- parsing and sampling the distributions of scenario files (see dist.h).
 *
 * A spec is FAMILY(ARGS): the family name, '(', ARGS, and a ')' that ends the spec;
 * spaces may go anywhere between the parts.  const takes one bare number; every
 * other family takes key=value pairs separated by commas, in any order, each key
 * exactly once.  A value may be written in double quotes (needed only for a file
 * name containing ',' or ')').
 *
 * Parameters kept in d->a and d->b, in GSL's terms:
 *   const      a = the value
 *   exp        a = mean                  (inverse transform: gsl_cdf_exponential_Qinv
 *                                         of gsl_rng_uniform_pos; the same law as
 *                                         gsl_ran_exponential, which uses log1p and
 *                                         was a quarter of the engine's run time)
 *   lognormal  a = zeta, b = sigma       (gsl_ran_lognormal)
 *   gamma      a = shape, b = scale      (gsl_ran_gamma)
 *   weibull    a = scale, b = shape      (gsl_ran_weibull)
 *   uniform    a = min, b = max          (gsl_ran_flat)
 *   empirical  a = smallest value, b = largest value
 */
#include "core/dist.h"
#include "core/csvread.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_statistics_double.h>

#define MAX_PARAMS 2   /* most key=value pairs any family takes */

/* Weibull shapes searched when solving for the shape from the cv: k = 0.1 gives
 * cv ~ 430 and k = 1e5 gives cv ~ 1.3e-5; nothing outside is a sensible latency. */
#define WEIBULL_K_MIN 0.1
#define WEIBULL_K_MAX 1e5

/* What a family is called and which keys it takes. */
typedef struct family_info {
    const char *name;                 /* as written in scenario files */
    dist_family family;               /* its enum value */
    const char *keys[MAX_PARAMS];     /* its keys, NULL-padded; const has none (one bare number) */
} family_info;

static const family_info FAMILIES[] = {
    {"const",     DIST_CONST,     {NULL, NULL}},
    {"exp",       DIST_EXP,       {"mean", NULL}},
    {"lognormal", DIST_LOGNORMAL, {"mean", "cv"}},
    {"gamma",     DIST_GAMMA,     {"mean", "cv"}},
    {"weibull",   DIST_WEIBULL,   {"mean", "cv"}},
    {"uniform",   DIST_UNIFORM,   {"min", "max"}},
    {"empirical", DIST_EMPIRICAL, {"file", "column"}},
};
#define NFAMILIES (sizeof FAMILIES / sizeof FAMILIES[0])
#define FAMILY_LIST "const, exp, lognormal, gamma, weibull, uniform, empirical"

/* Writes a formatted one-line message into ERR (which may be NULL).  Returns -1,
 * so that callers can `return fail(...)`. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Returns S advanced past spaces and tabs. */
static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Copies [B, E) less surrounding spaces, and less one pair of surrounding double
 * quotes, into a new string.  Returns it, or NULL when out of memory. */
static char *trimmed_copy(const char *b, const char *e)
{
    while (b < e && isspace((unsigned char) *b))
        b++;
    while (e > b && isspace((unsigned char) e[-1]))
        e--;
    if (e - b >= 2 && *b == '"' && e[-1] == '"') {
        b++;
        e--;
    }
    size_t n = (size_t) (e - b);
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, b, n);
        s[n] = '\0';
    }
    return s;
}

/* Parses all of S as a finite number.  Returns 0, or -1 with a message naming
 * FAMILY and KEY. */
static int parse_number(const char *family, const char *key, const char *s, double *out,
                        char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        if (key != NULL)
            return fail(err, errlen, "%s: %s '%s' is not a number", family, key, s);
        return fail(err, errlen, "%s: '%s' is not a number", family, s);
    }
    *out = v;
    return 0;
}

/* f(k) = ln(1 + cv(k)^2) - ln(1 + cv^2) for a Weibull of shape k, where
 * 1 + cv(k)^2 = Gamma(1+2/k) / Gamma(1+1/k)^2; decreasing in k, zero at the
 * wanted shape.  PARAMS points at ln(1 + cv^2). */
static double weibull_shape_eq(double k, void *params)
{
    double target = *(const double *) params;
    return gsl_sf_lngamma(1 + 2 / k) - 2 * gsl_sf_lngamma(1 + 1 / k) - target;
}

/* Solves the Weibull shape k whose coefficient of variation is CV with GSL's
 * Brent solver.  Returns 0, or -1 with a message when CV is out of reach. */
static int weibull_shape(double cv, double *k, char *err, size_t errlen)
{
    double target = log1p(cv * cv);
    gsl_function f = {weibull_shape_eq, &target};
    double flo = weibull_shape_eq(WEIBULL_K_MIN, &target);
    double fhi = weibull_shape_eq(WEIBULL_K_MAX, &target);
    if (!(flo > 0 && fhi < 0)) {
        double one = 0;   /* target 0 gives ln(1 + cv(k)^2) itself */
        double cvmax = sqrt(expm1(weibull_shape_eq(WEIBULL_K_MIN, &one)));
        double cvmin = sqrt(expm1(weibull_shape_eq(WEIBULL_K_MAX, &one)));
        return fail(err, errlen, "weibull: cv must be between %.2g and %.3g (got %g)",
                    cvmin, cvmax, cv);
    }
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (s == NULL)
        return fail(err, errlen, "weibull: out of memory");
    gsl_root_fsolver_set(s, &f, WEIBULL_K_MIN, WEIBULL_K_MAX);
    int status = GSL_CONTINUE;
    for (int iter = 0; iter < 200 && status == GSL_CONTINUE; iter++) {
        status = gsl_root_fsolver_iterate(s);
        if (status != GSL_SUCCESS)
            break;
        status = gsl_root_test_interval(gsl_root_fsolver_x_lower(s),
                                        gsl_root_fsolver_x_upper(s), 0, 1e-13);
    }
    *k = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    if (status != GSL_SUCCESS)
        return fail(err, errlen, "weibull: cannot solve the shape for cv %g", cv);
    return 0;
}

/* Joins BASEDIR and FILE unless FILE is absolute or BASEDIR is NULL or empty.
 * Returns a new string, or NULL when out of memory. */
static char *resolve_path(const char *basedir, const char *file)
{
    if (file[0] == '/' || basedir == NULL || basedir[0] == '\0')
        return trimmed_copy(file, file + strlen(file));
    size_t nb = strlen(basedir), nf = strlen(file);
    bool slash = basedir[nb - 1] == '/';
    char *p = malloc(nb + nf + 2);
    if (p != NULL)
        snprintf(p, nb + nf + 2, "%s%s%s", basedir, slash ? "" : "/", file);
    return p;
}

/* Loads an empirical distribution from column COLUMN of CSV file FILE.  Returns 0,
 * or -1 with a message. */
static int load_empirical(dist *d, const char *file, const char *column, const char *basedir,
                          char *err, size_t errlen)
{
    char *path = resolve_path(basedir, file);
    if (path == NULL)
        return fail(err, errlen, "empirical: out of memory");
    char cerr[512];
    int rc = csv_read_column(path, column, &d->values, &d->nvalues, cerr, sizeof cerr);
    free(path);
    if (rc != 0)
        return fail(err, errlen, "empirical: %s", cerr);
    if (d->nvalues > UINT32_MAX) /* gsl_rng_uniform_int on mt19937 reaches 2^32 - 1 */
        return fail(err, errlen, "empirical: more than %lu values", (unsigned long) UINT32_MAX);
    d->mean = gsl_stats_mean(d->values, 1, d->nvalues);
    /* The distribution resampled is the column itself, so its sd is the population
     * sd (divide by n), which the fixed-mean variant computes. */
    double sd = gsl_stats_sd_with_fixed_mean(d->values, 1, d->nvalues, d->mean);
    d->cv = d->mean > 0 ? sd / d->mean : 0;
    gsl_stats_minmax(&d->a, &d->b, d->values, 1, d->nvalues);
    return 0;
}

/* Checks the numeric parameters V[] of family F and fills D.  Returns 0, or -1
 * with a message. */
static int set_numeric(dist *d, const family_info *f, const double v[MAX_PARAMS], char *err,
                       size_t errlen)
{
    const char *name = f->name;
    switch (f->family) {
    case DIST_CONST:
        if (v[0] < 0)
            return fail(err, errlen, "const: value must be >= 0 (got %g)", v[0]);
        d->a = v[0];
        d->mean = v[0];
        d->cv = 0;
        return 0;
    case DIST_UNIFORM:
        if (v[0] < 0)
            return fail(err, errlen, "uniform: min must be >= 0 (got %g)", v[0]);
        if (v[0] > v[1])
            return fail(err, errlen, "uniform: min %g is greater than max %g", v[0], v[1]);
        d->a = v[0];
        d->b = v[1];
        d->mean = v[0] / 2 + v[1] / 2;    /* (a + b) / 2 without overflow near DBL_MAX */
        d->cv = d->mean > 0 ? (v[1] / 2 - v[0] / 2) / sqrt(3.0) / d->mean : 0;
        return 0;
    default:
        break;
    }
    double mean = v[0], cv = f->family == DIST_EXP ? 1.0 : v[1];
    if (mean <= 0)
        return fail(err, errlen, "%s: mean must be > 0 (got %g)", name, mean);
    if (cv < 0)
        return fail(err, errlen, "%s: cv must be >= 0 (got %g)", name, cv);
    if (cv > DIST_CV_MAX)
        return fail(err, errlen, "%s: cv must be <= %g (got %g)", name, DIST_CV_MAX, cv);
    d->mean = mean;
    d->cv = cv;
    switch (f->family) {
    case DIST_EXP:
        d->a = mean;
        return 0;
    case DIST_LOGNORMAL: {
        double s2 = log1p(cv * cv);
        d->a = log(mean) - s2 / 2;
        d->b = sqrt(s2);
        return 0;
    }
    case DIST_GAMMA:
        if (cv == 0)
            return fail(err, errlen, "gamma: cv must be > 0 (use const for a fixed value)");
        if (cv < DIST_GAMMA_CV_MIN)   /* shape 1/cv^2 beyond 1e12, or infinite once cv^2 underflows */
            return fail(err, errlen, "gamma: cv must be >= %g (got %g; use const(%g) for a fixed value)",
                        DIST_GAMMA_CV_MIN, cv, mean);
        d->a = 1 / (cv * cv);
        d->b = mean * cv * cv;
        return 0;
    case DIST_WEIBULL: {
        if (cv == 0)
            return fail(err, errlen, "weibull: cv must be > 0 (use const for a fixed value)");
        double k = 1;
        if (weibull_shape(cv, &k, err, errlen) != 0)
            return -1;
        d->b = k;
        d->a = mean * exp(-gsl_sf_lngamma(1 + 1 / k));
        return 0;
    }
    default:
        return fail(err, errlen, "%s: internal error", name);
    }
}

/* Parses ARGS (the text between the parentheses, [B, E)) for family F into D.
 * Returns 0, or -1 with a message. */
static int parse_args(dist *d, const family_info *f, const char *b, const char *e,
                      const char *basedir, char *err, size_t errlen)
{
    char *val[MAX_PARAMS] = {NULL, NULL};   /* values by key index, owned */
    int rc = -1;
    size_t nkeys = 0;
    while (nkeys < MAX_PARAMS && f->keys[nkeys] != NULL)
        nkeys++;

    if (f->family == DIST_CONST) {
        char *s = trimmed_copy(b, e);
        if (s == NULL)
            return fail(err, errlen, "const: out of memory");
        double x = 0;
        if (s[0] == '\0')
            rc = fail(err, errlen, "const: missing value, as in const(5)");
        else if (strchr(s, '=') != NULL || strchr(s, ',') != NULL)
            rc = fail(err, errlen, "const: takes one number, as in const(5) (got '%s')", s);
        else if (parse_number("const", NULL, s, &x, err, errlen) == 0)
            rc = set_numeric(d, f, (double[MAX_PARAMS]){x, 0}, err, errlen);
        free(s);
        return rc;
    }

    /* Split on commas outside double quotes; an all-blank ARGS has no pairs. */
    const char *p = skip_space(b);
    bool any = p < e;
    while (any) {
        const char *q = p;
        bool quoted = false;
        while (q < e && (quoted || *q != ',')) {
            if (*q == '"')
                quoted = !quoted;
            q++;
        }
        const char *eq = memchr(p, '=', (size_t) (q - p));
        char *key = trimmed_copy(p, eq != NULL ? eq : q);
        if (key == NULL) {
            fail(err, errlen, "%s: out of memory", f->name);
            goto done;
        }
        if (key[0] == '\0' && eq == NULL) {
            free(key);
            fail(err, errlen, "%s: empty parameter (stray comma?)", f->name);
            goto done;
        }
        if (eq == NULL) {
            fail(err, errlen, "%s: parameter '%s' has no value (write %s=VALUE)", f->name, key,
                 key);
            free(key);
            goto done;
        }
        size_t k = 0;
        while (k < nkeys && strcmp(key, f->keys[k]) != 0)
            k++;
        if (k == nkeys) {
            fail(err, errlen, "%s: unknown parameter '%s' (expected %s%s%s)", f->name, key,
                 f->keys[0], nkeys > 1 ? ", " : "", nkeys > 1 ? f->keys[1] : "");
            free(key);
            goto done;
        }
        free(key);
        if (val[k] != NULL) {
            fail(err, errlen, "%s: parameter '%s' given twice", f->name, f->keys[k]);
            goto done;
        }
        val[k] = trimmed_copy(eq + 1, q);
        if (val[k] == NULL) {
            fail(err, errlen, "%s: out of memory", f->name);
            goto done;
        }
        if (val[k][0] == '\0') {
            fail(err, errlen, "%s: parameter '%s' has no value", f->name, f->keys[k]);
            goto done;
        }
        if (q == e)
            break;
        p = q + 1;
    }
    for (size_t k = 0; k < nkeys; k++) {
        if (val[k] == NULL) {
            fail(err, errlen, "%s: missing parameter '%s'", f->name, f->keys[k]);
            goto done;
        }
    }
    if (f->family == DIST_EMPIRICAL) {
        rc = load_empirical(d, val[0], val[1], basedir, err, errlen);
        goto done;
    }
    double v[MAX_PARAMS] = {0, 0};
    for (size_t k = 0; k < nkeys; k++)
        if (parse_number(f->name, f->keys[k], val[k], &v[k], err, errlen) != 0)
            goto done;
    rc = set_numeric(d, f, v, err, errlen);
done:
    for (size_t k = 0; k < MAX_PARAMS; k++)
        free(val[k]);
    return rc;
}

/* 1 when S, but for blanks around it, is one number as strtod reads it (a
 * decimal or hexadecimal number). */
static bool is_number(const char *s)
{
    char *end;
    strtod(s, &end);
    if (end == s)
        return false;
    while (isspace((unsigned char) *end))
        end++;
    return *end == '\0';
}

int dist_parse(dist *d, const char *spec, const char *basedir, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (spec == NULL)
        return fail(err, errlen, "no distribution given");
    const char *p = skip_space(spec);
    const char *nb = p;
    if (isalpha((unsigned char) *p))   /* a family name starts with a letter */
        while (isalnum((unsigned char) *p) || *p == '_')
            p++;
    size_t nlen = (size_t) (p - nb);
    const family_info *f = NULL;
    for (size_t i = 0; i < NFAMILIES; i++)
        if (strlen(FAMILIES[i].name) == nlen && strncmp(FAMILIES[i].name, nb, nlen) == 0)
            f = &FAMILIES[i];
    if (f == NULL && nlen == 0 && is_number(p)) {
        /* A bare number X is const(X) (think_ms = 0), validated as const(X) is. */
        d->family = DIST_CONST;
        if (parse_args(d, &FAMILIES[0] /* const */, p, p + strlen(p), basedir, err, errlen) != 0) {
            dist_free(d);
            return -1;
        }
        return 0;
    }
    if (f == NULL) {
        if (nlen == 0)
            return fail(err, errlen, "expected FAMILY(...) such as exp(mean=10), got '%s' "
                        "(families: " FAMILY_LIST ")", spec);
        return fail(err, errlen, "unknown distribution '%.*s' (families: " FAMILY_LIST ")",
                    (int) nlen, nb);
    }
    p = skip_space(p);
    if (*p != '(')
        return fail(err, errlen, "%s: expected '(' after '%s'", f->name, f->name);
    const char *open = p + 1;
    const char *close = strrchr(open, ')');
    if (close == NULL)
        return fail(err, errlen, "%s: missing ')'", f->name);
    const char *after = skip_space(close + 1);
    if (*after != '\0' && *after != '\n' && *after != '\r')
        return fail(err, errlen, "%s: unexpected text after ')': '%s'", f->name, after);
    d->family = f->family;
    if (parse_args(d, f, open, close, basedir, err, errlen) != 0) {
        dist_free(d);
        return -1;
    }
    return 0;
}

double dist_sample(const dist *d, gsl_rng *r)
{
    switch (d->family) {
    case DIST_CONST:     return d->a;
    case DIST_EXP:       return dist_exp_qinv(gsl_rng_uniform_pos(r), d->a);
    case DIST_LOGNORMAL: return gsl_ran_lognormal(r, d->a, d->b);
    case DIST_GAMMA:     return gsl_ran_gamma(r, d->a, d->b);
    case DIST_WEIBULL:   return gsl_ran_weibull(r, d->a, d->b);
    case DIST_UNIFORM:   return gsl_ran_flat(r, d->a, d->b);
    case DIST_EMPIRICAL:
        return d->nvalues > 0 ? d->values[gsl_rng_uniform_int(r, (unsigned long) d->nvalues)]
                              : 0;
    }
    return 0;
}

double dist_max(const dist *d)
{
    switch (d->family) {
    case DIST_CONST:     return d->a;
    case DIST_UNIFORM:   return d->b;
    case DIST_EMPIRICAL: return d->b;
    default:             return INFINITY;
    }
}

double dist_min(const dist *d)
{
    switch (d->family) {
    case DIST_CONST:     return d->a;
    case DIST_UNIFORM:   return d->a;
    case DIST_EMPIRICAL: return d->a;
    default:             return 0;
    }
}

void dist_free(dist *d)
{
    if (d == NULL)
        return;
    free(d->values);
    d->values = NULL;
    d->nvalues = 0;
}

const char *dist_family_name(dist_family f)
{
    for (size_t i = 0; i < NFAMILIES; i++)
        if (FAMILIES[i].family == f)
            return FAMILIES[i].name;
    return "unknown";
}
