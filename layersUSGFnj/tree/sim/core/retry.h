/* retry.h -- client timeouts and retries with exponential backoff.
 *
 * A client gives up on an attempt after `timeout_ms` (0: never) and tries
 * again, up to `retries` more times, after a backoff of
 * min(backoff_max_ms, backoff_ms x backoff_multiplier^(k-1)) before its k-th
 * retry; with jitter = full the wait is uniform on [0, that] (AWS's "full
 * jitter"), with none it is that value.  The abandoned attempt is not cancelled
 * at the server (it keeps its place and is served for nothing, which is how a
 * retry storm adds load); a request whose last attempt times out counts as
 * timed out.
 */
#ifndef LATSIM_RETRY_H
#define LATSIM_RETRY_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

typedef struct retry_cfg {
    double timeout_ms;     /* client deadline per attempt, ms (0: none) */
    int retries;           /* further attempts after the first, >= 0 */
    double backoff_ms;     /* wait before the first retry, ms, >= 0 */
    double multiplier;     /* growth of the wait per retry, >= 1 */
    double backoff_max_ms; /* cap on the wait, ms, >= backoff_ms */
    int jitter;            /* 1: full jitter (uniform on [0, wait]); 0: none */
} retry_cfg;

/* Checks C.  Returns 0, or -1 with a message in ERR and the key at fault in *KEY. */
int retry_check(const retry_cfg *c, const char **key, char *err, size_t errlen);

/* Wait in ms before retry number K (1-based), drawing the jitter from R (no
 * draw without jitter). */
double retry_backoff_ms(const retry_cfg *c, int k, gsl_rng *r);

#endif
