/* planout.c -- a plan's output (latsim/plan.h): the JSON of `latsim plan
 * --json` (the winner, the candidates, every configuration's verdict, the
 * goodput, the counts, the cost models and the sensitivity check), the cost
 * models' labels it and the table share, and the plan stored in the database
 * with every simulation it made, in one transaction.  Numbers are written
 * with the same formats as the rest of the commands' JSON (report_json_str
 * for strings, %.6g for most numbers), so that a plan's JSON is stable byte
 * for byte.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "latsim/prov.h"
#include "plan/planner.h"

void plan_settings_json(const plan *p, const plan_config *c, int m, FILE *out)
{
    fputs("{", out);
    int first = 1;
    for (int i = 0; i < c->nsets; i++) {
        const char *eq = strchr(c->sets[i], '=');
        char k[256];
        snprintf(k, sizeof k, "%.*s", (int) (eq - c->sets[i]), c->sets[i]);
        fputs(first ? "" : ", ", out);
        report_json_str(out, k);
        fputs(": ", out);
        report_json_str(out, eq + 1);
        first = 0;
    }
    if (p->mono.n >= 0 && m > 0) {
        char k[256];
        snprintf(k, sizeof k, "%s.%s", p->mono.section, p->mono.key);
        fputs(first ? "" : ", ", out);
        report_json_str(out, k);
        fprintf(out, ": \"%d\"", m);
    }
    fputs("}", out);
}

void plan_models_label(const report *r, char *buf, size_t n)
{
    int pools = 0;
    for (size_t i = 0; i < r->n; i++) pools += !strcmp(r->rows[i].metric, "cost_model.kind") && r->rows[i].text;
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n && at < n; i++) {
        const store_stat *st = &r->rows[i];
        if (strcmp(st->metric, "cost_model.kind") || !st->text) continue;
        double id = report_get(r, st->scope, "cost_model.id", "value");
        at += (size_t) snprintf(buf + at, n - at, "%s%s%s%s", at ? ", " : "", pools > 1 ? st->scope : "", pools > 1 ? ": " : "",
                                st->text);
        if (at < n && isfinite(id) && id > 0) at += (size_t) snprintf(buf + at, n - at, " %.0f", id);
    }
    if (!buf[0]) snprintf(buf, n, "-");
}

int plan_models_differ(const plan *p, int *a, int *b)
{
    for (int i = 1; i < p->ncs; i++)
        for (int k = 0; k < i; k++) {
            const report *x = &p->e[p->shown[k]].o.rep, *y = &p->e[p->shown[i]].o.rep;
            for (size_t j = 0; j < x->n; j++) {
                if (strcmp(x->rows[j].metric, "cost_model.kind") || !x->rows[j].text) continue;
                const char *t = report_get_text(y, x->rows[j].scope, "cost_model.kind");
                if (t && strcmp(t, x->rows[j].text)) { *a = k; *b = i; return 1; }
            }
        }
    return 0;
}

/* The verdicts as a JSON array into OUT. */
static void verdicts_json(const plan *p, FILE *out)
{
    fputs("[", out);
    for (int ci = 0; ci < p->nc; ci++) {
        char why[1200];
        int v;
        const char *kind = plan_config_verdict(p, ci, &v, why, sizeof why);
        fputs(ci ? ", {\"configuration\": " : "{\"configuration\": ", out);
        report_json_str(out, p->c[ci].label);
        fprintf(out, ", \"verdict\": \"%s\", \"chosen\": %s", kind, ci == p->winner ? "true" : "false");
        if (p->mono.n >= 0 && v > 0) fprintf(out, ", \"%s\": %d, \"usd_per_hour\": %.6g", p->mono.key, v, plan_cost_at(&p->c[ci], v));
        else if (p->mono.n < 0 && !strcmp(kind, "meets")) fprintf(out, ", \"usd_per_hour\": %.6g", p->c[ci].fixed);
        fputs(", \"why\": ", out);
        report_json_str(out, why);
        fputs("}", out);
    }
    fputs("]", out);
}

