/* breakdown.c -- per-e2e-bin sums of latency shares (see breakdown.h).
 *
 * Bin of a value v >= BD_MIN_MS: with v = m x 2^e (frexp, m in [0.5, 1)), the
 * octave is e and the position within it (2m - 1) x 64; octaves run from that
 * of BD_MIN_MS to that of 2^40 ms (values above go to the top bin).
 */
#include "run/breakdown.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PER_OCTAVE 64
#define EXP_LO (-19)                  /* frexp exponent of BD_MIN_MS (2^-20 = 0.5 x 2^-19) */
#define EXP_HI 41                     /* first exponent not binned (2^40 ms and above clamp) */
#define NBINS ((EXP_HI - EXP_LO) * PER_OCTAVE)

struct bd_acc {
    int nc;                           /* components */
    uint64_t n[NBINS];                /* requests per bin */
    double tot[NBINS];                /* sum of the requests' totals (e2e) per bin, ms */
    double share[];                   /* [bin x nc + component]: sum of each component per bin, ms */
};

/* The bin of V >= BD_MIN_MS, read off its IEEE-754 bits: frexp's exponent is
 * the biased exponent - 1022, and (2m - 1) x 64 is the top 6 mantissa bits
 * (exactly what the frexp form computes, without the library call). */
static int bin_of(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int) ((bits >> 52) & 0x7ff) - 1022;
    if (e >= EXP_HI)
        return NBINS - 1;
    int k = (e - EXP_LO) * PER_OCTAVE + (int) ((bits >> 46) & (PER_OCTAVE - 1));
    return k < 0 ? 0 : k >= NBINS ? NBINS - 1 : k;
}

bd_acc *bd_new_n(int ncomp)
{
    if (ncomp < 1 || ncomp > 16) return NULL;
    bd_acc *b = calloc(1, sizeof(bd_acc) + (size_t) NBINS * (size_t) ncomp * sizeof(double));
    if (b) b->nc = ncomp;
    return b;
}

bd_acc *bd_new(void)
{
    return bd_new_n(BD_N);
}

void bd_free(bd_acc *b)
{
    free(b);
}

void bd_reset(bd_acc *b)
{
    memset(b->n, 0, sizeof b->n);
    memset(b->tot, 0, sizeof b->tot);
    memset(b->share, 0, (size_t) NBINS * (size_t) b->nc * sizeof(double));
}

void bd_add(bd_acc *b, double e2e, const double c[BD_N])
{
    if (!(e2e >= BD_MIN_MS))
        return;
    int k = bin_of(e2e);
    b->n[k]++;
    b->tot[k] += e2e;
    /* A zero component adds nothing (the sums start at +0 and only grow): its
     * addition is skipped, which in a scenario without network or overhead
     * time is half of them. */
    double *sh = b->share + (size_t) k * BD_N;
    if (c[BD_NETWORK] != 0) sh[BD_NETWORK] += c[BD_NETWORK];
    if (c[BD_QUEUE] != 0) sh[BD_QUEUE] += c[BD_QUEUE];
    if (c[BD_SERVICE] != 0) sh[BD_SERVICE] += c[BD_SERVICE];
    if (c[BD_OVERHEAD] != 0) sh[BD_OVERHEAD] += c[BD_OVERHEAD];
    if (c[BD_KV_TRANSFER] != 0) sh[BD_KV_TRANSFER] += c[BD_KV_TRANSFER];
    if (c[BD_KV_LOAD] != 0) sh[BD_KV_LOAD] += c[BD_KV_LOAD];
    if (c[BD_CONNECT] != 0) sh[BD_CONNECT] += c[BD_CONNECT];
    _Static_assert(BD_N == 7, "bd_add names every component");
}

void bd_add_qs(bd_acc *b, double e2e, double queue, double service)
{
    if (!(e2e >= BD_MIN_MS))
        return;
    int k = bin_of(e2e);
    b->n[k]++;
    b->tot[k] += e2e;
    double *sh = b->share + (size_t) k * BD_N;
    if (queue != 0) sh[BD_QUEUE] += queue;
    if (service != 0) sh[BD_SERVICE] += service;
}

void bd_add_v(bd_acc *b, double total, const double *c)
{
    if (!(total >= BD_MIN_MS))
        return;
    int k = bin_of(total);
    b->n[k]++;
    b->tot[k] += total;
    double *sh = b->share + (size_t) k * (size_t) b->nc;
    for (int i = 0; i < b->nc; i++)
        if (c[i] != 0) sh[i] += c[i];
}

uint64_t bd_shares(const bd_acc *b, double from, double out[])
{
    int k0 = from >= BD_MIN_MS ? bin_of(from) : 0;
    uint64_t n = 0;
    double s[16] = {0}, tot = 0;
    for (int k = k0; k < NBINS; k++) {
        n += b->n[k];
        tot += b->tot[k];
        const double *sh = b->share + (size_t) k * (size_t) b->nc;
        for (int i = 0; i < b->nc; i++)
            s[i] += sh[i];
    }
    for (int i = 0; i < b->nc; i++)
        out[i] = n && tot > 0 ? s[i] / tot : 0.0;
    return n;
}

const char *bd_name(int component)
{
    static const char *const NAMES[BD_N] = {"network", "queue", "service", "overhead", "kv_transfer", "kv_load", "connect"};
    return component >= 0 && component < BD_N ? NAMES[component] : "?";
}

const char *tb_name(int component)
{
    static const char *const NAMES[TB_N] = {"network", "queue", "prefill", "decode", "kv_transfer", "kv_load", "overhead"};
    return component >= 0 && component < TB_N ? NAMES[component] : "?";
}
