/* store.h -- runs and their results, kept in SQLite.
 *
 * One database file (default ./latsim.db) holds every run: the scenario text and
 * its hash, the effective configuration (after --set), the seed, the program
 * version, start time, wall time, status, and every reported statistic, plus the
 * catalog tables (catalog.h).  A run is written in one transaction: either all
 * of it is there or none of it is.  Its interface is public (latsim/store.h);
 * this header adds the store's own settings.
 */
#ifndef LATSIM_STORE_H
#define LATSIM_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>
#include "core/catalog.h"
#include "run/tseries.h"
#include "report/row.h"
#include "latsim/store.h"   /* the run database, planner tables and tasks: public */

/* How long a connection waits for another's lock, retrying, before failing:
 * STORE_LOCK_WAIT_S seconds, or $LATSIM_LOCK_WAIT_S (0..86400).  Returns ms. */
#define STORE_LOCK_WAIT_S 120
int store_lock_wait_ms(void);

#endif
