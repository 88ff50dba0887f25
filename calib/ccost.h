/* ccost.h -- choosing and evaluating a step-time model: roofline, fitted or
 * profile, by name or by stored id, with `auto` picking the best calibrated model.
 *
 * Resolution (ccost_resolve):
 *   --cost-id ID      that stored model (its LLM model must match; a profile must be
 *                     for this TP; a fitted model must not be refused by its TP range);
 *   fitted / profile  the stored model of that kind for (model, weights) with, in
 *                     order: this GPU first, then within its measured TP range
 *                     (not extrapolated), then the lowest cross-validated MAPE;
 *   auto              in order: a model of this (model, GPU) (the same over both
 *                     kinds); a fitted model of another model on this GPU,
 *                     carried by its normalised terms (ms per TFLOP, per GB read,
 *                     per layer, per hop: evaluated with this model's geometry;
 *                     "extrapolated"); a model of this model on another GPU
 *                     (a fitted one by the learned per-term ratios, a profile by
 *                     datasheet ratios; "extrapolated"); a fitted model of this
 *                     model in other weights, carried by the learned dtype terms
 *                     (carry_precision; "extrapolated"); the learned
 *                     model of the GPU and engine (clearn.h; "extrapolated" when
 *                     either has no measurement in its corpus);
 *   learned           the learned model;
 *   roofline          the datasheet roofline.
 * A stored model whose cross-validated MAPE is above CDB_MAPE_LIMIT (cdb.h) or
 * unknown is never used: auto and an explicit kind skip it (and say so in WARN),
 * an explicit id is refused.
 * A profile measured on another GPU is carried over by datasheet ratios: its
 * compute-bound parts scale by peak FLOP/s, its memory-bound parts by memory
 * bandwidth, all-reduce bytes by link bandwidth, fixed and CPU parts unchanged;
 * such a model is marked "extrapolated".
 */
#ifndef LATSIM_CCOST_H
#define LATSIM_CCOST_H

#include <stddef.h>
#include <sqlite3.h>
#include "cfitted.h"
#include "llm/cost.h"
#include "cprofile.h"

typedef enum { CC_ROOFLINE, CC_FITTED, CC_PROFILE, CC_LEARNED } cc_kind;

#define CC_MAX_PARTS 12

typedef struct ccost_parts {
    int n;                          /* parts used */
    const char *name[CC_MAX_PARTS]; /* static names */
    double ms[CC_MAX_PARTS];        /* their times, ms (they sum to the step time) */
} ccost_parts;

/* A profile's parts that depend on the step's token count alone (linear operators,
 * embedding, all-reduces) or its sequence count alone (CPU overhead), scaled by their
 * ratios, at every integer count below the table's size.  An entry is computed on
 * first use by the direct evaluation (cprofile_step_ms) and kept: the curves are
 * evaluated at integer counts only, so an entry is the direct value itself, and
 * ccost_step_ms adds the entries and the attention parts in the direct evaluation's
 * order: the same step time to the last bit, not an approximation.  0 = not yet
 * computed (a part that is 0 is recomputed each time, giving 0 again). */
typedef struct cc_table {
    int32_t ntok;           /* entries of tok and ar: token counts 0 .. ntok - 1 (0: no table) */
    int32_t nseq;           /* entries of cpu: sequence counts 0 .. nseq - 1 (0: no table) */
    double *tok;            /* linear parts x their ratio + embedding x r_memory, ms */
    double *ar;             /* all-reduces x r_link, ms (NULL when tp is 1: none) */
    double *cpu;            /* CPU overhead, ms (NULL when the profile has none) */
} cc_table;