/* The peak window as JSON members (nothing without one). */
static void peak_json(const plan *p, FILE *out)
{
    if (!p->peak) return;
    fprintf(out, ", \"peak_window\": {\"start_s\": %.6g, \"length_s\": %.6g, \"requests\": %zu, \"rate_rps\": %.6g, "
            "\"window_trace_rate_rps\": %.6g, \"trace_mean_rps\": %.6g, \"trace_span_s\": %.6g, \"scale\": %.6g}",
            p->peak_from, p->peak_len, p->peak_rows, p->target, p->target / p->peak_scale, p->peak_mean, p->peak_span,
            p->peak_scale);
}

/* The winner and the candidates: "best": {...}, "candidates": [...]. */
static void cands_json(const plan *p, FILE *mem)
{
    for (int i = 0; i < p->ncs && i < (p->o.top > p->ncs ? p->ncs : p->o.top); i++) {
        const plan_config *c = &p->c[p->cs[i].combo];
        const plan_eval *e = &p->e[p->shown[i]];
        if (i == 1) fputs(", \"candidates\": [", mem);
        if (i >= 1) fputs(i > 1 ? ", " : "", mem);
        fputs("{\"settings\": ", mem);
        plan_settings_json(p, c, p->mono.n >= 0 ? c->b.answer : 0, mem);
        fprintf(mem, ", \"usd_per_hour\": %.6g, \"busy_share_max\": %.4g, \"confirmed_seeds\": %d, ", p->cs[i].cost,
                plan_busy_max(&e->o.rep), c->confirmed > 0 ? p->o.seeds : 1);
        if (isnan(p->cs[i].power_w)) fputs("\"mean_power_w\": null, ", mem);
        else fprintf(mem, "\"mean_power_w\": %.6g, ", p->cs[i].power_w);
        char ml[300];
        plan_models_label(&e->o.rep, ml, sizeof ml);
        fputs("\"cost_model\": ", mem);
        report_json_str(mem, ml);
        fputs(", \"cost_models\": ", mem);
        prov_json(&e->o.rep, mem);
        fputs(", ", mem);
        fputs("\"slo\": ", mem);
        slo_json(&e->slo, mem);
        fputs("}", mem);
    }
    if (p->ncs < 2) fputs(", \"candidates\": [", mem);
    fputs("]", mem);
}

/* The sensitivity check's members (nothing when it was not made). */
static void sens_json(const plan *p, FILE *mem)
{
    if (!p->nsens) return;
    char v[2000];
    plan_sens_verdict(p, v, sizeof v);
    fputs(", \"sensitivity\": {\"basis\": ", mem);
    report_json_str(mem, p->sens_basis);
    fputs(", \"answers\": [", mem);
    for (int k = 0; k < p->nsens; k++) {
        const plan_sens *a = &p->sens[k];
        fprintf(mem, "%s{\"step_time_scale\": %.10g, \"met\": %s", k ? ", " : "", a->factor, a->met ? "true" : "false");
        if (a->met) fprintf(mem, ", \"settings\": %s, \"usd_per_hour\": %.6g", a->settings, a->cost);
        fputs("}", mem);
    }
    fprintf(mem, "], \"robust\": %s, \"verdict\": ", p->robust ? "true" : "false");
    report_json_str(mem, v);
    fputs("}", mem);
    /* The answer at the band's pessimistic end (the longer step times). */
    const plan_sens *pe = &p->sens[p->nsens - 1];
    fprintf(mem, ", \"pessimistic\": {\"step_time_scale\": %.10g, \"met\": %s", pe->factor, pe->met ? "true" : "false");
    if (pe->met) fprintf(mem, ", \"settings\": %s, \"usd_per_hour\": %.6g", pe->settings, pe->cost);
    fputs("}", mem);
}

