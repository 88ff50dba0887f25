/* latsim.c -- the command-line front end's dispatcher: the command's name ->
 * its function (commands.h), and the program's own help and version.  Each
 * command parses its options from its table (cliopt.h) and does its work in
 * sim/ and calib/.  Exit codes: 0 success, 1 runtime failure, 2 bad input
 * (usage, scenario, trace, database path); run: 3 saturated.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include "cliopt.h"
#include "cliutil.h"
#include "calib.h"
#include "commands.h"
#include "observed.h"
#include "latsim/store.h"

/* One command: what `latsim NAME ...` runs, and its line in latsim --help. */
typedef struct command {
    const char *name;                   /* as typed; NULL for a further help line of the one above */
    int (*main)(int argc, char **argv); /* the words after the name; returns the exit status */
    const char *synopsis;               /* in latsim --help: "run FILE [options]" */
    const char *summary;                /* what it does, one line */
} command;

static const command COMMANDS[] = {
    { "run", run_main, "run FILE [options]", "simulate a scenario, print the report, store the run" },
    { "runs", runs_main, "runs", "list stored runs" },
    { "show", show_main, "show ID", "print a stored run" },
    { "catalog", catalog_main, "catalog", "list the GPUs and models in the catalog" },
    { NULL, NULL, "catalog add FILE", "add the [gpu NAME] / [model NAME] sections of FILE to the catalog" },
    { NULL, NULL, "catalog add --hf CONFIG.json --name NAME", "add a model from its Hugging Face config.json" },
    { "keys", keys_main, "keys", "list every scenario section and key, with defaults" },
    { "bench", bench_main, "bench", "run the speed benchmark and print its table" },
    { "calib", calib_main, "calib ...", "measurements, importers, fitted cost models (latsim calib --help)" },
    { "cost", cost_main, "cost ...", "predicted step time of a cost model (latsim cost --help)" },
    { "echo", echo_main, "echo [--port P]", "TCP echo server for latsim calib net --target" },
    { "sweep", sweep_main, "sweep FILE --vary K=R", "run a scenario over a range of values; highest meeting the SLO" },
    { "explore", explore_main, "explore GRID.ini", "run a grid of configurations x seeds (resumable, MPI); Pareto frontier" },
    { "plan", plan_main, "plan FILE --target-rate R", "cheapest configuration meeting the [slo] at rate R" },
    { "check", check_main, "check [FILE...]", "SLO and baseline regression check for CI (exit 0/1/2, --junit)" },
    { "baseline", baseline_main, "baseline accept RUN", "make a stored run its scenario's baseline" },
    { "compare", compare_main, "compare A B [C...]", "designs (scenarios or runs) side by side: headline, pools, CI flags" },
    { "plot", plot_main, "plot RUN|SWEEP|PLAN", "gnuplot pictures: CDFs, latency vs load, breakdown, cost frontier" },
    { "report", report_main, "report RUN|FILE... --html OUT", "one self-contained HTML design review of runs or scenarios" },
    { "export", export_main, "export RUN --csv DIR", "a run's tables as CSV files" },
    { "replay", replay_main, "replay FILE --scenario S.ini", "an observed run simulated: observed vs predicted (docs/observed.md)" },
    { "validate", validate_main, "validate", "cross-validated accuracy of the learned step model (docs/accuracy.md)" },
};

#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

/* latsim --help: the commands, run's options (from run's table) and the program's own. */
static void usage(FILE *out)
{
    fputs("usage: latsim COMMAND [options]\n"
          "\n"
          "Discrete-event latency simulator and capacity planner for AI inference serving.\n"
          "\n"
          "commands (latsim COMMAND --help for each one's options):\n", out);
    for (size_t i = 0; i < NCOMMANDS; i++) cli_row(out, COMMANDS[i].synopsis, COMMANDS[i].summary, 25);
    fputs("\nrun options (latsim run --help for details):\n", out);
    cli_options(&run_cmd, out);
    fputs("\nprogram options:\n", out);
    cli_row(out, "-h, --help", "this help", 25);
    cli_row(out, "--version", "print the version", 25);
}

/* sweep, plan and explore under mpirun (make MPI=1): rank 0 runs the command
 * and hands its simulation tasks, batch after batch, to the other ranks, which
 * serve them (taskmpi_serve) until rank 0 finishes; the same one process
 * otherwise.  Returns the command's exit status. */
