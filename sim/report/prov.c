/* prov.c -- the cost model behind each LLM pool's numbers as JSON
 * (latsim/prov.h): the "cost_models" member of run, sweep, check, compare and
 * plan output. */
#include <math.h>
#include <string.h>
#include "latsim/prov.h"

const char *prov_pool_next(const report *r, size_t *i)
{
    for (; *i < r->n; (*i)++) {
        const store_stat *st = &r->rows[*i];
        if (!strcmp(st->metric, "cost_model.kind") && st->text && !strcmp(st->stat, "value") && st->scope) {
            (*i)++;
            return st->scope;
        }
    }
    return NULL;
}

static void jstr(FILE *out, const char *s)
{
    report_json_str(out, s ? s : "");
}

void prov_json(const report *r, FILE *out)
{
    fputc('{', out);
    const char *sc;
    int first = 1;
    size_t at = 0;
    while ((sc = prov_pool_next(r, &at)) != NULL) {
        double id = report_get(r, sc, "cost_model.id", "value");
        double mape = report_get(r, sc, "cost_model.mape", "value");
        const char *kind = report_get_text(r, sc, "cost_model.kind");
        fputs(first ? "" : ", ", out);
        first = 0;
        jstr(out, sc);
        fputs(": {\"kind\": ", out);
        jstr(out, kind);
        if (isnan(id)) fputs(", \"id\": null", out);
        else fprintf(out, ", \"id\": %.0f", id);
        fputs(", \"source\": ", out);
        jstr(out, report_get_text(r, sc, "cost_model.source"));
        if (isnan(mape)) fputs(", \"mape\": null", out);
        else fprintf(out, ", \"mape\": %.6g", mape);
        fputs(", \"range\": ", out);
        jstr(out, report_get_text(r, sc, "cost_model.range"));
        fprintf(out, ", \"extrapolated\": %s, \"calibrated\": %s}",
                report_get(r, sc, "cost_model.extrapolated", "value") > 0 ? "true" : "false",
                kind && strcmp(kind, "roofline") && strcmp(kind, "linear") ? "true" : "false");
    }
    fputc('}', out);
}
