/* cnet.c -- TCP echo server, round-trip timing and request codecs (see cnet.h). */
#include "cnet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cbench.h"
#include "cdb.h"
#include "gateway/hop.h"
#include "engine/errmsg.h"

#define MAX_FRAME (64u << 20)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int full_io(int fd, void *buf, size_t n, int wr)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = wr ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int cnet_listen(const char *host, int port, int *bound, char *err, size_t errlen)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        errmsg_set(err, errlen, "'%s' is not an IPv4 address", host);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0) {
        errmsg_set(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        errmsg_set(err, errlen, "cannot listen on %s:%d: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

int cnet_serve(int fd, volatile int *stop)
{
    char *buf = malloc(MAX_FRAME);
    if (!buf) return -1;
    while (!*stop) {
        int c = accept(fd, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        for (;;) {
            uint32_t be;
            if (full_io(c, &be, 4, 0) != 0) break;
            uint32_t n = ntohl(be);
            if (n > MAX_FRAME || full_io(c, buf, n, 0) != 0) break;
            if (full_io(c, &be, 4, 1) != 0 || full_io(c, buf, n, 1) != 0) break;
        }
        close(c);
    }
    free(buf);
    return 0;
}

int cnet_measure(const char *host, int port, const size_t *sizes, int ns, int repeats, cnet_rtt *out,
                 char *err, size_t errlen)
{
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    int g = getaddrinfo(host, ps, &hints, &ai);
    if (g != 0) {
        errmsg_set(err, errlen, "calib net: cannot resolve %s: %s", host, gai_strerror(g));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *p = ai; p && fd < 0; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype, p->ai_protocol);
        if (fd >= 0 && connect(fd, p->ai_addr, p->ai_addrlen) != 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        errmsg_set(err, errlen, "calib net: cannot connect to %s:%d: %s", host, port, strerror(e ? e : ECONNREFUSED));
        return -1;
    }
    int one = 1, rc = -1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    size_t maxb = 0;
    for (int i = 0; i < ns; i++) if (sizes[i] > maxb) maxb = sizes[i];
    char *buf = malloc(maxb + 1), *back = malloc(maxb + 1);
    double *t = malloc((size_t)(repeats > 0 ? repeats : 1) * sizeof *t);
    if (!buf || !back || !t) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < maxb; i++) buf[i] = (char)('a' + i % 26);
    for (int s = 0; s < ns; s++) {
        size_t n = sizes[s];
        uint32_t be = htonl((uint32_t)n), rb;
        for (int r = -5; r < repeats; r++) {
            double t0 = now_ms();
            if (full_io(fd, &be, 4, 1) || full_io(fd, buf, n, 1) || full_io(fd, &rb, 4, 0) || ntohl(rb) != n ||
                full_io(fd, back, n, 0)) {
                errmsg_set(err, errlen, "calib net: %s:%d closed the connection or sent a short echo", host, port);
                goto done;
            }
            if (r >= 0) t[r] = now_ms() - t0;
        }
        if (memcmp(buf, back, n) != 0) {
            errmsg_set(err, errlen, "calib net: %s:%d echoed different bytes (not an echo server?)", host, port);
            goto done;
        }
        cnet_rtt *o = &out[s];
        o->bytes = n;
        o->n = repeats;
        o->mean = 0;
        for (int r = 0; r < repeats; r++) o->mean += t[r] / repeats;
        cb_median(t, repeats);   /* sorts */
        o->p50 = t[(int)(0.50 * (repeats - 1))];
        o->p90 = t[(int)(0.90 * (repeats - 1))];
        o->p99 = t[(int)(0.99 * (repeats - 1))];
    }
    rc = 0;
done:
    free(buf);
    free(back);
    free(t);
    close(fd);
    return rc;
}

/* The compact binary form: u32 max_tokens, f32 temperature, u8 stream, then
 * length-prefixed (u32) model, role and content. */
typedef struct chat_req {
    const char *model, *role, *content;   /* strings (borrowed) */
    size_t model_n, role_n, content_n;    /* their lengths */
    uint32_t max_tokens;                   /* output limit */
    float temperature;                     /* sampling temperature */
    uint8_t stream;                        /* 1: stream tokens */
} chat_req;

static size_t bin_encode(const chat_req *q, char *out)
{
    char *p = out;
    memcpy(p, &q->max_tokens, 4); p += 4;
    memcpy(p, &q->temperature, 4); p += 4;
    *p++ = (char)q->stream;
    const char *s[3] = { q->model, q->role, q->content };
    size_t n[3] = { q->model_n, q->role_n, q->content_n };
    for (int i = 0; i < 3; i++) {
        uint32_t k = (uint32_t)n[i];
        memcpy(p, &k, 4); p += 4;
        memcpy(p, s[i], n[i]); p += n[i];
    }
    return (size_t)(p - out);
}

static int bin_decode(const char *in, size_t len, chat_req *q)
{
    const char *p = in, *end = in + len;
    if (len < 9) return -1;
    memcpy(&q->max_tokens, p, 4); p += 4;
    memcpy(&q->temperature, p, 4); p += 4;
    q->stream = (uint8_t)*p++;
    const char **s[3] = { &q->model, &q->role, &q->content };
    size_t *n[3] = { &q->model_n, &q->role_n, &q->content_n };
    for (int i = 0; i < 3; i++) {
        uint32_t k;
        if (end - p < 4) return -1;
        memcpy(&k, p, 4); p += 4;
        if ((size_t)(end - p) < k) return -1;
        *s[i] = p;
        *n[i] = k;
        p += k;
    }
    return 0;
}

int cnet_codec_time(size_t prompt_chars, int iters, cnet_codec *out, char *err, size_t errlen)
{
    char *content = malloc(prompt_chars + 1), *bin = malloc(prompt_chars + 256);
    if (!content || !bin) {
        free(content);
        free(bin);
        errmsg_set(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < prompt_chars; i++) content[i] = "Summarise the following text. "[i % 30];
    content[prompt_chars] = '\0';
    chat_req q = { "llama-3-8b", "user", content, 10, 4, prompt_chars, 256, 0.7f, 1 };
    int rc = -1;
    double t0 = now_ms();
    char *js = NULL;
    for (int i = 0; i < iters; i++) {
        json_t *msg = json_pack("{s:s, s:s#}", "role", q.role, "content", q.content, q.content_n);
        json_t *o = json_pack("{s:s, s:[o], s:i, s:f, s:b}", "model", q.model, "messages", msg, "max_tokens",
                              (int)q.max_tokens, "temperature", (double)q.temperature, "stream", q.stream);
        free(js);
        js = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!js) { errmsg_set(err, errlen, "calib net: JSON encoding failed"); goto done; }
    }
    double t1 = now_ms();
    size_t total = 0;
    for (int i = 0; i < iters; i++) {
        json_error_t je;
        json_t *o = json_loads(js, 0, &je);
        const char *model = NULL, *content2 = NULL;
        json_int_t mt = 0;
        if (!o || json_unpack(o, "{s:s, s:[{s:s}], s:I}", "model", &model, "messages", "content", &content2,
                              "max_tokens", &mt) != 0) {
            json_decref(o);
            errmsg_set(err, errlen, "calib net: JSON decoding failed");
            goto done;
        }
        total += strlen(content2) + (size_t)mt;
        json_decref(o);
    }
    double t2 = now_ms();
    size_t blen = 0;
    for (int i = 0; i < iters; i++) blen = bin_encode(&q, bin);
    double t3 = now_ms();
    for (int i = 0; i < iters; i++) {
        chat_req d;
        if (bin_decode(bin, blen, &d) != 0) { errmsg_set(err, errlen, "calib net: binary decoding failed"); goto done; }
        total += d.content_n + d.max_tokens;
    }
    double t4 = now_ms();
    out->json_encode_us = (t1 - t0) * 1e3 / iters;
    out->json_decode_us = (t2 - t1) * 1e3 / iters;
    out->bin_encode_us = (t3 - t2) * 1e3 / iters;
    out->bin_decode_us = (t4 - t3) * 1e3 / iters;
    out->json_bytes = strlen(js);
    out->bin_bytes = blen;
    rc = total > 0 ? 0 : -1;
done:
    free(js);
    free(content);
    free(bin);
    return rc;
}

/* The RTT percentiles `calib net` stored for the smallest payload of fit ID:
 * *P50 and *P99 (ms).  Returns 0, or -1 when they are not there. */
static int smallest_rtt(sqlite3 *db, int64_t id, double *p50, double *p99)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db,
            "SELECT max(CASE WHEN m.name = 'p50' THEN m.time_ms END), max(CASE WHEN m.name = 'p99' THEN m.time_ms END)"
            " FROM calib_meas m WHERE m.source = 'net' AND m.what = 'rtt' AND m.id >= (SELECT fm.meas_id FROM"
            " calib_fit_meas fm JOIN calib_meas b ON b.id = fm.meas_id WHERE fm.fit_id = ?1 ORDER BY b.bytes LIMIT 1)"
            " AND m.id < 3 + (SELECT fm.meas_id FROM calib_fit_meas fm JOIN calib_meas b ON b.id = fm.meas_id"
            " WHERE fm.fit_id = ?1 ORDER BY b.bytes LIMIT 1)", -1, &st, NULL) != SQLITE_OK) goto out;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
        && sqlite3_column_type(st, 1) != SQLITE_NULL) {
        *p50 = sqlite3_column_double(st, 0);
        *p99 = sqlite3_column_double(st, 1);
        rc = 0;
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* The loader of stored network fits (gateway/hop.h, hop_measured_fn). */
static int measured(sqlite3 *db, int64_t id, hop_measured *out, char *err, size_t errlen)
{
    cdb_fit f;
    int s = cdb_load_fit(db, id, &f, err, errlen);
    if (s != 0) return s;
    if (strcmp(f.kind, "net") != 0) return 1;
    out->base_ms = out->ms_per_mb = NAN;
    for (int i = 0; i < f.ncoef; i++) {
        if (!strcmp(f.coef[i].name, "base_ms")) out->base_ms = f.coef[i].value;
        if (!strcmp(f.coef[i].name, "ms_per_mb")) out->ms_per_mb = f.coef[i].value;
    }
    if (smallest_rtt(db, id, &out->p50_ms, &out->p99_ms) != 0) out->p50_ms = out->p99_ms = NAN;
    return 0;
}

void cnet_register(void) { hop_set_measured(measured); }
