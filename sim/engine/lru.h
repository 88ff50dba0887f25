/* lru.h -- an intrusive least-recently-used list over the slots of an array.
 *
 * The caches (llm/prefix.c, gateway/rcache.c) keep their entries in one growable
 * array and link them by slot index, so that growing the array (realloc) moves
 * nothing that a link refers to.  An entry embeds an lru_link; the list itself
 * is an lru_list (its two ends).  Every operation takes an lru_slots, which says
 * where slot I's link is: LRU_SLOTS(array, entry type, link member), made afresh
 * at each call (the array may have moved).  The functions are inline and the
 * stride and offset constants, so a call costs what hand-written links did.
 *
 * Head = most recently used, tail = least recently used (the next to evict);
 * LRU_NIL marks the ends.  An entry is on at most one list at a time; which
 * entries are on it is the caller's business (a cached prefix block, a stored
 * answer).  Nothing allocates.
 */
#ifndef LATSIM_LRU_H
#define LATSIM_LRU_H

#include <stddef.h>
#include <stdint.h>

#define LRU_NIL UINT32_MAX    /* no slot: the end of the list */

typedef struct lru_link {     /* embedded in each entry */
    uint32_t prev;            /* slot of the next more recently used entry, or LRU_NIL */
    uint32_t next;            /* slot of the next less recently used entry, or LRU_NIL */
} lru_link;

typedef struct lru_list {
    uint32_t head;            /* slot of the most recently used entry, or LRU_NIL (empty) */
    uint32_t tail;            /* slot of the least recently used entry, or LRU_NIL (empty) */
} lru_list;

/* Where the links are: slot I's link is at BASE + I * STRIDE + OFFSET. */
typedef struct lru_slots {
    void *base;               /* the array's first slot */
    size_t stride;            /* bytes per slot (sizeof the entry type) */
    size_t offset;            /* bytes from a slot's start to its lru_link */
} lru_slots;

/* The lru_slots of ARRAY, whose entries of type TYPE hold their link in MEMBER. */
#define LRU_SLOTS(array, type, member) ((lru_slots) { (array), sizeof(type), offsetof(type, member) })

/* Slot I's link. */
static inline lru_link *lru_link_at(lru_slots s, uint32_t i)
{
    return (lru_link *) ((char *) s.base + (size_t) i * s.stride + s.offset);
}

/* Makes L empty. */
static inline void lru_init(lru_list *l)
{
    l->head = l->tail = LRU_NIL;
}

static inline int lru_empty(const lru_list *l)
{
    return l->head == LRU_NIL;
}

/* Takes slot I, which is on L, off it (its own link is left as it was). */
static inline void lru_unlink(lru_list *l, lru_slots s, uint32_t i)
{
    const lru_link *x = lru_link_at(s, i);
    if (x->prev != LRU_NIL) lru_link_at(s, x->prev)->next = x->next; else l->head = x->next;
    if (x->next != LRU_NIL) lru_link_at(s, x->next)->prev = x->prev; else l->tail = x->prev;
}

/* Puts slot I, which is not on L, at its head (most recently used). */
static inline void lru_push_front(lru_list *l, lru_slots s, uint32_t i)
{
    lru_link *x = lru_link_at(s, i);
    x->prev = LRU_NIL;
    x->next = l->head;
    if (l->head != LRU_NIL) lru_link_at(s, l->head)->prev = i; else l->tail = i;
    l->head = i;
}

/* Moves slot I, which is on L, to its head (a use). */
static inline void lru_touch(lru_list *l, lru_slots s, uint32_t i)
{
    lru_unlink(l, s, i);
    lru_push_front(l, s, i);
}

/* The slot after I (the next less recently used one), LRU_NIL after the tail:
 * for (i = l->head; i != LRU_NIL; i = lru_next(s, i)) walks the list. */
static inline uint32_t lru_next(lru_slots s, uint32_t i)
{
    return lru_link_at(s, i)->next;
}

/* Whole-list check for assert(): walks L from its head and returns how many
 * entries it holds, or -1 when the list is broken: a prev link that does not
 * point back, more than MAX entries (a cycle, or more than the caller has), or
 * a tail that is not the last entry.  O(entries). */
long lru_check(const lru_list *l, lru_slots s, uint32_t max);

#endif
