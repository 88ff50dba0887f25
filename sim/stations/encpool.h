/* encpool.h -- an encoder pool (`kind = encoder`): an embedding, classifier or
 * reranker service of `servers` replicas (each one GPU, or a CPU), running an
 * encoder model (core/encoder.h) over requests' prompts truncated to
 * max_seq_len, with dynamic batching: a free replica takes up to max_batch
 * waiting requests into one forward pass, padded to the longest, as soon as
 * max_batch are waiting or the oldest has waited max_wait_ms.
 */
#ifndef LATSIM_ENCPOOL_H
#define LATSIM_ENCPOOL_H

#include "core/encoder.h"
#include "core/kind.h"

typedef struct encpool_cfg {
    enc_cfg enc;              /* the model, its device and truncation */
    int max_batch;            /* sequences one pass takes, at most */
    double max_wait_ms;       /* how long the oldest waiting request waits for a fuller batch, ms */
    double usd_per_hour;      /* $ per replica-hour (default: its GPU's price_hr; a CPU's: 0) */
    int usd_given;            /* 1: usd_per_hour was given */
} encpool_cfg;

extern const station_kind encpool_kind;

#endif
