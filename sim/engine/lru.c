/* lru.c -- the intrusive LRU list's whole-list check (see lru.h; the list
 * operations are inline there). */
#include "engine/lru.h"

long lru_check(const lru_list *l, lru_slots s, uint32_t max)
{
    long n = 0;
    uint32_t prev = LRU_NIL;
    for (uint32_t i = l->head; i != LRU_NIL; i = lru_next(s, i)) {
        if (lru_link_at(s, i)->prev != prev || (uint64_t) n >= max)
            return -1;
        n++;
        prev = i;
    }
    return prev == l->tail ? n : -1;
}
