/* search.c -- the planner's search (latsim/plan.h, plan_search and
 * plan_conclude): rounds of simulations in which every open configuration
 * bisects its monotone value (plan_mono_next) and the cheapest one known to
 * meet the SLO bounds the others' cost; the winner confirmed with the other
 * seeds; the configurations pruned after one of their values met bisected to
 * their smallest meeting value; every configuration's verdict; the winner's
 * goodput; the candidates ranked.  Simulations run in parallel on task.h's
 * workers, a round at a time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "plan/planner.h"

/* ---- evaluations ---------------------------------------------------------- */

/* A new evaluation of configuration CI (-1 none) at monotone value M with
 * SEED, in ROLE.  Returns it (its address moves with the next one), or NULL
 * when out of memory. */
static plan_eval *new_eval(plan *p, int ci, int m, const char *role, uint64_t seed)
{
    if (p->ne == p->ecap) {
        int cap = p->ecap ? 2 * p->ecap : 256;
        plan_eval *x = realloc(p->e, (size_t) cap * sizeof *x);
        if (!x) return NULL;
        p->e = x;
        p->ecap = cap;
    }
    plan_eval *e = &p->e[p->ne++];
    memset(e, 0, sizeof *e);
    e->combo = ci;
    e->m = m;
    e->role = role;
    e->factor = 1;
    e->t.seed = seed;
    return e;
}

/* task_run_all's progress: the plan's own callback. */
static void progress(int done, int n, void *arg)
{
    const plan *p = arg;
    p->o.progress(p, done, n, p->o.arg);
}

/* Runs evaluations FROM..ne-1 and evaluates the SLO over each.  Returns 0 or
 * the exit status + ERR (the first failure's). */
static int run_evals(plan *p, int from, char *err, size_t errlen)
{
    int m = p->ne - from;
    if (m <= 0) return 0;
    task *ts = calloc((size_t) m, sizeof *ts);
    task_out *outs = calloc((size_t) m, sizeof *outs);
    if (!ts || !outs) { free(ts); free(outs); return plan_fail(err, errlen, 1, "out of memory"); }
    for (int i = 0; i < m; i++) { plan_wire(p, &p->e[from + i]); ts[i] = p->e[from + i].t; }
    task_run_all(ts, m, p->o.jobs, p->o.dbpath, outs, p->o.progress ? progress : NULL, p);
    int rc = 0;
    for (int i = 0; i < m; i++) {
        plan_eval *e = &p->e[from + i];
        e->o = outs[i];
        if (e->o.status != 0) {
            if (!rc) rc = plan_fail(err, errlen, e->o.status == 2 ? 2 : 1, "%s", e->o.err);
            continue;
        }
        if (slo_eval(&p->slo, e->o.rep.rows, e->o.rep.n, &e->slo) != 0) {
            if (!rc) rc = plan_fail(err, errlen, 1, "out of memory");
            continue;
        }
        e->met = e->slo.met && !(report_get(&e->o.rep, "", "saturated", "value") > 0);
    }
    free(ts);
    free(outs);
    return rc;
}

double plan_cost_at(const plan_config *c, int m) { return c->fixed + c->unit * m; }

/* C's mean GPU power at its answer, W: the report of its evaluation there with
 * the base seed; when it has none (its answer was raised by a confirming seed
 * but not simulated), with ESTIMATE that of its best evaluation (a smaller
 * value), else NAN; NAN too when the run has no energy rows. */
static double power_at_answer(const plan *p, const plan_config *c, int estimate)
{
    int m = p->mono.n >= 0 ? c->b.answer : 0;
    int ci = (int) (c - p->c);
    for (int k = 0; k < p->ne; k++)
        if (p->e[k].combo == ci && p->e[k].m == m && p->e[k].met && p->e[k].t.seed == p->seed0)
            return report_get(&p->e[k].o.rep, "", "mean_power_w", "value");
    return estimate && c->best_eval >= 0 ? report_get(&p->e[c->best_eval].o.rep, "", "mean_power_w", "value") : NAN;
}

/* What the plan minimises for C at its answer: $/hour, or (--objective energy)
 * the mean GPU power, W (INFINITY when unknown). */
