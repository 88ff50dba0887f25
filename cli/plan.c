/* plan.c -- `latsim plan FILE --target-rate R ...`: the cheapest configuration
 * ($/hour) that meets the scenario's [slo] at R x headroom requests/s.
 *
 * The front end of the planner library (latsim/plan.h, sim/plan/: the
 * search space, the bisection of replicas or servers from a queueing
 * estimate, pruning by cost, confirmation with more seeds, verdicts, goodput,
 * the sensitivity check, JSON and storing): this file parses the options into
 * plan_opts, checks the files they name, calls the library in order, prints
 * the progress, the notes and warnings on stderr and the plan's table on
 * stdout (or its JSON), and turns the result into the exit status.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cliopt.h"
#include "cliutil.h"
#include "provenance.h"
#include "commands.h"
#include "latsim/errmsg.h"
#include "latsim/plan.h"
#include "latsim/report.h"
#include "latsim/scenario.h"
#include "latsim/slo.h"
#include "latsim/store.h"

enum { O_TARGET = 1, O_GPUS, O_TP, O_PP, O_EP, O_REPLICAS, O_POOL, O_SEARCH, O_SEEDS, O_SEED, O_JOBS, O_TOP, O_NO_STORE,
       O_NO_SENS, O_OBJECTIVE, O_TRACE, O_PEAK };

static const cli_opt OPTS[] = {
    { "target-rate", O_TARGET, "R", "the arrival rate to carry, requests/s (simulated at R x the [slo] headroom); "
      "with a trace, the mean rate its replay is scaled to (default: the trace's own)", 0 },
    { "trace", O_TRACE, "FILE", "plan against this trace's peak minutes (arrival = trace, trace = FILE): its busiest "
      "window replayed once, at R x headroom scaled (docs/planning.md)", 0 },
    { "peak-minutes", O_PEAK, "M", "the peak window's length, minutes (default 10); also plans an arrival = trace "
      "scenario against its peak", 0 },
    { "gpus", O_GPUS, "a,b,...", "GPUs of the LLM pool to try (catalog names)", 0 },
    { "tp", O_TP, "1,2,...", "tensor-parallel degrees to try (a list or FROM:TO[:STEP])", 0 },
    { "pp", O_PP, "1,2,...", "pipeline-parallel stages to try (a list or FROM:TO[:STEP])", 0 },
    { "ep", O_EP, "1,2,...", "expert-parallel degrees to try (MoE models; each must divide tp)", 0 },
    { "replicas", O_REPLICAS, "A:B", "replicas of the LLM pool, bisected between A and B", 0 },
    { "pool", O_POOL, "NAME", "the LLM pool --gpus, --tp, --pp, --ep and --replicas search (default: the first)", 0 },
    { "search", O_SEARCH, "\"SECTION.KEY=FROM:TO:STEP|a,b,c\"", "any key as a dimension, e.g. "
      "\"pool chat.max_batch=64,128,256\"; replicas and servers are bisected (repeatable)", CLI_REPEAT },
    CLI_OPT_SET,
    { "objective", O_OBJECTIVE, "cost|energy", "what the winner minimises among the configurations meeting the SLO: $/hour "
      "(default) or GPU energy at the simulated rate (mean power, kWh per hour; docs/planning.md)", 0 },
    { "seeds", O_SEEDS, "K", "seeds the winner is confirmed with (default 3)", 0 },
    { "seed", O_SEED, "N", "the first seed (default: the scenario's)", 0 },
    { "jobs", O_JOBS, "N", "worker processes (default: all cores)", 0 },
    { "top", O_TOP, "K", "candidates listed (default 5)", 0 },
    CLI_OPT_JSON,
    CLI_OPT_DB,
    CLI_OPT_COST_DB,
    { "no-store", O_NO_STORE, NULL, "do not write the plan and its runs to the database", 0 },
    { "no-sensitivity", O_NO_SENS, NULL, "skip the prediction-band check (the search again with every LLM step time "
      "at both ends of the cost model's 90 % band: its validated error, or the default; docs/bands.md)", 0 },
    { NULL },
};

static const cli_cmd CMD = {
    "plan", "FILE",
    "Finds the cheapest configuration ($/hour: GPUs x catalog price, generic servers x\n"
    "usd_per_hour) that meets the [slo] of FILE at R x headroom requests/s.  --gpus, --tp,\n"
    "--pp, --ep and --replicas search the LLM pool (the first, or --pool NAME); --search\n"
    "adds any key as a dimension (e.g. \"pool chat.max_batch=64,128,256\",\n"
    "\"pool cpu.servers=1:64\").\n"
    "replicas and servers are bisected (the SLO is monotone in them; with several pools'\n"
    "sizes searched, the widest range is bisected within each value of the others); the\n"
    "winner is confirmed with K seeds (default 3).  The arrival rate is --target-rate's:\n"
    "workload.rate cannot be searched or set.  Progress goes to stderr on a terminal.\n"
    "--objective energy picks the configuration with the lowest mean GPU power (kWh per\n"
    "hour) at that rate instead of the cheapest.\n"
    "Every configuration gets a verdict: the smallest count meeting the SLO and its cost\n"
    "(runner-ups are bisected like the winner), the term failing at the largest count, or\n"
    "why it was pruned or ruled out; the winner's goodput (the highest rate it still meets\n"
    "the SLO at, its real headroom) is given.\n"
    "With --trace FILE (or an arrival = trace scenario and no --target-rate, or --peak-minutes)\n"
    "the plan replays the trace's busiest M minutes once, not a mean rate.\n",
    "exit status: 0 found, 1 runtime error, 2 bad input or no configuration meets the SLO.\n",
    OPTS, PLAN_MAX_USER_SETS, 0,
};

/* The command line: the planner's options and what only the front end keeps. */
typedef struct plan_cli {
    plan_opts o;              /* what the library plans */
    const char *sets[PLAN_MAX_USER_SETS + 2]; /* the --set overrides, then --trace's two */
    const char *trace_file;   /* --trace FILE (NULL: none) */
    char trace_sets[2][PATH_MAX + 64]; /* "workload.arrival=trace", "workload.trace=ABS" */
    int json;                 /* --json */
    int tty;                  /* 1: stderr is a terminal (progress shown) */
} plan_cli;

