/* ccpu.c -- the CPU backend of the benchmark harness (cbench.h): GEMMs through
 * OpenBLAS (cblas_sgemm, fp32), decode attention over a paged KV cache and
 * prefill attention (two GEMMs per head around a causal softmax) in plain C,
 * memcpy bandwidth, the per-call overhead of a 1x1x1 GEMM, and an all-reduce of
 * tp buffers in shared memory (reduce into the first, copy back).  Times come
 * from CLOCK_MONOTONIC: warm-up runs, then the median of the repeats.
 *
 * OpenBLAS is loaded (dlopen) when this backend runs, not linked: linked, its
 * thread pool starts with every latsim process and spins on the other cores
 * for about 0.1 s of CPU, a cost every simulation paid for a calibrator it
 * does not use.
 */
#include "cbench.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/errmsg.h"

#define BLOCK 16   /* KV tokens per paged block */

/* OpenBLAS's entry points, from the library loaded by blas_open. */
static struct {
    void *lib;                                         /* dlopen handle, NULL until loaded */
    void (*sgemm)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE, const enum CBLAS_TRANSPOSE,
                  const blasint, const blasint, const blasint, const float, const float *, const blasint,
                  const float *, const blasint, const float, float *, const blasint);
    void (*set_num_threads)(int);
    int (*get_num_threads)(void);
    char *(*get_config)(void);
} blas;

#ifndef OPENBLAS_LIBDIR
#define OPENBLAS_LIBDIR ""
#endif

