/* errmsg.h -- writing a one-line error message into a caller's buffer: the
 * internal name of the public latsim/errmsg.h, which holds the helpers
 * (errmsg_set, errmsg_field, ERRMSG_SHOWN), so that the library and the
 * front end share one definition. */
#ifndef LATSIM_ENGINE_ERRMSG_H
#define LATSIM_ENGINE_ERRMSG_H

#include "latsim/errmsg.h"

#endif