/* cli_opt_fn of plan: CTX is the plan_cli. */
static int plan_opt(void *ctx, int id, const char *v)
{
    plan_cli *pc = ctx;
    plan_opts *o = &pc->o;
    char *end;
    long x;
    switch (id) {
    case O_TARGET:
        o->target = strtod(v, &end);
        if (end == v || *end || !(o->target > 0) || !isfinite(o->target))
            return cu_die(2, "plan: --target-rate: expected a rate > 0 (requests/s), got '%s'", v);
        return 0;
    case O_GPUS: o->gpus = v; return 0;
    case O_TP: o->tps = v; return 0;
    case O_PP: o->pps = v; return 0;
    case O_EP: o->eps = v; return 0;
    case O_REPLICAS: o->reps = v; return 0;
    case O_POOL: o->pool = v; return 0;
    case O_SEARCH:
        if (o->nsearch == PLAN_MAX_DIMS) return cu_die(2, "plan: at most %d --search options", PLAN_MAX_DIMS);
        o->searches[o->nsearch++] = v;
        return 0;
    case O_NO_STORE: o->store = 0; return 0;
    case O_TRACE: pc->trace_file = v; return 0;
    case O_PEAK:
        o->peak_min = strtod(v, &end);
        if (end == v || *end || !(o->peak_min > 0) || !(o->peak_min <= 1e7))
            return cu_die(2, "plan: --peak-minutes: expected minutes above 0 and at most 1e7 (19 years), got '%s'", v);
        return 0;
    case O_NO_SENS: o->no_sens = 1; return 0;
    case O_OBJECTIVE:
        if (strcmp(v, "cost") && strcmp(v, "energy"))
            return cu_die(2, "plan: --objective: expected cost or energy, got '%s'", v);
        o->energy = !strcmp(v, "energy");
        return 0;
    case O_SEED:
        if ((x = cu_posint("plan", "--seed", v, 2147483647L)) < 0) return 2;
        o->seed = (uint64_t) x;
        return 0;
    default:                  /* --jobs, --seeds, --top */
        if ((x = cu_posint("plan", id == O_JOBS ? "--jobs" : id == O_SEEDS ? "--seeds" : "--top", v, 1024)) < 0) return 2;
        if (id == O_JOBS) o->jobs = (int) x;
        else if (id == O_SEEDS) o->seeds = (int) x;
        else o->top = (int) x;
        return 0;
    }
}