static double objective_at(const plan *p, const plan_config *c)
{
    if (!p->o.energy) return p->mono.n >= 0 ? plan_cost_at(c, c->b.answer) : c->fixed;
    double w = power_at_answer(p, c, 1);
    return isnan(w) ? INFINITY : w;
}

/* How close a missing evaluation came (plan_closeness). */
static double closeness(const plan_eval *e) { return plan_closeness(&e->slo, &e->o.rep, e->o.rate); }

/* ---- the rounds ------------------------------------------------------------ */

/* The next monotone value to simulate for C, or 0 when its search is over
 * (plan_mono_next). */
static int next_value(plan *p, plan_config *c)
{
    plan_mono_ctx x = { p->mono_lo, p->mono_hi, !p->o.energy && p->best >= 0 && p->best != (int) (c - p->c), p->best_cost,
                        c->fixed, c->unit, p->finishing };
    return plan_mono_next(&c->b, &x);
}

/* Updates C after evaluation E. */
static void update(plan *p, plan_config *c, const plan_eval *e)
{
    int m = e->m;
    if (e->met) {
        if (plan_mono_record(&c->b, m, 1)) c->best_eval = (int) (e - p->e);
    } else {
        plan_mono_record(&c->b, m, 0);
        double w = closeness(e);
        if (c->closest_eval < 0 || w > c->closest) { c->closest = w; c->closest_eval = (int) (e - p->e); }
        /* Capacity estimate for LLM pools (no queueing formula): what the run
         * measured ("pool NAME" -> NAME). */
        if (c->b.hi > p->mono_hi && !c->b.hint_used) {
            double need = plan_capacity_need(&e->o.rep, e->o.rate, m, p->mono.section + 5);
            if (!isnan(need) && need > m) c->b.hint = need;
        }
    }
}

/* The cost bound: the cheapest configuration known to meet the SLO (P->best,
 * P->best_cost; -1 none): at its smallest meeting value with the first seed,
 * or at the value confirmation raised it to (its answer, when larger); one
 * that failed confirmation does not count. */
static void update_best(plan *p)
{
    p->best = -1;
    for (int ci = 0; ci < p->nc; ci++) {
        plan_config *c = &p->c[ci];
        if (c->infeasible || c->confirmed < 0 || (p->mono.n >= 0 ? c->b.hi > p->mono_hi : c->best_eval < 0)) continue;
        int m = p->mono.n >= 0 ? (c->b.answer > c->b.hi ? c->b.answer : c->b.hi) : 1;
        double cost = p->mono.n >= 0 ? plan_cost_at(c, m) : c->fixed;
        if (p->best < 0 || cost < p->best_cost) { p->best = ci; p->best_cost = cost; }
    }
}

/* Rounds: every open configuration simulates its next value, in parallel,
 * and the cheapest known meeting configuration bounds everyone's cost.
 * Returns 0 or the exit status + ERR. */
static int plan_rounds(plan *p, char *err, size_t errlen)
{
    int rc;
    update_best(p);
    for (int round = 0; round < 200; round++) {
        int from = p->ne;
        for (int ci = 0; ci < p->nc; ci++) {
            plan_config *c = &p->c[ci];
            if (c->infeasible || c->b.done || c->b.pruned) continue;
            if (p->mono.n < 0) {                /* no monotone dimension: one simulation each */
                if (round > 0) { c->b.done = 1; continue; }
                if (!new_eval(p, ci, 0, "candidate", p->seed0)) return plan_fail(err, errlen, 1, "out of memory");
                continue;
            }
            int x = next_value(p, c);
            if (x <= 0) continue;
            if (!new_eval(p, ci, x, "candidate", p->seed0)) return plan_fail(err, errlen, 1, "out of memory");
        }
        if (p->ne == from) break;
        if ((rc = run_evals(p, from, err, errlen)) != 0) return rc;
        for (int i = from; i < p->ne; i++) {
            plan_eval *e = &p->e[i];
            plan_config *c = &p->c[e->combo];
            if (p->mono.n >= 0) { update(p, c, e); continue; }
            if (e->met) { c->best_eval = i; c->b.answer = 1; }
            else {
                double w = closeness(e);
                if (c->closest_eval < 0 || w > c->closest) { c->closest = w; c->closest_eval = i; }
            }
        }
        update_best(p);
    }
    return 0;
}

