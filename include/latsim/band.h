/* band.h -- prediction bands: how far a prediction can be trusted, from the
 * step-time model's own validated error (never its in-sample error) and the
 * seed noise of the run (docs/bands.md).
 *
 * The model's error is taken as a log-normal factor on every step time, of
 * standard deviation sigma (on the log scale):
 *   - a model with a cross-validated error (cost_info.mape, %, finite and > 0:
 *     the learned default's scoreboard error, a fitted model's k-fold or
 *     leave-one-run-out error): sigma = sqrt(pi / 2) ln(1 + mape / 100), the
 *     normal law whose mean absolute deviation is that error;
 *   - the same widened x BAND_CARRY_WIDEN when the model is carried outside
 *     what it was measured on (cost_info.extrapolated: another GPU, or outside
 *     its measured TP);
 *   - a model with no validated error (the roofline, the linear model, a model
 *     whose error is unknown): the documented default, a median absolute error
 *     of BAND_DEFAULT_MEDIAN_PCT % (the roofline's measured error on real vLLM
 *     runs, 27-36 %: docs/observed.md), sigma = ln(1 + 0.30) / 0.6745.
 * The 90 % band of step times is then the factors exp(-+ BAND_Z90 sigma).  A
 * metric's band is the metric simulated at both factors (the step times scaled
 * by step_time_scale), widened in quadrature by the seed noise (the 90 %
 * half-width of its replications' interval when there are several).
 */
#ifndef LATSIM_BAND_H
#define LATSIM_BAND_H

#include <stddef.h>
#include "latsim/report.h"

#define BAND_Z90 1.6448536269514722        /* the standard normal's 95th percentile: a 90 % interval */
#define BAND_Z95 1.959963984540054         /* the same for 95 % (report.h's ci95) */
#define BAND_DEFAULT_MEDIAN_PCT 30.0       /* median |step-time error| of a model without a validated one, % */
#define BAND_CARRY_WIDEN 1.5               /* factor on sigma of a model carried outside its measurements: the
                                              learned model held out by GPU and engine covers 93.6 and 85.9 % with
                                              it (docs/accuracy.md; x2: 97.1 and 96.1 %, too wide) */

/* The step-time band of one model, or the widest of a run's LLM pools. */
typedef struct band_model {
    double sigma;             /* standard deviation of the log step-time error (0: no step-time model) */
    double lo, hi;            /* the step-time factors at the 90 % band's ends, exp(-+ z90 sigma) */
    int validated;            /* 1: from the model's cross-validated error; 0: the default (or no model) */
    char basis[240];          /* where sigma comes from, in words */
} band_model;

/* The band of a model of kind KIND (cost_model.kind) with cross-validated
 * error MAPE (%, NAN for none) and EXTRAPOLATED (1: carried) into OUT. */
void band_of_model(const char *kind, double mape, int extrapolated, band_model *out);

/* The widest band of report R's LLM pools (their cost_model.kind, .mape,
 * .extrapolated rows) into OUT.  Returns the number of LLM pools (0: OUT is
 * the empty band, factors 1, sigma 0). */
int band_of_report(const report *r, band_model *out);

/* The 90 % band of a predicted VALUE: V1 and V2 are the same prediction with
 * every step time scaled by the band's two factors (NAN: not simulated, or not
 * reported there, e.g. saturated); SEED90 the 90 % half-width of the seed
 * noise (NAN or 0: none).  The model's spread (the distance from VALUE to the
 * lower and to the higher of V1, V2) and the seed noise add in quadrature.
 * An end that is unknown (a NAN V1/V2 where the model moves the value) is
 * INFINITY for the upper end, 0 for the lower.  Sets *LO <= VALUE <= *HI
 * (both NAN when VALUE is NAN). */
void band_interval(double value, double v1, double v2, double seed90, double *lo, double *hi);

/* The 90 % half-width of the seed noise of row METRIC/STAT of SCOPE in R: its
 * replications' 95 % half-width (ci95) x z90 / z95; NAN for one replication. */
double band_seed90(const report *r, const char *scope, const char *metric, const char *stat);

/* 1 when X lies in [LO, HI] (a NAN end: no). */
int band_covers(double lo, double hi, double x);

#endif
