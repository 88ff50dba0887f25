/* cuse.c -- the calibrator joins the simulator: latsim_use_calib() registers
 * every loader and row of calib/ with the simulator's tables in one call (see
 * calib.h).  The simulator reaches calib/ only through these registrations. */
#include "calib.h"

int latsim_use_calib(void)
{
    cnet_register();        /* hop = measured(ID): stored network fits */
    cnccl_register();       /* the roofline's collectives: imported nccl-tests profiles */
    cimp_power_register();  /* power_curve = calib: stored power samples */
    cimp_link_register();   /* kv_link_profile: stored send/recv profiles */
    return ccost_register();   /* cost = auto, fitted, profile; learned */
}
