/* rng.h -- one independent GSL random stream per simulated entity.
 *
 * Every entity (a workload source, a pool, a replica...) draws from its own
 * gsl_rng, seeded from a 64-bit mix of the run seed and the entity's name.
 * Adding or removing an entity therefore never shifts the numbers another
 * entity draws, and the same (seed, name) always gives the same stream.
 */
#ifndef LATSIM_RNG_H
#define LATSIM_RNG_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

/* A new generator (gsl_rng_mt19937) for entity NAME under run seed SEED.
 * Returns NULL only when out of memory.  Free with gsl_rng_free(). */
gsl_rng *rng_stream(uint64_t seed, const char *name);

/* The 64-bit seed rng_stream() uses for (seed, name); exposed for tests. */
uint64_t rng_derive(uint64_t seed, const char *name);

#endif
