/* evq.c -- the event calendar: a 4-ary min-heap of events.
 *
 * Events live in a slot array recycled through a free list; the heap holds
 * 16-byte entries, the key (time, sequence) and the slot number, four children
 * to a 64-byte cache line, so a sift passes half the levels a binary heap does.
 * The key compares as one 128-bit number (no branch on ties).  Since (time,
 * sequence) orders all events strictly, any valid heap pops them in the same
 * order: the shape of the heap never shows in a run.
 *
 * Sequence numbers are 32 bits.  When the counter would pass 2^32 - 1, the
 * pending events are renumbered 0, 1, ... in their order (O(n log n) once per
 * 4 x 10^9 events), so ties still break in scheduling order however long a run.
 *
 * The top entry of a running event is not popped before its handler runs but
 * left as a hole: the first event the handler schedules takes the hole and
 * sifts down from the root (one sift instead of a pop and a push); a handler
 * that schedules nothing has its hole filled from the last entry afterwards.
 * Most handlers schedule the next event of the thing they serve.
 *
 * Cancel is lazy: it marks the slot cancelled in O(1) and the entry is
 * discarded when it reaches the top (O(log n), like any pop).  When cancelled
 * entries outnumber live ones the heap is compacted and rebuilt in O(n), so
 * cancel stays O(1) amortised and the heap never holds more than about twice
 * the pending events.  Not tracking heap positions saves a store per heap
 * level on every schedule and pop, the engine's hottest path.  A handle packs
 * (generation, slot): the generation changes each time a slot is reused, so a
 * stale handle never cancels somebody else's event.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/evq.h"

typedef struct slot {
    evq_handler handler;  /* what runs; NULL while the slot is free or cancelled */
    void *subject;        /* handler's subject */
    int64_t arg;          /* handler's argument */
    uint32_t gen;         /* bumped on every reuse */
    uint32_t next_free;   /* free-list link while free */
} slot;

/* A heap entry.  (t, lo) compares as one 128-bit number: time, then sequence
 * (unique, so the slot number below it never decides). */
typedef struct hent {
    uint64_t t;           /* when the event runs, ns (0 <= t <= SIMTIME_HORIZON) */
    uint64_t lo;          /* sequence << 32 | slot */
} hent;

__extension__ typedef unsigned __int128 key128;

#define SLOT_OF(e) ((uint32_t) (e).lo)
#define SEQ_OF(e) ((uint32_t) ((e).lo >> 32))

#define ARITY 4           /* children per heap node: 4 x 16 bytes = one cache line */
/* The heap array starts PAD entries into a 64-byte aligned block, so that each
 * node's four children (4i+1 .. 4i+4) share one cache line. */
#define PAD 3

struct evq {
    simtime_t now;        /* current time, ns */
    uint64_t seq_limit;   /* renumber when seq reaches it (UINT32_MAX; lower in tests) */
    uint32_t seq;         /* next sequence number */
    int hole;             /* 1: heap[0] belongs to the event running now (its slot freed);
                             the next evq_at fills it, else evq_run does after the handler */
    uint64_t events;      /* events run */
    int stopped;          /* evq_stop() called */
    int error;            /* EVQ_BEYOND_HORIZON, EVQ_BEFORE_NOW, or 0 */
    simtime_t failed_t;   /* the time asked for when scheduling failed, ns */
    slot *slots;          /* all slots */
    uint32_t nslots;      /* allocated slots */
    uint32_t free_head;   /* first free slot, or UINT32_MAX */
    hent *block;          /* the heap's allocation (64-byte aligned) */
    hent *heap;           /* block + PAD: scheduled events (cancelled ones included), heap-ordered on (t, seq) */
    uint32_t n;           /* entries in heap (a hole included) */
    uint32_t live;        /* scheduled events not yet run nor cancelled */
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

/* A runs before B: earlier, or at the same time and scheduled first. */
static inline int before(hent a, hent b)
{
    return ((key128) a.t << 64 | a.lo) < ((key128) b.t << 64 | b.lo);
}

static void sift_up(hent *heap, uint32_t i)
{
    hent x = heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / ARITY;
        if (!before(x, heap[p])) break;
        heap[i] = heap[p];
        i = p;
    }
    heap[i] = x;
}

