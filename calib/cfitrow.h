/* cfitrow.h -- a fitted step-time model's stored row (cdb_fit) as the fits fill
 * it: its identity (kind, model, GPU, weights, source, tool, the TP degrees
 * measured) and its coefficients, one per term of cfitted.h.
 *
 * Both fits of the fitted model write such a row: the fit of measured steps
 * (cfitpost.c) and the fit of observed runs (cobsfit.c).
 */
#ifndef LATSIM_CFITROW_H
#define LATSIM_CFITROW_H

#include "cdb.h"

/* Writes the identity of F: kind "fitted", MODEL, GPU, WEIGHTS, SOURCE
 * ("steps-csv", "observed"), TOOL (NULL: none) and, as F's tps, the TP degrees
 * t in 1..1024 with TPSEEN[t] non-zero, comma-separated, in order. */
void cfitrow_ident(cdb_fit *f, const char *model, const char *gpu, const char *weights, const char *source,
                   const char *tool, const int *tpseen);

/* Writes coefficient T of F: the name of term T (cfitted_term_names), VALUE, its
 * standard error SE and STATUS ("fitted", "prior", "floor", ...).  Returns the
 * coefficient, for a caller that qualifies it further. */
cdb_coef *cfitrow_coef(cdb_fit *f, int t, double value, double se, const char *status);

#endif