/* --trace FILE: the scenario replays FILE (arrival = trace, trace = its
 * absolute path), two overrides after the user's.  Returns 0, or 2 (printed). */
static int plan_trace_sets(plan_cli *pc)
{
    if (!pc->trace_file) return 0;
    char abs[PATH_MAX], err[1400];
    if (cu_check_in("plan", "--trace", pc->trace_file, INFILE_MAX_TRACE, err, sizeof err) != 0) return cu_die(2, "%s", err);
    if (!realpath(pc->trace_file, abs)) return cu_die(2, "plan: --trace %s: %s", pc->trace_file, strerror(errno));
    snprintf(pc->trace_sets[0], sizeof pc->trace_sets[0], "workload.arrival=trace");
    snprintf(pc->trace_sets[1], sizeof pc->trace_sets[1], "workload.trace=%s", abs);
    pc->sets[pc->o.nsets++] = pc->trace_sets[0];
    pc->sets[pc->o.nsets++] = pc->trace_sets[1];
    pc->o.trace = 1;
    return 0;
}

/* Parses the command line into PC.  Returns CLI_GO or the exit status. */
static int plan_parse(int argc, char **argv, plan_cli *pc)
{
    cli_args a;
    plan_opts *o = &pc->o;
    o->target = NAN;
    o->store = 1;
    o->seeds = 3;
    o->top = 5;
    int rc = cli_parse(&CMD, argc, argv, &a, plan_opt, pc);
    if (rc != CLI_GO) return rc;
    if (a.npos > 1) return cu_die(2, "plan: more than one scenario file ('%s', '%s')", a.pos[0], a.pos[1]);
    if (a.npos == 0) return cu_die(2, "plan: missing scenario FILE (see latsim plan --help)");
    o->file = a.pos[0];
    pc->json = a.json;
    memcpy(pc->sets, a.sets, (size_t) a.nsets * sizeof *pc->sets);
    o->sets = pc->sets;
    o->nsets = a.nsets;
    if (plan_trace_sets(pc) != 0) return 2;
    /* The arrival rate is --target-rate's: a search or --set of it would be overridden. */
    for (int i = 0; i < o->nsearch + o->nsets; i++) {
        const char *v = i < o->nsearch ? o->searches[i] : o->sets[i - o->nsearch];
        const char *eq = strchr(v, '=');
        size_t kl = eq ? (size_t) (eq - v) : strlen(v);
        if ((kl == 13 && !strncmp(v, "workload.rate", 13)) || (kl == 16 && !strncmp(v, "workload.speedup", 16)))
            return cu_die(2, "plan: %s %.*s: the arrival rate is set by --target-rate (R x headroom); use latsim sweep to vary it",
                          i < o->nsearch ? "--search" : "--set", (int) kl, v);
    }
    if (o->jobs <= 0) o->jobs = taskmpi_size() > 1 ? 1 : task_cpus();   /* under mpirun the other ranks simulate, as in explore */
    o->dbpath = cu_db_path(a.db);
    char err[2048];
    if (cu_check_db_path(o->dbpath, err, sizeof err) != 0) return cu_die(2, "%s", err);
    return CLI_GO;
}

