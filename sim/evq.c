/* evq.c -- the event calendar: an indexed binary min-heap of events.
 *
 * Events live in a slot array recycled through a free list; the heap holds slot
 * numbers ordered by (time, seq).  Each slot remembers its heap position so an
 * event can be cancelled in O(log n).  A handle packs (generation, slot): the
 * generation changes each time a slot is reused, so a stale handle never
 * cancels somebody else's event.
 */
#include <assert.h>
#include <stdlib.h>
#include "evq.h"

typedef struct slot {
    evq_handler handler;  /* what runs; NULL while the slot is free */
    void *subject;        /* handler's subject */
    int64_t arg;          /* handler's argument */
    uint32_t pos;         /* index in heap[] while pending */
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
    slot *slots;          /* all slots */
    uint32_t nslots;      /* allocated slots */
    uint32_t free_head;   /* first free slot, or UINT32_MAX */
    hent *heap;           /* pending events, heap-ordered on (t, seq) */
    uint32_t n;           /* pending events */
};

#define NO_SLOT UINT32_MAX

static inline int before(const hent *a, const hent *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

/* The heap and slot arrays are read into restrict-qualified locals: writing a
 * slot's pos could otherwise alias q->n and the array pointers, and the
 * compiler would reload them on every level. */
static void sift_up(evq *q, uint32_t i)
{
    hent *restrict heap = q->heap;
    slot *restrict slots = q->slots;
    hent x = heap[i];
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (!before(&x, &heap[p])) break;
        heap[i] = heap[p];
        slots[heap[i].slot].pos = i;
        i = p;
    }
    heap[i] = x;
    slots[x.slot].pos = i;
}

static void sift_down(evq *q, uint32_t i)
{
    hent *restrict heap = q->heap;
    slot *restrict slots = q->slots;
    const uint32_t n = q->n;
    hent x = heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&heap[c + 1], &heap[c])) c++;
        if (!before(&heap[c], &x)) break;
        heap[i] = heap[c];
        slots[heap[i].slot].pos = i;
        i = c;
    }
    heap[i] = x;
    slots[x.slot].pos = i;
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

evq *evq_new(void)
{
    evq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->free_head = NO_SLOT;
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
size_t evq_pending(const evq *q) { return q->n; }
void evq_stop(evq *q) { q->stopped = 1; }

evq_id evq_at(evq *q, simtime_t t, evq_handler handler, void *subject, int64_t arg)
{
    assert(handler != NULL);
    assert(t >= q->now);
    if (q->free_head == NO_SLOT && grow(q) != 0) return 0;
    uint32_t s = q->free_head;
    slot *x = &q->slots[s];
    q->free_head = x->next_free;
    x->handler = handler;
    x->subject = subject;
    x->arg = arg;
    x->gen++;
    q->heap[q->n] = (hent) { t, q->seq++, s };
    x->pos = q->n++;
    sift_up(q, x->pos);
    return ((evq_id) x->gen << 32) | ((evq_id) s + 1);
}

evq_id evq_after(evq *q, simtime_t dt, evq_handler handler, void *subject, int64_t arg)
{
    assert(dt >= 0);
    return evq_at(q, q->now + dt, handler, subject, arg);
}

/* Takes the event at heap position I out of the heap and frees its slot. */
static void remove_at(evq *q, uint32_t i)
{
    uint32_t s = q->heap[i].slot;
    q->n--;
    if (i != q->n) {
        q->heap[i] = q->heap[q->n];
        uint32_t moved = q->heap[i].slot;
        sift_down(q, i);
        if (i > 0) sift_up(q, q->slots[moved].pos);
    }
    q->slots[s].handler = NULL;
    q->slots[s].next_free = q->free_head;
    q->free_head = s;
}

int evq_cancel(evq *q, evq_id id)
{
    if (id == 0) return 0;
    uint32_t s = (uint32_t) (id & 0xffffffffu) - 1;
    uint32_t gen = (uint32_t) (id >> 32);
    if (s >= q->nslots) return 0;
    slot *x = &q->slots[s];
    if (x->handler == NULL || x->gen != gen) return 0;
    remove_at(q, x->pos);
    return 1;
}

uint64_t evq_run(evq *q, simtime_t until)
{
    uint64_t ran = 0;
    q->stopped = 0;
    while (q->n > 0 && !q->stopped) {
        if (q->heap[0].t > until) break;
        slot *x = &q->slots[q->heap[0].slot];
        evq_handler h = x->handler;
        void *subject = x->subject;
        int64_t arg = x->arg;
        assert(q->heap[0].t >= q->now);
        q->now = q->heap[0].t;
        remove_at(q, 0);
        q->events++;
        ran++;
        h(q, subject, arg);
    }
    return ran;
}
