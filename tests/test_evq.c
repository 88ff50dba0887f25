/* test_evq.c -- the event calendar: order, ties, cancel, and exact time. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include "engine/evq.h"

typedef struct log_t {
    int n;
    int64_t order[64];
    simtime_t when[64];
} log_t;

static void record(evq *q, void *subject, int64_t arg)
{
    log_t *l = subject;
    l->order[l->n] = arg;
    l->when[l->n] = evq_now(q);
    l->n++;
}

Test(evq, runs_in_time_order_and_ties_in_insertion_order)
{
    evq *q = evq_new();
    log_t l = { 0 };
    evq_at(q, 30, record, &l, 0);
    evq_at(q, 10, record, &l, 1);
    evq_at(q, 20, record, &l, 2);
    evq_at(q, 10, record, &l, 3);    /* same time as 1, scheduled later: runs after it */
    evq_at(q, 10, record, &l, 4);
    cr_assert_eq(evq_run(q, SIMTIME_NEVER), 5);
    int64_t want[] = { 1, 3, 4, 2, 0 };
    for (int i = 0; i < 5; i++) cr_assert_eq(l.order[i], want[i], "position %d", i);
    cr_assert_eq(evq_now(q), 30);
    cr_assert_eq(evq_events(q), 5);
    evq_free(q);
}

Test(evq, cancel_removes_only_that_event_and_stale_handles_are_harmless)
{
    evq *q = evq_new();
    log_t l = { 0 };
    evq_id a = evq_at(q, 5, record, &l, 0);
    evq_id b = evq_at(q, 6, record, &l, 1);
    evq_at(q, 7, record, &l, 2);
    cr_assert_eq(evq_cancel(q, b), 1);
    cr_assert_eq(evq_cancel(q, b), 0);          /* already cancelled */
    cr_assert_eq(evq_pending(q), 2);
    evq_run(q, SIMTIME_NEVER);
    cr_assert_eq(l.n, 2);
    cr_assert_eq(l.order[0], 0);
    cr_assert_eq(l.order[1], 2);
    /* a's slot is reused by a new event: the old handle must not cancel it. */
    evq_id c = evq_at(q, 9, record, &l, 3);
    cr_assert_eq(evq_cancel(q, a), 0);
    cr_assert_eq(evq_pending(q), 1);
    cr_assert_eq(evq_cancel(q, 0), 0);
    cr_assert_neq(c, a);
    evq_free(q);
}

/* Random schedule/cancel mix against a brute-force model: the popped sequence
 * must be sorted by (time, insertion order) and contain exactly the survivors. */
static int64_t last_t, last_seq, popped;
static int ordered = 1;
static void check_order(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    if (evq_now(q) < last_t || (evq_now(q) == last_t && arg < last_seq)) ordered = 0;
    last_t = evq_now(q);
    last_seq = arg;
    popped++;
}

Test(evq, random_mix_with_cancels_keeps_heap_order)
{
    evq *q = evq_new();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    enum { N = 20000 };
    static evq_id ids[N];
    int cancelled = 0;
    for (int i = 0; i < N; i++) {
        ids[i] = evq_at(q, (simtime_t) gsl_rng_uniform_int(r, 1000), check_order, NULL, i);
        if (i > 10 && gsl_rng_uniform(r) < 0.3) {
            unsigned long k = gsl_rng_uniform_int(r, (unsigned long) i);
            cancelled += evq_cancel(q, ids[k]);
        }
    }
    cr_assert_eq(evq_pending(q), (size_t) (N - cancelled));
    evq_run(q, SIMTIME_NEVER);
    cr_assert(ordered, "events ran out of (time, sequence) order");
    cr_assert_eq(popped, N - cancelled);
    gsl_rng_free(r);
    evq_free(q);
}

/* Time is an integer count of ns: 10^7 steps of 0.1 ms land exactly on 10^3 s.
 * (Accumulating 1e-4 s in a double 10^7 times drifts by about 1e-6 s.) */
static void tick(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    if (arg > 1) evq_after(q, simtime_from_ms(0.1), tick, NULL, arg - 1);
}

Test(evq, no_drift)
{
    evq *q = evq_new();
    evq_at(q, simtime_from_ms(0.1), tick, NULL, 10000000);
    evq_run(q, SIMTIME_NEVER);
    cr_assert_eq(evq_now(q), (simtime_t) 1000000000000LL);
    cr_assert_eq(evq_events(q), 10000000);
    double t = 0;
    for (int i = 0; i < 10000000; i++) t += 1e-4;
    cr_assert_neq(t, 1000.0, "the double sum should drift (this is why time is integer)");
    evq_free(q);
}

Test(evq, run_until_stops_before_later_events)
{
    evq *q = evq_new();
    log_t l = { 0 };
    evq_at(q, 10, record, &l, 0);
    evq_at(q, 20, record, &l, 1);
    cr_assert_eq(evq_run(q, 15), 1);
    cr_assert_eq(evq_pending(q), 1);
    cr_assert_eq(evq_run(q, SIMTIME_NEVER), 1);
    evq_free(q);
}

/* Cancelling most events triggers compaction: order and counts must survive it. */
Test(evq, heavy_cancelling_compacts_and_keeps_order)
{
    evq *q = evq_new();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    enum { N = 50000 };
    static evq_id ids[N];
    last_t = 0; last_seq = 0; popped = 0; ordered = 1;
    int cancelled = 0;
    for (int i = 0; i < N; i++) {
        ids[i] = evq_at(q, (simtime_t) gsl_rng_uniform_int(r, 100000), check_order, NULL, i);
        if (i % 10 != 0) cancelled += evq_cancel(q, ids[i]);     /* keep one in ten */
    }
    cr_assert_eq(cancelled, N - N / 10);
    cr_assert_eq(evq_pending(q), (size_t) (N / 10));
    for (int i = 0; i < N; i += 10) cr_assert_eq(evq_cancel(q, ids[i + 1]), 0);   /* stale: no effect */
    evq_run(q, SIMTIME_NEVER);
    cr_assert(ordered);
    cr_assert_eq(popped, N / 10);
    gsl_rng_free(r);
    evq_free(q);
}
