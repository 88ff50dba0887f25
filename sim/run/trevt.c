/* trevt.c -- trace-event JSON of a run (see trevt.h). */
#include "run/trevt.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PID_REQUESTS 1
#define PID_POOL0 2

struct trevt {
    FILE *f;                  /* OUT.tmp */
    char *path, *tmp;         /* OUT and OUT.tmp (malloc'd) */
    uint64_t cap;             /* requests traced: ids below it */
    uint64_t done;            /* traced requests with an outcome */
    uint64_t traced;          /* traced requests written (served or not) */
    unsigned char *seen;      /* per traced id: 1 once it has an outcome */
    int truncated;            /* a request at or above the cap had an outcome */
    int nev;                  /* events written (for the commas) */
    int failed;               /* a write or an allocation failed */
    /* replicas named so far, per pool (a thread_name event the first time one steps) */
    unsigned char **named;    /* per pool: per replica, 1 when named */
    int *nnamed;              /* per pool: entries in named[pool] */
    int npools;
};

/* Writes event E (taking its reference). */
static void emit(trevt *t, json_t *e)
{
    if (!e) { t->failed = 1; return; }
    if (fputs(t->nev++ ? ",\n" : "\n", t->f) == EOF || json_dumpf(e, t->f, JSON_COMPACT) != 0) t->failed = 1;
    json_decref(e);
}

static double us(simtime_t ns)
{
    return (double) ns / 1000.0;
}

static void meta(trevt *t, const char *what, int pid, int64_t tid, const char *key, json_t *val)
{
    emit(t, json_pack("{s:s, s:s, s:i, s:I, s:{s:o}}", "name", what, "ph", "M", "pid", pid, "tid", (json_int_t) tid, "args", key, val));
}

trevt *trevt_open(const char *path, uint64_t nreq, char *err, size_t errlen)
{
    trevt *t = calloc(1, sizeof *t);
    if (!t) goto oom;
    t->cap = nreq;
    t->path = strdup(path);
    t->tmp = malloc(strlen(path) + 5);
    t->seen = calloc((size_t) nreq + 1, 1);
    if (!t->path || !t->tmp || !t->seen) goto oom;
    sprintf(t->tmp, "%s.tmp", path);
    if (!(t->f = fopen(t->tmp, "w"))) {
        snprintf(err, errlen, "--trace-events %.900s: cannot write: %s", t->tmp, strerror(errno));
        trevt_close(t, 0, NULL, 0);
        return NULL;
    }
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", t->f);
    meta(t, "process_name", PID_REQUESTS, 0, "name", json_string("requests"));
    meta(t, "process_sort_index", PID_REQUESTS, 0, "sort_index", json_integer(0));
    return t;
oom:
    snprintf(err, errlen, "out of memory (trace events)");
    trevt_close(t, 0, NULL, 0);
    return NULL;
}

void trevt_pool(trevt *t, int pool, const char *name)
{
    char buf[128];
    snprintf(buf, sizeof buf, "pool %s", name);
    meta(t, "process_name", PID_POOL0 + pool, 0, "name", json_string(buf));
    meta(t, "process_sort_index", PID_POOL0 + pool, 0, "sort_index", json_integer(1 + pool));
}

int trevt_stepping(const trevt *t)
{
    return t->done < t->cap;
}

/* Names replica REP of POOL the first time it steps. */
static void name_replica(trevt *t, int pool, int rep)
{
    if (pool >= t->npools) {
        unsigned char **n = realloc(t->named, (size_t) (pool + 1) * sizeof *n);
        int *c = realloc(t->nnamed, (size_t) (pool + 1) * sizeof *c);
        if (n) t->named = n;
        if (c) t->nnamed = c;
        if (!n || !c) { t->failed = 1; return; }
        for (int i = t->npools; i <= pool; i++) { t->named[i] = NULL; t->nnamed[i] = 0; }
        t->npools = pool + 1;
    }
    if (rep >= t->nnamed[pool]) {
        int m = rep + 16;
        unsigned char *a = realloc(t->named[pool], (size_t) m);
        if (!a) { t->failed = 1; return; }
        memset(a + t->nnamed[pool], 0, (size_t) (m - t->nnamed[pool]));
        t->named[pool] = a;
        t->nnamed[pool] = m;
    }
    if (t->named[pool][rep]) return;
    t->named[pool][rep] = 1;
    char buf[64];
    snprintf(buf, sizeof buf, "replica %d", rep);
    meta(t, "thread_name", PID_POOL0 + pool, rep, "name", json_string(buf));
    meta(t, "thread_sort_index", PID_POOL0 + pool, rep, "sort_index", json_integer(rep));
}

void trevt_step(trevt *t, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
                int32_t prefill_seqs, int32_t decode_seqs)
{
    if (!trevt_stepping(t)) return;
    name_replica(t, pool, rep);
    const char *name = prefill_seqs > 0 ? (decode_seqs > 0 ? "prefill+decode" : "prefill") : "decode";
    emit(t, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:{s:I, s:i, s:i}}", "name", name, "cat", "step", "ph", "X",
                      "pid", PID_POOL0 + pool, "tid", rep, "ts", us(start), "dur", us(dur), "args",
                      "prefill_tokens", (json_int_t) prefill_tokens, "prefill_seqs", (int) prefill_seqs,
                      "decode_seqs", (int) decode_seqs));
}