/* Loads OpenBLAS (once).  Returns 0, or -1 with ERR set (library or symbol missing). */
static int blas_open(char *err, size_t errlen)
{
    if (blas.lib) return 0;
    const char *const names[] = { "libopenblas.so.0", "libopenblas.so", OPENBLAS_LIBDIR "/libopenblas.so.0",
                                  OPENBLAS_LIBDIR "/libopenblas.so" };
    void *lib = NULL;
    for (size_t i = 0; !lib && i < sizeof names / sizeof names[0]; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        errmsg_set(err, errlen, "calib cpu: OpenBLAS not found (libopenblas.so.0: install libopenblas0)");
        return -1;
    }
    /* POSIX: a function pointer from dlsym's void * (through the object pointer's bytes). */
    void *sym[4] = { dlsym(lib, "cblas_sgemm"), dlsym(lib, "openblas_set_num_threads"),
                     dlsym(lib, "openblas_get_num_threads"), dlsym(lib, "openblas_get_config") };
    for (int i = 0; i < 4; i++)
        if (!sym[i]) {
            dlclose(lib);
            errmsg_set(err, errlen, "calib cpu: the OpenBLAS found lacks %s",
                       (const char *[]) { "cblas_sgemm", "openblas_set_num_threads", "openblas_get_num_threads",
                                          "openblas_get_config" }[i]);
            return -1;
        }
    memcpy(&blas.sgemm, &sym[0], sizeof blas.sgemm);
    memcpy(&blas.set_num_threads, &sym[1], sizeof blas.set_num_threads);
    memcpy(&blas.get_num_threads, &sym[2], sizeof blas.get_num_threads);
    memcpy(&blas.get_config, &sym[3], sizeof blas.get_config);
    blas.lib = lib;
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void fill(float *v, size_t n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)((x >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
}

/* Buffers of one item's run. */
typedef struct bufs {
    float *a, *b, *c;        /* GEMM operands, attention Q/K/V or copies */
    float *d;                /* attention output / scores */
    int *table;              /* decode: block table */
} bufs;

static void bufs_free(bufs *b)
{
    free(b->a);
    free(b->b);
    free(b->c);
    free(b->d);
    free(b->table);
    memset(b, 0, sizeof *b);
}

static void decode_attn(const cb_item *it, const bufs *b)
{
    int H = it->heads, KVH = it->kv_heads, d = it->head_dim, C = it->context, group = H / KVH;
    int nblk = (C + BLOCK - 1) / BLOCK;
    float *score = b->d;
    for (int s = 0; s < it->batch; s++)
        for (int h = 0; h < H; h++) {
            const float *q = b->a + ((size_t)s * H + h) * d;
            int kh = h / group;
            float mx = -INFINITY;
            for (int t = 0; t < C; t++) {
                int blk = b->table[(size_t)s * nblk + t / BLOCK];
                const float *k = b->b + (((size_t)blk * BLOCK + t % BLOCK) * KVH + kh) * d;
                float acc = 0;
                for (int i = 0; i < d; i++)
                    acc += q[i] * k[i];
                score[t] = acc;
                if (acc > mx) mx = acc;
            }
            float sum = 0;
            for (int t = 0; t < C; t++)
                sum += (score[t] = expf(score[t] - mx));
            float *o = b->c + ((size_t)s * H + h) * d;
            memset(o, 0, (size_t)d * sizeof *o);
            for (int t = 0; t < C; t++) {
                int blk = b->table[(size_t)s * nblk + t / BLOCK];
                const float *v = b->b + (((size_t)blk * BLOCK + t % BLOCK) * KVH + kh) * d
                                 + (size_t)nblk * it->batch * BLOCK * KVH * d;
                float w = score[t] / sum;
                for (int i = 0; i < d; i++)
                    o[i] += w * v[i];
            }
        }
}

static void prefill_attn(const cb_item *it, const bufs *b)
{
    int H = it->heads, KVH = it->kv_heads, d = it->head_dim, T = it->tokens, group = H / KVH;
    for (int h = 0; h < H; h++) {
        const float *q = b->a + (size_t)h * d, *k = b->b + (size_t)(h / group) * d;
        const float *v = b->b + (size_t)T * KVH * d + (size_t)(h / group) * d;
        float *S = b->d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, d, 1.0f / sqrtf((float)d), q, H * d,
                    k, KVH * d, 0.0f, S, T);
        for (int i = 0; i < T; i++) {
            float *row = S + (size_t)i * T, mx = -INFINITY, sum = 0;
            for (int j = 0; j <= i; j++)
                if (row[j] > mx) mx = row[j];
            for (int j = 0; j < T; j++)
                sum += (row[j] = j <= i ? expf(row[j] - mx) : 0.0f);
            for (int j = 0; j <= i; j++)
                row[j] /= sum;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0f, S, T, v, KVH * d, 0.0f,
                    b->c + (size_t)h * d, H * d);
    }
}

/* Allocates what item IT needs.  Returns 0 or -1. */
static int prepare(const cb_item *it, bufs *b)
{
    memset(b, 0, sizeof *b);
    size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
    switch (it->kind) {
    case CB_GEMM:
        n1 = (size_t)it->m * it->k; n2 = (size_t)it->k * it->n; n3 = (size_t)it->m * it->n;
        break;
    case CB_ATTN_DECODE: {
        size_t nblk = (size_t)(it->context + BLOCK - 1) / BLOCK;
        n1 = (size_t)it->batch * it->heads * it->head_dim;
        n2 = 2 * nblk * it->batch * BLOCK * it->kv_heads * it->head_dim;   /* K then V */
        n3 = n1;
        n4 = (size_t)it->context;
        b->table = malloc(nblk * it->batch * sizeof *b->table);
        if (!b->table) return -1;
        /* Blocks in a scrambled order, as a paged cache hands them out. */
        size_t tot = nblk * it->batch;
        for (size_t i = 0; i < tot; i++) b->table[i] = (int)i;
        for (size_t i = tot; i > 1; i--) {
            size_t j = (i * 2654435761u) % i;
            int t = b->table[i - 1]; b->table[i - 1] = b->table[j]; b->table[j] = t;
        }
        break;
    }
    case CB_ATTN_PREFILL:
        n1 = (size_t)it->tokens * it->heads * it->head_dim;
        n2 = 2 * (size_t)it->tokens * it->kv_heads * it->head_dim;
        n3 = n1;
        n4 = (size_t)it->tokens * it->tokens;
        break;
    case CB_MEMBW:
        n1 = n2 = (size_t)(it->bytes / sizeof(float));
        break;
    case CB_LAUNCH:
        n1 = n2 = n3 = 1;
        break;
    case CB_ALLREDUCE:
        n1 = (size_t)(it->bytes / sizeof(float)) * (size_t)it->ranks;
        break;
    }
    if ((n1 && !(b->a = malloc(n1 * sizeof(float)))) || (n2 && !(b->b = malloc(n2 * sizeof(float)))) ||
        (n3 && !(b->c = malloc(n3 * sizeof(float)))) || (n4 && !(b->d = malloc(n4 * sizeof(float))))) {
        bufs_free(b);
        return -1;
    }
    if (n1) fill(b->a, n1, 1);
    if (n2) fill(b->b, n2, 2);
    if (n3) memset(b->c, 0, n3 * sizeof(float));
    return 0;
}

static void run_once(const cb_item *it, const bufs *b)
{
    switch (it->kind) {
    case CB_GEMM:
        blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, it->m, it->n, it->k, 1.0f, b->a, it->k,
                    b->b, it->n, 0.0f, b->c, it->n);
        break;
    case CB_ATTN_DECODE: decode_attn(it, b); break;
    case CB_ATTN_PREFILL: prefill_attn(it, b); break;
    case CB_MEMBW: memcpy(b->b, b->a, (size_t)it->bytes); break;
    case CB_LAUNCH:
        blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, b->a, 1, b->b, 1, 0.0f, b->c, 1);
        break;
    case CB_ALLREDUCE: {
        size_t n = (size_t)(it->bytes / sizeof(float));
        float *x = b->a;
        for (int r = 1; r < it->ranks; r++)
            for (size_t i = 0; i < n; i++)
                x[i] += x[(size_t)r * n + i];
        for (int r = 1; r < it->ranks; r++)
            memcpy(x + (size_t)r * n, x, n * sizeof(float));
        break;
    }
    }
}

