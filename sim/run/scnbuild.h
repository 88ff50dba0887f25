/* scnbuild.h -- the scenario loader's internals shared by its files: the
 * loader's context, the typed getters' shorthands and the calls between the
 * files.
 *
 * The loader is four files: scenario.c reads the sections into the typed
 * scenario (scenario_load); scnkeys.c holds the key schema, the checks of
 * every section and key against it (with a suggestion) and `latsim keys`;
 * scncheck.c checks the pools as a whole (next lists, cycles, the kinds' graph
 * checks, the clock's range, self-renewing events); scnresolve.c resolves
 * catalog references (scenario_resolve) and estimates the memory a run needs.
 * Internal to them: nothing else includes this header.
 */
#ifndef LATSIM_SCNBUILD_H
#define LATSIM_SCNBUILD_H

#include "core/scn.h"          /* scn_ctx and the typed getters */
#include "latsim/scenario.h"   /* scenario (its definition: run/scenario.h) */

struct station_kind;

/* The loader's context: the kinds' part (core/scn.h) and the scenario being built. */
typedef struct ctx {
    scn_ctx c;                /* the file, its overrides, the error buffer (what kinds see) */
    scenario *s;              /* the scenario being built */
} ctx;

/* ---- typed getters (core/scn.h) ------------------------------------------ */

#define fail(x, e, sec, key, ...) scn_fail_at(&(x)->c, (e), (sec), (key), __VA_ARGS__)
#define val(x, sec, key, e) scn_entry(&(x)->c, (sec), (key), (e))
#define get_i64(x, ...) scn_i64(&(x)->c, __VA_ARGS__)
#define get_int(x, ...) scn_int(&(x)->c, __VA_ARGS__)
#define get_num(x, ...) scn_num(&(x)->c, __VA_ARGS__)
#define get_bool(x, ...) scn_bool(&(x)->c, __VA_ARGS__)
#define get_enum(x, ...) scn_enum(&(x)->c, __VA_ARGS__)
#define get_str(x, ...) scn_str(&(x)->c, __VA_ARGS__)
#define get_dist(x, ...) scn_dist(&(x)->c, __VA_ARGS__)

/* scenario.c */
int pool_index(const scenario *s, const char *name);
const struct station_kind *section_kind(const scenario *s, const char *sec);

/* scnkeys.c: every key and section against the schema.  Return 0 or -1 with the error set. */
int check_keys(ctx *x);
int check_sections(ctx *x);

/* scncheck.c: the pools as a whole.  Return 0 or -1 with the error set. */
int build_next(ctx *x);
int check_graph(ctx *x);
int check_clock(ctx *x);
int check_periods(ctx *x);

#endif
