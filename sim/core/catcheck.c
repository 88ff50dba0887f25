/* catcheck.c -- the validation of catalog entries (GPUs and models: names,
 * figures in range, MoE and MLA geometry) and the figures that follow from a
 * model's geometry (bytes per weight, parameter counts, KV elements per token). */
#include "core/catalog.h"
#include "core/catdb.h"
#include "engine/errmsg.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- validation ------------------------------------------------------------------ */

/* Checks a catalog key (1..47 characters of [A-Za-z0-9._+-], stored in FIELD
 * of size SIZE) and writes its lower-case form to LOWER. */
static int check_name(const char *kind, const char *field, size_t size, char *lower,
                      char *err, size_t errlen)
{
    size_t n = strnlen(field, size);
    if (n == 0) {
        errmsg_set(err, errlen, "%s: the name is empty", kind);
        return -1;
    }
    if (n == size) {
        errmsg_set(err, errlen, "%s: the name is too long (at most %zu characters)", kind,
                size - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)field[i];
        if (!isalnum(c) && c != '-' && c != '_' && c != '.' && c != '+') {
            errmsg_set(err, errlen,
                    "%s '%s': names may use only letters, digits, '-', '_', '.' and '+'",
                    kind, field);
            return -1;
        }
        lower[i] = (char)tolower(c);
    }
    lower[n] = '\0';
    return 0;
}

static int check_positive(const char *kind, const char *name, const char *field, double v,
                          char *err, size_t errlen)
{
    if (isfinite(v) && v > 0)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s must be a positive number (got %g)", kind, name,
            field, v);
    return -1;
}

static int check_nonneg(const char *kind, const char *name, const char *field, double v,
                        char *err, size_t errlen)
{
    if (isfinite(v) && v >= 0)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s must be a number >= 0 (got %g)", kind, name, field, v);
    return -1;
}

static int check_terminated(const char *kind, const char *name, const char *field,
                            const char *s, size_t size, char *err, size_t errlen)
{
    if (strnlen(s, size) < size)
        return 0;
    errmsg_set(err, errlen, "%s '%s': %s is too long (at most %zu characters)", kind, name,
            field, size - 1);
    return -1;
}

int validate_gpu(const gpu_spec *g, char *name, char *err, size_t errlen)
{
    if (check_name("gpu", g->name, sizeof g->name, name, err, errlen) ||
        check_terminated("gpu", name, "full name", g->full_name, sizeof g->full_name,
                         err, errlen) ||
        check_terminated("gpu", name, "source", g->source, sizeof g->source, err, errlen) ||
        check_positive("gpu", name, "bf16_tflops", g->bf16_tflops, err, errlen) ||
        check_positive("gpu", name, "fp8_tflops", g->fp8_tflops, err, errlen) ||
        check_positive("gpu", name, "mem_gib", g->mem_gib, err, errlen) ||
        check_positive("gpu", name, "mem_bw_gbs", g->mem_bw_gbs, err, errlen) ||
        check_positive("gpu", name, "link_gbs", g->link_gbs, err, errlen))
        return -1;
    if (!isfinite(g->price_hr) || g->price_hr < 0) {
        errmsg_set(err, errlen, "gpu '%s': price_hr must be a number >= 0 (got %g)", name,
                g->price_hr);
        return -1;
    }
    if (check_nonneg("gpu", name, "fp4_tflops", g->fp4_tflops, err, errlen) ||
        check_nonneg("gpu", name, "idle_w", g->idle_w, err, errlen) ||
        check_nonneg("gpu", name, "max_w", g->max_w, err, errlen) ||
        check_nonneg("gpu", name, "gpus_per_node", g->gpus_per_node, err, errlen) ||
        check_nonneg("gpu", name, "node_link_gbs", g->node_link_gbs, err, errlen) ||
        check_nonneg("gpu", name, "node_link_latency_us", g->node_link_latency_us, err, errlen) ||
        check_nonneg("gpu", name, "mem_usable_gib", g->mem_usable_gib, err, errlen))
        return -1;
    if (g->mem_usable_gib > g->mem_gib) {
        errmsg_set(err, errlen, "gpu '%s': mem_usable_gib (%g) is more than mem_gib (%g)", name, g->mem_usable_gib,
                   g->mem_gib);
        return -1;
    }
    if (g->max_w > 0 && g->idle_w > g->max_w) {
        errmsg_set(err, errlen, "gpu '%s': idle_w (%g) is more than max_w (%g)", name, g->idle_w, g->max_w);
        return -1;
    }
    return 0;
}