static void cpu_name(char *out, size_t n)
{
    snprintf(out, n, "cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ') p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(out, n, "%s", p);
            }
            break;
        }
    if (f) fclose(f);
}

int cb_cpu_run(cb_plan *p, int threads, cb_device *dev, double *gflops, double *gbs, char *err,
               size_t errlen)
{
    if (blas_open(err, errlen) != 0)
        return -1;
    if (threads > 0)
        blas.set_num_threads(threads);
    snprintf(dev->gpu, sizeof dev->gpu, "cpu");
    cpu_name(dev->device, sizeof dev->device);
    snprintf(dev->driver, sizeof dev->driver, "OpenBLAS %.40s, %d threads", blas.get_config(),
             blas.get_num_threads());
    *gflops = 0;
    *gbs = 0;
    double *t = malloc((size_t)(p->repeats > 0 ? p->repeats : 1) * sizeof *t);
    if (!t) {
        errmsg_set(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < p->n; i++) {
        cb_item *it = &p->items[i];
        bufs b;
        if (prepare(it, &b) != 0) {
            free(t);
            errmsg_set(err, errlen, "calib cpu: out of memory for %s", it->name);
            return -1;
        }
        for (int w = 0; w < p->warmup; w++)
            run_once(it, &b);
        for (int r = 0; r < p->repeats; r++) {
            double t0 = now_ms();
            run_once(it, &b);
            t[r] = now_ms() - t0;
        }
        it->std_ms = cb_std(t, p->repeats);
        it->time_ms = cb_median(t, p->repeats);
        it->repeats = p->repeats;
        bufs_free(&b);
        if (it->kind == CB_GEMM && it->time_ms > 0)
            *gflops = fmax(*gflops, 2.0 * it->m * it->n * it->k / (it->time_ms * 1e6));
        if (it->kind == CB_MEMBW && it->time_ms > 0)
            *gbs = 2 * it->bytes / (it->time_ms * 1e6);   /* read + write */
    }
    free(t);
    return 0;
}
