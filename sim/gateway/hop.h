/* hop.h -- the network hop station (`kind = net`): a request crossing a
 * network link to the station at its out-edge, and its answer coming back.
 *
 * On entering, a request draws its hop times (net.h) from the station's stream;
 * it reaches the next station after the request direction (network + protocol
 * encoding), and the way back is added to what its first token and its last
 * byte still need to reach the client (request.ret_first_ns, ret_last_ns).  A
 * hop has no queue: links are not shared between requests (at LLM payload sizes
 * a link is far from busy).  Network time counts in the request's network
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

/* R's answer leaves whole from where R is now (a result-cache hit): on every hop
 * it passed, its way back becomes that of the whole answer (all of its chunks at
 * once when the hop streams), added to its network and overhead components and
 * to ret_last_ns; the first token arrives with the last byte.  Cannot fail. */
void hop_answer_whole(request *r);

/* Creates the station for net pool CFG (cfg->ext is its net_cfg).  NULL when out of memory. */
station *hop_new(const pool_cfg *cfg, const station_env *env);

#endif
