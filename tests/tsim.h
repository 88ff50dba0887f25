/* tsim.h -- helpers for tests that simulate a scenario in-process: load and
 * resolve a scenario text against a catalog database (a fresh in-memory one
 * or the test's own file), ask what error it gives, or run a text or a
 * scenario file and fail the test on any error. */
#ifndef LATSIM_TSIM_H
#define LATSIM_TSIM_H

#include <stddef.h>
#include <stdint.h>
#include "run/scenario.h"
#include "run/sim.h"
#include "core/catalog.h"

/* Loads TEXT (reported as the file PATH) into SC and resolves it against the
 * database file DB (":memory:": a fresh one holding the built-in catalog).
 * Returns 0, or -1 with the message in ERR (SC freed). */
int tsim_load_resolve_db(const char *path, const char *text, const char *db, scenario *sc, char *err,
                         size_t errlen);

/* tsim_load_resolve_db against a fresh in-memory catalog.  Returns 0, or -1
 * with the message in ERR (SC freed). */
int tsim_load_resolve(const char *path, const char *text, scenario *sc, char *err, size_t errlen);

/* Loads and resolves TEXT (as PATH) against a fresh in-memory catalog and
 * frees it.  Returns 0 with ERR "" when it loads and resolves, or -1 with the
 * message it is refused with in ERR. */
int tsim_load_error(const char *path, const char *text, char *err, size_t errlen);

/* Loads TEXT (as PATH), resolves it against the database file DB, simulates
 * it with SEED into RES; any error fails the test (the message and the text
 * are shown), as does a result whose pools are not the scenario's. */
void tsim_run_db(const char *path, const char *text, const char *db, uint64_t seed, sim_result *res);

/* tsim_run_db against a fresh in-memory catalog. */
void tsim_run(const char *path, const char *text, uint64_t seed, sim_result *res);

/* Loads the scenario file FILE with the NSETS --set overrides SETS, resolves
 * it against a fresh in-memory catalog and simulates it with SEED into RES;
 * any error fails the test. */
void tsim_run_file(const char *file, const char *const *sets, int nsets, uint64_t seed, sim_result *res);

/* GPU and MODEL of the built-in catalog into G and M; an unknown name fails the test. */
void tsim_catalog(const char *gpu, const char *model, gpu_spec *g, model_spec *m);

#endif
