/* hop.h -- the network hop station (`kind = net`): a request crossing a
 * network link to the station at its out-edge, and its answer coming back.
 *
 * On entering, a request draws its hop times (net.h) from the station's stream;
 * it reaches the next station after the request direction (network + protocol
 * encoding), and the way back is added to what its first token and its last
 * byte still need to reach the client (request.ret_first_ns, ret_last_ns).  A
 * plain hop has no queue: links are not shared between requests (at LLM payload
 * sizes a link is far from busy).  With its connection keys (conn.h) a request
 * first takes a connection (opening one costs handshakes; a pooled HTTP/1.1
 * connection carries one request at a time, the others wait in the hop's
 * queue) and holds it until its answer has come back across the hop
 * (station_ops.ended tells it when the request leaves the system).  Network time counts in the request's network
 * component, protocol encoding and decoding in its overhead.  A hop that does
 * not stream (stream = no) marks the request's answer whole (request.whole):
 * the client sees its first token only with the last byte.  The hop's reported
 * network_ms_mean counts the way back as drawn on entering (a result-cache
 * hit's longer whole-answer way back counts in the request's components only).
 */
#ifndef LATSIM_HOP_H
#define LATSIM_HOP_H

#include "core/kind.h"
#include "gateway/net.h"
#include "core/station.h"

/* The kind's row: `kind = net`. */
extern const station_kind hop_kind;

/* A measured link (hop = measured(ID)): the fit `latsim calib net` stored as
 * ID.  The echo round trip of B bytes each way took base_ms + ms_per_mb x
 * B / 1e6 at the median; p50_ms and p99_ms are the round-trip percentiles of
 * its smallest payload (NAN when not stored). */
typedef struct hop_measured {
    double base_ms;           /* median round trip at no payload, ms */
    double ms_per_mb;         /* round-trip growth per MB echoed, ms */
    double p50_ms, p99_ms;    /* the smallest payload's round-trip percentiles, ms (NAN: none) */
} hop_measured;

/* Loads stored network fit ID from DB into *OUT.  Returns 0, 1 when DB holds
 * no network fit ID, -1 on another error (ERR says). */
typedef int (*hop_measured_fn)(sqlite3 *db, int64_t id, hop_measured *out, char *err, size_t errlen);

/* The calibrator registers its loader here (calib/cnet.c, cnet_register): the
 * simulator reads no calibration table itself.  Without one, measured(ID) is
 * refused at its key. */
void hop_set_measured(hop_measured_fn fn);

/* R's answer leaves whole from where R is now (a result-cache hit): on every hop
 * it passed, its way back becomes that of the whole answer (all of its chunks at
 * once when the hop streams), added to its network and overhead components and
 * to ret_last_ns; the first token arrives with the last byte.  Cannot fail. */
void hop_answer_whole(request *r);

/* Creates the station for net pool CFG (cfg->ext is its net_cfg).  NULL when out of memory. */
station *hop_new(const pool_cfg *cfg, const station_env *env);

#endif
