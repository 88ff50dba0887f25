/* zipf.h -- drawing from a Zipf distribution over K ranked items.
 *
 * Item k (1-based rank) has probability k^-S / sum_j j^-S (exponent S > 0).  The
 * intents of a gateway's requests are drawn with it (workload/gwattr.c per class,
 * gateway/semcache.c per result cache).  GSL has no Zipf sampler: the weights go
 * into its general discrete sampler (gsl_ran_discrete, Walker's alias method),
 * one uniform draw per sample.
 */
#ifndef LATSIM_ZIPF_H
#define LATSIM_ZIPF_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

typedef struct zipf zipf;

/* K items (>= 1) with exponent S (> 0, < 1e6).  Returns NULL on bad arguments
 * or when out of memory. */
zipf *zipf_new(size_t k, double s);

/* One item, 0 .. K-1 (0 the most popular). */
size_t zipf_sample(const zipf *z, gsl_rng *r);

/* The probability of item I (0-based); 0 beyond K. */
double zipf_prob(const zipf *z, size_t i);

void zipf_free(zipf *z);

/* Memory of a table of K items at its peak, bytes per item, for
 * scenario_check_memory: the probabilities, the alias table and
 * gsl_ran_discrete_preproc's work arrays. */
#define ZIPF_BYTES_PER_ITEM 48.0

#endif
