/* tcheck.h -- the tests aimed at the LLM schedulers, the KV and prefix caches,
 * disaggregation, speculative decoding and data parallelism run the sanity
 * checks at every step (LATSIM_CHECK=1), whatever period `make test` sets for
 * the rest of the suite (sim/engine/check.h): a suite declares
 * TestSuite(NAME, .init = tcheck_every_step). */
#ifndef LATSIM_TCHECK_H
#define LATSIM_TCHECK_H

#include <stdlib.h>

static inline void tcheck_every_step(void) { setenv("LATSIM_CHECK", "1", 1); }

#endif
