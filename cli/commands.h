/* commands.h -- the entry point of each latsim command, for the dispatcher
 * (cli/latsim.c, the only caller).  Each takes the words after the command's
 * name and returns the process's exit status: 0 done, 1 runtime failure, 2 bad
 * input (run: 3 saturated; check: 1 a check failed). */
#ifndef LATSIM_COMMANDS_H
#define LATSIM_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

#include "cliopt.h"

int run_main(int argc, char **argv);         /* run.c */
int runs_main(int argc, char **argv);        /* info.c: runs, show, catalog, keys */
int show_main(int argc, char **argv);
int catalog_main(int argc, char **argv);
int keys_main(int argc, char **argv);
int sweep_main(int argc, char **argv);       /* sweep.c */
int plan_main(int argc, char **argv);        /* plan.c */
int explore_main(int argc, char **argv);     /* explore.c */
int check_main(int argc, char **argv);       /* check.c: check, baseline */
int baseline_main(int argc, char **argv);
int compare_main(int argc, char **argv);     /* compare.c */
int plot_main(int argc, char **argv);        /* plot.c */
int report_main(int argc, char **argv);      /* report.c */
int export_main(int argc, char **argv);      /* export.c */
int bench_main(int argc, char **argv);       /* bench.c */
int calib_main(int argc, char **argv);       /* calib.c: calib, cost, echo */
int cost_main(int argc, char **argv);
int validate_main(int argc, char **argv);
int echo_main(int argc, char **argv);

/* The gnuplot commands for plots/frontier.gp (data blocks, variables and the
 * points' labels, placed for a picture of W x H pixels so that none overlaps
 * another or leaves the frame) of stored plan ID, written to F: what `latsim
 * plot PLAN` draws, and `latsim report --html` inlines in its plan section
 * (plot.c).  Returns 0, or the exit status after printing one line (no such
 * plan, no stored simulations). */
struct sqlite3;
int plot_plan_commands(struct sqlite3 *db, int64_t id, int w, int h, FILE *f);

/* run's command line, which latsim --help also lists (run.c). */
extern const cli_cmd run_cmd;

#endif
