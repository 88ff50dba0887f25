/* col_client.c -- the run collector of a [client]'s attempts (collect.h): of
 * the measured requests, the attempts sent (first ones and retries), the
 * retries, and the attempts served after their client had given up on them
 * (rows attempts, retries, wasted).  Idle without a [client] section.
 */
#include "run/collect.h"

typedef struct client {
    uint64_t attempts;        /* measured requests' attempts (first ones and retries) */
    uint64_t retries;         /* of those, retries */
    uint64_t wasted;          /* attempts served after their client had given up on them */
} client;

static int client_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) self;
    (void) err;
    (void) errlen;
    return env->sc->has_client ? 0 : COL_IDLE;
}

static void client_arrive(void *self, const request *r) { ((client *) self)->attempts += r->measured; }

static void client_retry(void *self, const request *r)
{
    client *x = self;
    x->attempts += r->measured;
    x->retries += r->measured;
}

static void client_wasted(void *self, const request *r) { ((client *) self)->wasted += r->measured; }

static int client_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    const client *x = self;
    if (sim_rows_add(&out->rows, "", "attempts", (double) x->attempts, 0) ||
        sim_rows_add(&out->rows, "", "retries", (double) x->retries, 0) ||
        sim_rows_add(&out->rows, "", "wasted", (double) x->wasted, 0))
        return -1;
    return 0;
}

const run_collector col_client = {
    .name = "client",
    .size = sizeof(client),
    .init = client_init,
    .arrive = client_arrive,
    .retry = client_retry,
    .wasted = client_wasted,
    .emit = client_emit,
};
