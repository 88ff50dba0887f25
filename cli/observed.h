/* observed.h -- the commands on observed benchmark runs (cli/observed.c, obsreplay.c):
 * `latsim replay`, `latsim calib import observed` and `latsim calib show observed`.
 * Each takes the arguments after its own name and returns the exit status
 * (0 done, 1 runtime failure, 2 bad input). */
#ifndef LATSIM_OBSERVED_H
#define LATSIM_OBSERVED_H

/* latsim replay FILE | --run ID  --scenario S.ini [--pool P] [--format F] [--json] [--plot DIR] [--db PATH] */
int replay_main(int argc, char **argv);

/* latsim calib import observed FILE --scenario S.ini [--pool P] [--format F] [--db PATH] */
int calib_import_observed_main(int argc, char **argv);

/* latsim calib import engine-log FILE --scenario S.ini [--pool P] [--db PATH] */
int calib_import_englog_main(int argc, char **argv);

/* latsim calib forget RUN [--db PATH] */
int calib_forget_main(int argc, char **argv);

/* latsim calib show observed ID [--db PATH] */
int calib_show_observed_main(int argc, char **argv);

#endif
