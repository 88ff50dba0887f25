/* test_speed.c -- the fast paths of the engine keep its results: the event
 * calendar (4-ary heap, the running event's hole, sequence renumbering) against
 * a brute-force model. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdlib.h>
#include "evq.h"

/* ---- the event calendar against a model -------------------------------------- */

/* The model: every event ever scheduled, with its time, scheduling order and
 * state.  An event that runs must be the earliest pending one by (time, order). */
enum { MAXEV = 60000 };

typedef struct mev {
    simtime_t t;              /* scheduled time, ns */
    evq_id id;                /* the calendar's handle */
    int state;                /* 0 pending, 1 ran, 2 cancelled */
} mev;

typedef struct model {
    mev ev[MAXEV];            /* by scheduling order */
    int n;                    /* scheduled so far */
    int ran;                  /* events run */
    int bad;                  /* events that ran out of order */
    gsl_rng *rng;
    int budget;               /* events handlers may still schedule */
} model;

static model M;

static void handler(evq *q, void *subject, int64_t arg);

static void schedule(evq *q, simtime_t t)
{
    cr_assert_lt(M.n, MAXEV);
    int k = M.n++;
    M.ev[k] = (mev) { t, 0, 0 };
    M.ev[k].id = evq_at(q, t, handler, &M, k);
    cr_assert_neq(M.ev[k].id, 0);
}

static void cancel_some(evq *q, int tries)
{
    for (int i = 0; i < tries && M.n > 0; i++) {
        int k = (int) gsl_rng_uniform_int(M.rng, (unsigned long) M.n);
        int got = evq_cancel(q, M.ev[k].id);
        cr_assert_eq(got, M.ev[k].state == 0, "cancel of event %d (state %d) returned %d", k, M.ev[k].state, got);
        if (got) M.ev[k].state = 2;
    }
}

/* Runs event ARG: checks that no pending event comes before it, then (while the
 * budget lasts) schedules 0-3 events, some at the current time (ties with
 * events already pending), and cancels some. */
static void handler(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    int k = (int) arg;
    cr_assert_eq(M.ev[k].state, 0, "event %d ran twice or after its cancel", k);
    cr_assert_eq(evq_now(q), M.ev[k].t);
    for (int j = 0; j < M.n; j++)
        if (M.ev[j].state == 0 && j != k &&
            (M.ev[j].t < M.ev[k].t || (M.ev[j].t == M.ev[k].t && j < k))) M.bad++;
    M.ev[k].state = 1;
    M.ran++;
    if (M.budget <= 0) return;
    int add = (int) gsl_rng_uniform_int(M.rng, 4);
    for (int i = 0; i < add && M.budget > 0; i++, M.budget--)
        schedule(q, evq_now(q) + (simtime_t) gsl_rng_uniform_int(M.rng, 3) * 5);
    if (gsl_rng_uniform(M.rng) < 0.3) cancel_some(q, 3);
}

/* Schedules N events at times in [0, SPAN) (many ties), lets handlers add
 * BUDGET more and cancel some, with sequence numbers renumbered every LIMIT. */
static void run_model(uint32_t start, uint32_t limit, int n, int span, int budget, unsigned long seed)
{
    evq *q = evq_new();
    cr_assert_not_null(q);
    M.n = M.ran = M.bad = 0;
    M.budget = budget;
    M.rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(M.rng, seed);
    evq_set_seq(q, start, limit);
    for (int i = 0; i < n; i++) {
        schedule(q, (simtime_t) gsl_rng_uniform_int(M.rng, (unsigned long) span));
        if (i % 7 == 3) cancel_some(q, 1);
    }
    evq_run(q, SIMTIME_NEVER);
    int pending = 0, ran = 0;
    for (int j = 0; j < M.n; j++) {
        pending += M.ev[j].state == 0;
        ran += M.ev[j].state == 1;
    }
    cr_expect_eq(M.bad, 0, "%d events ran before an earlier pending one", M.bad);
    cr_expect_eq(pending, 0, "%d events never ran", pending);
    cr_expect_eq(ran, M.ran);
    cr_expect_eq(evq_events(q), (uint64_t) M.ran);
    cr_expect_eq(evq_pending(q), 0);
    gsl_rng_free(M.rng);
    evq_free(q);
}

Test(speed_evq, handlers_scheduling_and_cancelling_keep_time_then_scheduling_order)
{
    run_model(0, UINT32_MAX, 1000, 100, 5000, 1);
}

/* Renumbering every 50 sequence numbers, with ties everywhere: (time,
 * scheduling order) is still the order events run in. */
Test(speed_evq, sequence_renumbering_keeps_the_order_of_ties)
{
    run_model(0, 50, 1000, 20, 4000, 2);
    run_model(UINT32_MAX - 40, UINT32_MAX, 500, 5, 5000, 3);
}

/* Heavy cancelling from inside handlers compacts the heap while the running
 * event's entry is a hole: the hole is filled first, no slot is freed twice. */
static evq_id victims[4000];
static int nvictims, order_ok = 1, popped;
static simtime_t last_t;

static void victim(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    (void) arg;
    if (evq_now(q) < last_t) order_ok = 0;
    last_t = evq_now(q);
    popped++;
}

static void killer(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    (void) arg;
    for (int i = 0; i < nvictims; i++)
        if (i % 10 != 0) evq_cancel(q, victims[i]);
    /* Scheduled after the compaction: must neither reuse a slot twice nor be lost. */
    for (int i = 0; i < 100; i++) evq_at(q, evq_now(q) + 1 + i, victim, NULL, 0);
}

Test(speed_evq, compaction_inside_a_handler)
{
    evq *q = evq_new();
    evq_at(q, 1, killer, NULL, 0);
    nvictims = 4000;
    for (int i = 0; i < nvictims; i++) victims[i] = evq_at(q, 10 + i, victim, NULL, 0);
    cr_assert_eq(evq_run(q, SIMTIME_NEVER), 1 + 400 + 100);
    cr_assert(order_ok);
    cr_assert_eq(popped, 500);
    cr_assert_eq(evq_pending(q), 0);
    evq_free(q);
}
