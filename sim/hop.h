/* hop.h -- the network hop station (`kind = net`): a request crossing a
 * network link to the station at its out-edge, and its answer coming back.
 *
 * On entering, a request draws its hop times (net.h) from the station's stream;
 * it reaches the next station after the request direction (network + protocol
 * encoding), and the way back is added to what its first token and its last
 * byte still need to reach the client (request.ret_first_ns, ret_last_ns).  A
 * hop has no queue: links are not shared between requests (at LLM payload sizes
 * a link is far from busy).  Network time counts in the request's network
 * component, protocol encoding and decoding in its overhead.
 */
#ifndef LATSIM_HOP_H
#define LATSIM_HOP_H

#include "kind.h"
#include "net.h"
#include "station.h"

/* The kind's row: `kind = net`. */
extern const station_kind hop_kind;

/* Creates the station for net pool CFG (cfg->ext is its net_cfg).  NULL when out of memory. */
station *hop_new(const pool_cfg *cfg, const station_env *env);

#endif
