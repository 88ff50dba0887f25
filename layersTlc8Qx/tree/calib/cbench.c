/* cbench.c -- the benchmark plan and storing its results (see cbench.h). */
#include "cbench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cdb.h"
#include "engine/errmsg.h"

static cb_item *push(cb_plan *p)
{
    if (p->n == p->cap) {
        size_t nc = p->cap ? 2 * p->cap : 64;
        cb_item *a = realloc(p->items, nc * sizeof *a);
        if (!a)
            return NULL;
        p->items = a;
        p->cap = nc;
    }
    cb_item *it = &p->items[p->n++];
    memset(it, 0, sizeof *it);
    return it;
}

int cb_plan_build(cb_plan *p, const model_spec *m, int tp, const int *tokens, int ntok,
                  const int *batches, int nb, const int *contexts, int nc, const int *prompts,
                  int np, double membw_bytes, int allreduce, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->model = *m;
    p->tp = tp;
    p->warmup = 2;
    p->repeats = 10;
    if (tp < 1 || m->heads % tp != 0) {
        errmsg_set(err, errlen, "--tp %d does not divide the %d attention heads of %s", tp, m->heads,
                   m->name);
        return -1;
    }
    int H = m->heads / tp, KVH = m->kv_heads >= tp ? m->kv_heads / tp : 1, d = m->head_dim;
    struct { const char *name; int n, k; } g[4] = {
        { "attn_pre_proj", (H + 2 * KVH) * d, m->hidden },
        { "attn_post_proj", m->hidden, H * d },
        { "mlp_up_proj", 2 * m->intermediate / tp, m->hidden },
        { "mlp_down_proj", m->hidden, m->intermediate / tp },
    };
    char geo[40];
    snprintf(geo, sizeof geo, "q%d_kv%d_d%d", m->heads, m->kv_heads, d);
    cb_item *it;
    for (int t = 0; t < ntok; t++)
        for (int j = 0; j < 4; j++) {
            if (!(it = push(p))) goto oom;
            it->kind = CB_GEMM;
            snprintf(it->name, sizeof it->name, "%s", g[j].name);
            it->m = tokens[t];
            it->n = g[j].n;
            it->k = g[j].k;
        }
    for (int b = 0; b < nb; b++)
        for (int c = 0; c < nc; c++) {
            if (!(it = push(p))) goto oom;
            it->kind = CB_ATTN_DECODE;
            snprintf(it->name, sizeof it->name, "%s", geo);
            it->batch = batches[b];
            it->context = contexts[c];
            it->heads = H;
            it->kv_heads = KVH;
            it->head_dim = d;
        }
    for (int q = 0; q < np; q++) {
        if (!(it = push(p))) goto oom;
        it->kind = CB_ATTN_PREFILL;
        snprintf(it->name, sizeof it->name, "%s", geo);
        it->batch = 1;
        it->tokens = prompts[q];
        it->heads = H;
        it->kv_heads = KVH;
        it->head_dim = d;
    }
    if (membw_bytes > 0) {
        if (!(it = push(p))) goto oom;
        it->kind = CB_MEMBW;
        snprintf(it->name, sizeof it->name, "copy");
        it->bytes = membw_bytes;
    }
    if (!(it = push(p))) goto oom;
    it->kind = CB_LAUNCH;
    snprintf(it->name, sizeof it->name, "empty_kernel");
    if (allreduce && tp > 1)
        for (double b = 2048; b <= 8 * 1048576.0; b *= 4) {
            if (!(it = push(p))) goto oom;
            it->kind = CB_ALLREDUCE;
            snprintf(it->name, sizeof it->name, "dpn%d", tp);
            it->bytes = b;
            it->ranks = tp;
        }
    return 0;
oom:
    cb_plan_free(p);
    errmsg_set(err, errlen, "out of memory");
    return -1;
}

void cb_plan_free(cb_plan *p)
{
    free(p->items);
    p->items = NULL;
    p->n = p->cap = 0;
}

int cb_parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 10000000 || n == max)
            return -1;
        out[n++] = (int)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return n;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cb_median(double *v, int n)
{
    if (n <= 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cb_std(const double *v, int n)
{
    if (n < 2)
        return NAN;
    double m = 0, s = 0;
    for (int i = 0; i < n; i++)
        m += v[i] / n;
    for (int i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (n - 1));
}

int cb_store(sqlite3 *db, const cb_plan *p, const char *source, const cb_device *dev,
             const char *tool, long *n, char *err, size_t errlen)
{
    cdb_writer w;
    if (cdb_writer_open(&w, db, err, errlen) != 0)
        return -1;
    char when[32], cluster[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(cluster, sizeof cluster, "%s_local", dev->gpu);
    long k = 0;
    for (size_t i = 0; i < p->n; i++) {
        const cb_item *it = &p->items[i];
        if (!(it->time_ms >= 0))
            continue;
        cdb_meas m = { .source = source, .name = it->name, .model = p->model.name, .gpu = dev->gpu,
                       .weights = "bf16", .tp = p->tp, .time_ms = it->time_ms, .std_ms = it->std_ms,
                       .repeats = it->repeats, .device = dev->device, .driver = dev->driver,
                       .measured_at = when, .tool = tool };
        switch (it->kind) {
        case CB_GEMM: m.what = "op"; m.tokens = it->m; break;
        case CB_ATTN_DECODE: m.what = "attn_decode"; m.model = ""; m.batch = it->batch; m.tokens = 1;
            m.context = it->context; break;
        case CB_ATTN_PREFILL: m.what = "attn_prefill"; m.model = ""; m.batch = it->batch;
            m.tokens = it->tokens; break;
        case CB_MEMBW: m.what = "membw"; m.model = ""; m.bytes = it->bytes; break;
        case CB_LAUNCH: m.what = "launch"; m.model = ""; break;
        case CB_ALLREDUCE: m.what = "allreduce"; m.model = ""; m.gpu = cluster; m.tp = it->ranks;
            m.bytes = it->bytes; break;
        }
        if (cdb_put(&w, &m, NULL, err, errlen) != 0) {
            cdb_writer_close(&w);
            return -1;
        }
        k++;
    }
    cdb_writer_close(&w);
    *n = k;
    return 0;
}
