/* tbin.h -- which latsim program the tests run.
 *
 * `make test` sets LATSIM_BIN to the binary of the variant it built
 * (build/release/latsim, build/san/latsim, ...), so a sanitizer build tests its
 * own program without replacing ./latsim; run by hand, the tests use ./latsim. */
#ifndef LATSIM_TBIN_H
#define LATSIM_TBIN_H
#include <stdlib.h>

static inline const char *latsim_bin(void)
{
    const char *b = getenv("LATSIM_BIN");
    return b && *b ? b : "./latsim";
}
#define LATSIM latsim_bin()
/* The same program in a shell command line. */
#define LATSIM_SH "\"${LATSIM_BIN:-./latsim}\""
#endif
