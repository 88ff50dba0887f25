/* breakdown.h -- where requests spend their time: the share of network,
 * queueing, service and overhead in the mean end-to-end latency (each
 * component's mean over the mean e2e: "the share of the mean"), over all
 * requests and over the slowest ones (at or above a percentile of e2e).
 *
 * Each request adds its e2e and its four components (which sum to e2e).  The
 * sums of e2e and of each component are accumulated per e2e bin (64 bins per
 * octave, so a bin spans at most 1.6 % of e2e), which is what lets the share of
 * "the requests at or above the P99" be read once the P99 is known, in
 * constant memory: the bins from the P99's
 * own bin up are counted, so the set includes requests up to 1.6 % faster than
 * the P99.  Requests with e2e below BD_MIN_MS (about 1 ns) have no shares and
 * are not counted.
 *
 * The same accumulator, made with bd_new_n, keeps the shares of any other
 * total: the TTFT breakdown (TB_*: what a request's time to first token is
 * made of) is one of TB_N components added with bd_add_v.
 */
#ifndef LATSIM_BREAKDOWN_H
#define LATSIM_BREAKDOWN_H

#include <stdint.h>

/* BD_KV_TRANSFER: a prompt's KV crossing from a prefill pool to a decode pool;
 * BD_KV_LOAD: KV loaded back from offload tiers; both carved out of service.
 * BD_CONNECT: setting up connections on network hops (handshakes, radio
 * wake-ups, slow-start waits: carved out of network; waits for a pooled
 * connection: carved out of queue). */
enum { BD_NETWORK, BD_QUEUE, BD_SERVICE, BD_OVERHEAD, BD_KV_TRANSFER, BD_KV_LOAD, BD_CONNECT, BD_N };

#define BD_MIN_MS 0x1p-20

/* The components of a time to first token (col_breakdown.c, docs/metrics.md): network
 * on the way in and the first token's way back; waiting; service up to the
 * first token (the prefill, its KV loads and transfers apart); decoding before
 * it (an answer that reaches the client whole has its first token with its
 * last); KV transfer and KV load before it; overhead (protocol encoding,
 * gateways, classifiers, cache lookups, request overheads). */
enum { TB_NETWORK, TB_QUEUE, TB_PREFILL, TB_DECODE, TB_KV_TRANSFER, TB_KV_LOAD, TB_OVERHEAD, TB_N };

typedef struct bd_acc bd_acc;

bd_acc *bd_new(void);                    /* BD_N components; NULL when out of memory */
bd_acc *bd_new_n(int ncomp);             /* NCOMP (1 .. 16) components; NULL when out of memory */
void bd_free(bd_acc *b);
void bd_reset(bd_acc *b);

/* Adds one request: E2E ms and its components C[BD_N] ms (each >= 0); B has BD_N components. */
void bd_add(bd_acc *b, double e2e, const double c[BD_N]);

/* Adds one request to B of any number of components: TOTAL ms and its
 * components C[ncomp] ms (each >= 0, summing to TOTAL). */
void bd_add_v(bd_acc *b, double total, const double *c);

/* bd_add with no network or overhead time (a topology without gateways):
 * E2E ms made of QUEUE and SERVICE ms.  The same sums as bd_add. */
void bd_add_qs(bd_acc *b, double e2e, double queue, double service);

/* Shares of the mean over the requests whose e2e bin is at or above that of
 * FROM ms (FROM <= 0: all requests) into OUT[ncomp]: each component's sum over
 * the totals' sum (= its mean / the mean total), each in [0, 1], summing to 1
 * when any request counts, all 0 otherwise.  Returns the number of requests
 * counted. */
uint64_t bd_shares(const bd_acc *b, double from, double out[]);

/* The names of the components as reported ("network", "queue", "service", "overhead", "kv_transfer", "kv_load",
 * "connect"). */
const char *bd_name(int component);

/* The names of the TTFT components ("network", "queue", "prefill", "decode", "kv_transfer", "kv_load", "overhead"). */
const char *tb_name(int component);

#endif
