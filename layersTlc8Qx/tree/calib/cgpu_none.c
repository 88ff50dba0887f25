/* cgpu_none.c -- the CUDA backend's entry points in a build without CUDA
 * (`make` without CUDA=1): `latsim calib gpu` says so and exits 2.  A CUDA build
 * compiles calib/cgpu.cu instead of this file (see the Makefile). */
#include "cbench.h"

#include "engine/errmsg.h"

int cb_gpu_available(char *why, size_t n)
{
    errmsg_set(why, n, "calib gpu: this latsim was built without CUDA (rebuild with make CUDA=1 "
               "on a machine with the CUDA toolkit)");
    return 0;
}

int cb_gpu_run(cb_plan *p, cb_device *dev, char *err, size_t errlen)
{
    (void)p;
    (void)dev;
    return cb_gpu_available(err, errlen), -1;
}