typedef struct ccost {
    cc_kind kind;           /* the model in use */
    int64_t id;             /* stored id (0 for the roofline) */
    char source[256];       /* where its numbers come from (with the GPU it was carried from) */
    char source_kind[32];   /* the measurements' source alone: steps-csv, vidur, cuda, cpu */
    double mape;            /* cross-validated MAPE, % (NAN for the roofline) */
    char range[16];         /* "measured", "interpolated", "extrapolated" ("" roofline) */
    char note[512];         /* why this model was chosen (e.g. the fallback's reason) */
    char warn[512];         /* "" or one line: the stored models skipped as unusable
                               (cross-validated error above CDB_MAPE_LIMIT or unknown);
                               the caller prints it on stderr */
    int tp;                 /* TP degree of the replica */
    int need;               /* phases its steps have: 1 prefill, 2 decode, 3 both (a
                               simulation); a fitted model measured without one is refused */
    int carried;            /* 1: measured on another GPU, scaled by datasheet ratios */
    double r_compute;       /* measured GPU peak FLOP/s / this GPU's (1 if same GPU) */
    double r_memory;        /* measured GPU bandwidth / this GPU's */
    double r_link;          /* measured GPU link bandwidth / this GPU's */
    double ridge;           /* measured GPU FLOP per byte at the roofline ridge */
    cfitted fitted;         /* kind fitted: the model */
    cprofile profile;       /* kind profile: the model (owns its curves) */
    cost_model roof;        /* the roofline (always filled: the fallback; owned) */
    cost_model lm;          /* kind learned: the `learned` row on roof's hardware (owned) */
    cc_table tab;           /* kind profile: its tabulated parts (owned; filled on use) */
    cfitted_eval fev;       /* kind fitted: the model prepared for per-step evaluation */
    const cost_coll_prof *ar_meas; /* kind profile at tp > 1: the imported nccl all-reduce of
                               this GPU at tp (the roofline's, roof.state), which replaces the
                               profile's own all-reduce part (Vidur's cluster measurement);
                               NULL: none imported */
} ccost;

/* Resolves KIND ("auto", "fitted", "profile", "roofline"; ignored when ID > 0) for
 * the replica described by ROOF (a roofline cost model with its GPU, model, tp
 * and weight bytes filled) and WEIGHTS (precision name).  Returns 0 with OUT
 * filled (free with ccost_free), or -1 with one line in ERR (no stored model of
 * an explicit kind, an id of another model, extrapolation refused). */
int ccost_resolve(sqlite3 *db, const char *kind, int64_t id, const cost_model *roof,
                  const char *weights, ccost *out, char *err, size_t errlen);
void ccost_free(ccost *c);

/* ccost_resolve for steps of the phases NEED (1 prefill, 2 decode, 3 both;
 * ccost_resolve: 3): a fitted model with no measurement of a needed phase is
 * refused (auto passes over it). */
int ccost_resolve_for(sqlite3 *db, const char *kind, int64_t id, const cost_model *roof, const char *weights,
                      int need, ccost *out, char *err, size_t errlen);

/* Step time in ms; PARTS (may be NULL) receives the named parts; *EXTRAP (may be
 * NULL) is set when the step lies outside the measured ranges.  With PARTS and
 * EXTRAP NULL (a simulation's steps) a profile reads its tables and a fitted model
 * its prepared form: the same value, to the bit, as with them (every part evaluated). */
double ccost_step_ms(const ccost *c, const cost_step *s, ccost_parts *parts, int *extrap);

/* The framework-overhead part of ccost_step_ms(C, S), ms: a fitted model's
 * fixed, launch and per-sequence (cpu) terms, a profile's CPU part, the
 * roofline's step_overhead_ms and launches (cost_ops.overhead_ms).  0 for an
 * empty step. */
double ccost_overhead_ms(const ccost *c, const cost_step *s);

/* Makes M (a pool's cost model, its hardware resolved) the fitted model F on
 * M's own GPU, of measurement source SOURCE (e.g. "observed"): what `cost =
 * fitted` builds for a stored fit, without the store.  Returns 0, or -1 when out
 * of memory (M unchanged). */
int ccost_use_fitted(cost_model *m, const cfitted *f, const char *source);

/* Replaces the coefficients (CF_NTERMS, units as cfitted_term_names) of M, made
 * fitted by ccost_use_fitted; nothing for another model.  The next simulation
 * built on M uses them. */
void ccost_set_coefs(cost_model *m, const double *coef);

/* "roofline", "fitted", "profile" or "learned". */
const char *ccost_kind_name(cc_kind k);

/* Adds the calibrated rows auto, fitted and profile (resolved by ccost_resolve)
 * to the cost-model table (cost_register), after the built-in linear and
 * roofline; `cost = auto`, the default, is then the first of them.  Call it
 * once before anything loads a scenario (latsim's main does; a second call is
 * harmless).  Returns 0, or -1 when the table has no room or another row took
 * one of the names. */
int ccost_register(void);

#endif
