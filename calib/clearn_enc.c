/* clearn_enc.c -- the learned step model's coefficients for encoder passes
 * (core/encoder.h, `cost = learned` of an encoder pool, embed_model and
 * classifier_model): the calibrator hands the simulator's encoders the same
 * per-GPU, per-engine efficiencies an LLM pool's learned model uses
 * (clearn_prior_for), through enc_set_learned. */
#include "clearn.h"

#include <stdio.h>
#include <string.h>

#include "core/encoder.h"

/* enc_learned_fn: G's coefficients under ENGINE ("": the default engine). */
static int learned_for(const gpu_spec *g, const char *engine, enc_learned *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    if (engine && engine[0] && !llm_engine_find(engine)) {
        char choices[256];
        llm_engine_choices(choices, sizeof choices);
        snprintf(err, n, "unknown engine '%s' (the learned model's: %s)", engine, choices);
        return -1;
    }
    clearn_prior p;
    clearn_prior_for(NULL, g, engine, &p);
    *out = (enc_learned) { .compute_eff = p.c.compute_eff, .t_half = p.c.t_half, .memory_eff = p.c.memory_eff,
                           .overlap = p.c.overlap, .attn_eff = p.c.attn_eff, .lowp_eff = p.c.lowp_eff,
                           .launch_us = p.c.launch_us, .fixed_ms = p.c.fixed_ms, .seq_us = p.c.seq_us,
                           .extrapolated = p.extrapolated };
    snprintf(out->engine, sizeof out->engine, "%s", engine && engine[0] ? engine : llm_engine_default());
    return 0;
}

void clearn_enc_register(void) { enc_set_learned(learned_for); }
