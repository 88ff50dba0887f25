/* evq.c -- the event calendar: a binary min-heap of events.
 *
 * Events live in a slot array recycled through a free list; the heap holds
 * (time, seq, slot) entries, so ordering never leaves the heap array.  Cancel
 * is lazy: it marks the slot cancelled in O(1) and the entry is discarded
 * when it reaches the top (O(log n), like any pop).  When cancelled entries
 * outnumber live ones the heap is compacted and rebuilt in O(n), so cancel
 * stays O(1) amortised and the heap never holds more than about twice the
 * pending events.  Not tracking heap positions saves a store per heap level
 * on every schedule and pop, the engine's hottest path.  A handle packs (generation, slot): the generation
 * changes each time a slot is reused, so a stale handle never cancels
 * somebody else's event.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include "evq.h"

typedef struct slot {
    evq_handler handler;  /* what runs; NULL while the slot is free or cancelled */
    void *subject;        /* handler's subject */
    int64_t arg;          /* handler's argument */
    uint32_t gen;         /* bumped on every reuse */
    uint32_t next_free;   /* free-list link while free */
} slot;

typedef struct hent {     /* a heap entry: the ordering key next to the slot number */
    simtime_t t;          /* when the event runs, ns */
    uint64_t seq;         /* scheduling order, breaks ties */
    uint32_t slot;        /* the event's slot */
} hent;

struct evq {
    simtime_t now;        /* current time, ns */
    uint64_t seq;         /* next sequence number */
    uint64_t events;      /* events run */
    int stopped;          /* evq_stop() called */
    int error;            /* EVQ_BEYOND_HORIZON, EVQ_BEFORE_NOW, or 0 */
    simtime_t failed_t;   /* the time asked for when scheduling failed, ns */
    slot *slots;          /* all slots */
    uint32_t nslots;      /* allocated slots */
    uint32_t free_head;   /* first free slot, or UINT32_MAX */
    hent *heap;           /* scheduled events (cancelled ones included), heap-ordered on (t, seq) */
    uint32_t n;           /* entries in heap */
    uint32_t live;        /* of those, not cancelled */
    uint64_t stall_limit; /* events in a row at one instant that stop the run (evq.h) */
    uint64_t stall_left;  /* events still allowed at the current instant, count */
    evq_handler stall_h;  /* EVQ_STALLED (or while looking for it): the event to blame */
    void *stall_subject;  /* its subject */
    int stall_rank;       /* its namer's answer (EVQ_NAME_*, 0: none named it) */
    int stall_seen;       /* events looked at after the limit at instant stall_at, count */
    simtime_t stall_at;   /* the instant of that search, ns */
    evq_namer namers[EVQ_MAX_NAMERS];   /* evq_add_namer() */
    int nnamers;          /* of those, used */
};

#define NO_SLOT UINT32_MAX

static inline int before(const hent *a, const hent *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void sift_up(hent *heap, uint32_t i)
{
    hent x = heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!before(&x, &heap[p])) break;
        heap[i] = heap[p];
        i = p;
    }
    heap[i] = x;
}

/* Moves the entry at I down to its place among N entries. */
static void sift_down(hent *heap, uint32_t n, uint32_t i)
{
    hent x = heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&heap[c + 1], &heap[c])) c++;
        if (!before(&heap[c], &x)) break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = x;
}

/* Removes the top entry. */
static void pop_top(evq *q)
{
    const uint32_t n = --q->n;
    if (n == 0) return;
    q->heap[0] = q->heap[n];
    sift_down(q->heap, n, 0);
}

static int grow(evq *q)
{
    uint32_t n = q->nslots ? q->nslots * 2 : 64;
    slot *s = realloc(q->slots, (size_t) n * sizeof *s);
    if (!s) return -1;
    q->slots = s;
    hent *h = realloc(q->heap, (size_t) n * sizeof *h);
    if (!h) return -1;
    q->heap = h;
    for (uint32_t i = q->nslots; i < n; i++) {
        s[i].handler = NULL;
        s[i].gen = 0;
        s[i].next_free = (i + 1 < n) ? i + 1 : q->free_head;
    }
    q->free_head = q->nslots;
    q->nslots = n;
    return 0;
}

size_t evq_event_bytes(void) { return 2 * (sizeof(slot) + sizeof(hent)); }

evq *evq_new(void)
{
    evq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->free_head = NO_SLOT;
    q->stall_limit = EVQ_STALL_EVENTS;
    q->stall_left = EVQ_STALL_EVENTS + 1;   /* no event has run at instant 0 yet */
    q->stall_at = -1;                         /* no search yet */
    if (grow(q) != 0) { evq_free(q); return NULL; }
    return q;
}

void evq_free(evq *q)
{
    if (!q) return;
    free(q->slots);
    free(q->heap);
    free(q);
}

simtime_t evq_now(const evq *q) { return q->now; }
uint64_t evq_events(const evq *q) { return q->events; }
size_t evq_pending(const evq *q) { return q->live; }
void evq_stop(evq *q) { q->stopped = 1; }
int evq_overflowed(const evq *q) { return q->error; }
simtime_t evq_failed_time(const evq *q) { return q->failed_t; }

void evq_set_stall_limit(evq *q, uint64_t n)
{
    q->stall_limit = n > 0 ? n : 1;
    q->stall_left = q->stall_limit + 1;   /* as at the start: set before the run */
}

const void *evq_stall_subject(const evq *q) { return q->error == EVQ_STALLED ? q->stall_subject : NULL; }

void evq_progress(evq *q)
{
    q->stall_left = q->stall_limit;
    q->stall_seen = 0;
}