/* plan_opts.progress: one line on stderr, rewritten in place. */
static void progress(const plan *p, int done, int n, void *arg)
{
    (void) arg;
    int open = 0;
    for (int i = 0; i < p->nc; i++) open += !p->c[i].b.done && !p->c[i].infeasible && !p->c[i].b.pruned;
    char best[64] = "none yet";
    if (p->best >= 0) snprintf(best, sizeof best, "$%.2f/h", p->best_cost);
    fprintf(stderr, "\rplan: %d simulations (%d/%d in this round), %d configurations open, best %s   ",
            p->ne - n + done, done, n, open, best);
    fflush(stderr);
}

/* plan_opts.note: a line on stderr. */
static void note(const char *msg, void *arg)
{
    (void) arg;
    cu_die(0, "%s", msg);
}

/* The one warning line when P's candidates were priced by different kinds of
 * cost model (a TP or GPU with a calibrated model beside one without): their
 * costs then stand on different errors. */
static void models_warn(const plan *p)
{
    int a, b;
    if (!plan_models_differ(p, &a, &b)) return;
    char la[700], lb[700], ma[300], mb[300];
    plan_answer_label(p, p->cs[a].combo, la, sizeof la);
    plan_answer_label(p, p->cs[b].combo, lb, sizeof lb);
    plan_models_label(&p->e[p->shown[a]].o.rep, ma, sizeof ma);
    plan_models_label(&p->e[p->shown[b]].o.rep, mb, sizeof mb);
    fflush(stdout);
    fprintf(stderr, "latsim: warning: plan: the candidates were priced by different kinds of cost model (%s: %s; %s: %s): "
            "their costs stand on different errors (see the cost model column; docs/planning.md)\n",
            ERRMSG_SHOWN(la), ERRMSG_SHOWN(ma), ERRMSG_SHOWN(lb), ERRMSG_SHOWN(mb));
}

/* The peak window as a line of the plan's text. */
static void peak_print(const plan *p, FILE *out)
{
    if (!p->peak) return;
    fprintf(out, "peak window: %.0f s to %.0f s of the trace (%g min of %.3g h): %zu requests, %.4g req/s at its own "
            "clock (mean %.4g), replayed once at x%.4g x headroom %.3g\n", p->peak_from, p->peak_from + p->peak_len,
            p->peak_len / 60, p->peak_span / 3600, p->peak_rows, p->target / p->peak_scale, p->peak_mean, p->peak_scale,
            p->headroom);
}

/* The verdict of every configuration, one line each ("  LABEL  VERDICT"). */
static void print_verdicts(const plan *p, FILE *out)
{
    int wl = 13;
    for (int ci = 0; ci < p->nc; ci++) {
        int l = (int) strlen(ERRMSG_SHOWN(p->c[ci].label));
        if (l > wl) wl = l;
    }
    fprintf(out, "verdicts (every configuration searched):\n");
    for (int ci = 0; ci < p->nc; ci++) {
        char why[1200];
        int v;
        plan_config_verdict(p, ci, &v, why, sizeof why);
        fprintf(out, "  %-*s  %s%s\n", wl, p->c[ci].label[0] ? ERRMSG_SHOWN(p->c[ci].label) : "(as given)", ci == p->winner ? "CHOSEN: " : "",
                ERRMSG_SHOWN(why));
    }
}

/* The sensitivity check's lines. */
static void sens_print(const plan *p)
{
    if (!p->nsens) return;
    char v[2000];
    plan_sens_verdict(p, v, sizeof v);
    printf("sensitivity (step times %s): ", p->sens_basis);
    for (int k = 0; k < p->nsens; k++) {
        const plan_sens *a = &p->sens[k];
        if (a->met) printf("%sx%.3g -> %s $%.2f/hour", k ? "; " : "", a->factor, ERRMSG_SHOWN(a->label), a->cost);
        else printf("%sx%.3g -> none meets the SLO", k ? "; " : "", a->factor);
    }
    printf("\n%s\n", ERRMSG_SHOWN(v));
    const plan_sens *pe = &p->sens[p->nsens - 1];
    if (pe->met) printf("at the band's pessimistic end (step times x%.3g): %s  $%.2f/hour\n", pe->factor, ERRMSG_SHOWN(pe->label), pe->cost);
    else printf("at the band's pessimistic end (step times x%.3g): no configuration meets the SLO\n", pe->factor);
}

