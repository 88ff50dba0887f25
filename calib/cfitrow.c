/* cfitrow.c -- filling a fitted step-time model's stored row (see cfitrow.h). */
#include "cfitrow.h"

#include <stdio.h>

#include "cfitted.h"

void cfitrow_ident(cdb_fit *f, const char *model, const char *gpu, const char *weights, const char *source,
                   const char *tool, const int *tpseen)
{
    snprintf(f->kind, sizeof f->kind, "fitted");
    snprintf(f->model, sizeof f->model, "%s", model);
    snprintf(f->gpu, sizeof f->gpu, "%s", gpu);
    snprintf(f->weights, sizeof f->weights, "%s", weights);
    snprintf(f->source, sizeof f->source, "%s", source);
    snprintf(f->tool, sizeof f->tool, "%s", tool ? tool : "");
    size_t len = 0;
    for (int t = 1; t <= 1024; t++)
        if (tpseen[t] && len < sizeof f->tps - 8)
            len += (size_t)snprintf(f->tps + len, sizeof f->tps - len, "%s%d", len ? "," : "", t);
}

cdb_coef *cfitrow_coef(cdb_fit *f, int t, double value, double se, const char *status)
{
    cdb_coef *c = &f->coef[t];
    snprintf(c->name, sizeof c->name, "%s", cfitted_term_names[t]);
    c->value = value;
    c->se = se;
    snprintf(c->status, sizeof c->status, "%s", status);
    return c;
}
