/* net.h -- the network hop model: how long a request and its answer spend on one
 * network hop (client to gateway, gateway to a model, gateway to an external API).
 *
 * A hop has a round-trip time distribution (propagation, switching: what a ping
 * measures), a bandwidth each way, and a protocol.  Per request one round-trip
 * time R is drawn; then
 *   request  (caller -> callee):  R/2 + request bytes x 8 / up bandwidth
 *   answer   (callee -> caller):  R/2 + answer bytes  x 8 / down bandwidth
 * with bytes = header_bytes + tokens x bytes_per_token (streamed answers:
 * each token travels in its own chunk of bytes_per_token + chunk_bytes).
 * Encoding and decoding the payload costs proto_ms_per_kb per 1000 payload bytes
 * (the "protocol" part of a request's overhead, kept apart from the network part).
 *
 * Streaming (stream = 1): the first token reaches the caller one hop (R/2 plus its
 * chunk) after the callee emits it, and the last byte one hop after the last token;
 * the chunks in between overlap generation (one chunk is at most a few hundred
 * bytes, far below any preset's bandwidth at LLM token rates).  Without streaming,
 * the whole answer leaves after the last token, and the first token arrives with it.
 * An answer that exists whole before it leaves (a result-cache hit) travels as
 * the whole answer in either mode (whole_*: streamed, all its chunks at once).
 *
 * Presets (same_zone ... client_broadband) fill every field from published
 * measurements (sources in net.c); any field may then be overridden.
 */
#ifndef LATSIM_NET_H
#define LATSIM_NET_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "core/dist.h"
#include "gateway/conn.h"

typedef enum { NET_REST_JSON, NET_GRPC } net_protocol;

typedef struct net_cfg {
    dist rtt_ms;              /* round-trip time, ms (owned: net_cfg_free) */
    double up_mbps;           /* bandwidth caller -> callee, Mbit/s (> 0) */
    double down_mbps;         /* bandwidth callee -> caller, Mbit/s (> 0) */
    double bytes_per_token;   /* payload bytes per token, bytes */
    double header_bytes;      /* headers and envelope per message, bytes */
    double chunk_bytes;       /* framing per streamed token chunk, bytes */
    double proto_ms_per_kb;   /* encode + decode per 1000 payload bytes, ms */
    net_protocol protocol;    /* what the protocol defaults came from */
    int stream;               /* 1 = answer streamed token by token, 0 = in one message */
    int64_t measured_id;      /* `hop = measured(ID)`: the stored `calib net` model it uses (id), 0 = none */
    conn_cfg conn;            /* connections, loss and radio (conn.h); the preset fills loss and radio_promo_ms */
    double egress_usd_per_gb; /* price of the answers' bytes crossing back, $ per 1e9 bytes (0: none) */
} net_cfg;

/* One request's times on one hop, all in ms and >= 0. */
typedef struct net_times {
    double up_net_ms;         /* request: R/2 + transfer */
    double up_proto_ms;       /* request: encode + decode */
    double first_net_ms;      /* first token: from its emission to its arrival, network part */
    double first_proto_ms;    /* first token: protocol part */
    double down_net_ms;       /* last byte: from the last token's emission, network part */
    double down_proto_ms;     /* last byte: protocol part */
    double whole_net_ms;      /* the whole answer sent at once (a result-cache hit): from its leaving to its last byte, network part */
    double whole_proto_ms;    /* the same, protocol part (equal to down_* when the hop does not stream) */
} net_times;

/* Fills C from preset NAME ("same_zone", "cross_zone", "cross_region", "client_4g",
 * "client_5g", "client_broadband", "internet_same_region", "internet_cross_region",
 * "internet_intercontinental"), with protocol rest_json and stream = 1, and the
 * preset's loss and radio promotion delay in C->conn (the rest of C->conn zero).
 * C must be zeroed or freed before.  Returns 0, or -1 (message in ERR) for an
 * unknown name or when out of memory. */
int net_preset(net_cfg *c, const char *name, char *err, size_t errlen);

/* Sets the protocol defaults of P (header_bytes, chunk_bytes, proto_ms_per_kb)
 * into C.  Returns 0, or -1 for an unknown protocol. */
int net_set_protocol(net_cfg *c, net_protocol p);

/* Parses "rest_json" / "grpc" into *P.  Returns 0, or -1 when it is neither. */
int net_protocol_parse(const char *s, net_protocol *p);
const char *net_protocol_name(net_protocol p);

/* The names of the presets, comma separated (for error messages and `latsim keys`). */
const char *net_preset_list(void);

/* Checks C's numbers.  Returns 0, or -1 with a message naming the bad field. */
int net_check(const net_cfg *c, char *err, size_t errlen);

/* Bytes of a request carrying PROMPT tokens, and of an answer of OUTPUT tokens
 * (streamed: every chunk's framing included). */
double net_request_bytes(const net_cfg *c, double prompt_tokens);
double net_answer_bytes(const net_cfg *c, double output_tokens);

/* Fills T for one request crossing the hop with round-trip time RTT_MS (what
 * net_sample does after drawing it).  Cannot fail. */
void net_times_at(const net_cfg *c, double rtt_ms, double prompt_tokens, double output_tokens,
                  net_times *t);

/* Draws one request's hop times from R (one round-trip time).  Cannot fail. */
void net_sample(const net_cfg *c, double prompt_tokens, double output_tokens,
                gsl_rng *r, net_times *t);

/* Mean total hop time (request + last byte, network + protocol) of a request of
 * these sizes, from the mean RTT: what net_sample gives on average. */
double net_mean_ms(const net_cfg *c, double prompt_tokens, double output_tokens);

/* Releases the RTT distribution (safe on a zeroed net_cfg). */
void net_cfg_free(net_cfg *c);

#endif
