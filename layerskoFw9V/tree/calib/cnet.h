/* cnet.h -- network hop timing: a TCP echo server, round trips to it, and the
 * cost of encoding a chat request as JSON (jansson) or as compact binary.
 *
 * Frames are a 4-byte big-endian length followed by the payload; the echo server
 * sends each frame back unchanged.  cnet_measure() times round trips of payloads
 * of the given sizes on one connection (TCP_NODELAY) and keeps percentiles;
 * the caller fits latency = base + bytes / bandwidth to the medians.
 */
#ifndef LATSIM_CNET_H
#define LATSIM_CNET_H

#include <stddef.h>

/* Serves echo frames on the listening socket FD until a connection ends with an
 * error or *STOP becomes non-zero between connections; connections one at a time.
 * Returns 0 (never on its own while connections keep coming). */
int cnet_serve(int fd, volatile int *stop);

/* Opens a listening socket on HOST (e.g. "127.0.0.1") and PORT (0: any free);
 * returns the socket with *BOUND set to its port, or -1 + ERR. */
int cnet_listen(const char *host, int port, int *bound, char *err, size_t errlen);

typedef struct cnet_rtt {
    size_t bytes;            /* payload size */
    int n;                   /* round trips timed */
    double p50, p90, p99;    /* round-trip time percentiles, ms */
    double mean;             /* mean, ms */
} cnet_rtt;

/* Connects to HOST:PORT and times REPEATS round trips (after 5 warm-up ones) for
 * each of SIZES[0..NS-1] into OUT.  Returns 0, or -1 + ERR (cannot connect, the
 * peer closed, a short echo). */
int cnet_measure(const char *host, int port, const size_t *sizes, int ns, int repeats, cnet_rtt *out,
                 char *err, size_t errlen);

typedef struct cnet_codec {
    double json_encode_us;   /* per request, microseconds */
    double json_decode_us;
    double bin_encode_us;
    double bin_decode_us;
    size_t json_bytes;       /* encoded sizes */
    size_t bin_bytes;
} cnet_codec;

/* Times encoding and decoding of a chat request with a prompt of PROMPT_CHARS
 * characters, ITERS times each way.  Returns 0, or -1 + ERR. */
int cnet_codec_time(size_t prompt_chars, int iters, cnet_codec *out, char *err, size_t errlen);

/* Registers the loader of stored network fits with the simulator (hop =
 * measured(ID), gateway/hop.h).  Call once before loading scenarios. */
void cnet_register(void);

#endif
