/* breakdown.h -- where requests spend their time: the mean share of network,
 * queueing, service and overhead in each request's end-to-end latency, over
 * all requests and over the slowest ones (at or above a percentile of e2e).
 *
 * Each request adds its e2e and its four components (which sum to e2e).  Shares
 * are accumulated per e2e bin (64 bins per octave, so a bin spans at most 1.6 %
 * of e2e), which is what lets the share of "the requests at or above the P99"
 * be read once the P99 is known, in constant memory: the bins from the P99's
 * own bin up are counted, so the set includes requests up to 1.6 % faster than
 * the P99.  Requests with e2e below BD_MIN_MS (about 1 ns) have no shares and
 * are not counted.
 */
#ifndef LATSIM_BREAKDOWN_H
#define LATSIM_BREAKDOWN_H

#include <stdint.h>

/* BD_KV_TRANSFER: a prompt's KV crossing from a prefill pool to a decode pool;
 * BD_KV_LOAD: KV loaded back from offload tiers; both carved out of service. */
enum { BD_NETWORK, BD_QUEUE, BD_SERVICE, BD_OVERHEAD, BD_KV_TRANSFER, BD_KV_LOAD, BD_N };

#define BD_MIN_MS 0x1p-20

typedef struct bd_acc bd_acc;

bd_acc *bd_new(void);                    /* NULL when out of memory */
void bd_free(bd_acc *b);
void bd_reset(bd_acc *b);

/* Adds one request: E2E ms and its components C[BD_N] ms (each >= 0). */
void bd_add(bd_acc *b, double e2e, const double c[BD_N]);

/* bd_add with no network or overhead time (a topology without gateways):
 * E2E ms made of QUEUE and SERVICE ms.  The same sums as bd_add. */
void bd_add_qs(bd_acc *b, double e2e, double queue, double service);

/* Mean shares over the requests whose e2e bin is at or above that of FROM ms
 * (FROM <= 0: all requests) into OUT[BD_N] (each in [0, 1], summing to 1 when
 * any request counts, all 0 otherwise).  Returns the number of requests counted. */
uint64_t bd_shares(const bd_acc *b, double from, double out[BD_N]);

/* The names of the components as reported ("network", "queue", "service", "overhead", "kv_transfer", "kv_load"). */
const char *bd_name(int component);

#endif