/* The mixture-of-experts and MLA fields of M (validate_model). */
static int validate_moe(const model_spec *m, const char *name, char *err, size_t errlen)
{
    const struct { const char *key; double v; } f[] = {
        { "experts", m->experts }, { "experts_per_token", m->experts_per_token },
        { "shared_experts", m->shared_experts }, { "moe_intermediate", m->moe_intermediate },
        { "first_dense_layers", m->first_dense_layers }, { "expert_params", m->expert_params },
        { "kv_lora_rank", m->kv_lora_rank }, { "qk_rope_head_dim", m->qk_rope_head_dim },
    };
    for (size_t i = 0; i < NELEM(f); i++)
        if (check_nonneg("model", name, f[i].key, f[i].v, err, errlen)) return -1;
    if (m->qk_rope_head_dim && !m->kv_lora_rank) {
        errmsg_set(err, errlen, "model '%s': qk_rope_head_dim needs kv_lora_rank (MLA)", name);
        return -1;
    }
    if (!m->experts) {
        for (size_t i = 1; i < 6; i++)
            if (f[i].v != 0) {
                errmsg_set(err, errlen, "model '%s': %s needs experts (a mixture-of-experts model)", name, f[i].key);
                return -1;
            }
        return 0;
    }
    if (m->experts_per_token < 1 || m->experts_per_token > m->experts) {
        errmsg_set(err, errlen, "model '%s': experts_per_token must be 1 to the %d experts (got %d)", name,
                   m->experts, m->experts_per_token);
        return -1;
    }
    if (m->moe_intermediate < 1) {
        errmsg_set(err, errlen, "model '%s': moe_intermediate must be a positive number (got %d)", name,
                   m->moe_intermediate);
        return -1;
    }
    if (m->first_dense_layers >= m->layers) {
        errmsg_set(err, errlen, "model '%s': first_dense_layers (%d) leaves none of the %d layers to the experts",
                   name, m->first_dense_layers, m->layers);
        return -1;
    }
    catalog_counts c;
    catalog_model_counts(m, &c);
    double routed = (double) c.moe_layers * m->experts * c.expert;
    if (routed >= m->params) {
        errmsg_set(err, errlen, "model '%s': params (%g) must exceed its routed experts' %g (%d layers x %d x %g)",
                   name, m->params, routed, c.moe_layers, m->experts, c.expert);
        return -1;
    }
    return 0;
}

int validate_model(const model_spec *m, char *name, char *err, size_t errlen)
{
    if (check_name("model", m->name, sizeof m->name, name, err, errlen) ||
        check_terminated("model", name, "source", m->source, sizeof m->source, err,
                         errlen) ||
        check_positive("model", name, "layers", m->layers, err, errlen) ||
        check_positive("model", name, "hidden", m->hidden, err, errlen) ||
        check_positive("model", name, "heads", m->heads, err, errlen) ||
        check_positive("model", name, "kv_heads", m->kv_heads, err, errlen) ||
        check_positive("model", name, "head_dim", m->head_dim, err, errlen) ||
        check_positive("model", name, "intermediate", m->intermediate, err, errlen) ||
        check_positive("model", name, "vocab", m->vocab, err, errlen) ||
        check_positive("model", name, "params", m->params, err, errlen) ||
        check_positive("model", name, "context", m->context, err, errlen))
        return -1;
    if (m->weights[0] && catalog_weight_bytes(m->weights) == 0) {
        errmsg_set(err, errlen, "model '%s': weights must be bf16, fp16, fp8, int8, int4 or fp4 (got '%s')", name,
                   m->weights);
        return -1;
    }
    /* One set of limits, a [model] section's or a config.json's. */
    static const struct { const char *k; double max; } LIM[] = {
        { "layers", CATALOG_MAX_LAYERS }, { "hidden", CATALOG_MAX_HIDDEN }, { "heads", CATALOG_MAX_HEADS },
        { "kv_heads", CATALOG_MAX_HEADS }, { "head_dim", CATALOG_MAX_HEAD_DIM }, { "intermediate", CATALOG_MAX_WIDE },
        { "vocab", CATALOG_MAX_WIDE }, { "context", CATALOG_MAX_WIDE }, { "moe_intermediate", CATALOG_MAX_WIDE } };
    const double V[] = { m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->intermediate, m->vocab, m->context,
                         m->moe_intermediate };
    for (size_t i = 0; i < sizeof LIM / sizeof LIM[0]; i++)
        if (V[i] > LIM[i].max) {
            errmsg_set(err, errlen, "model '%s': %s = %.0f is beyond the %.0f a model may have", name, LIM[i].k, V[i], LIM[i].max);
            return -1;
        }
    double lo, hi;
    catalog_model_params_range(m, &lo, &hi);
    if (lo > 0 && (m->params < lo / CATALOG_PARAMS_TOLERANCE || m->params > hi * CATALOG_PARAMS_TOLERANCE)) {
        errmsg_set(err, errlen, "model '%s': params = %.4g does not match its geometry (%.4g to %.4g from layers, hidden, "
                   "heads, head_dim, intermediate, vocab and experts; %g x either way is accepted)", name, m->params, lo, hi,
                   CATALOG_PARAMS_TOLERANCE);
        return -1;
    }
    /* heads * head_dim == hidden is not required: some models differ. */
    if (m->heads % m->kv_heads != 0) {
        errmsg_set(err, errlen,
                "model '%s': heads (%d) must be a multiple of kv_heads (%d)", name,
                m->heads, m->kv_heads);
        return -1;
    }
    return validate_moe(m, name, err, errlen);
}