/* The rounds, then the runner-ups made minimal: a configuration pruned by
 * cost after one of its values met the SLO is bisected down to its smallest
 * meeting value like the winner (its lower bound already costs more than the
 * best, so it cannot win; its row must still be the least it needs).  Returns
 * 0 or the exit status + ERR. */
static int search_rounds(plan *p, char *err, size_t errlen)
{
    int rc;
    if ((rc = plan_rounds(p, err, errlen)) != 0) return rc;
    if (p->mono.n >= 0) {
        int any = 0;
        for (int ci = 0; ci < p->nc; ci++)
            if (p->c[ci].b.pruned && p->c[ci].b.hi <= p->mono_hi) { p->c[ci].b.pruned = 0; any = 1; }
        p->finishing = 1;
        if (any && (rc = plan_rounds(p, err, errlen)) != 0) return rc;
        p->finishing = 0;
    }
    /* An answer confirmation raised (a seed missed at the first seed's smallest
     * value) stays raised when the search runs again (plan_solve). */
    for (int ci = 0; ci < p->nc; ci++)
        if (p->mono.n >= 0 && !p->c[ci].infeasible && p->c[ci].b.hi <= p->mono_hi && p->c[ci].b.answer < p->c[ci].b.hi)
            p->c[ci].b.answer = p->c[ci].b.hi;
    return 0;
}

/* Confirms the cheapest with more seeds, raising its value until every seed
 * meets the SLO; sets P->winner (-1 none).  Returns 0 or the exit status + ERR. */
static int plan_confirm(plan *p, char *err, size_t errlen)
{
    int rc;
    p->winner = -1;
    /* Each attempt confirms a configuration, raises one's answer or rules one
     * out (confirmed -1): the loop ends.  (It used to give up after 8 attempts
     * and report that nothing met the SLO although brute force found one.) */
    for (;;) {
        int bi = -1;
        double bc = INFINITY;
        for (int ci = 0; ci < p->nc; ci++) {
            plan_config *c = &p->c[ci];
            if (c->infeasible || c->confirmed < 0 || c->best_eval < 0 || (p->mono.n >= 0 && c->b.answer <= 0)) continue;
            double cost = objective_at(p, c);
            /* Equal cost: the larger worst SLO margin (of its evaluation at the answer) wins. */
            if (cost < bc || (bi >= 0 && cost == bc && c->best_eval >= 0 && p->c[bi].best_eval >= 0 &&
                              slo_worst_margin(&p->e[c->best_eval].slo) > slo_worst_margin(&p->e[p->c[bi].best_eval].slo))) {
                bc = cost;
                bi = ci;
            }
        }
        if (bi < 0) break;
        plan_config *c = &p->c[bi];
        if (c->confirmed > 0) { p->winner = bi; break; }   /* --objective energy: still the lowest */
        int from = p->ne;
        for (int k = 1; k < p->o.seeds; k++)
            if (!new_eval(p, bi, p->mono.n >= 0 ? c->b.answer : 0, "confirm", p->seed0 + (uint64_t) k))
                return plan_fail(err, errlen, 1, "out of memory");
        if (c->best_eval >= 0 && p->e[c->best_eval].m != (p->mono.n >= 0 ? c->b.answer : 0))
            if (!new_eval(p, bi, c->b.answer, "confirm", p->seed0)) return plan_fail(err, errlen, 1, "out of memory");
        if ((rc = run_evals(p, from, err, errlen)) != 0) return rc;
        int all = 1;
        for (int i = from; i < p->ne; i++) {
            all &= p->e[i].met;
            double w = p->e[i].met ? 0 : closeness(&p->e[i]);
            if (!p->e[i].met && (c->closest_eval < 0 || w > c->closest)) { c->closest = w; c->closest_eval = i; }
        }
        if (all) {
            c->confirmed = 1;
            /* Energy: its power at the answer is now simulated; another may be lower. */
            if (p->o.energy) continue;
            p->winner = bi;
            break;
        }
        if (p->mono.n >= 0 && c->b.answer < p->mono_hi) c->b.answer++;   /* a seed missed: one more */
        else c->confirmed = -1;
    }
    return 0;
}