int plan_json(plan *p, char *err, size_t errlen)
{
    size_t jlen = 0;
    free(p->jtext);
    p->jtext = NULL;
    FILE *mem = open_memstream(&p->jtext, &jlen);
    if (!mem) return plan_fail(err, errlen, 1, "out of memory");
    fprintf(mem, "{\"scenario\": ");
    report_json_str(mem, p->o.file);
    peak_json(p, mem);
    if (p->winner < 0) {
        fprintf(mem, ", \"target_rate_rps\": %.6g, \"headroom\": %.6g, \"best\": null, \"verdicts\": ", p->target, p->headroom);
        verdicts_json(p, mem);
        fclose(mem);
        return 0;
    }
    fprintf(mem, ", \"target_rate_rps\": %.6g, \"headroom\": %.6g, \"objective\": \"%s\", \"best\": ", p->target, p->headroom,
            p->o.energy ? "energy" : "cost");
    cands_json(p, mem);
    fputs(", \"verdicts\": ", mem);
    verdicts_json(p, mem);
    fprintf(mem, ", \"goodput\": {\"rate_rps_min\": %.6g, \"rate_rps_max\": ", p->want * p->goodput_lo);
    if (isnan(p->goodput_hi)) fputs("null", mem);
    else fprintf(mem, "%.6g", p->want * p->goodput_hi);
    fprintf(mem, ", \"headroom_min\": %.6g}", p->want * p->goodput_lo / p->target);
    int da, db;
    fprintf(mem, ", \"simulations\": %d, \"configurations\": %d, \"pruned\": %d, \"reopened\": %d, \"infeasible\": %d, "
            "\"below_bound\": %d, \"wall_s\": %.3f, \"cost_models_differ\": %s",
            p->ne, p->nc, p->pruned, p->reopened, p->infeasible, p->bounded, p->wall, plan_models_differ(p, &da, &db) ? "true" : "false");
    /* What the answer stands on, and whether it survives other step times. */
    fputs(", \"cost_models\": ", mem);
    prov_json(&p->e[p->shown[0]].o.rep, mem);
    sens_json(p, mem);
    fclose(mem);
    return 0;
}

int plan_store(plan *p, char *err, size_t errlen)
{
    if (!p->o.store) return 0;
    char started[32], args[1024], msg[2048];
    sqlite3 *db = NULL;
    char *stored = NULL;
    int rc = 1;
    const plan_opts *o = &p->o;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(args, sizeof args, "--target-rate %g%s%s%s%s%s%s%s%s%s%s%s", p->target, o->energy ? " --objective energy" : "",
             o->gpus ? " --gpus " : "", o->gpus ? o->gpus : "", o->tps ? " --tp " : "", o->tps ? o->tps : "",
             o->pps ? " --pp " : "", o->pps ? o->pps : "", o->eps ? " --ep " : "", o->eps ? o->eps : "",
             o->reps ? " --replicas " : "", o->reps ? o->reps : "");
    if (store_open(o->dbpath, &db, msg, sizeof msg) != 0) return plan_fail(err, errlen, 2, "%s", msg);
    if (store_check_writable(db, o->dbpath, msg, sizeof msg) != 0) {
        store_close(db);
        return plan_fail(err, errlen, 2, "%s", msg);
    }
    int bad = store_begin(db, msg, sizeof msg) != 0 ||
              planstore_sweep_begin(db, "plan", o->file, args, started, &p->plan_id, msg, sizeof msg) != 0;
    for (int i = 0; i < p->ne && !bad; i++) {
        plan_eval *e = &p->e[i];
        plan_wire(p, e);
        char settings[1200] = "";
        for (int k = p->nuser + 1; k < e->t.nsets; k++) {
            size_t l = strlen(settings);
            snprintf(settings + l, sizeof settings - l, "%s%s", l ? "; " : "", e->t.sets[k]);
        }
        planstore_extra x = { .sweep_id = p->plan_id, .idx = i, .role = e->role, .settings = settings, .seed = e->o.seed,
                              .rate = e->o.rate, .usd_per_hour = e->o.usd_per_hour };
        int64_t id;
        bad = task_save_run(db, &e->t, &e->o, &e->slo, &x, &id, msg, sizeof msg) != 0;
    }
    /* Stored as --json prints it (one whole object), less the id. */
    stored = bad ? NULL : malloc(strlen(p->jtext) + 2);
    if (!bad && !stored) bad = (snprintf(msg, sizeof msg, "out of memory"), 1);
    if (stored) { strcpy(stored, p->jtext); strcat(stored, "}"); }
    bad = bad || planstore_sweep_end(db, p->plan_id, p->wall, p->ne, p->cs[0].cost, stored, msg, sizeof msg) != 0 ||
          store_commit(db, msg, sizeof msg) != 0;
    if (bad) { store_rollback(db); rc = plan_fail(err, errlen, 1, "plan not stored: %s", msg); goto out; }
    rc = 0;
out:
    free(stored);
    store_close(db);
    return rc;
}
