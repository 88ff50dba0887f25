/* test_lru.c -- the intrusive LRU list (engine/lru.h): order after pushes,
 * touches and unlinks checked against a plain array kept in recency order, links
 * surviving the slot array's realloc, and lru_check catching broken lists. */
#include <criterion/criterion.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lru.h"

typedef struct slot {         /* an entry as a cache keeps it: data around the link */
    uint64_t key;
    lru_link lru;
    uint32_t on;              /* 1 while on the list */
} slot;

#define LINKS(a) LRU_SLOTS(a, slot, lru)

/* The list from head to tail as slot numbers into OUT; returns how many. */
static size_t walk(const lru_list *l, slot *a, uint32_t *out, size_t max)
{
    size_t n = 0;
    for (uint32_t i = l->head; i != LRU_NIL && n < max; i = lru_next(LINKS(a), i))
        out[n++] = i;
    return n;
}

Test(lru, empty_list)
{
    lru_list l;
    slot a[1];
    lru_init(&l);
    cr_assert(lru_empty(&l));
    cr_assert_eq(l.head, LRU_NIL);
    cr_assert_eq(l.tail, LRU_NIL);
    cr_assert_eq(lru_check(&l, LINKS(a), 0), 0);
}

Test(lru, push_touch_unlink_order)
{
    lru_list l;
    slot a[4] = { { .key = 10 }, { .key = 11 }, { .key = 12 }, { .key = 13 } };
    uint32_t o[8];
    lru_init(&l);
    for (uint32_t i = 0; i < 4; i++) lru_push_front(&l, LINKS(a), i);
    cr_assert_eq(walk(&l, a, o, 8), 4);
    cr_assert(o[0] == 3 && o[1] == 2 && o[2] == 1 && o[3] == 0, "%u %u %u %u", o[0], o[1], o[2], o[3]);
    cr_assert_eq(l.tail, 0);
    lru_touch(&l, LINKS(a), 0);              /* the oldest becomes the newest */
    cr_assert_eq(l.head, 0);
    cr_assert_eq(l.tail, 1);
    lru_touch(&l, LINKS(a), 0);              /* touching the head changes nothing */
    cr_assert_eq(l.head, 0);
    lru_unlink(&l, LINKS(a), 2);             /* from the middle */
    cr_assert_eq(walk(&l, a, o, 8), 3);
    cr_assert(o[0] == 0 && o[1] == 3 && o[2] == 1);
    lru_unlink(&l, LINKS(a), 1);             /* the tail */
    cr_assert_eq(l.tail, 3);
    lru_unlink(&l, LINKS(a), 0);             /* the head */
    cr_assert_eq(l.head, 3);
    cr_assert_eq(l.tail, 3);
    cr_assert_eq(lru_check(&l, LINKS(a), 4), 1);
    lru_unlink(&l, LINKS(a), 3);
    cr_assert(lru_empty(&l));
    cr_assert_eq(l.tail, LRU_NIL);
    cr_assert_eq(a[2].key, 12, "the data around a link is untouched");
}

/* 20000 random operations on 64 slots whose array is reallocated (grown) part
 * way: the list always equals a reference array kept in recency order. */
Test(lru, random_against_reference)
{
    uint32_t cap = 16, n = 64;
    slot *a = calloc(cap, sizeof *a);
    uint32_t ref[64], nref = 0, got[64];
    lru_list l;
    lru_init(&l);
    srand(7);
    for (int step = 0; step < 20000; step++) {
        uint32_t i = (uint32_t) rand() % (step < 2000 ? cap : n);
        if (i >= cap) {                       /* grow: the links are slot numbers */
            slot *b = realloc(a, n * sizeof *b);
            cr_assert_not_null(b);
            memset(b + cap, 0, (n - cap) * sizeof *b);
            a = b;
            cap = n;
        }
        uint32_t pos = 0;
        while (pos < nref && ref[pos] != i) pos++;
        if (!a[i].on) {
            lru_push_front(&l, LINKS(a), i);
            memmove(ref + 1, ref, nref++ * sizeof *ref);
            ref[0] = i;
            a[i].on = 1;
        } else if (rand() % 2) {
            lru_touch(&l, LINKS(a), i);
            memmove(ref + 1, ref, pos * sizeof *ref);
            ref[0] = i;
        } else {
            lru_unlink(&l, LINKS(a), i);
            memmove(ref + pos, ref + pos + 1, (nref - pos - 1) * sizeof *ref);
            nref--;
            a[i].on = 0;
        }
        size_t k = walk(&l, a, got, 64);
        cr_assert_eq(k, nref, "step %d: %zu on the list, %u expected", step, k, nref);
        cr_assert_eq(memcmp(got, ref, nref * sizeof *ref), 0, "step %d: order differs", step);
        cr_assert_eq(l.tail, nref ? ref[nref - 1] : LRU_NIL);
        cr_assert_eq(lru_check(&l, LINKS(a), cap), (long) nref);
    }
    free(a);
}

Test(lru, check_finds_broken_lists)
{
    lru_list l;
    slot a[3] = { { 0 } };
    lru_init(&l);
    for (uint32_t i = 0; i < 3; i++) lru_push_front(&l, LINKS(a), i);
    cr_assert_eq(lru_check(&l, LINKS(a), 3), 3);
    cr_assert_eq(lru_check(&l, LINKS(a), 2), -1, "more entries than the caller has");
    a[1].lru.prev = 0;                        /* a prev link not pointing back */
    cr_assert_eq(lru_check(&l, LINKS(a), 3), -1);
    a[1].lru.prev = 2;
    l.tail = 1;                               /* a tail that is not the last entry */
    cr_assert_eq(lru_check(&l, LINKS(a), 3), -1);
    l.tail = 0;
    a[0].lru.next = 2;                        /* a cycle */
    a[2].lru.prev = 0;
    cr_assert_eq(lru_check(&l, LINKS(a), 3), -1);
}
