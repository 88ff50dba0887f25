/* seqrec.c -- an LLM pool's sequence records (seqrec.h): a free list refilled
 * a slab at a time, the slabs freed together with the pool. */
#include <stdlib.h>
#include "llm/seqrec.h"

#define SEQ_SLAB 256

struct llm_seq_slab {
    llm_seq_slab *next;       /* older slab */
    llm_seq s[SEQ_SLAB];      /* the records */
};

llm_seq *llm_seq_attach(llm_seq_pool *p, request *r)
{
    if (!p->free) {
        llm_seq_slab *b = malloc(sizeof *b);
        if (!b) {
            r->scratch = NULL;
            return NULL;
        }
        b->next = p->slabs;
        p->slabs = b;
        for (int i = 0; i < SEQ_SLAB; i++) {
            b->s[i].free_next = p->free;
            p->free = &b->s[i];
        }
    }
    llm_seq *q = p->free;
    p->free = q->free_next;
    *q = (llm_seq) { .req = r, .pfx.seen = (r->marks & LLM_MARK_PFX_SEEN) != 0,
                     .lora.waited = (r->marks & LLM_MARK_LORA_WAITED) != 0 };
    r->scratch = q;
    return q;
}

void llm_seq_detach(llm_seq_pool *p, request *r)
{
    llm_seq *q = r->scratch;
    if (!q) return;
    r->emitted = q->generated;
    r->marks = (uint8_t) ((q->pfx.seen ? LLM_MARK_PFX_SEEN : 0) | (q->lora.waited ? LLM_MARK_LORA_WAITED : 0));
    free(q->pfx.h);   /* NULL: a sequence gives its content blocks back before it leaves */
    q->free_next = p->free;
    p->free = q;
    r->scratch = NULL;
}

void llm_seq_pool_free(llm_seq_pool *p)
{
    while (p->slabs) {
        llm_seq_slab *n = p->slabs->next;
        free(p->slabs);
        p->slabs = n;
    }
    p->free = NULL;
}
