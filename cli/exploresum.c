/* exploresum.c -- the result of `latsim explore`: every stored task read back,
 * the Pareto frontier of cost against the SLO metric and the best
 * configuration, printed and stored. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/infile.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"
#include "explore.h"

/* ---- the result ----------------------------------------------------------- */

typedef struct cres {
    long c;                   /* configuration */
    int n;                    /* stored seeds */
    int met;                  /* every seed met the SLO (and none saturated) */
    double usd;               /* $/h */
    double m;                 /* the SLO metric, mean over seeds (NAN: not measured) */
    double kwh;               /* GPU energy of the measured window, kWh, mean over seeds (NAN: no power figures) */
} cres;

static int cmp_cost(const void *a, const void *b)
{
    const cres *x = a, *y = b;
    if (x->usd != y->usd) return x->usd < y->usd ? -1 : 1;
    if (x->m != y->m) return x->m < y->m ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.10g", v); else fputs("null", f);
}

/* Reads every stored task of the exploration back, then prints and stores the
 * frontier and the best configuration.  Returns 0 or the exit status. */
/* Writes configuration X's point of the frontier to MEM as an open JSON
 * object: its settings, $ per hour, metric and energy (the caller closes it). */
static void point_json(FILE *mem, const explore *e, const cres *x)
{
    fputs("{\"settings\": ", mem);
    report_json_str(mem, e->c[x->c].settings);
    fputs(", \"usd_per_hour\": ", mem);
    json_num(mem, x->usd);
    fputs(", \"metric_ms\": ", mem);
    json_num(mem, x->m);
    fputs(", \"energy_kwh\": ", mem);
    json_num(mem, x->kwh);
}

