/* kinds.c -- the rows of the built-in station kinds (kinds.h). */
#include "run/kinds.h"
#include "core/kind.h"
#include "gateway/extapi.h"
#include "gateway/hop.h"
#include "gateway/semcache.h"
#include "llm/llm.h"
#include "stations/encpool.h"
#include "stations/pool.h"
#include "stations/router.h"

/* Built-in kinds; the first is the default of `kind`.  A new built-in kind is
 * one row here (and its own file in its layer's folder). */
static const station_kind *const BUILTIN[] = { &pool_kind_generic, &llm_kind, &hop_kind, &extapi_kind, &semcache_kind,
                                               &router_kind, &encpool_kind };

void kinds_builtin(void)
{
    station_kind_set_builtin(BUILTIN, (int) (sizeof BUILTIN / sizeof BUILTIN[0]));
}
