/* calib.h -- the `latsim calib ...` and `latsim cost ...` commands (cli/calib.c). */
#ifndef LATSIM_CLI_CALIB_H
#define LATSIM_CLI_CALIB_H

/* Each returns the process exit status: 0 done, 1 runtime failure, 2 bad input. */
int calib_main(int argc, char **argv);
int cost_main(int argc, char **argv);
int echo_main(int argc, char **argv);

#endif