int catalog_check_gpu(const gpu_spec *g, char *err, size_t errlen)
{
    char name[sizeof g->name];
    return validate_gpu(g, name, err, errlen);
}

void catalog_model_params_range(const model_spec *m, double *lo, double *hi)
{
    *lo = *hi = 0;
    if (m->kv_lora_rank > 0) return;
    double h = m->hidden, hd = m->head_dim, attn = 2 * h * m->heads * hd + 2 * h * m->kv_heads * hd;
    double mlp3 = 3 * h * m->intermediate, mlp2 = 2 * h * m->intermediate;
    int nmoe = m->experts ? m->layers - m->first_dense_layers : 0;
    double ep = m->expert_params > 0 ? m->expert_params : 3 * h * m->moe_intermediate;
    double moe = (double) (m->experts + m->shared_experts) * ep;
    double body_lo = (m->layers - nmoe) * (attn + mlp2) + nmoe * (attn + moe * 2 / 3);
    double body_hi = (m->layers - nmoe) * (attn + mlp3) + nmoe * (attn + moe);
    *lo = body_lo + (double) m->vocab * h;
    *hi = body_hi + 2.0 * m->vocab * h;
}

int catalog_check_model(const model_spec *m, char *err, size_t errlen)
{
    char name[sizeof m->name];
    return validate_model(m, name, err, errlen);
}


/* ---- figures from a geometry ----------------------------------------------------- */

double catalog_weight_bytes(const char *precision)
{
    static const struct { const char *name; double bytes; } table[] = {
        { "bf16", 2.0 }, { "fp16", 2.0 }, { "fp8", 1.0 }, { "int8", 1.0 }, { "int4", 0.5 },
        { "fp4", 0.5 + 1.0 / 16 },   /* 4 bits + an 8-bit scale per 16 weights (NVFP4) */
    };
    if (!precision)
        return 0;
    for (size_t i = 0; i < NELEM(table); i++)
        if (strcasecmp(precision, table[i].name) == 0)
            return table[i].bytes;
    return 0;
}

void catalog_model_counts(const model_spec *m, catalog_counts *c)
{
    memset(c, 0, sizeof *c);
    c->total = m->params;
    c->active = m->params;
    c->embedding = (double) m->vocab * m->hidden;
    if (m->experts > 0) {
        c->moe_layers = m->layers - m->first_dense_layers;
        c->expert = m->expert_params > 0 ? m->expert_params : 3.0 * m->hidden * m->moe_intermediate;
        c->active -= (double) c->moe_layers * (m->experts - m->experts_per_token) * c->expert;
    }
}

double catalog_kv_elems_per_token(const model_spec *m)
{
    if (m->kv_lora_rank > 0)
        return (double) m->layers * (m->kv_lora_rank + m->qk_rope_head_dim);
    return 2.0 * m->layers * m->kv_heads * m->head_dim;
}
