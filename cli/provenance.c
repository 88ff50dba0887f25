/* provenance.c -- the cost model behind each LLM pool's numbers (see provenance.h). */
#include <math.h>
#include <string.h>
#include "provenance.h"
#include "latsim/errmsg.h"

const char prov_warning[] =
    "step times are datasheet estimates (uncalibrated roofline; measured error on a real vLLM RTX 4090 run: "
    "E2E +32 %, TTFT +34 %, throughput -21 %, docs/observed.md); calibrate with latsim calib import observed "
    "FILE --scenario S.ini && latsim calib fit observed --model M --gpu G, or latsim calib import steps "
    "FILE.csv && latsim calib fit --model M --gpu G (docs/calibration.md)";

/* 1 when the text row METRIC of SCOPE equals WANT. */
static int text_is(const report *r, const char *scope, const char *metric, const char *want)
{
    const char *t = report_get_text(r, scope, metric);
    return t && !strcmp(t, want);
}

static int uncalibrated(const report *r, const char *scope)
{
    return text_is(r, scope, "cost_model.kind", "roofline") && text_is(r, scope, "cost_model.source", "datasheet");
}

int prov_describe(const report *r, const char *scope, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    const char *kind = report_get_text(r, scope, "cost_model.kind");
    if (!kind) return -1;
    const char *src = report_get_text(r, scope, "cost_model.source");
    const char *range = report_get_text(r, scope, "cost_model.range");
    double id = report_get(r, scope, "cost_model.id", "value");
    double mape = report_get(r, scope, "cost_model.mape", "value");
    int unc = uncalibrated(r, scope);
    size_t at = (size_t) snprintf(buf, n, "%s", kind);
    if (!isnan(id) && at < n) at += (size_t) snprintf(buf + at, n - at, " %.0f", id);
    if (at < n) at += (size_t) snprintf(buf + at, n - at, " (%s", src && src[0] ? src : "scenario");
    if (unc && at < n) at += (size_t) snprintf(buf + at, n - at, ", uncalibrated");
    if (!isnan(mape) && at < n) at += (size_t) snprintf(buf + at, n - at, ", cv_mape %.3g %%", mape);
    if (range && range[0] && at < n) at += (size_t) snprintf(buf + at, n - at, ", %s", range);
    else if (report_get(r, scope, "cost_model.extrapolated", "value") > 0 && at < n)
        at += (size_t) snprintf(buf + at, n - at, ", extrapolated");
    if (at < n) snprintf(buf + at, n - at, ")");
    return unc;
}

/* For each pool SC of R with a cost model, in row order (latsim/prov.h). */
#define FOR_POOLS(r, sc) for (size_t at_ = 0; ((sc) = prov_pool_next((r), &at_)) != NULL;)

int prov_table(const report *r, const char *indent, FILE *out)
{
    int nunc = 0;
    const char *sc;
    char line[512];
    FOR_POOLS(r, sc) {
        nunc += prov_describe(r, sc, line, sizeof line) == 1;
        fprintf(out, "%scost model [pool %s]: %s\n", indent, ERRMSG_SHOWN(sc), line);
    }
    return nunc;
}

int prov_warn(const report *r)
{
    static int warned;
    const char *sc;
    int any = 0;
    FOR_POOLS(r, sc) any |= uncalibrated(r, sc);
    if (any && !warned) {
        fflush(stdout);
        fprintf(stderr, "latsim: warning: %s\n", prov_warning);
        warned = 1;
    }
    return any;
}
