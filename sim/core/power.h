/* power.h -- a GPU's board power against its busy share, and the energy a pool
 * of GPUs draws over a window (docs/metrics.md, "Energy").
 *
 * By default power is linear between the catalog's idle_w (a GPU holding a
 * model and doing nothing) and max_w (stepping all the time):
 *   P(u) = idle_w + (max_w - idle_w) u,
 * u being the busy share (an LLM replica is busy while a step runs).  A
 * calibrated curve (the pool key power_curve, "u:w, u:w, ...") replaces it:
 * the watts are interpolated linearly between its points over utilisation,
 * held flat beyond its ends.  `power_curve = calib` builds the curve from the
 * power samples stored in the calibration tables (`latsim calib import power`)
 * for the pool's GPU, read through the loader the calibrator registers
 * (power_set_loader: the simulator reads no calibration table itself).
 */
#ifndef LATSIM_POWER_H
#define LATSIM_POWER_H

#include <stddef.h>
#include <sqlite3.h>
#include "latsim/catalog.h"

#define POWER_MAX_POINTS 32
#define POWER_MAX_W 1e5        /* most watts a power point may give (100 kW: the power importer's bound too) */

typedef struct power_curve {
    int n;                        /* points (0: none, use the linear model) */
    double u[POWER_MAX_POINTS];   /* utilisation, [0, 1], strictly increasing */
    double w[POWER_MAX_POINTS];   /* board power per GPU at u[i], W (>= 0) */
    int from_db;                  /* 1: power_curve = calib: the points are read from the
                                     calibration store when the pool is resolved */
} power_curve;

/* Parses TEXT ("0:90, 0.5:400, 1:700") into C.  Returns 0, or -1 with a
 * message in ERR (a point that is not u:w, u outside [0, 1] or not
 * increasing, negative watts, too many points). */
int power_curve_parse(const char *text, power_curve *c, char *err, size_t errlen);

/* Reads measured points from the CSV file PATH (relative to DIR unless
 * absolute; DIR NULL or "": as given) into C: columns `utilization` (busy
 * share, 0..1) and `watts` (board power of one GPU, W), and optionally `gpu`
 * (rows naming another GPU than GPU, case-insensitively, are skipped).  The
 * samples are averaged in bins of utilisation 0.05 wide (mean utilisation,
 * mean watts per bin that has samples), which become the curve's points.
 * Returns 0, or -1 with "PATH:LINE: message" in ERR (a missing column, a cell
 * out of range, no rows for GPU). */
int power_curve_load(const char *path, const char *dir, const char *gpu, power_curve *c, char *err, size_t errlen);

/* Reads the stored power samples of GPU from DB, calling ADD(CTX, u, w) for
 * each (u the busy share, w watts).  Returns the samples, or -1 with ERR set. */
typedef int (*power_rows_fn)(sqlite3 *db, const char *gpu, void (*add)(void *ctx, double u, double w), void *ctx,
                             char *err, size_t errlen);

/* The calibrator registers its reader here (calib/cimport.c, cimp_power_register). */
void power_set_loader(power_rows_fn fn);

/* C from the power samples of GPU stored in DB: binned as power_curve_load
 * (bins 0.05 wide, mean utilisation and mean watts per bin with samples),
 * then made monotone (watts non-decreasing in utilisation: adjacent bins that
 * decrease are pooled into their sample-weighted mean, pool-adjacent-
 * violators); C->from_db stays 1.  Returns 0, or -1 with ERR set: no samples of
 * GPU stored (ERR names it and the import command), no loader or DB, a
 * database error. */
int power_curve_stored(sqlite3 *db, const char *gpu, power_curve *c, char *err, size_t errlen);

/* Watts one GPU G draws at busy share U (clamped to [0, 1]): C's curve when it
 * has points, else the linear model.  Returns NAN when neither is known
 * (no curve and G's max_w is 0). */
double power_at(const gpu_spec *g, const power_curve *c, double u);

/* Joules N_GPU GPUs per unit draw over a window: POWERED_S unit-seconds
 * powered on (each unit idle or busy), BUSY_S of them busy; the busy share
 * busy_s / powered_s priced by power_at.  For the linear model this is
 *   n_gpu (idle_w powered_s + (max_w - idle_w) busy_s)
 * exactly.  Returns NAN when the power is unknown, 0 when POWERED_S is 0. */
double power_energy_j(const gpu_spec *g, const power_curve *c, int n_gpu, double powered_s, double busy_s);

#endif
