/* request.c -- request records, allocated in slabs and recycled through a free list. */
#include <stdlib.h>
#include <string.h>
#include "engine/request.h"

#define SLAB_RECORDS 1024

struct req_slab {
    req_slab *next;                 /* older slab */
    request r[SLAB_RECORDS];        /* the records */
};

/* Zeroes the N bytes at B (N a multiple of 8, at most 38 x 8, known when
 * compiled) with straight-line 8-byte stores, which the compiler pairs into
 * vector stores: a memset of these sizes is a `rep stos`, whose start-up costs
 * more than the stores. */
static inline void zero_words(char *b, size_t n)
{
    static const uint64_t z = 0;
#define Z(i) if ((i) * 8 < n) memcpy(b + (i) * 8, &z, 8)
    Z(0); Z(1); Z(2); Z(3); Z(4); Z(5); Z(6); Z(7); Z(8); Z(9); Z(10); Z(11); Z(12); Z(13); Z(14); Z(15);
    Z(16); Z(17); Z(18); Z(19); Z(20); Z(21); Z(22); Z(23); Z(24); Z(25); Z(26); Z(27); Z(28); Z(29); Z(30); Z(31);
    Z(32); Z(33); Z(34); Z(35); Z(36); Z(37);
#undef Z
}

#define TAIL_BYTES (REQ_TAIL_END - REQ_CORE_BYTES)
_Static_assert(REQ_CORE_BYTES % 8 == 0 && REQ_CORE_BYTES <= 32 * 8, "zero_words covers the core");
_Static_assert(TAIL_BYTES % 8 == 0 && TAIL_BYTES <= 38 * 8, "zero_words covers the tail");

request *req_alloc(req_pool *p)
{
    if (!p->free) {
        req_slab *s = calloc(1, sizeof *s);   /* zeroed whole: a tail never zeroed again reads 0 */
        if (!s) return NULL;
        s->next = p->slabs;
        p->slabs = s;
        for (int i = 0; i < SLAB_RECORDS; i++) {
            s->r[i].next = p->free;
            p->free = &s->r[i];
        }
    }
    request *r = p->free;
    p->free = r->next;
    zero_words((char *) r, REQ_CORE_BYTES);
    if (p->zero_tail) zero_words((char *) r + REQ_CORE_BYTES, TAIL_BYTES);
    r->first_token = -1;
    if (++p->live > p->peak) p->peak = p->live;
    return r;
}

void req_release(req_pool *p, request *r)
{
    r->next = p->free;
    p->free = r;
    p->live--;
}

void req_pool_free(req_pool *p)
{
    while (p->slabs) {
        req_slab *n = p->slabs->next;
        free(p->slabs);
        p->slabs = n;
    }
    p->free = NULL;
}

void req_copy_attrs(request *dst, const request *src)
{
    dst->id = src->id;
    dst->arrival = src->arrival;
    dst->measured = src->measured;
    dst->prompt = src->prompt;
    dst->output = src->output;
    dst->target = src->target;
    dst->cls = src->cls;
    dst->user = src->user;
    dst->attrs = src->attrs;
    dst->give_up_at = src->give_up_at;   /* the client's patience runs from the request's arrival */
    dst->queue_patience = src->queue_patience;
}