int summarise(explore *e, double wall, const char *lost)
{
    cres *r = calloc((size_t) e->nconf, sizeof *r);
    cres *fr = calloc((size_t) e->nconf, sizeof *fr);
    char *json = NULL;
    size_t jlen = 0;
    int rc = 1, nfr = 0, stored = 0;
    if (!r || !fr) { free(r); free(fr); return cu_die(1, "out of memory"); }
    for (long c = 0; c < e->nconf; c++) { r[c].c = c; r[c].met = 1; r[c].m = 0; r[c].usd = NAN; r[c].kwh = 0; }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(e->db, "SELECT p.idx, p.usd_per_hour, p.slo_met,"
                           " (SELECT value FROM run_stats s WHERE s.run_id = p.run_id AND s.replication = -1 AND s.scope = ''"
                           "  AND s.metric = ? AND s.stat = ?),"
                           " (SELECT value FROM run_stats s WHERE s.run_id = p.run_id AND s.replication = -1 AND s.scope = ''"
                           "  AND s.metric = 'saturated' AND s.stat = 'value'),"
                           " (SELECT value FROM run_stats s WHERE s.run_id = p.run_id AND s.replication = -1 AND s.scope = ''"
                           "  AND s.metric = 'energy_kwh' AND s.stat = 'value')"
                           " FROM sweep_points p WHERE p.sweep_id = ? ORDER BY p.idx", -1, &st, NULL) != SQLITE_OK) {
        cu_die(1, "%s: %s", e->dbpath, sqlite3_errmsg(e->db));
        goto out;
    }
    sqlite3_bind_text(st, 1, e->metric, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, e->stat, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, e->id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = sqlite3_column_int(st, 0);
        if (i < 0 || i >= e->ntask) continue;
        cres *x = &r[i / e->nseeds];
        stored++;
        x->n++;
        x->usd = sqlite3_column_double(st, 1);
        if (sqlite3_column_type(st, 2) != SQLITE_NULL && !sqlite3_column_int(st, 2)) x->met = 0;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL && sqlite3_column_double(st, 4) > 0) x->met = 0;
        if (sqlite3_column_type(st, 3) == SQLITE_NULL) x->m = NAN;
        else x->m += sqlite3_column_double(st, 3);
        if (sqlite3_column_type(st, 5) == SQLITE_NULL) x->kwh = NAN;
        else x->kwh += sqlite3_column_double(st, 5);
    }
    sqlite3_finalize(st);
    int nrun = 0, nexcl = 0, nskip = 0, ncomplete = 0;
    for (long c = 0; c < e->nconf; c++) {
        nexcl += e->c[c].state == 1;
        nskip += e->c[c].state == 2;
        if (e->c[c].state) continue;
        nrun++;
        cres *x = &r[c];
        if (x->n < e->nseeds) { x->met = 0; x->m = NAN; continue; }   /* incomplete: a failed task */
        ncomplete++;
        x->m /= x->n;
        x->kwh /= x->n;
        if (isfinite(x->m) && isfinite(x->usd) && (!e->slo_on || x->met)) fr[nfr++] = *x;
    }
    /* objective = energy: the eligible configuration of least energy, on the
     * frontier or not (the frontier is cost against the SLO metric). */
    cres ebest = { -1, 0, 0, NAN, NAN, NAN };
    if (e->objective == 2)
        for (int i = 0; i < nfr; i++)
            if (isfinite(fr[i].kwh) && (ebest.c < 0 || fr[i].kwh < ebest.kwh)) ebest = fr[i];
    /* The Pareto frontier: no other configuration as cheap and as fast, one of them strictly. */
    qsort(fr, (size_t) nfr, sizeof *fr, cmp_cost);
    int k = 0;
    double bestm = INFINITY;
    for (int i = 0; i < nfr; i++)
        if (fr[i].m < bestm) { bestm = fr[i].m; fr[k++] = fr[i]; }
    nfr = k;
    int best = -1;
    for (int i = 0; i < nfr; i++) {
        if (best < 0) { best = i; continue; }
        double a = e->objective ? fr[i].m : fr[i].usd, b = e->objective ? fr[best].m : fr[best].usd;
        if (a < b) best = i;
    }
    if (e->objective == 2) {   /* the least-energy one, kept in fr past the frontier's end */
        best = -1;
        if (ebest.c >= 0) {
            for (int i = 0; i < nfr; i++)
                if (fr[i].c == ebest.c) best = i;
            if (best < 0) { fr[nfr] = ebest; best = nfr; }
        }
    }
    static const char *const OBJ[] = { "cost", "p99", "energy" };
    FILE *mem = open_memstream(&json, &jlen);
    if (!mem) { cu_die(1, "out of memory"); goto out; }
    fputs("{\"grid\": ", mem);
    report_json_str(mem, e->file);
    fprintf(mem, ", \"configurations\": %ld, \"seeds\": %d, \"tasks\": %d, \"excluded\": %d, \"stored\": %d",
            e->nconf, e->nseeds, e->ntask, nexcl * e->nseeds, stored);
    fprintf(mem, ", \"metric\": \"%s_%s_ms\", \"objective\": \"%s\", \"slo\": %s", e->metric, e->stat,
            OBJ[e->objective], e->slo_on ? "true" : "false");
    fputs(", \"skipped\": [", mem);
    for (long c = 0, n = 0; c < e->nconf; c++) {
        if (e->c[c].state != 2) continue;
        fprintf(mem, "%s{\"settings\": ", n++ ? ", " : "");
        report_json_str(mem, e->c[c].settings);
        fputs(", \"reason\": ", mem);
        report_json_str(mem, e->c[c].reason);
        fputs("}", mem);
    }
    fputs("], \"frontier\": [", mem);
    for (int i = 0; i < nfr; i++) {
        fputs(i ? ", " : "", mem);
        point_json(mem, e, &fr[i]);
        fprintf(mem, ", \"slo_met\": %s}", fr[i].met ? "true" : "false");
    }
    fputs("], \"best\": ", mem);
    if (best < 0) fputs("null", mem);
    else {
        point_json(mem, e, &fr[best]);
        fputs("}", mem);
    }
    fputs(", \"lost_ranks\": [", mem);
    fputs(lost ? lost : "", mem);
    fputs("]}", mem);
    fclose(mem);
    if (store_begin(e->db, e->err, sizeof e->err) != 0 ||
        planstore_sweep_end(e->db, e->id, wall, stored, best < 0 ? NAN : (e->objective == 2 ? fr[best].kwh : e->objective ? fr[best].m : fr[best].usd), json,
                            e->err, sizeof e->err) != 0 ||
        store_commit(e->db, e->err, sizeof e->err) != 0) {
        store_rollback(e->db);
        cu_die(1, "exploration not stored: %s", e->err);
        goto out;
    }
    if (e->json) {
        printf("{\"exploration\": %lld, %s\n", (long long) e->id, json + 1);
    } else {
        char other[64] = "";
        if (e->elsewhere) snprintf(other, sizeof other, " %d run by another process;", e->elsewhere);
        printf("explore %s  (%ld configurations x %d seeds = %d tasks; %d excluded, %d skipped; %d run now, %d stored before;"
               "%s %.2f s, %d ranks)\n", ERRMSG_SHOWN(e->file), e->nconf, e->nseeds, e->ntask, nexcl, nskip, e->stored_now,
               e->done_before, other, wall, taskmpi_size());
        for (long c = 0; c < e->nconf; c++)
            if (e->c[c].state == 2) printf("skipped: %s: %s\n", ERRMSG_SHOWN(e->c[c].settings), ERRMSG_SHOWN(e->c[c].reason));
        printf("\nPareto frontier (cost against %s %s, mean of %d seeds%s):\n", e->metric, e->stat, e->nseeds,
               e->slo_on ? "; meeting the SLO in every seed" : "");
        printf("  %12s %12s  %s\n", "usd_per_hour", "metric_ms", "configuration");
        for (int i = 0; i < nfr; i++)
            printf("  %12.4g %12.4g  %s%s\n", fr[i].usd, fr[i].m, ERRMSG_SHOWN(e->c[fr[i].c].settings), i == best ? "   <- best" : "");
        if (best < 0 && e->objective == 2 && nfr > 0)
            printf("\nno configuration reports GPU energy (its GPUs need idle_w and max_w, or a power_curve)\n");
        else if (best < 0 && stored == 0 && e->stored_now == 0 && e->done_before == 0)
            printf("\nnothing was run: %s\n", nexcl >= e->nconf ? "the exclude rules match every configuration"
                                                              : "every configuration was excluded or skipped");
        else if (best < 0) printf("\nno configuration %s\n", e->slo_on ? "meets the SLO" : "was measured");
        else {
            static const char *const WHY[] = { "lowest cost", "lowest p99", "lowest energy" };
            printf("\nbest (%s): %s  $%.4g/h  %s %s %.4g ms", WHY[e->objective],
                   ERRMSG_SHOWN(e->c[fr[best].c].settings), fr[best].usd, e->metric, e->stat, fr[best].m);
            if (isfinite(fr[best].kwh)) printf("  %.4g kWh", fr[best].kwh);
            putchar('\n');
        }
        printf("exploration %lld stored in %s (%d of %d runnable configurations complete)\n", (long long) e->id,
               ERRMSG_SHOWN(e->dbpath), ncomplete, nrun);
    }
    rc = e->failed ? 1 : 0;
out:
    free(json);
    free(r);
    free(fr);
    return rc;
}