/* The search and the confirmation, again while confirmation raised the bound
 * that pruned configurations: a configuration pruned because its cheapest
 * possible cost was above the best found with the first seed is searched
 * again when confirmation (more seeds) raised the winner's cost above that
 * cheapest possible cost, so that the answer is the cheapest configuration
 * meeting the SLO with every seed. */
int plan_solve(plan *p, char *err, size_t errlen)
{
    int rc;
    for (int pass = 0; pass < 64; pass++) {
        if ((rc = search_rounds(p, err, errlen)) != 0 || (rc = plan_confirm(p, err, errlen)) != 0) return rc;
        if (p->o.energy || p->mono.n < 0) return 0;
        /* No winner: every pruned configuration may be the answer. */
        double wc = p->winner >= 0 ? plan_cost_at(&p->c[p->winner], p->c[p->winner].b.answer) : INFINITY;
        int reopened = 0;
        for (int ci = 0; ci < p->nc; ci++) {
            plan_config *c = &p->c[ci];
            int lb = c->b.lo + 1 > p->mono_lo ? c->b.lo + 1 : p->mono_lo;
            if (!c->b.pruned || c->infeasible || plan_cost_at(c, lb) >= wc) continue;
            c->b.pruned = 0;
            c->b.done = 0;
            reopened++;
        }
        if (!reopened) return 0;
        p->reopened += reopened;
    }
    return 0;
}

int plan_search(plan *p, char *err, size_t errlen)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = plan_solve(p, err, errlen);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    p->wall = (double) (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return rc;
}

/* ---- verdicts -------------------------------------------------------------- */

/* The SLO term of E that fails by the largest share of its limit, as
 * "e2e_p99_ms 23500 > 15000", or the saturation, into OUT. */
static void worst_term(const plan_eval *e, char *out, size_t n) { plan_worst_term(&e->slo, &e->o.rep, e->o.rate, out, n); }

/* The evaluation of configuration CI at monotone value M with the first seed
 * (-1 none). */
static int eval_at(const plan *p, int ci, int m)
{
    for (int k = 0; k < p->ne; k++)
        if (p->e[k].combo == ci && p->e[k].m == m && p->e[k].t.seed == p->seed0 && p->e[k].factor == 1) return k;
    return -1;
}

const char *plan_config_verdict(const plan *p, int ci, int *value, char *why, size_t n)
{
    const plan_config *c = &p->c[ci];
    char closest[300], below[300], lo[300];
    plan_verdict_in v = { c->infeasible ? c->reason : NULL, c->bound, c->confirmed < 0, p->seed0, p->o.seeds, p->mono.n >= 0,
                          p->mono_name, p->mono_lo, p->mono_hi, &c->b, c->fixed, c->unit, c->best_eval >= 0, NULL, NULL, 0, NULL,
                          p->winner >= 0 ? plan_cost_at(&p->c[p->winner], p->c[p->winner].b.answer) : p->best_cost, p->best_cost };
    if (c->closest_eval >= 0) { worst_term(&p->e[c->closest_eval], closest, sizeof closest); v.term_closest = closest; }
    int k = -1;                        /* a missing evaluation one below the answer (any seed) */
    for (int i = 0; i < p->ne && k < 0 && c->b.answer > 0; i++)
        if (p->e[i].combo == ci && p->e[i].m == c->b.answer - 1 && !p->e[i].met && p->e[i].factor == 1) k = i;
    if (k >= 0) { worst_term(&p->e[k], below, sizeof below); v.term_below = below; v.below_seed = p->e[k].t.seed; }
    k = c->b.lo >= p->mono_lo ? eval_at(p, ci, c->b.lo) : -1;
    if (k >= 0) { worst_term(&p->e[k], lo, sizeof lo); v.term_lo = lo; }
    return plan_verdict(&v, value, why, n);
}

void plan_answer_label(const plan *p, int ci, char *buf, size_t n)
{
    const plan_config *c = &p->c[ci];
    if (p->mono.n >= 0) snprintf(buf, n, "%s%s%s=%d", c->label, c->label[0] ? " " : "", p->mono_name, c->b.answer);
    else snprintf(buf, n, "%s", c->label);
    if (!buf[0]) snprintf(buf, n, "the scenario as given");
}

