/* coldstart.h -- how long a replica takes to start, and how slow it is at first.
 *
 * A starting replica loads its weights from storage: load time = startup_s (a
 * fixed part: container start, CUDA context, allocator) + weight bytes /
 * storage read bandwidth.  Presets for the bandwidth:
 *   nvme              7.0 GB/s  local PCIe 4.0 x4 NVMe SSD, sequential read (the
 *                               class figure in vendors' datasheets, e.g.
 *                               https://nuvorix.com/glossary/nvme: "PCIe 4.0 x4 NVMe
 *                               SSDs: up to 7,000 MB/s")
 *   network           1.048576 GB/s  network block storage: an AWS EBS gp3 volume at
 *                               its highest provisioned throughput, 1000 MiB/s
 *                               (EC2 API CreateVolume: "Valid Range: Minimum value
 *                               of 125. Maximum value of 1000")
 *   network_baseline  0.131072 GB/s  the same volume at its baseline, 125 MiB/s
 * The seeds' case (model load 0.3 s on local NVMe, 2.1 s on network storage) is a
 * model of about 2 GB (INT8 weights of a 7B model are ~1.8 GB in the seeds):
 * 2.1e9 B / 7.0 GB/s = 0.30 s and 2.1e9 B / 1.049 GB/s = 2.0 s.
 * After loading, the first `cold_requests` requests it serves are slower by
 * `cold_factor` (the seeds: a cold request takes 3-5x the warm latency).
 */
#ifndef LATSIM_COLDSTART_H
#define LATSIM_COLDSTART_H

#include <stddef.h>
#include <stdint.h>

typedef struct cold_cfg {
    double storage_gbs;    /* weight read bandwidth, GB/s (10^9 B/s), > 0 */
    double startup_s;      /* fixed start-up time besides loading, s, >= 0 */
    double cold_factor;    /* service-time multiplier of the first requests, >= 1 */
    int64_t cold_requests; /* requests served slow after a start, >= 0 */
} cold_cfg;

/* Bandwidth of preset NAME ("nvme", "network", "network_baseline") in GB/s into
 * *GBS.  Returns 0, or -1 for an unknown name. */
int cold_preset(const char *name, double *gbs);

/* The preset names, '|'-separated, for messages. */
#define COLD_PRESETS "nvme|network|network_baseline"

/* Checks C.  Returns 0, or -1 with a message in ERR and the key at fault in *KEY
 * ("storage_gbs", "startup_s", "cold_factor", "cold_requests"). */
int cold_check(const cold_cfg *c, const char **key, char *err, size_t errlen);

/* Seconds from the start of a replica to its readiness with WEIGHT_BYTES of
 * weights per GPU read in parallel (tp GPUs each read their shard). */
double cold_load_s(const cold_cfg *c, double weight_bytes);

/* Service-time multiplier for a replica that has served SERVED requests since
 * it started: cold_factor for the first cold_requests, then 1. */
double cold_factor(const cold_cfg *c, uint64_t served);

#endif