/* The smallest of the entries from C to END (exclusive), fewer than ARITY:
 * a node whose children are the last, partial group.  Out of line: it is
 * rare, and the common case then keeps fewer registers. */
static hent *__attribute__((noinline)) min_partial(hent *c, const hent *end)
{
    hent *m = c;
    for (hent *k = c + 1; k < end; k++)
        if (before(*k, *m)) m = k;
    return m;
}

/* Places X at I, below which are heaps, among N entries: moves it down to its place. */
static void sift_down(hent *heap, uint32_t n, uint32_t i, hent x)
{
    hent *hole = heap + i;
    const key128 kx = (key128) x.t << 64 | x.lo;
    for (;;) {
        uint32_t c = ARITY * (uint32_t) (hole - heap) + 1;
        hent *m;                              /* the smallest child */
        if (c + ARITY <= n) {                 /* all four: the smaller of each pair, then of those */
            hent *p = heap + c;
            hent *a = p + before(p[1], p[0]);       /* arithmetic, not a branch: the */
            hent *b = p + 2 + before(p[3], p[2]);   /* child order is random */
            m = before(*b, *a) ? b : a;
        } else if (c < n)
            m = min_partial(heap + c, heap + n);
        else
            break;
        if (((key128) m->t << 64 | m->lo) >= kx) break;
        *hole = *m;
        hole = m;
    }
    *hole = x;
}

/* Removes the top entry. */
static void pop_top(evq *q)
{
    const uint32_t n = --q->n;
    if (n == 0) return;
    sift_down(q->heap, n, 0, q->heap[n]);
}

/* Fills a pending hole (the running event's entry) from the last entry. */
static void fill_hole(evq *q)
{
    if (!q->hole) return;
    q->hole = 0;
    pop_top(q);
}

static int grow(evq *q)
{
    uint32_t n = q->nslots ? q->nslots * 2 : 64;
    slot *s = realloc(q->slots, (size_t) n * sizeof *s);
    if (!s) return -1;
    q->slots = s;
    size_t bytes = ((size_t) n + PAD) * sizeof(hent);
    hent *b = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!b) return -1;
    if (q->block) memcpy(b + PAD, q->heap, (size_t) q->n * sizeof *b);
    free(q->block);
    q->block = b;
    q->heap = b + PAD;
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
    q->seq_limit = UINT32_MAX;
    if (grow(q) != 0) { evq_free(q); return NULL; }
    return q;
}