int plan_no_winner(const plan *p, char *err, size_t errlen)
{
    int ce = -1;
    double w = -INFINITY;
    for (int ci = 0; ci < p->nc; ci++)
        if (p->c[ci].closest_eval >= 0 && (ce < 0 || p->c[ci].closest > w)) { ce = p->c[ci].closest_eval; w = p->c[ci].closest; }
    if (ce < 0) {
        int nb = 0, ni = 0, first_b = -1, first_i = -1;
        for (int ci = 0; ci < p->nc; ci++) {
            if (p->c[ci].bound[0]) { nb++; if (first_b < 0) first_b = ci; }
            if (p->c[ci].infeasible) { ni++; if (first_i < 0) first_i = ci; }
        }
        char why[1000] = "";
        if (first_b >= 0) {
            const plan_config *b = &p->c[first_b];
            snprintf(why, sizeof why, "%d of %d configurations cannot carry the load (e.g. %s%s%s)", nb, p->nc, b->label,
                     b->label[0] ? ": " : "", b->bound);
        }
        if (first_i >= 0) {
            size_t l = strlen(why);
            snprintf(why + l, sizeof why - l, "%s%d of %d are refused by the scenario (e.g. %.150s: %.200s)", l ? "; " : "", ni, p->nc,
                     p->c[first_i].label, p->c[first_i].reason);
        }
        if (!why[0]) snprintf(why, sizeof why, "no simulation was run");
        return plan_fail(err, errlen, 2, "plan: no configuration meets the SLO at %.4g req/s (%.4g x headroom %.3g): %s; nothing was "
                         "simulated", p->want, p->target, p->headroom, why);
    }
    const plan_eval *e = &p->e[ce];
    const slo_check *worst = NULL;
    for (int i = 0; i < e->slo.n; i++) {
        const slo_check *k = &e->slo.c[i];
        double rel = isnan(k->value) ? -INFINITY : k->margin / k->t->limit;
        if (!worst || rel < (isnan(worst->value) ? -INFINITY : worst->margin / worst->t->limit)) worst = k;
    }
    char what[300];
    if (report_get(&e->o.rep, "", "saturated", "value") > 0 || !worst || isnan(worst->value))
        snprintf(what, sizeof what, "saturated (throughput %.4g of %.4g req/s)", report_get(&e->o.rep, "", "throughput_rps", "value"),
                 e->o.rate);
    else
        snprintf(what, sizeof what, "%s %.4g vs limit %.4g (%.0f %% over)", worst->t->key, worst->value, worst->t->limit,
                 100 * (worst->value - worst->t->limit) / worst->t->limit);
    char at[700];
    if (p->mono.n >= 0) snprintf(at, sizeof at, "%s%s%s=%d", e->combo >= 0 ? p->c[e->combo].label : "",
                                 e->combo >= 0 && p->c[e->combo].label[0] ? " " : "", p->mono_name, e->m);
    else snprintf(at, sizeof at, "%s", e->combo >= 0 ? p->c[e->combo].label : "");
    if (!at[0]) snprintf(at, sizeof at, "the scenario as given");     /* no dimension: no label */
    return plan_fail(err, errlen, 2, "plan: no configuration meets the SLO at %.4g req/s (%.4g x headroom %.3g); the closest, %s, gives %s",
                     p->want, p->target, p->headroom, at, what);
}

/* ---- after a winner --------------------------------------------------------- */

/* The winner's goodput: the largest multiple of the planned rate at which it
 * still meets the SLO (first seed), bracketed by a coarse round of factors run
 * in parallel and refined by a second round inside the bracket.  Sets
 * P->goodput_lo (largest meeting factor, at least 1) and P->goodput_hi
 * (smallest missing, NAN when even the largest meets).  Returns 0 or the exit
 * status + ERR. */
