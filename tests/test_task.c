/* test_task.c -- the simulation task unit (sim/task.[ch]): a task's result
 * survives encoding to bytes unchanged (what a worker process, or another
 * machine, sends back), and running tasks in forked workers gives exactly the
 * results of running them here, in any number of workers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store/task.h"

static char path[64];

static void setup(void)
{
    strcpy(path, "/tmp/latsim_task_XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static const char text[] =
        "[sim]\nrequests = 3000\n[workload]\nrate = 8\n[pool cpu]\nservers = 1\n"
        "service_ms = exp(mean=100)\nusd_per_hour = 0.5\n[slo]\ne2e_p99_ms = 800\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t) (sizeof text - 1));
    close(fd);
}

static void teardown(void) { unlink(path); }

TestSuite(task, .init = setup, .fini = teardown);

static void expect_same(const task_out *a, const task_out *b)
{
    cr_assert_eq(a->status, b->status);
    cr_assert_eq(a->rep.n, b->rep.n);
    cr_assert_eq(a->rep.ncdf, b->rep.ncdf);
    cr_expect_eq(a->seed, b->seed);
    cr_expect_eq(a->usd_per_hour, b->usd_per_hour);
    for (size_t i = 0; i < a->rep.n; i++) {
        const store_stat *x = &a->rep.rows[i], *y = &b->rep.rows[i];
        cr_expect_str_eq(x->scope, y->scope);
        cr_expect_str_eq(x->metric, y->metric);
        cr_expect_str_eq(x->stat, y->stat);
        if (!strcmp(x->metric, "wall_time_s")) continue;      /* the only number that is not the model's */
        cr_expect(x->value == y->value || (isnan(x->value) && isnan(y->value)), "%s %s %s: %g vs %g",
                  x->scope, x->metric, x->stat, x->value, y->value);
    }
    for (size_t i = 0; i < a->rep.ncdf; i++) {
        cr_expect_str_eq(a->rep.cdf[i].metric, b->rep.cdf[i].metric);
        cr_expect_eq(a->rep.cdf[i].value, b->rep.cdf[i].value);
    }
}

Test(task, encode_decode_round_trip)
{
    task t = { .path = path, .nsets = 1, .seed = 7 };
    t.sets[0] = "workload.rate=6";
    task_out o, back;
    cr_assert_eq(task_run(&t, NULL, &o), 0, "%s", o.err);
    cr_expect_eq(o.rate, 6);
    cr_expect_eq(o.usd_per_hour, 0.5);            /* 1 server x $0.5 */
    char *buf;
    size_t len;
    cr_assert_eq(task_out_encode(&o, &buf, &len), 0);
    cr_assert_eq(task_out_decode(buf, len, &back), 0);
    expect_same(&o, &back);
    /* A truncated message is a failure, not a crash. */
    task_out cut;
    cr_expect_eq(task_out_decode(buf, len / 2, &cut), -1);
    cr_expect_eq(cut.status, 1);
    task_out_free(&cut);
    free(buf);
    task_out_free(&o);
    task_out_free(&back);
}

Test(task, workers_give_the_results_of_one_process)
{
    enum { N = 5 };
    task ts[N];
    char sets[N][32];
    for (int i = 0; i < N; i++) {
        memset(&ts[i], 0, sizeof ts[i]);
        ts[i].path = path;
        snprintf(sets[i], sizeof sets[i], "workload.rate=%d", 2 + i);
        ts[i].sets[0] = sets[i];
        ts[i].nsets = 1;
        ts[i].seed = 3;
    }
    task_out one[N], two[N];
    cr_assert_eq(task_run_all(ts, N, 1, NULL, one, NULL, NULL), 0);
    cr_assert_eq(task_run_all(ts, N, 3, NULL, two, NULL, NULL), 0);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(one[i].status, 0, "%s", one[i].err);
        expect_same(&one[i], &two[i]);
        cr_expect_eq(two[i].rate, 2 + i, "task %d came back in its own slot", i);
        task_out_free(&one[i]);
        task_out_free(&two[i]);
    }
    /* Bad input in one task is that task's status 2, with its message. */
    task bad = { .path = path, .nsets = 1 };
    bad.sets[0] = "workload.rat=3";
    task_out o[2];
    task two_tasks[2] = { bad, ts[0] };
    cr_assert_eq(task_run_all(two_tasks, 2, 2, NULL, o, NULL, NULL), 0);
    cr_expect_eq(o[0].status, 2);
    cr_expect(strstr(o[0].err, "[workload] rat: unknown key") != NULL, "%s", o[0].err);
    cr_expect_eq(o[1].status, 0);
    task_out_free(&o[0]);
    task_out_free(&o[1]);
}
