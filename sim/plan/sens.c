/* sens.c -- the planner's sensitivity check (latsim/plan.h, plan_conclude):
 * the search again with every LLM pool's step times scaled
 * (step_time_scale) to both ends of the answer's 90 % prediction band
 * (latsim/band.h, docs/bands.md), and whether the answer is robust: the same
 * configuration at both ends.
 */
#include <stdio.h>
#include <string.h>
#include "latsim/band.h"
#include "plan/planner.h"

int plan_robust(const plan_sens *s, int n)
{
    int robust = n == 2;
    for (int k = 0; k < n; k++) robust &= s[k].met && (k == 0 || !strcmp(s[k].label, s[0].label));
    return robust;
}

/* The band is the widest of the answer's LLM pools' cost models' validated
 * errors (cost_model.mape; widened when carried), the documented default for
 * a model without one (the roofline, linear).  The answer at the pessimistic
 * end (the longer step times) is the one to buy when the model errs by its
 * band.  Each end is a plan of its own: the same options, the first seed,
 * without the energy objective and without a sensitivity check. */
int plan_sensitivity(plan *p, char *err, size_t errlen)
{
    if (p->o.no_sens) return 0;
    band_model bm;
    if (band_of_report(&p->e[p->shown[0]].o.rep, &bm) == 0) return 0;   /* no LLM pool: no step times */
    double f[2] = { bm.lo, bm.hi };
    snprintf(p->sens_basis, sizeof p->sens_basis, "x%.3g and x%.3g: the 90 %% band of %s", f[0], f[1], bm.basis);
    char scales[PLAN_MAX_USER_SETS][200];
    const char *sets[PLAN_MAX_USER_SETS];
    for (int k = 0; k < 2; k++) {
        int nsets = p->nuser;
        memcpy(sets, p->user_sets, (size_t) nsets * sizeof *sets);
        for (int i = 0; i < scenario_npools(p->base); i++) {
            if (!scenario_pool_takes(p->base, i, "step_time_scale")) continue;
            if (nsets >= PLAN_MAX_USER_SETS)
                return plan_fail(err, errlen, 2, "plan: too many --set options for the sensitivity check (use --no-sensitivity)");
            snprintf(scales[nsets], sizeof scales[nsets], "pool %s.step_time_scale=%.10g", scenario_pool_name(p->base, i), f[k]);
            sets[nsets] = scales[nsets];
            nsets++;
        }
        plan_opts o = p->o;
        o.sets = sets;
        o.nsets = nsets;
        o.trace = 0;
        o.peak_min = 0;
        o.target = p->target;
        o.energy = 0;
        o.no_sens = 1;
        o.store = 0;
        o.progress = NULL;
        plan q;
        int rc = plan_init(&q, &o, err, errlen);
        if (!rc) rc = plan_setup(&q, err, errlen);
        q.seed0 = p->seed0;
        if (!rc) rc = plan_solve(&q, err, errlen);
        plan_sens *a = &p->sens[k];
        a->factor = f[k];
        if (!rc && q.winner >= 0 && (rc = plan_candidates(&q, err, errlen)) == 0) {
            a->met = 1;
            a->cost = q.cs[0].cost;
            plan_answer_label(&q, q.winner, a->label, sizeof a->label);
            FILE *m = fmemopen(a->settings, sizeof a->settings, "w");
            if (m) {
                const plan_config *c = &q.c[q.winner];
                plan_settings_json(&q, c, q.mono.n >= 0 ? c->b.answer : 0, m);
                fclose(m);
            }
        }
        p->nsens = k + 1;
        plan_free(&q);
        if (rc) return rc;
    }
    p->robust = plan_robust(p->sens, p->nsens);
    return 0;
}

void plan_sens_verdict(const plan *p, char *buf, size_t n)
{
    if (p->robust) {
        snprintf(buf, n, "robust: same configuration at x%.3g and x%.3g (%s)", p->sens[0].factor, p->sens[1].factor,
                 p->sens[0].label);
        return;
    }
    size_t at = (size_t) snprintf(buf, n, "not robust:");
    for (int k = 0; k < p->nsens && at < n; k++) {
        const plan_sens *a = &p->sens[k];
        if (a->met) at += (size_t) snprintf(buf + at, n - at, "%s x%.3g: %s ($%.2f/hour)", k ? ";" : "", a->factor, a->label, a->cost);
        else at += (size_t) snprintf(buf + at, n - at, "%s x%.3g: no configuration meets the SLO", k ? ";" : "", a->factor);
    }
}
