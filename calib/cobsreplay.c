/* cobsreplay.c -- replaying an observed run through a scenario (cobsreplay.h).
 *
 * The replay scenario is written as text: every section of the user's scenario
 * but [sim] and [workload], as parsed (comments dropped, --set overrides in
 * place), then a [sim] and a [workload] of our own; it is loaded with
 * scenario_load_text under the scenario's own name, so that relative file names
 * in the kept sections resolve as before.  The observed requests reach the
 * simulator as a CSV trace in a temporary file (mkstemp), removed as soon as
 * the scenario has read it.
 */
#include "cobsreplay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <csv.h>

#include "core/kind.h"
#include "engine/errmsg.h"
#include "llm/llm.h"
#include "llm/llmcfg.h"
#include "llm/sched.h"
#include "run/sim.h"

int cobs_find_pool(const scenario *sc, const char *name, int *index, char *err, size_t errlen)
{
    const char *path = sc->raw.path ? sc->raw.path : "scenario";
    for (int i = 0; i < sc->npools; i++) {
        const pool_cfg *p = &sc->pools[i];
        int llm = p->kind && (p->kind->flags & KIND_DECODES);   /* an LLM pool (its llm_cfg) */
        if (name && strcmp(p->name, name)) continue;
        if (!name && !llm) continue;
        if (!llm) {
            errmsg_set(err, errlen, "%s:%d: --pool %s: [pool %s] is not an LLM pool (kind = %s): an observed run is "
                       "measured on an LLM server", ERRMSG_SHOWN(path), p->line, ERRMSG_SHOWN(name), ERRMSG_SHOWN(p->name),
                       p->kind ? p->kind->name : "?");
            return -1;
        }
        *index = i;
        return 0;
    }
    if (name)
        errmsg_set(err, errlen, "%s: --pool %s: no such pool", ERRMSG_SHOWN(path), ERRMSG_SHOWN(name));
    else
        errmsg_set(err, errlen, "%s: no LLM pool (kind = llm): an observed run is measured on an LLM server, and the "
                   "scenario must describe it", ERRMSG_SHOWN(path));
    return -1;
}

void cobs_describe(const scenario *sc, int index, cobs_server *srv)
{
    const pool_cfg *p = &sc->pools[index];
    const llm_cfg *L = llm_cfg_of(p);
    memset(srv, 0, sizeof *srv);
    snprintf(srv->pool, sizeof srv->pool, "%s", p->name);
    snprintf(srv->model, sizeof srv->model, "%s", L->model_name);
    snprintf(srv->gpu, sizeof srv->gpu, "%s", L->gpu_name);
    snprintf(srv->weights, sizeof srv->weights, "%s", L->weights[0] ? L->weights : L->model.weights);
    srv->tp = L->tp;
    srv->replicas = L->replicas;
    snprintf(srv->scheduler, sizeof srv->scheduler, "%s", L->sched ? llm_sched_name(L->sched) : "");
    srv->max_batch = L->max_batch;
    /* The chunked scheduler's budget is its own key (sched_chunked.c): as the file gives it, else its default. */
    char sec[80];
    snprintf(sec, sizeof sec, "pool %s", p->name);
    const cfg_entry *ck = cfg_get(&sc->raw, sec, "chunk_tokens");
    srv->chunk_tokens = L->sched && (L->sched->flags & LLM_SCHED_SPLITS_PROMPTS) ? (ck ? atoll(ck->value) : 512) : 0;
    srv->kv_blocks = (long long) L->kv_blocks;
    srv->block_tokens = L->block_tokens;
    srv->prefix_cache = L->prefix_cache;
}

/* Writes every section of SC but [sim] and [workload] to F; sets *CLASSES when
 * it has [class NAME] sections.  ROOF (NULL: none) names a section whose cost
 * model is made the roofline (its cost and cost_id keys dropped): the pool whose
 * model a fit replaces once resolved. */
