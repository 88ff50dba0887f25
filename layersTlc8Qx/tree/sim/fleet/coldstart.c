/* coldstart.c -- replica start-up time from weight bytes and storage bandwidth,
 * and the slow first requests after a start (see coldstart.h for the presets
 * and their sources). */
#include "fleet/coldstart.h"
#include "engine/errmsg.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;      /* preset as written in scenarios */
    double gbs;            /* read bandwidth, GB/s */
} PRESETS[] = {
    {"nvme", 7.0},
    {"network", 1000.0 * 1048576 / 1e9},
    {"network_baseline", 125.0 * 1048576 / 1e9},
};

int cold_preset(const char *name, double *gbs)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(name, PRESETS[i].name) == 0) {
            *gbs = PRESETS[i].gbs;
            return 0;
        }
    return -1;
}

int cold_check(const cold_cfg *c, const char **key, char *err, size_t errlen)
{
    const char *k = NULL;
    if (!(c->storage_gbs > 0) || !isfinite(c->storage_gbs)) {
        k = "storage_gbs";
        errmsg_set(err, errlen, "must be > 0 GB/s, got %g", c->storage_gbs);
    } else if (!(c->startup_s >= 0) || !isfinite(c->startup_s)) {
        k = "startup_s";
        errmsg_set(err, errlen, "must be >= 0 (a delay), got %g", c->startup_s);
    } else if (!(c->cold_factor >= 1) || !isfinite(c->cold_factor)) {
        k = "cold_factor";
        errmsg_set(err, errlen, "must be >= 1 (a slow-down), got %g", c->cold_factor);
    } else if (c->cold_requests < 0) {
        k = "cold_requests";
        errmsg_set(err, errlen, "must be >= 0, got %lld", (long long) c->cold_requests);
    }
    if (key)
        *key = k;
    return k ? -1 : 0;
}

double cold_load_s(const cold_cfg *c, double weight_bytes)
{
    return c->startup_s + weight_bytes / (c->storage_gbs * 1e9);
}

double cold_factor(const cold_cfg *c, uint64_t served)
{
    return served < (uint64_t) c->cold_requests ? c->cold_factor : 1.0;
}
