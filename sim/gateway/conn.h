/* conn.h -- connections on a network hop (`kind = net`): what a request pays
 * before and while its bytes cross a link besides the round trip and the
 * bandwidth of net.h.
 *
 *   opening    a new connection costs handshake round trips before the request
 *              can leave: TCP 1 (SYN, SYN-ACK; the request goes with the ACK),
 *              TLS 1.3 one more, TLS 1.2 two more (RFC 8446 2; RFC 5246 7.3).
 *              A resumed session (tls_resume = ticket) needs one TLS round trip
 *              for either version (RFC 5077 3.1, RFC 8446 2.2), 0rtt none
 *              (TLS 1.3 early data, RFC 8446 2.3).
 *   slow start a new connection, or one idle longer than its retransmission
 *              timeout, sends init_cwnd_segments segments of mss_bytes
 *              (RFC 6928: 10) and doubles its window each round trip (RFC
 *              5681 3.1, 4.1): a message of S segments takes the rounds k with
 *              W (2^k - 1) >= S, and each round but the last waits for its
 *              acknowledgements (RTT less the time the round takes to send).
 *   reuse      `connection = reuse` is the link of net.h: always open, its
 *              window past every message (no handshake, no slow start);
 *              `new` opens one per request; `pool` keeps pool_size connections
 *              that close after idle_timeout_s unused.  With `http = 1.1` a
 *              connection carries one request at a time (a request finding
 *              none free waits in the hop's queue, FIFO: an M/M/c queue when
 *              the holding times are exponential); with `http = 2` up to
 *              max_streams requests share one.
 *   loss       each segment is lost with probability `loss`; each loss costs
 *              one round trip (fast retransmit) and halves the window.  On
 *              HTTP/2 the segments of every stream on the connection count
 *              (a loss stalls them all: head-of-line blocking in TCP).
 *   radio      a mobile radio sleeps after radio_idle_s without traffic and
 *              takes radio_promotion_ms to wake (RRC promotion) before the
 *              request can leave; one radio per closed-loop user (open loop:
 *              one device for the whole hop).
 *
 * The functions below are the closed forms the hop station applies; hop.c
 * keeps the connections, the queue and the radios.
 */
#ifndef LATSIM_CONN_H
#define LATSIM_CONN_H

#include <stddef.h>

typedef enum { CONN_REUSE, CONN_NEW, CONN_POOL } conn_mode;
typedef enum { CONN_TLS_NONE, CONN_TLS_12, CONN_TLS_13 } conn_tls;
typedef enum { CONN_RESUME_NO, CONN_RESUME_TICKET, CONN_RESUME_0RTT } conn_resume;

typedef struct conn_cfg {
    conn_mode mode;           /* reuse (always open), new (one per request), pool */
    int pool;                 /* pool: connections, >= 1 */
    double idle_timeout_s;    /* pool: a connection unused this long is closed, s */
    conn_tls tls;             /* TLS version on new connections */
    conn_resume resume;       /* session resumption on connections after the hop's first */
    int http2;                /* 1: HTTP/2 (streams share a connection); 0: HTTP/1.1 */
    int max_streams;          /* HTTP/2: concurrent streams per connection, >= 1 */
    double init_cwnd;         /* initial congestion window, segments (> 0) */
    double mss;               /* maximum segment size, bytes (> 0) */
    int ss_after_idle;        /* 1: the window restarts at init_cwnd after an idle retransmission timeout */
    double rto_min_ms;        /* the retransmission timeout's floor: idle restart after mean RTT + this, ms */
    double loss;              /* share of segments lost, 0..1 */
    double radio_idle_s;      /* the radio sleeps after this long without traffic, s; 0 = no radio model */
    double radio_promo_ms;    /* waking it (RRC promotion), ms */
    int active;               /* 1: anything here departs from the always-open link (hop.c keeps state) */
} conn_cfg;

/* Round trips of handshakes before a new connection carries its request:
 * TCP 1, TLS 1.3 +1, TLS 1.2 +2; RESUMED (a session to resume exists):
 * ticket +1 for either version, 0rtt +0 (TLS 1.3). */
int conn_handshake_rtts(const conn_cfg *c, int resumed);

/* Segments of a message of BYTES at MSS bytes each (at least 1). */
double conn_segments(double bytes, double mss);

/* Slow-start rounds to send SEGMENTS from a window of CWND segments (doubling
 * each round): the least k with CWND (2^k - 1) >= SEGMENTS; 1 when the window
 * holds them all. */
int conn_rounds(double segments, double cwnd);

/* The time a message of BYTES waits for acknowledgements beyond its one-way
 * transfer (RTT/2 + bytes / bandwidth), ms, when it leaves with a window of
 * *CWND segments over a link of RTT_MS and MBPS: each round but the last
 * waits max(0, RTT - its own sending time).  *CWND grows by the segments
 * sent (slow start).  0 when *CWND is infinite (a warm link). */
double conn_stall_ms(double bytes, double *cwnd, double mss, double rtt_ms, double mbps);

/* Checks C.  Returns 0, or -1 with a message naming the bad key. */
int conn_check(const conn_cfg *c, char *err, size_t errlen);

#endif
