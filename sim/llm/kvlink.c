/* kvlink.c -- disaggregated prefill and decode, the decode side (`role =
 * decode`): a request prefilled in a prefill pool (its first token emitted
 * there) arrives here with its prompt's KV still on the prefill replica.  A
 * decode replica takes it from its queue only when it has the KV blocks for it
 * (it waits in the queue otherwise); the blocks are reserved and the KV crosses
 * the pool's link: prompt tokens x the model's KV bytes per token (kv_dtype),
 * at kv_link_gbs shared equally by the transfers in flight (at most
 * kv_link_streams; the others wait FIFO for a stream), plus kv_link_latency_ms.
 * Once it has arrived the sequence joins the decodes at the replica's next step
 * boundary, its prompt cached: its first decode token comes one step later.
 * The link is processor-shared: O(streams) per transfer start or end.
 *
 * With kv_link_profile, a stored send/recv profile (Vidur's network profiles,
 * nccl-tests' sendrecv_perf, imported by latsim calib) prices a transfer
 * instead: alone it takes the measured time at its bytes (cost_coll_time:
 * interpolated in log(bytes); past the largest size, the bandwidth between
 * half of it and it), latency included; the link then counts work in ns of that time, shared as before. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llm/replica.h"

static llm_link_prof_fn link_loader;   /* calib's (llm_set_link_profile), or NULL */

void llm_set_link_profile(llm_link_prof_fn fn) { link_loader = fn; }

