/* bench.h -- `latsim bench`: the speed benchmark table. */
#ifndef LATSIM_BENCH_H
#define LATSIM_BENCH_H

/* Runs the benchmark cases (each in its own process, so peak memory is its
 * own) and prints the table.  Returns the exit status. */
int bench_main(int argc, char **argv);

#endif