static int plan_goodput(plan *p, char *err, size_t errlen)
{
    const plan_config *c = &p->c[p->winner];
    int m = p->mono.n >= 0 ? c->b.answer : 0;
    const char *eq = strchr(p->rate_set, '=');
    double base = eq ? strtod(eq + 1, NULL) : NAN;
    p->goodput_lo = 1;
    p->goodput_hi = NAN;
    if (!eq || !(base > 0)) return 0;
    for (int round = 0; round < 2; round++) {
        double f[PLAN_GOODPUT_MAX];
        int nf = plan_goodput_factors(round, p->goodput_lo, p->goodput_hi, f), met[PLAN_GOODPUT_MAX];
        if (nf == 0) break;
        int from = p->ne;
        for (int i = 0; i < nf; i++) {
            plan_eval *e = new_eval(p, p->winner, m, "goodput", p->seed0);
            if (!e) return plan_fail(err, errlen, 1, "out of memory");
            e->factor = f[i];
            snprintf(e->rate_set, sizeof e->rate_set, "%.*s=%.10g", (int) (eq - p->rate_set), p->rate_set, base * f[i]);
        }
        int rc = run_evals(p, from, err, errlen);
        if (rc) return rc;
        for (int i = 0; i < nf; i++) met[i] = p->e[from + i].met;
        plan_goodput_bracket(f, met, nf, &p->goodput_lo, &p->goodput_hi);
    }
    return 0;
}

static int cmp_cand(const void *a, const void *b)
{
    const plan_cand *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

int plan_candidates(plan *p, char *err, size_t errlen)
{
    p->cs = calloc((size_t) p->nc, sizeof *p->cs);
    p->shown = calloc((size_t) (p->nc + 1), sizeof *p->shown);
    if (!p->cs || !p->shown) return plan_fail(err, errlen, 1, "out of memory");
    for (int ci = 0; ci < p->nc; ci++) {
        plan_config *c = &p->c[ci];
        if (c->infeasible || c->best_eval < 0 || c->confirmed < 0) continue;
        if (p->mono.n >= 0 && c->b.answer <= 0) continue;
        p->cs[p->ncs++] = (plan_cand) { ci, p->mono.n >= 0 ? plan_cost_at(c, c->b.answer) : c->fixed, power_at_answer(p, c, 0),
                                        objective_at(p, c) };
    }
    qsort(p->cs, (size_t) p->ncs, sizeof *p->cs, cmp_cand);
    for (int i = 0; i < p->ncs; i++)
        if (p->cs[i].combo == p->winner) {
            plan_cand w = p->cs[i];
            memmove(p->cs + 1, p->cs, (size_t) i * sizeof *p->cs);
            p->cs[0] = w;
            break;
        }
    for (int ci = 0; ci < p->nc; ci++) {
        p->pruned += p->c[ci].b.pruned;
        p->infeasible += p->c[ci].infeasible;
        p->bounded += p->c[ci].bound[0] != 0;
    }
    for (int i = 0; i < p->ncs; i++) {
        plan_config *c = &p->c[p->cs[i].combo];
        p->shown[i] = c->best_eval;
        for (int k = 0; k < p->ne; k++)
            if (p->e[k].combo == p->cs[i].combo && p->e[k].m == (p->mono.n >= 0 ? c->b.answer : 0) && p->e[k].met &&
                p->e[k].t.seed == p->seed0)
                p->shown[i] = k;
    }
    return 0;
}

int plan_conclude(plan *p, char *err, size_t errlen)
{
    int rc;
    if (p->winner < 0) return plan_no_winner(p, err, errlen);
    if ((rc = plan_goodput(p, err, errlen)) != 0 || (rc = plan_candidates(p, err, errlen)) != 0) return rc;
    if (p->o.energy && isnan(p->cs[0].power_w))
        return plan_fail(err, errlen, 2, "plan: --objective energy: %s has no GPU power figures (the pools' GPUs need idle_w and max_w, "
                         "or a power_curve)", p->o.file);
    return plan_sensitivity(p, err, errlen);
}

double plan_busy_max(const report *r)
{
    double um = NAN;
    for (size_t k = 0; k < r->n; k++)
        if (r->rows[k].scope[0] && !strcmp(r->rows[k].metric, REPORT_BUSY_SHARE) && (isnan(um) || r->rows[k].value > um))
            um = r->rows[k].value;
    return um;
}