/* Prints the plan: its JSON, or the candidates, the configurations ruled out
 * and the winner's SLO terms. */
static void plan_print(const plan *p, int json)
{
    if (json) {
        fputs(p->jtext, stdout);
        if (p->o.store) printf(", \"plan\": %lld", (long long) p->plan_id);
        fputs("}\n", stdout);
        return;
    }
    printf("plan %s  target %.4g req/s x headroom %.3g = %.4g req/s\n", ERRMSG_SHOWN(p->o.file), p->target, p->headroom, p->want);
    peak_print(p, stdout);
    char nbound[64] = "";
    if (p->bounded) snprintf(nbound, sizeof nbound, ", %d by the utilisation bound", p->bounded);
    char nreo[96] = "";
    if (p->reopened) snprintf(nreo, sizeof nreo, "; %d searched again when confirmation raised the best cost", p->reopened);
    printf("%d configurations (%d ruled out by the scenario%s, %d pruned by cost%s), %d simulations, %.2f s, %d workers\n\n",
           p->nc, p->infeasible, nbound, p->pruned, nreo, p->ne, p->wall, p->o.jobs);
    int wl = 13;          /* the configuration column fits the longest label */
    for (int i = 0; i < p->ncs && i < p->o.top; i++) {
        int l = (int) strlen(ERRMSG_SHOWN(p->c[p->cs[i].combo].label)) + (p->mono.n >= 0 ? (int) strlen(ERRMSG_SHOWN(p->mono_name)) + 6 : 0);
        if (l > wl) wl = l;
    }
    for (int ci = 0; ci < p->nc; ci++)
        if (p->c[ci].infeasible && (int) strlen(ERRMSG_SHOWN(p->c[ci].label)) > wl) wl = (int) strlen(ERRMSG_SHOWN(p->c[ci].label));
    int mw = 10;          /* the cost model column fits the longest */
    for (int i = 0; i < p->ncs && i < p->o.top; i++) {
        char ml[300];
        plan_models_label(&p->e[p->shown[i]].o.rep, ml, sizeof ml);
        if ((int) strlen(ml) > mw) mw = (int) strlen(ml);
    }
    printf("  %-*s %10s %8s %9s %9s  %-*s  %s\n", wl, "configuration", "$/hour", "kW", "busy_max", "margin", mw, "cost model", "slo");
    for (int i = 0; i < p->ncs && i < p->o.top; i++) {
        const plan_config *c = &p->c[p->cs[i].combo];
        const plan_eval *e = &p->e[p->shown[i]];
        char lab[600];
        if (p->mono.n >= 0) snprintf(lab, sizeof lab, "%s%s%s=%d", c->label, c->label[0] ? " " : "", p->mono_name, c->b.answer);
        else snprintf(lab, sizeof lab, "%s", c->label);
        char kw[32] = "-";
        if (!isnan(p->cs[i].power_w)) snprintf(kw, sizeof kw, "%.3f", p->cs[i].power_w / 1000);
        char ml[300];
        plan_models_label(&e->o.rep, ml, sizeof ml);
        printf("  %-*s %10.2f %8s %9.3f %+8.1f%%  %-*s  %s\n", wl, ERRMSG_SHOWN(lab), p->cs[i].cost, kw, plan_busy_max(&e->o.rep),
               100 * slo_worst_margin(&e->slo), mw, ERRMSG_SHOWN(ml), i == 0 ? (c->confirmed > 0 ? "met (confirmed)" : "met") : "met (1 seed)");
    }
    for (int ci = 0; ci < p->nc; ci++)
        if (p->c[ci].infeasible) printf("  %-*s %10s  ruled out: %s\n", wl, ERRMSG_SHOWN(p->c[ci].label), "-",
                                        ERRMSG_SHOWN(p->c[ci].reason));
    const plan_eval *e = &p->e[p->shown[0]];
    printf("\nbest: ");
    const plan_config *c = &p->c[p->cs[0].combo];
    if (p->mono.n >= 0) printf("%s%s%s=%d", ERRMSG_SHOWN(c->label), c->label[0] ? " " : "", ERRMSG_SHOWN(p->mono_name), c->b.answer);
    else printf("%s", ERRMSG_SHOWN(c->label));
    printf("  $%.2f/hour", p->cs[0].cost);
    if (!isnan(p->cs[0].power_w)) printf(", %.3f kW of GPU power at %.4g req/s", p->cs[0].power_w / 1000, p->want);
    printf(", confirmed with %d seeds%s\n", p->o.seeds, p->o.energy ? " (objective: energy)" : "");
    prov_table(&e->o.rep, "", stdout);
    sens_print(p);
    if (isnan(p->goodput_hi))
        printf("goodput: meets the SLO up to at least %.4g req/s (%.3g x the target %.4g; the largest rate tried%s)\n",
               p->want * p->goodput_lo, p->want * p->goodput_lo / p->target, p->target,
               p->peak ? "; each rate replays only the peak window's requests" : "");
    else
        printf("goodput: meets the SLO up to %.4g req/s, misses it at %.4g (%.3g x the target %.4g req/s: its real headroom)\n",
               p->want * p->goodput_lo, p->want * p->goodput_hi, p->want * p->goodput_lo / p->target, p->target);
    slo_table(&e->slo, stdout);
    putchar('\n');
    print_verdicts(p, stdout);
    if (p->o.store) printf("\nplan %lld stored in %s\n", (long long) p->plan_id, ERRMSG_SHOWN(p->o.dbpath));
}

