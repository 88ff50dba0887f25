/* request.c -- request records, allocated in slabs and recycled through a free list. */
#include <stdlib.h>
#include <string.h>
#include "request.h"

#define SLAB_RECORDS 1024

struct req_slab {
    req_slab *next;                 /* older slab */
    request r[SLAB_RECORDS];        /* the records */
};

request *req_alloc(req_pool *p)
{
    if (!p->free) {
        req_slab *s = malloc(sizeof *s);
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
    memset(r, 0, sizeof *r);
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
    dst->hash_ids = src->hash_ids;
    dst->nhash = src->nhash;
    dst->intent = src->intent;
    dst->complexity = src->complexity;
    dst->scored = src->scored;
    dst->cache_ttl = src->cache_ttl;
    dst->sys_tokens = src->sys_tokens;
    dst->session = src->session;
}
