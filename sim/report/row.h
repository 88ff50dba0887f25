/* row.h -- one reported number: the rows a report is made of (report.h),
 * that SLOs are evaluated over (slo.h) and that the store keeps (store.h);
 * defined in the public latsim/report.h. */
#ifndef LATSIM_ROW_H
#define LATSIM_ROW_H

#include "latsim/report.h"   /* store_stat: public */

#endif