static int run_distributed(const command *c, int argc, char **argv)
{
    taskmpi_init(NULL, NULL);
    taskmpi_set_command(c->name);
    int rc;
    if (taskmpi_rank() > 0) {
        /* Rank 0 speaks for the job. */
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {}
        rc = taskmpi_serve() == 0 ? 0 : 1;
    } else {
        rc = c->main(argc, argv);
        char lost[512];
        int nl = taskmpi_lost(lost, sizeof lost);
        /* explore says so itself, before its summary (and stores it). */
        if (nl > 0 && strcmp(c->name, "explore"))
            fprintf(stderr, "latsim: warning: %s: lost MPI rank%s %s: %s tasks ran on the others\n", c->name, nl > 1 ? "s" : "",
                    lost, nl > 1 ? "their" : "its");
    }
    fflush(NULL);
    taskmpi_finalize(rc);
    return rc;
}

/* The number of ranks an MPI launcher started this process among, from the
 * environment it sets (Open MPI, MPICH/Hydra and Intel MPI's PMI, PMIx): 0 when
 * none did, -1 when one did without saying how many; the variable into *VAR
 * and this process's rank (-1 unknown) into *RANK. */
static long launched_ranks(const char **var, long *rank)
{
    static const char *const SIZE[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", NULL };
    static const char *const RANK[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID", NULL };
    *rank = -1;
    for (int i = 0; RANK[i]; i++) {
        const char *v = getenv(RANK[i]);
        if (v && *v) { *rank = strtol(v, NULL, 10); break; }
    }
    for (int i = 0; SIZE[i]; i++) {
        const char *v = getenv(SIZE[i]);
        if (v && *v) { *var = SIZE[i]; return strtol(v, NULL, 10); }
    }
    if (*rank >= 0) { *var = "PMIX_RANK"; return -1; }
    return 0;
}

/* Refuses, before any work, to run command NAME once per rank: a plain build
 * started by an MPI launcher (every rank would run the whole command and store
 * its results: three explorations for mpirun -n 3), or the MPI build's
 * commands that it does not distribute (run, calib, catalog, ...).  One line,
 * from rank 0 only (or every rank when the rank is unknown).  Returns 0 to go
 * on, or the exit status 2. */
static int refuse_ranks(const char *name, int distributed)
{
    const char *var = NULL;
    long rank, n = launched_ranks(&var, &rank);
    if (n == 0 || n == 1) return 0;
    if (!taskmpi_built()) {
        if (rank <= 0)
            cu_die(2, "%s: started by an MPI launcher (%s%s%.0ld) but built without MPI: each rank would run the whole "
                   "command; rebuild with make MPI=1 (sweep, plan and explore are distributed), or run it without mpirun",
                   name, var, n > 0 ? "=" : "", n > 0 ? n : 0);
        return 2;
    }
    if (distributed || n < 0) return 0;   /* the MPI build: its own MPI_Comm_size decides */
    if (rank <= 0)
        cu_die(2, "%s: not distributed over MPI ranks (only sweep, plan and explore are): started with %ld ranks, each "
               "would run it whole; run it without mpirun (or with one rank)", name, n);
    return 2;
}

int main(int argc, char **argv)
{
    /* GSL's default handler aborts on any error (an allocation that fails): off,
     * so that the NULL and status checks after each GSL call do their work. */
    gsl_set_error_handler_off();
    /* The planner, sweeps and explore run thousands of simulations in one
     * process, each allocating and freeing its stations and histograms: with
     * glibc's defaults the freed heap top goes back to the kernel each time
     * and every simulation pays its page faults again (300 000 minor faults,
     * 0.8 s of system time for `make bench`'s planner case).  Keeping up to
     * 64 MiB of freed heap removes most of that churn (29 000 faults, 0.1 s).
     * The mmap threshold is left at glibc's: serving large blocks from the
     * heap as well would save a little more but grows the heap past what
     * valgrind's tools allow (they stop the program). */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    /* The calibrator's models (the calibrated cost models auto, the default,
     * fitted and profile; stored network links) join the simulator's tables
     * before any command loads a scenario or lists keys (latsim_use_calib): the
     * simulator reaches calib/ only through these registrations. */
    if (latsim_use_calib() != 0) return cu_die(1, "cannot add the calibrated cost models to the cost-model table");
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!strcmp(cmd, "--version")) { printf("latsim %s\n", LATSIM_VERSION); return 0; }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (COMMANDS[i].name && !strcmp(cmd, COMMANDS[i].name)) {
            int distributed = !strcmp(cmd, "sweep") || !strcmp(cmd, "plan") || !strcmp(cmd, "explore");
            int help = argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
            int rc = help ? 0 : refuse_ranks(cmd, distributed);
            if (rc) return rc;
            if (distributed)
                return run_distributed(&COMMANDS[i], argc - 2, argv + 2);
            return COMMANDS[i].main(argc - 2, argv + 2);
        }
    return cu_die(2, "unknown command '%s' (see latsim --help)", cmd);
}
