/* conn.c -- handshakes, slow start and checks of a hop's connections (see conn.h). */
#include "gateway/conn.h"
#include "engine/errmsg.h"

#include <math.h>

int conn_handshake_rtts(const conn_cfg *c, int resumed)
{
    int tls = 0;
    if (c->tls != CONN_TLS_NONE) {
        if (resumed && c->resume == CONN_RESUME_0RTT) tls = 0;
        else if (resumed && c->resume == CONN_RESUME_TICKET) tls = 1;
        else tls = c->tls == CONN_TLS_13 ? 1 : 2;
    }
    return 1 + tls;
}

double conn_segments(double bytes, double mss)
{
    double s = ceil(bytes / mss);
    return s < 1 ? 1 : s;
}

int conn_rounds(double segments, double cwnd)
{
    int k = 1;
    double sent = cwnd, w = cwnd;
    while (sent < segments && k < 64) {
        w *= 2;
        sent += w;
        k++;
    }
    return k;
}

double conn_stall_ms(double bytes, double *cwnd, double mss, double rtt_ms, double mbps)
{
    if (!isfinite(*cwnd)) return 0;
    double left = conn_segments(bytes, mss), w = *cwnd, stall = 0;
    double seg_ms = mss * 8.0 / (mbps * 1000.0);          /* sending one segment, ms */
    while (left > 0) {
        double now = w < left ? w : left;
        left -= now;
        *cwnd += now;                                     /* one more segment per acknowledged segment */
        if (left > 0) {
            double gap = rtt_ms - now * seg_ms;           /* the round is sent; its ACKs are not back */
            if (gap > 0) stall += gap;
        }
        w *= 2;
    }
    return stall;
}

int conn_check(const conn_cfg *c, char *err, size_t errlen)
{
    if (c->resume != CONN_RESUME_NO && c->tls == CONN_TLS_NONE) {
        errmsg_set(err, errlen, "tls_resume: there is no TLS session to resume (tls = none)");
        return -1;
    }
    if (c->resume == CONN_RESUME_0RTT && c->tls != CONN_TLS_13) {
        errmsg_set(err, errlen, "tls_resume: 0rtt is TLS 1.3 early data (tls = 1.3), not TLS 1.2");
        return -1;
    }
    return 0;
}