void evq_free(evq *q)
{
    if (!q) return;
    free(q->slots);
    free(q->block);
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

static void compact(evq *q);

static int by_seq(const void *a, const void *b)
{
    uint32_t x = SEQ_OF(*(const hent *) a), y = SEQ_OF(*(const hent *) b);
    return (x > y) - (x < y);
}

/* Renumbers the pending events 0, 1, ... in their (sequence) order, and the
 * counter after them.  The heap's order is unchanged (relative order is kept),
 * so is every later tie.  Returns 0, or -1 when out of memory. */
static int renumber(evq *q)
{
    compact(q);                   /* no hole, no cancelled entries: n == live */
    hent *byseq = malloc(((size_t) q->n + 1) * sizeof *byseq);
    uint32_t *rank = malloc(((size_t) q->nslots + 1) * sizeof *rank);
    if (!byseq || !rank) {
        free(byseq);
        free(rank);
        return -1;
    }
    memcpy(byseq, q->heap, (size_t) q->n * sizeof *byseq);
    qsort(byseq, q->n, sizeof *byseq, by_seq);
    for (uint32_t i = 0; i < q->n; i++) rank[SLOT_OF(byseq[i])] = i;
    for (uint32_t i = 0; i < q->n; i++) {
        uint32_t s = SLOT_OF(q->heap[i]);
        q->heap[i].lo = (uint64_t) rank[s] << 32 | s;
    }
    q->seq = q->n;
    free(byseq);
    free(rank);
    return 0;
}

void evq_set_seq(evq *q, uint32_t next, uint32_t limit)
{
    q->seq = next;
    q->seq_limit = limit;
}

/* Schedules the event (T in range, a free slot, a sequence number left). */
static inline evq_id push(evq *q, simtime_t t, evq_handler handler, void *subject, int64_t arg)
{
    uint32_t s = q->free_head;
    slot *x = &q->slots[s];
    q->free_head = x->next_free;
    x->handler = handler;
    x->subject = subject;
    x->arg = arg;
    uint32_t gen = ++x->gen;
    hent e = { (uint64_t) t, (uint64_t) q->seq++ << 32 | s };
    if (q->hole) {                /* the running event's entry: sift down from the root */
        q->hole = 0;
        sift_down(q->heap, q->n, 0, e);
    } else {
        q->heap[q->n] = e;
        sift_up(q->heap, q->n++);
    }
    q->live++;
    return ((evq_id) gen << 32) | ((evq_id) s + 1);
}

/* evq_at's uncommon cases: T out of range (the failure recorded, 0 returned),
 * no free slot (grow), the sequence counter at its limit (renumber); then
 * schedules.  Returns the handle, or 0. */
static evq_id __attribute__((noinline, cold)) at_slow(evq *q, simtime_t t, evq_handler handler, void *subject, int64_t arg)
{
    if (t > SIMTIME_HORIZON || t < q->now) {
        if (!q->error) {
            q->error = t > SIMTIME_HORIZON ? EVQ_BEYOND_HORIZON : EVQ_BEFORE_NOW;
            q->failed_t = t;
        }
        q->stopped = 1;
        return 0;
    }
    if (q->free_head == NO_SLOT && grow(q) != 0) return 0;
    if (q->seq >= q->seq_limit && renumber(q) != 0) return 0;
    return push(q, t, handler, subject, arg);
}

evq_id evq_at(evq *q, simtime_t t, evq_handler handler, void *subject, int64_t arg)
{
    assert(handler != NULL);
    if ((uint64_t) t > (uint64_t) SIMTIME_HORIZON || t < q->now || q->free_head == NO_SLOT || q->seq >= q->seq_limit)
        return at_slow(q, t, handler, subject, arg);
    return push(q, t, handler, subject, arg);
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
    fill_hole(q);                 /* the hole's slot is free already: not a cancelled entry */
    uint32_t k = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        uint32_t s = SLOT_OF(q->heap[i]);
        if (q->slots[s].handler) q->heap[k++] = q->heap[i];
        else {
            q->slots[s].next_free = q->free_head;
            q->free_head = s;
        }
    }
    q->n = k;
    for (uint32_t i = k / ARITY + 1; i-- > 0;)
        if (i < k) sift_down(q->heap, k, i, q->heap[i]);
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
    fill_hole(q);                 /* a run started from a handler */
    while (q->n > 0 && !q->stopped && !q->error) {
        hent top = q->heap[0];
        uint32_t s = SLOT_OF(top);
        slot *x = &q->slots[s];
        evq_handler h = x->handler;
        if (h == NULL) {              /* cancelled */
            pop_top(q);
            x->next_free = q->free_head;
            q->free_head = s;
            continue;
        }
        if ((simtime_t) top.t > until) break;
        /* The stall guard (evq.h): one compare while the clock moves. */
        if ((simtime_t) top.t != q->now) q->stall_left = q->stall_limit;
        else if (--q->stall_left == 0) {
            if (stall_pick(q, h, x->subject)) {
                q->error = EVQ_STALLED;
                q->failed_t = (simtime_t) top.t;
                break;
            }
            q->stall_left = 1;        /* the next event at this instant is looked at too */
        }
        void *subject = x->subject;
        int64_t arg = x->arg;
        assert((simtime_t) top.t >= q->now);
        q->now = (simtime_t) top.t;
        free_slot(q, s);
        q->hole = 1;
        q->live--;
        q->events++;
        ran++;
        h(q, subject, arg);
        fill_hole(q);
    }
    return ran;
}
