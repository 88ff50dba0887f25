/* warmup.c -- the automatic warm-up rule (see warmup.h). */
#include "warmup.h"

void warmup_init(warmup *w, int automatic, uint64_t min, uint64_t requests)
{
    w->automatic = automatic;
    w->min = min;
    w->max = automatic ? min + requests : min;
}

int warmup_ready(const warmup *w, uint64_t id, uint64_t in_system)
{
    if (id < w->min) return 0;
    if (!w->automatic || id >= w->max) return 1;
    return id >= WARMUP_FILL_FACTOR * in_system;
}

uint64_t warmup_max(const warmup *w)
{
    return w->max;
}