static void write_kept_as(FILE *f, const scenario *sc, int *classes, const char *roof)
{
    const cfg *c = &sc->raw;
    *classes = 0;
    for (size_t i = 0; i < c->ns; i++) {
        const char *name = c->s[i].name;
        int r = roof && !strcmp(name, roof);
        if (!strcmp(name, "sim") || !strcmp(name, "workload")) continue;
        if (!strncmp(name, "class ", 6)) *classes = 1;
        fprintf(f, "[%s]\n", name);
        for (size_t k = 0; k < c->n; k++)
            if (!strcmp(c->e[k].section, name) && !(r && (!strcmp(c->e[k].key, "cost") || !strcmp(c->e[k].key, "cost_id"))))
                fprintf(f, "%s = %s\n", c->e[k].key, c->e[k].value);
        if (r) fputs("cost = roofline\n", f);
    }
}

static void write_kept(FILE *f, const scenario *sc, int *classes)
{
    write_kept_as(f, sc, classes, NULL);
}

/* The [sim] and the workload's target of the replay: REQUESTS measured (warm-up
 * 0 when FINITE, else automatic), the scenario's seed, and POOL (or the
 * scenario's own target) as the pool requests enter. */
static void write_sim(FILE *f, const scenario *sc, uint64_t requests, int finite, const char *pool)
{
    fprintf(f, "[sim]\nrequests = %llu\n%sseed = %llu\n[workload]\n", (unsigned long long) requests,
            finite ? "warmup = 0\n" : "", (unsigned long long) sc->seed);
    const cfg_entry *t = cfg_get(&sc->raw, "workload", "target");
    if (pool) fprintf(f, "target = %s\n", pool);
    else if (t) fprintf(f, "target = %s\n", t->value);
}

/* A message MSG (N bytes) about the temporary trace TRACE of RUN's requests
 * ("S.ini:40: [workload] trace: /tmp/latsim-replay-X:5: ...") rewritten
 * against the user's file ("RUN.csv:LINE: ..."): the trace's line L is request
 * L - 2.  Leaves other messages alone. */
static void name_user_file(char *msg, size_t n, const char *trace, const cobs_run *run)
{
    const char *at = trace && trace[0] ? strstr(msg, trace) : NULL;
    if (!at || !run) return;
    const char *rest = at + strlen(trace);
    char shown[1024], out[2048];
    errmsg_field(run->file, shown, sizeof shown);
    long line = 0;
    int k = 0;
    if (sscanf(rest, ":%ld:%n", &line, &k) == 1 && k > 0 && line >= 2 && (size_t) (line - 2) < run->nreq
        && run->req[line - 2].line > 0) {
        snprintf(out, sizeof out, "%s:%ld:%s", shown, run->req[line - 2].line, rest + k);
    } else {
        if (k > 0) rest += k - 1;   /* a line of the trace that is no request's: dropped */
        snprintf(out, sizeof out, "%s%s", shown, rest);
    }
    snprintf(msg, n, "%s", out);
}

/* Loads TEXT (named as SC's file), resolves it against DB and simulates it.
 * Returns 0, 2 (bad input) or 1 (runtime failure), ERR set. */
static int simulate(const char *text, const scenario *sc, sqlite3 *db, const char *trace, const cobs_run *run,
                    sim_result *res, char *err, size_t errlen)
{
    scenario s;
    char msg[2048];
    int rc = 0;
    memset(res, 0, sizeof *res);
    if (scenario_load_text(&s, sc->raw.path, text, NULL, 0, msg, sizeof msg) != 0) rc = strstr(msg, "out of memory") ? 1 : 2;
    if (trace) unlink(trace);   /* read by now (or never to be) */
    if (rc == 0 && scenario_resolve(&s, db, msg, sizeof msg) != 0) rc = strstr(msg, "out of memory") ? 1 : 2;
    if (rc == 0 && scenario_check_memory(&s, scenario_memory_budget(), msg, sizeof msg) != 0) rc = 2;
    if (rc == 0 && sim_run(&s, s.seed, res, msg, sizeof msg) != 0) rc = 1;
    if (rc) name_user_file(msg, sizeof msg, trace, run);
    if (rc) errmsg_set(err, errlen, "replay: %s", msg);
    scenario_free(&s);
    return rc;
}

