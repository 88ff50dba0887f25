/* cnet.h -- network hop timing: a TCP echo server, round trips to it, and the
 * cost of encoding a chat request as JSON (jansson) or as compact binary.
 *
 * Frames are a 4-byte big-endian length followed by the payload; the echo server
 * sends each frame back unchanged.  cnet_measure() times round trips of payloads
 * of the given sizes on one connection (TCP_NODELAY) and keeps percentiles;
 * the caller fits latency = base + bytes / bandwidth to the medians
 * (calib_net_store).  Its interface is public, in calib.h.
 */
#ifndef LATSIM_CNET_H
#define LATSIM_CNET_H

#include <stddef.h>
#include "calib.h"   /* the whole module is public: declared there */

#endif