int llm_link_profile_load(llm_cfg *l, sqlite3 *db, char *err, size_t errlen)
{
    double *b = NULL, *t = NULL;
    int n = 0;
    int got = link_loader && db ? link_loader(db, l->kv_link_profile, l->kv_link_profile_dpn, &b, &t, &n, err, errlen)
                                : 0;
    if (got < 0) return -1;
    if (got == 0 || n < 1) {
        free(b);
        free(t);
        snprintf(err, errlen, "no send_recv profile of '%s' (2 GPUs, devices_per_node %d) in the calibration "
                 "database%s; import one: latsim calib import vidur DIR --gpu G (its network/CLUSTER/send_recv.csv)",
                 l->kv_link_profile, l->kv_link_profile_dpn,
                 !db ? " (none given: --db or [sim] cost_db)" : !link_loader ? " (this program reads none)" : "");
        return -1;
    }
    /* Pieces of COST_COLL_MAX sizes, consecutive ones sharing a size, so that
     * each piece interpolates its sizes as the whole table would. */
    int step = COST_COLL_MAX - 1;
    int np = n > 1 ? (n - 1 + step - 1) / step : 1;
    free(l->kv_prof);
    l->kv_prof = calloc((size_t) np, sizeof *l->kv_prof);
    if (!l->kv_prof) {
        free(b);
        free(t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int c = 0; c < np; c++) {
        cost_coll_prof *q = &l->kv_prof[c];
        int first = c * step, last = first + step < n - 1 ? first + step : n - 1;
        for (int i = first; i <= last; i++) {
            q->bytes[q->n] = b[i];
            q->sec[q->n] = t[i];
            q->n++;
        }
    }
    l->kv_nprof = np;
    free(b);
    free(t);
    return 0;
}

double llm_link_profile_s(const llm_cfg *l, double bytes)
{
    /* Past the largest size: its time plus the extra bytes at the bandwidth
     * between half of it and it (a dense profile's last segment is noise:
     * Vidur's H100 DGX rows 128 KiB apart even decrease there). */
    const cost_coll_prof *z = &l->kv_prof[l->kv_nprof - 1];
    double top = z->bytes[z->n - 1];
    if (bytes > top && (l->kv_nprof > 1 || z->n > 1)) {
        double t1 = llm_link_profile_s(l, top), t0 = llm_link_profile_s(l, top / 2);
        if (t1 > t0) return t1 + (bytes - top) * (t1 - t0) / (top / 2);
        return t1 * bytes / top;   /* no growth measured: the largest size's bandwidth */
    }
    int c = 0;
    while (c < l->kv_nprof - 1 && bytes > l->kv_prof[c].bytes[l->kv_prof[c].n - 1]) c++;
    return cost_coll_time(&l->kv_prof[c], bytes);
}

int llm_link_init(llm *P)
{
    const llm_cfg *L = P->cfg;
    kv_link *k = &P->link;
    k->bpns = L->kv_prof ? 1.0 : L->kv_link_gbs;   /* GB/s = bytes per ns; with a profile, ns of work per ns */
    k->lat = L->kv_prof ? 0 : simtime_from_ms(L->kv_link_latency_ms);
    k->streams = L->kv_link_streams;
    k->act = calloc((size_t) k->streams, sizeof *k->act);
    for (int i = 0; k->act && i < P->nrep; i++) {
        replica *R = &P->r[i];
        R->ready = calloc((size_t) L->max_batch, sizeof *R->ready);
        R->joined = calloc((size_t) L->max_batch, sizeof *R->joined);
        if (!R->ready || !R->joined) return -1;
    }
    return k->act ? 0 : -1;
}

/* The bytes in flight have been sent at bpns / nact each since k->last. */
static void advance(llm *P)
{
    kv_link *k = &P->link;
    simtime_t now = evq_now(P->st.q);
    double dt = (double) (now - k->last);
    if (k->nact > 0 && dt > 0) {
        double sent = k->bpns * dt / k->nact;
        for (int i = 0; i < k->nact; i++) k->act[i].rem -= sent;
        if (P->window_open) {
            simtime_t from = k->last > P->window_start ? k->last : P->window_start;
            if (now > from) k->busy_ns += (double) (now - from);
        }
    }
    k->last = now;
}

void llm_link_account(llm *P)
{
    if (P->link.act) advance(P);
}

static void on_link_event(evq *q, void *subject, int64_t arg);

/* The next transfer to finish sending: its event, replacing the one pending. */
static void reschedule(llm *P)
{
    kv_link *k = &P->link;
    if (k->ev) evq_cancel(P->st.q, k->ev);
    k->ev = 0;
    if (k->nact == 0) return;
    double m = k->act[0].rem;
    for (int i = 1; i < k->nact; i++)
        if (k->act[i].rem < m) m = k->act[i].rem;
    double dt = m > 0 ? m * k->nact / k->bpns : 0;
    k->ev = station_after(&P->st, simtime_from_ns_ceil(dt), on_link_event, P, 0);   /* saturated: never wraps */
}

static void start(llm *P, request *r)
{
    kv_link *k = &P->link;
    double bytes = (double) r->prompt * P->cfg->kv_bytes_token;
    double work = P->cfg->kv_prof ? llm_link_profile_s(P->cfg, bytes) * 1e9 : bytes;   /* ns of the link alone */
    k->act[k->nact++] = (kv_xfer) { r, work };
    if (r->measured && P->window_open) {
        k->nstart++;
        k->wait_ms += simtime_to_ms(evq_now(P->st.q) - r->start);
        k->bytes += bytes;
    }
}

/* r's KV is all on its decode replica now. */
static void arrived(llm *P, request *r)
{
    llm_seq *seq = seq_of(r);
    kv_link *k = &P->link;
    replica *R = &P->r[seq->pd.rep];
    seq->pd.state = 2;
    r->kv.xfer_ns = evq_now(P->st.q) - r->start;
    if (r->measured && P->window_open) {
        double ms = simtime_to_ms(r->kv.xfer_ns);
        k->n++;
        k->sum_ms += ms;
        if (ms > k->max_ms) k->max_ms = ms;
    }
    seq->fw_mark = R->fw_cum;             /* in its steps from now on */
    R->ready[R->nready++] = r;
    if (R->idle_listed) rep_wake(R);
}

static void on_arrived(evq *q, void *subject, int64_t arg)
{
    (void) q;
    arrived(subject, (request *) (intptr_t) arg);
}

static void on_link_event(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    llm *P = subject;
    kv_link *k = &P->link;
    k->ev = 0;
    advance(P);
    /* Sent: those within half a nanosecond's bytes of the end (the event's time was rounded up). */
    double eps = 0.5 * k->bpns / (k->nact > 0 ? k->nact : 1);
    request *done[64];
    int ndone = 0;
    for (int i = 0; i < k->nact;) {
        if (k->act[i].rem > eps || ndone == (int) (sizeof done / sizeof done[0])) { i++; continue; }
        done[ndone++] = k->act[i].r;
        k->act[i] = k->act[--k->nact];
    }
    while (k->nact < k->streams && k->wait_head) {
        request *r = k->wait_head;
        k->wait_head = r->next;
        if (!k->wait_head) k->wait_tail = NULL;
        r->next = NULL;
        start(P, r);
    }
    reschedule(P);
    for (int i = 0; i < ndone; i++) {
        if (k->lat > 0) station_after(&P->st, k->lat, on_arrived, P, (int64_t) (intptr_t) done[i]);
        else arrived(P, done[i]);
    }
}

void rep_kv_reserve(replica *R, request *r, int64_t blocks)
{
    llm_seq *seq = seq_of(r);
    llm *P = R->pool;
    kv_link *k = &P->link;
    request *d = squeue_dequeue(R->wq);
    assert(d == r);
    (void) d;
    load_changed(R, ROUTE_KEY_INSIDE);
    load_changed(R, ROUTE_KEY_KV);
    station_start(&P->st, r);
    seq->blocks = blocks;
    seq->pd.rep = R->index;
    R->free_blocks -= blocks;
    R->xfer_blocks += blocks;
    R->nxfer++;
    r->next = NULL;
    advance(P);
    if (k->nact < k->streams) {
        start(P, r);
        reschedule(P);
    } else {
        if (k->wait_tail) k->wait_tail->next = r;
        else k->wait_head = r;
        k->wait_tail = r;
    }
}

void rep_kv_join(replica *R)
{
    llm *P = R->pool;
    for (int i = 0; i < R->nready; i++) {
        request *r = R->ready[i];
        llm_seq *seq = seq_of(r);
        R->nxfer--;
        R->xfer_blocks -= seq->blocks;
        /* It reserved room for its first decode token too: the phase count takes that block now. */
        int64_t held = blocks_for(P, r->prompt);
        R->free_blocks += seq->blocks - held;
        seq->prefill_len = r->prompt;
        seq->prefilled = r->prompt;
        rep_run_append(R, r);
        /* As if its prompt had completed at the end of the step before this one. */
        rep_decode_join(R, r, R->steps - 1, r->prompt);
        seq->blocks = 0;
        R->joined[R->njoined++] = r;
    }
    R->nready = 0;
}