/* No configuration meets the SLO: the verdicts (or the JSON with "best":
 * null), then the one line why.  Returns 2. */
static int plan_print_none(plan *p, int json)
{
    char err[8192];
    if (json && plan_json(p, err, sizeof err) == 0) {
        fputs(p->jtext, stdout);
        fputs("}\n", stdout);
    } else if (!json) {
        peak_print(p, stdout);
        print_verdicts(p, stdout);
    }
    fflush(stdout);
    return cu_die(plan_no_winner(p, err, sizeof err), "%s", err);
}

int plan_main(int argc, char **argv)
{
    plan_cli pc;
    plan p;
    char err[8192];
    memset(&pc, 0, sizeof pc);
    memset(&p, 0, sizeof p);
    int rc = plan_parse(argc, argv, &pc);
    if (rc != CLI_GO) return rc;
    pc.o.note = note;
    if ((rc = plan_init(&p, &pc.o, err, sizeof err)) != 0 || (rc = plan_setup(&p, err, sizeof err)) != 0) goto fail;
    if (pc.o.store && cu_check_db(pc.o.dbpath, err, sizeof err) != 0) { rc = 2; goto fail; }
    if (isatty(2)) p.o.progress = progress;
    if ((rc = plan_search(&p, err, sizeof err)) != 0) goto fail;
    if (p.o.progress) fputs("\r\033[K", stderr);
    if (p.winner < 0) { rc = plan_print_none(&p, pc.json); goto out; }
    if ((rc = plan_conclude(&p, err, sizeof err)) != 0) goto fail;
    prov_warn(&p.e[p.shown[0]].o.rep);    /* once: uncalibrated step times */
    models_warn(&p);                      /* once: candidates priced by different kinds */
    if ((rc = plan_json(&p, err, sizeof err)) != 0 || (rc = plan_store(&p, err, sizeof err)) != 0) goto fail;
    plan_print(&p, pc.json);
    rc = 0;
    goto out;
fail:
    cu_die(rc, "%s", err);
out:
    plan_free(&p);
    return rc;
}