/* Marks R's id done; returns 1 when R is traced. */
static int mark(trevt *t, const request *r)
{
    if (r->id >= t->cap) {
        t->truncated = 1;
        return 0;
    }
    if (!t->seen[r->id]) {
        t->seen[r->id] = 1;
        t->done++;
        char buf[64];
        snprintf(buf, sizeof buf, "request %llu", (unsigned long long) r->id);
        meta(t, "thread_name", PID_REQUESTS, (int64_t) r->id, "name", json_string(buf));
        meta(t, "thread_sort_index", PID_REQUESTS, (int64_t) r->id, "sort_index", json_integer((json_int_t) r->id));
    }
    t->traced++;
    return 1;
}

/* A span NAME of the request track of R from AT for DUR ns (nothing when DUR is 0). */
static void span(trevt *t, const request *r, const char *name, simtime_t at, simtime_t dur)
{
    if (dur <= 0) return;
    emit(t, json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:f}", "name", name, "cat", "span", "ph", "X", "pid", PID_REQUESTS,
                      "tid", (json_int_t) r->id, "ts", us(at), "dur", us(dur)));
}

void trevt_served(trevt *t, const request *r, simtime_t e2e, int whole)
{
    if (!mark(t, r)) return;
    simtime_t at = r->arrival;
    emit(t, json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:f, s:{s:I, s:s, s:i, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I}}",
                      "name", "request", "cat", "request", "ph", "X", "pid", PID_REQUESTS, "tid", (json_int_t) r->id,
                      "ts", us(at), "dur", us(e2e), "args", "id", (json_int_t) r->id, "outcome", "served",
                      "measured", (int) r->measured, "class", (int) r->cls, "prompt_tokens", (int) r->prompt,
                      "output_tokens", (int) r->output, "e2e_ns", (json_int_t) e2e,
                      "network_ns", (json_int_t) r->network_ns, "overhead_ns", (json_int_t) r->overhead_ns,
                      "queue_ns", (json_int_t) r->queue_ns, "service_ns", (json_int_t) r->service_ns));
    span(t, r, "network", at, r->network_ns);
    at += r->network_ns;
    span(t, r, "overhead", at, r->overhead_ns);
    at += r->overhead_ns;
    span(t, r, "queue", at, r->queue_ns);
    at += r->queue_ns;
    if (r->first_token >= 0 && !whole) {
        simtime_t dec = r->last_token - r->first_token;
        if (dec < 0) dec = 0;
        if (dec > r->service_ns) dec = r->service_ns;
        /* Service = [kv_load] prefill (to the first token) [kv_transfer] decode:
         * a load from the offload tiers comes before the prefill, a
         * disaggregated request's KV transfer after its first token. */
        simtime_t pre = r->service_ns - dec;
        simtime_t kvl = r->kv.load_ns > 0 ? (r->kv.load_ns < pre ? r->kv.load_ns : pre) : 0;
        simtime_t kvx = r->kv.xfer_ns > 0 ? (r->kv.xfer_ns < dec ? r->kv.xfer_ns : dec) : 0;
        if (kvl > 0) span(t, r, "kv_load", at, kvl);
        span(t, r, "prefill", at + kvl, pre - kvl);
        if (kvx > 0) span(t, r, "kv_transfer", at + pre, kvx);
        span(t, r, "decode", at + pre + kvx, dec - kvx);
        emit(t, json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:f}", "name", "first token", "cat", "span", "ph", "i", "s", "t",
                          "pid", PID_REQUESTS, "tid", (json_int_t) r->id, "ts", us(r->first_token + r->ret_first_ns)));
    } else
        span(t, r, r->whole && r->first_token < 0 ? "cache" : "service", at, r->service_ns);
}

void trevt_unserved(trevt *t, const request *r, req_outcome outcome, simtime_t now)
{
    if (!mark(t, r)) return;
    const char *what = outcome == OUT_REJECTED ? "rejected" : outcome == OUT_TIMED_OUT ? "timed_out"
                     : outcome == OUT_ABANDONED ? "abandoned" : "failed";
    emit(t, json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:f, s:{s:s}}", "name", what, "cat", "request", "ph", "i", "s", "t",
                      "pid", PID_REQUESTS, "tid", (json_int_t) r->id, "ts", us(now), "args", "outcome", what));
}

uint64_t trevt_requests(const trevt *t)
{
    return t->done;
}

int trevt_truncated(const trevt *t)
{
    return t->truncated;
}

int trevt_close(trevt *t, int ok, char *err, size_t errlen)
{
    if (!t) return 0;
    int rc = 0;
    if (t->f) {
        if (ok) fputs("\n]}\n", t->f);
        if (fclose(t->f) != 0) t->failed = 1;
        if (ok && t->failed) {
            if (err) snprintf(err, errlen, "--trace-events %.900s: cannot write (disk full or out of memory)", t->tmp);
            rc = -1;
        } else if (ok && rename(t->tmp, t->path) != 0) {
            if (err) snprintf(err, errlen, "--trace-events %.900s: cannot rename into place: %s", t->path, strerror(errno));
            rc = -1;
        }
        if (!ok || rc) remove(t->tmp);
    }
    for (int i = 0; i < t->npools; i++) free(t->named[i]);
    free(t->named);
    free(t->nnamed);
    free(t->seen);
    free(t->path);
    free(t->tmp);
    free(t);
    return rc;
}
