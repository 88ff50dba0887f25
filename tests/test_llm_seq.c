/* test_llm_seq.c -- an LLM pool's sequence records (sim/llm/seqrec.h): a record
 * attached to a request comes zeroed but for the request's once-per-request
 * marks, hands the pool's output-token count and marks back to the request
 * when it leaves, and goes back to the pool's free list, which hands it out
 * again before it allocates. */
#include <criterion/criterion.h>
#include <string.h>

#include "llm/seqrec.h"

Test(llm_seq, attached_zeroed_with_the_requests_marks)
{
    llm_seq_pool p = { 0 };
    request r;
    memset(&r, 0, sizeof r);
    r.marks = LLM_MARK_LORA_WAITED;
    llm_seq *q = llm_seq_attach(&p, &r);
    cr_assert_not_null(q);
    cr_assert_eq(seq_of(&r), q, "the request points to its record");
    cr_assert_eq(q->generated, 0);
    cr_assert_eq(q->blocks, 0);
    cr_assert_null(q->pfx.h);
    cr_assert_eq(q->pfx.seen, 0, "not marked: not seen");
    cr_assert_eq(q->lora.waited, 1, "marked: waited");
    /* It leaves: what outlives the pool goes to the request. */
    q->generated = 7;
    q->pfx.seen = 1;
    q->pd.state = 2;
    llm_seq_detach(&p, &r);
    cr_assert_null(r.scratch);
    cr_assert_eq(r.emitted, 7);
    cr_assert_eq(r.marks, LLM_MARK_PFX_SEEN | LLM_MARK_LORA_WAITED);
    llm_seq_detach(&p, &r);   /* a request without a record: nothing */
    cr_assert_eq(r.emitted, 7);
    /* The same record again, zeroed (a dirty one would keep pd.state). */
    llm_seq *again = llm_seq_attach(&p, &r);
    cr_assert_eq(again, q, "the free list hands back the record just released");
    cr_assert_eq(again->generated, 0);
    cr_assert_eq(again->pd.state, 0);
    cr_assert_eq(again->pfx.seen, 1, "the mark comes back from the request");
    llm_seq_pool_free(&p);
}

/* Records come back to the list: a second wave of as many requests inside at
 * once uses exactly the records of the first (no allocation in steady state). */
Test(llm_seq, steady_state_reuses_the_records)
{
    enum { N = 1000 };   /* several slabs' worth */
    static request r[N];
    static llm_seq *first[N];
    llm_seq_pool p = { 0 };
    for (int i = 0; i < N; i++) cr_assert_not_null(first[i] = llm_seq_attach(&p, &r[i]));
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < i + 4 && j < N; j++) cr_assert_neq(first[i], first[j], "records are distinct");
    for (int i = 0; i < N; i++) llm_seq_detach(&p, &r[i]);
    int reused = 0;
    for (int i = 0; i < N; i++) {
        llm_seq *q = llm_seq_attach(&p, &r[i]);
        for (int j = 0; j < N; j++)
            if (first[j] == q) {
                reused++;
                break;
            }
    }
    cr_assert_eq(reused, N, "every record of the second wave is one of the first");
    llm_seq_pool_free(&p);
    cr_assert_null(p.slabs);
}
