/* ccostops.h -- a step's time by operator (llm/opshare.h) under a calibrated
 * cost model, for `latsim cost`: the model's own parts placed where they
 * belong, the GPU kernel time apportioned as the model prices its operators.
 *   roofline, fitted   the kernel time by the roofline's per-operator times
 *                      (max(FLOPs / peak, bytes / bandwidth));
 *   learned            by the learned rates (clearn_op_rates: GEMMs at
 *                      compute_eff with t_half, attention at attn_eff, KV reads
 *                      at kv_eff);
 *   profile            the profile's own operator rows: its attention prefill
 *                      and decode parts as they are, its per-layer linear part
 *                      over QKV, output, MLP and norms by the rows of each
 *                      (cprofile_linear_classes) at the step's token count, the
 *                      embedding to norms and element-wise; its CPU part is the
 *                      framework (the sampler included: a profile has no LM-head
 *                      row, so logits_sampling is 0).
 * The operators add up to the step (the kernel ones to the kernel parts
 * exactly, up to rounding). */
#ifndef LATSIM_CCOSTOPS_H
#define LATSIM_CCOSTOPS_H

#include "ccost.h"
#include "llm/opshare.h"

/* Splits step S of C on H, whose parts are PART[i] (names) and PART_MS[i], ms
 * (NPARTS of them: ccost_step_ms's), into OUT[OP_N], ms. */
void ccost_op_split(const ccost *c, const cost_hw *h, const cost_step *s, const char *const *part,
                    const double *part_ms, int nparts, double out[OP_N]);

#endif