int evq_add_namer(evq *q, evq_namer namer)
{
    for (int i = 0; i < q->nnamers; i++)
        if (q->namers[i] == namer) return 0;
    if (q->nnamers == EVQ_MAX_NAMERS) return -1;
    q->namers[q->nnamers++] = namer;
    return 0;
}

/* The namers' answer for (H, SUBJECT), written into BUF (0: none knows it). */
static int name_of(const evq *q, evq_handler h, const void *subject, char *buf, size_t n)
{
    int rank = 0;
    for (int i = 0; i < q->nnamers && !rank; i++) rank = q->namers[i](h, subject, buf, n);
    return rank;
}

/* Past the stall limit, event (H, SUBJECT) is next: keeps it as the one to
 * blame if it is the best named so far.  Returns 1 when the search is over
 * (a period found, or EVQ_STALL_SAMPLE events seen), else 0. */
static int stall_pick(evq *q, evq_handler h, void *subject)
{
    char buf[8];
    int rank = name_of(q, h, subject, buf, sizeof buf);
    if (q->stall_at != q->now) {      /* a new search (the clock moved since the last one) */
        q->stall_at = q->now;
        q->stall_seen = 0;
    }
    if (q->stall_seen++ == 0 || rank > q->stall_rank) {
        q->stall_h = h;
        q->stall_subject = subject;
        q->stall_rank = rank;
    }
    return rank == EVQ_NAME_PERIOD || q->stall_seen >= EVQ_STALL_SAMPLE;
}

uint64_t evq_stall_name(const evq *q, char *buf, size_t n)
{
    if (n > 0) buf[0] = '\0';
    if (q->error != EVQ_STALLED) return 0;
    if (!name_of(q, q->stall_h, q->stall_subject, buf, n) && n > 0) snprintf(buf, n, "an event of an unknown module");
    return q->stall_limit;
}

evq_id evq_at(evq *q, simtime_t t, evq_handler handler, void *subject, int64_t arg)
{
    assert(handler != NULL);
    if (t > SIMTIME_HORIZON || t < q->now) {
        if (!q->error) {
            q->error = t > SIMTIME_HORIZON ? EVQ_BEYOND_HORIZON : EVQ_BEFORE_NOW;
            q->failed_t = t;
        }
        q->stopped = 1;
        return 0;
    }
    if (q->free_head == NO_SLOT && grow(q) != 0) return 0;
    uint32_t s = q->free_head;
    slot *x = &q->slots[s];
    q->free_head = x->next_free;
    x->handler = handler;
    x->subject = subject;
    x->arg = arg;
    x->gen++;
    q->heap[q->n] = (hent) { t, q->seq++, s };
    sift_up(q->heap, q->n++);
    q->live++;
    return ((evq_id) x->gen << 32) | ((evq_id) s + 1);
}

evq_id evq_after(evq *q, simtime_t dt, evq_handler handler, void *subject, int64_t arg)
{
    if (dt < 0) {
        if (!q->error) { q->error = EVQ_BEFORE_NOW; q->failed_t = dt; }
        q->stopped = 1;
        return 0;
    }
    return evq_at(q, simtime_add(q->now, dt), handler, subject, arg);
}

static void free_slot(evq *q, uint32_t s)
{
    q->slots[s].handler = NULL;
    q->slots[s].next_free = q->free_head;
    q->free_head = s;
}

/* Drops every cancelled entry (freeing its slot) and rebuilds the heap. */
static void compact(evq *q)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        uint32_t s = q->heap[i].slot;
        if (q->slots[s].handler) q->heap[k++] = q->heap[i];
        else {
            q->slots[s].next_free = q->free_head;
            q->free_head = s;
        }
    }
    q->n = k;
    for (uint32_t i = k / 2; i-- > 0;) sift_down(q->heap, k, i);
    assert(q->n == q->live);
}

int evq_cancel(evq *q, evq_id id)
{
    if (id == 0) return 0;
    uint32_t s = (uint32_t) (id & 0xffffffffu) - 1;
    uint32_t gen = (uint32_t) (id >> 32);
    if (s >= q->nslots) return 0;
    slot *x = &q->slots[s];
    if (x->handler == NULL || x->gen != gen) return 0;
    x->handler = NULL;            /* its heap entry is discarded when it reaches the top */
    q->live--;
    if (q->n - q->live > q->live + 64) compact(q);
    return 1;
}

uint64_t evq_run(evq *q, simtime_t until)
{
    uint64_t ran = 0;
    q->stopped = 0;
    while (q->n > 0 && !q->stopped && !q->error) {
        hent top = q->heap[0];
        slot *x = &q->slots[top.slot];
        evq_handler h = x->handler;
        if (h == NULL) {              /* cancelled */
            pop_top(q);
            x->next_free = q->free_head;
            q->free_head = top.slot;
            continue;
        }
        if (top.t > until) break;
        /* The stall guard (evq.h): one compare while the clock moves. */
        if (top.t != q->now) q->stall_left = q->stall_limit;
        else if (--q->stall_left == 0) {
            if (stall_pick(q, h, x->subject)) {
                q->error = EVQ_STALLED;
                q->failed_t = top.t;
                break;
            }
            q->stall_left = 1;        /* the next event at this instant is looked at too */
        }
        void *subject = x->subject;
        int64_t arg = x->arg;
        assert(top.t >= q->now);
        q->now = top.t;
        pop_top(q);
        free_slot(q, top.slot);
        q->live--;
        q->events++;
        ran++;
        h(q, subject, arg);
    }
    return ran;
}