/* The observed requests of RUN as a CSV trace in a new temporary file, its
 * path into PATH.  With CLASSES, a class column.  Returns 0 or -1 (ERR). */
static int write_trace(const cobs_run *run, int classes, char *path, size_t n, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");   /* absolute: a relative name would resolve against the scenario's folder */
    snprintf(path, n, "%s/latsim-replay-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        errmsg_set(err, errlen, "replay: cannot create a temporary trace %s: %s", path, strerror(errno));
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(path);
        errmsg_set(err, errlen, "replay: %s: %s", path, strerror(errno));
        return -1;
    }
    fputs(classes ? "arrival_s,input_tokens,output_tokens,class\n" : "arrival_s,input_tokens,output_tokens\n", f);
    for (size_t i = 0; i < run->nreq; i++) {
        const cobs_req *q = &run->req[i];
        fprintf(f, "%.9f,%d,%d", q->arrival_s, (int) q->input_tokens, (int) q->output_tokens);
        if (classes) {
            fputc(',', f);
            csv_fwrite(f, q->cls, strlen(q->cls));
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        unlink(path);
        errmsg_set(err, errlen, "replay: cannot write the temporary trace %s", path);
        return -1;
    }
    return 0;
}

/* A text buffer (open_memstream).  Returns the stream or NULL (ERR). */
static FILE *text_open(char **buf, size_t *len, char *err, size_t errlen)
{
    FILE *f = open_memstream(buf, len);
    if (!f) errmsg_set(err, errlen, "out of memory");
    return f;
}

static void fill_band(const sim_result *res, cobs_replay *out);

/* RES's output tokens per second (its row, latsim/sim.h), 0 when no pool counts tokens. */
static double out_tps(const sim_result *res)
{
    double tps = sim_result_value(res, "output_tokens_per_s");   /* no row: no pool counts tokens */
    return isnan(tps) ? 0 : tps;
}

/* The summary of RES's system latency METRIC (its row, latsim/sim.h), zeroed
 * when it had no sample or RES does not report it. */
static stat_summary sys_latency(const sim_result *res, const char *metric)
{
    stat_summary s;
    sim_result_latency(res, "", metric, &s);
    return s;
}

/* The predicted side of OUT from RES. */
static void fill_pred(const sim_result *res, cobs_replay *out)
{
    static const char *const PRED[COBS_NMETRICS] = { "ttft", "tpot", "itl", "e2e", "queue" };
    for (int m = 0; m < COBS_NMETRICS; m++) {
        out->pred[m] = sys_latency(res, PRED[m]);
        out->have_pred[m] = out->pred[m].n > 0 && (m == COBS_E2E || m == COBS_QUEUE || sim_result_row(res, "", "ttft", "mean"));
    }
    out->pred_rps = sim_result_value(res, "throughput_rps");
    out->pred_tps = out_tps(res);
    out->pred_window_s = sim_result_value(res, "window_s");
    out->served = sim_result_count(res, "served");
    out->rejected = sim_result_count(res, "rejected") + sim_result_count(res, "timed_out") +
                    sim_result_count(res, "failed");
    /* A finite replay's rows (run/sim.c; none otherwise: 0). */
    double grew = sim_result_get(res, "", "backlog_grew", "value"), peak = sim_result_get(res, "", "peak_queue", "value");
    double peak_t = sim_result_get(res, "", "peak_queue_at_s", "value");
    out->backlog_grew = grew > 0;
    out->peak_queue = isnan(peak) ? 0 : (uint64_t) peak;
    out->peak_queue_at_s = isnan(peak_t) ? 0 : peak_t;
    out->events = sim_result_count(res, "events");
    out->wall_s = sim_result_value(res, "wall_time_s");
    fill_band(res, out);
}

/* The step-time band of RES's widest LLM pool's cost model (latsim/band.h) into OUT. */
static void fill_band(const sim_result *res, cobs_replay *out)
{
    out->nband = 0;
    for (int p = 0; sim_result_pool(res, p); p++) {
        const char *P = sim_result_pool(res, p);
        const sim_row *w = sim_result_row(res, P, "cost_model.kind", "value");
        const char *kind = w ? w->text : NULL;
        if (!kind) continue;
        band_model b;
        band_of_model(kind, sim_result_get(res, P, "cost_model.mape", "value"),
                      sim_result_get(res, P, "cost_model.extrapolated", "value") > 0, &b);
        if (out->nband++ == 0 || b.sigma > out->band.sigma) out->band = b;
    }
}

/* "FILE:LINE" of request Q of RUN into BUF (N bytes), the file escaped. */
static const char *req_at(const cobs_run *run, const cobs_req *q, char *buf, size_t n)
{
    char shown[1024];
    errmsg_field(run->file, shown, sizeof shown);
    if (q->line > 0) snprintf(buf, n, "%s:%ld", shown, q->line);
    else snprintf(buf, n, "%s", shown);
    return buf;
}

int cobs_check_replayable(const cobs_run *run, const scenario *sc, int fit, char *err, size_t errlen)
{
    char at[1200], shown[1024];
    if (run->nlvl) return 0;
    errmsg_field(run->file, shown, sizeof shown);
    if (run->nreq < 2) {
        errmsg_set(err, errlen, "%s: %zu request%s: a replay needs at least 2 (their arrival times are the load); "
                   "import a run of more requests", shown, run->nreq, run->nreq == 1 ? "" : "s");
        return 2;
    }
    double t0 = run->req[0].arrival_s, t1 = t0;
    for (size_t i = 1; i < run->nreq; i++) {
        if (run->req[i].arrival_s < t0) t0 = run->req[i].arrival_s;
        if (run->req[i].arrival_s > t1) t1 = run->req[i].arrival_s;
    }
    if (!(t1 > t0)) {
        errmsg_set(err, errlen, "%s: all %zu requests arrive at the same instant (%g s): the run records no arrival times "
                   "to replay (vLLM's request_rate inf without start times); import a run with arrival times, or one "
                   "measured at a finite request rate", shown, run->nreq, t0);
        return 2;
    }
    /* The scenario's classes, when it has any: each request's label must be one. */
    const cfg *c = &sc->raw;
    int classes = 0;
    for (size_t i = 0; i < c->ns; i++) classes += !strncmp(c->s[i].name, "class ", 6);
    for (size_t r = 0; classes && r < run->nreq; r++) {
        const cobs_req *q = &run->req[r];
        int found = 0;
        for (size_t i = 0; i < c->ns && !found; i++)
            found = !strncmp(c->s[i].name, "class ", 6) && !strcmp(c->s[i].name + 6, q->cls);
        if (found) continue;
        char list[512] = "";
        size_t len = 0;
        for (size_t i = 0; i < c->ns && len + 2 < sizeof list; i++)
            if (!strncmp(c->s[i].name, "class ", 6))
                len += (size_t) snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", c->s[i].name + 6);
        if (len >= sizeof list) len = sizeof list - 1;
        if (!q->cls[0])
            errmsg_set(err, errlen, "%s: the request carries no class, but %s has [class NAME] sections (%s): label every "
                       "request (generic: the class field) or use a scenario without classes", req_at(run, q, at, sizeof at),
                       ERRMSG_SHOWN(c->path), list);
        else
            errmsg_set(err, errlen, "%s: class '%s' is not a [class] of %s (its classes: %s)", req_at(run, q, at, sizeof at),
                       ERRMSG_SHOWN(q->cls), ERRMSG_SHOWN(c->path), list);
        return 2;
    }
    for (size_t r = 0; fit && r < run->nreq; r++)
        if (!(run->req[r].ttft_ms > 0)) {
            errmsg_set(err, errlen, "%s: ttft_ms = %g: a first token needs a prefill; a TTFT of 0 cannot be fitted (its "
                       "relative error is undefined)", req_at(run, &run->req[r], at, sizeof at), run->req[r].ttft_ms);
            return 2;
        }
    return 0;
}

/* The replay scenario of a request run as text into *TEXT (malloc'd), its
 * trace written to TRACE; ROOF as write_kept_as.  Returns 0, 2 or 1 (ERR). */
static int request_text(const cobs_run *run, const scenario *sc, const char *pool, const char *roof, char **text,
                        char *trace, size_t tn, char *note, size_t nn, char *err, size_t errlen)
{
    int classes, labelled = 0;
    for (size_t i = 0; i < run->nreq && !labelled; i++) labelled = run->req[i].cls[0] != 0;
    size_t len = 0;
    *text = NULL;
    int bad = cobs_check_replayable(run, sc, 0, err, errlen);   /* against the user's file, not the temporary trace */
    if (bad) return bad;
    FILE *f = text_open(text, &len, err, errlen);
    if (!f) return 1;
    write_kept_as(f, sc, &classes, roof);
    if (classes && !labelled) {
        fclose(f);
        free(*text);
        *text = NULL;
        errmsg_set(err, errlen, "%s: the scenario has [class NAME] sections, but the observed requests carry no class: "
                   "give each request a class (generic: the class field) or replay through a scenario without classes",
                   ERRMSG_SHOWN(sc->raw.path));
        return 2;
    }
    if (labelled && !classes && note)
        snprintf(note, nn, "the requests' class labels are not replayed (the scenario has no [class] sections)");
    if (write_trace(run, classes, trace, tn, err, errlen) != 0) {
        fclose(f);
        free(*text);
        *text = NULL;
        return 1;
    }
    write_sim(f, sc, run->nreq, 1, pool);
    fprintf(f, "arrival = trace\ntrace = %s\ntrace_format = csv\ntime_column = arrival_s\ntime_format = seconds\n"
            "prompt_column = input_tokens\noutput_column = output_tokens\nloop = no\nspeedup = 1\n%s", trace,
            classes ? "class_column = class\n" : "");
    if (fclose(f) != 0) {
        unlink(trace);
        free(*text);
        *text = NULL;
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    return 0;
}

struct cobs_prep {
    scenario *s;              /* the replay scenarios, resolved: one for a request run, one per sweep level */
    int *pool;                /* the index of the replayed pool in each */
    size_t n;                 /* scenarios */
    int sweep;                /* 1: one scenario per level */
};

/* Requests simulated per sweep level in a fit: fewer than a replay's (the fit
 * simulates each level hundreds of times); at least 20 per user. */
static uint64_t prep_level_requests(const cobs_level *L)
{
    double n = L->closed ? 20 * L->load : 400;
    return (uint64_t) (n < 200 ? 200 : n > COBS_PREP_LEVEL_MAX ? COBS_PREP_LEVEL_MAX : n);
}

/* The replay scenario of sweep level L as text into *TEXT (malloc'd), ROOF as
 * write_kept_as, REQUESTS measured.  Returns 0, 2 or 1 (ERR). */
static int level_text(const cobs_level *L, const scenario *sc, const char *pool, const char *roof, uint64_t requests,
                      char **text, char *err, size_t errlen)
{
    size_t len = 0;
    int classes;
    *text = NULL;
    FILE *f = text_open(text, &len, err, errlen);
    if (!f) return 1;
    write_kept_as(f, sc, &classes, roof);
    if (classes) {
        fclose(f);
        free(*text);
        *text = NULL;
        errmsg_set(err, errlen, "%s: the scenario has [class NAME] sections: a sweep's levels have no classes; replay "
                   "it through a scenario without classes", ERRMSG_SHOWN(sc->raw.path));
        return 2;
    }
    write_sim(f, sc, requests, 0, pool);
    if (L->closed) fprintf(f, "users = %.0f\nthink_ms = const(0)\n", L->load);
    else fprintf(f, "arrival = poisson\nrate = %.17g\n", L->load);
    fprintf(f, "prompt_tokens = const(%d)\noutput_tokens = const(%d)\n", (int) L->input_tokens, (int) L->output_tokens);
    if (fclose(f) != 0) {
        free(*text);
        *text = NULL;
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    return 0;
}

void cobs_prep_close(cobs_prep *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) scenario_free(&p->s[i]);
    free(p->s);
    free(p->pool);
    free(p);
}

int cobs_prep_open(const cobs_run *run, const scenario *sc, const char *pool, sqlite3 *db, cobs_prep **out,
                   char *err, size_t errlen)
{
    *out = NULL;
    int idx;
    if (!run->nlvl && !run->nreq) {
        errmsg_set(err, errlen, "%s: neither requests nor sweep levels to fit", run->file);
        return 2;
    }
    if (cobs_find_pool(sc, pool, &idx, err, errlen) != 0) return 2;
    cobs_prep *p = calloc(1, sizeof *p);
    size_t n = run->nlvl ? run->nlvl : 1;
    if (p) p->s = calloc(n, sizeof *p->s), p->pool = calloc(n, sizeof *p->pool);
    if (!p || !p->s || !p->pool) {
        if (p) free(p->s), free(p->pool);
        free(p);
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    p->sweep = run->nlvl > 0;
    char sec[96], trace[4096], msg[2048];
    snprintf(sec, sizeof sec, "pool %s", sc->pools[idx].name);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char *text = NULL;
        if (p->sweep) rc = level_text(&run->lvl[i], sc, pool, sec, prep_level_requests(&run->lvl[i]), &text, err, errlen);
        else rc = request_text(run, sc, pool, sec, &text, trace, sizeof trace, NULL, 0, err, errlen);
        if (rc) break;
        scenario *s = &p->s[i];
        if (scenario_load_text(s, sc->raw.path, text, NULL, 0, msg, sizeof msg) != 0) rc = strstr(msg, "out of memory") ? 1 : 2;
        if (rc && !p->sweep) name_user_file(msg, sizeof msg, trace, run);
        if (!p->sweep) unlink(trace);
        free(text);
        p->n = i + 1;   /* loaded (or its load failed): freed by cobs_prep_close */
        if (rc == 0 && scenario_resolve(s, db, msg, sizeof msg) != 0) rc = strstr(msg, "out of memory") ? 1 : 2;
        if (rc == 0 && scenario_check_memory(s, scenario_memory_budget(), msg, sizeof msg) != 0) rc = 2;
        if (rc == 0 && cobs_find_pool(s, sc->pools[idx].name, &p->pool[i], msg, sizeof msg) != 0) rc = 2;
        if (rc) errmsg_set(err, errlen, "replay: %s", msg);
    }
    if (rc) {
        cobs_prep_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

size_t cobs_prep_count(const cobs_prep *p)
{
    return p->n;
}

struct cost_model *cobs_prep_cost(cobs_prep *p, size_t i)
{
    return &llm_cfg_of(&p->s[i].pools[p->pool[i]])->cost;
}

const model_spec *cobs_prep_model(const cobs_prep *p, int *tp, const char **weights)
{
    const llm_cfg *L = llm_cfg_of(&p->s[0].pools[p->pool[0]]);
    *tp = L->tp;
    *weights = L->weights[0] ? L->weights : L->model.weights[0] ? L->model.weights : "bf16";
    return &L->model;
}

/* A level's prediction from RES (a sweep's level, or a load step's): its
 * served requests' mean TTFT, ITL, TPOT and E2E and P99 TTFT (NAN when
 * saturated) and its output tokens/s. */
static void level_pred(const sim_result *res, cobs_level_pred *P)
{
    int sat = sim_result_value(res, "saturated") > 0;
    P->saturated = sat;
    P->ttft_ms = sat ? NAN : sys_latency(res, "ttft").mean;
    P->itl_ms = sat ? NAN : sys_latency(res, "itl").mean;
    P->tpot_ms = sat ? NAN : sys_latency(res, "tpot").mean;
    P->e2e_ms = sat ? NAN : sys_latency(res, "e2e").mean;
    P->ttft_p99_ms = sat ? NAN : sys_latency(res, "ttft").p99;
    P->output_tps = out_tps(res);
}


int cobs_prep_sim(cobs_prep *p, cobs_replay *out, char *err, size_t errlen)
{
    char msg[2048];
    if (p->sweep && !out->lv) {
        out->lv = calloc(p->n, sizeof *out->lv);
        if (!out->lv) {
            errmsg_set(err, errlen, "out of memory");
            return 1;
        }
        out->nlv = p->n;
    }
    for (size_t i = 0; i < p->n; i++) {
        sim_result res;
        memset(&res, 0, sizeof res);
        if (sim_run(&p->s[i], p->s[i].seed, &res, msg, sizeof msg) != 0) {
            errmsg_set(err, errlen, "replay: %s", msg);
            sim_result_free(&res);
            return 1;
        }
        if (p->sweep) {
            cobs_level_pred *P = &out->lv[i];
            P->requests = sim_result_count(&res, "served");
            level_pred(&res, P);
        } else fill_pred(&res, out);
        sim_result_free(&res);
    }
    return 0;
}

int cobs_replay_observed(const cobs_run *run, cobs_replay *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->nreq = run->nreq;
    for (int m = 0; m < COBS_NMETRICS; m++) {
        size_t n;
        if (cobs_values(run, (cobs_metric) m, &out->obs_sorted[m], &n) != 0) {
            errmsg_set(err, errlen, "out of memory");
            return 1;
        }
        cobs_summarize(out->obs_sorted[m], n, &out->obs[m]);
    }
    cobs_throughput(run, &out->obs_rps, &out->obs_tps);
    out->obs_window_s = out->obs_rps > 0 ? (double) run->nreq / out->obs_rps : NAN;
    return 0;
}

/* The cost model of each LLM pool of RES, "POOL KIND (SOURCE[, id N])" joined
 * by "; ", into BUF (N bytes; "" for none). */
static void cost_of(const sim_result *res, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; sim_result_pool(res, i); i++) {
        const char *P = sim_result_pool(res, i);
        const sim_row *wk = sim_result_row(res, P, "cost_model.kind", "value"),
                      *ws = sim_result_row(res, P, "cost_model.source", "value");
        const char *kind = wk ? wk->text : NULL, *src = ws ? ws->text : NULL;
        double id = sim_result_get(res, P, "cost_model.id", "value");
        if (!kind || o >= n - 1) continue;
        int w = snprintf(buf + o, n - o, "%s%s %s (%s", o ? "; " : "", P, kind, src ? src : "?");
        if (w > 0) o += (size_t) w < n - o ? (size_t) w : n - o - 1;
        if (!isnan(id) && o < n - 1) {
            w = snprintf(buf + o, n - o, ", id %.0f", id);
            if (w > 0) o += (size_t) w < n - o ? (size_t) w : n - o - 1;
        }
        if (o < n - 1) buf[o++] = ')', buf[o] = 0;
    }
}

static int replay_requests(const cobs_run *run, const scenario *sc, const char *pool, sqlite3 *db, cobs_replay *out,
                           char *err, size_t errlen)
{
    char *text = NULL, trace[4096];
    int rc0 = request_text(run, sc, pool, NULL, &text, trace, sizeof trace, out->note, sizeof out->note, err, errlen);
    if (rc0) return rc0;
    sim_result res;
    int rc = simulate(text, sc, db, trace, run, &res, err, errlen);
    free(text);
    if (rc != 0) {
        sim_result_free(&res);
        return rc;
    }
    fill_pred(&res, out);
    cost_of(&res, out->cost, sizeof out->cost);
    sim_result_free(&res);
    return 0;
}

/* Requests simulated per sweep level: enough for every user to finish about
 * fifty requests after the warm-up (a steady-state mean within a few per cent),
 * within 1000..20000. */
static uint64_t level_requests(const cobs_level *L)
{
    double n = L->closed ? 50 * L->load : 2000;
    return (uint64_t) (n < 1000 ? 1000 : n > 20000 ? 20000 : n);
}

static int replay_levels(const cobs_run *run, const scenario *sc, const char *pool, sqlite3 *db, cobs_replay *out,
                         char *err, size_t errlen)
{
    out->lv = calloc(run->nlvl, sizeof *out->lv);
    if (!out->lv) {
        errmsg_set(err, errlen, "out of memory");
        return 1;
    }
    out->nlv = run->nlvl;
    for (size_t i = 0; i < run->nlvl; i++) {
        const cobs_level *L = &run->lvl[i];
        cobs_level_pred *P = &out->lv[i];
        char *text = NULL;
        size_t len = 0;
        int classes;
        FILE *f = text_open(&text, &len, err, errlen);
        if (!f) return 1;
        write_kept(f, sc, &classes);
        if (classes) {
            fclose(f);
            free(text);
            errmsg_set(err, errlen, "%s: the scenario has [class NAME] sections: a sweep's levels have no classes; replay "
                       "it through a scenario without classes", ERRMSG_SHOWN(sc->raw.path));
            return 2;
        }
        P->requests = level_requests(L);
        write_sim(f, sc, P->requests, 0, pool);
        if (L->closed) fprintf(f, "users = %.0f\nthink_ms = const(0)\n", L->load);
        else fprintf(f, "arrival = poisson\nrate = %.17g\n", L->load);
        fprintf(f, "prompt_tokens = const(%d)\noutput_tokens = const(%d)\n", (int) L->input_tokens, (int) L->output_tokens);
        if (fclose(f) != 0) {
            free(text);
            errmsg_set(err, errlen, "out of memory");
            return 1;
        }
        sim_result res;
        int rc = simulate(text, sc, db, NULL, NULL, &res, err, errlen);
        free(text);
        if (rc != 0) {
            sim_result_free(&res);
            return rc;
        }
        level_pred(&res, P);
        if (i == 0) {
            cost_of(&res, out->cost, sizeof out->cost);
            fill_band(&res, out);
        }
        out->events += sim_result_count(&res, "events");
        out->wall_s += sim_result_value(&res, "wall_time_s");
        sim_result_free(&res);
    }
    return 0;
}

int cobs_replay_run(const cobs_run *run, const scenario *sc, const char *pool, sqlite3 *db, cobs_replay *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int idx;
    if (cobs_find_pool(sc, pool, &idx, err, errlen) != 0) return 2;
    if (run->nlvl) return replay_levels(run, sc, pool, db, out, err, errlen);
    if (cobs_replay_observed(run, out, err, errlen) != 0) return 1;
    return replay_requests(run, sc, pool, db, out, err, errlen);
}

void cobs_replay_free(cobs_replay *r)
{
    for (int m = 0; m < COBS_NMETRICS; m++) free(r->obs_sorted[m]);
    free(r->lv);
    memset(r, 0, sizeof *r);
}
