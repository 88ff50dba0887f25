/* cliopt.h -- the options of a command, declared once in a table: getopt_long
 * parses the command line from the table, and the command's --help is
 * generated from the same table, so that what a command accepts and what its
 * help lists cannot drift apart.  The options most commands share (--db,
 * --json, --set, and --help, which every command takes) are handled here.
 *
 * A command declares, for example:
 *     static const cli_opt OPTS[] = {
 *         { "seed", O_SEED, "N", "run seed", 0 },
 *         CLI_OPT_SET, CLI_OPT_JSON, CLI_OPT_DB, { NULL },
 *     };
 *     static const cli_cmd CMD = { "run", "FILE", "Simulates FILE.", "", OPTS, 0, 0 };
 * and calls cli_parse(&CMD, argc, argv, &args, its_option_fn, ctx).
 */
#ifndef LATSIM_CLIOPT_H
#define LATSIM_CLIOPT_H

#include <stdio.h>

#define CLI_MAX_SETS 256      /* --set options cli_args holds (a command may allow fewer) */

/* Ids of the options cli_parse handles itself; a command's own ids are > 0. */
enum { CLI_DB = -1, CLI_JSON = -2, CLI_SET = -3, CLI_COST_DB = -4 };

/* One option of a command. */
typedef struct cli_opt {
    const char *name;         /* long name without "--" ("seed"); typed in full, no abbreviation */
    int id;                   /* what the command's option function receives (> 0), or CLI_DB, CLI_JSON, CLI_SET */
    const char *metavar;      /* its value as the help shows it ("N", "PATH"); NULL: a flag, which takes no value */
    const char *help;         /* one line of help (wrapped to 80 columns when printed) */
    int flags;                /* CLI_REPEAT, CLI_REQUIRED, or 0 */
} cli_opt;

/* cli_opt.flags. */
enum {
    CLI_REPEAT = 1,           /* may be given more than once ("[--set S.K=V]..." in the synopsis) */
    CLI_REQUIRED = 2,         /* must be given (no brackets in the synopsis; cli_parse refuses its absence) */
};

/* The shared options, for a command's table (their help may be written out instead). */
#define CLI_OPT_DB   { "db", CLI_DB, "PATH", "database file (default $LATSIM_DB, else ./latsim.db)", 0 }
#define CLI_OPT_JSON { "json", CLI_JSON, NULL, "print one JSON object instead of the table", 0 }
#define CLI_OPT_COST_DB { "cost-db", CLI_COST_DB, "FILE", "calibration database where cost = auto, fitted and profile look their models up (default: the --db database); the same as --set sim.cost_db=FILE, the path made absolute", 0 }
#define CLI_OPT_SET  { "set", CLI_SET, "S.K=V", "override key K of section S, e.g. --set workload.rate=80 or --set \"pool cpu.servers=5\" (repeatable)", CLI_REPEAT }

/* A command: its name, its arguments and its options. */
typedef struct cli_cmd {
    const char *name;         /* as typed after "latsim": "run", "calib import" */
    const char *args;         /* its arguments in the synopsis ("FILE", "[FILE...]", "" none); forms
                                 separated by '\n' get a synopsis line each ("\nadd FILE": none, or add FILE) */
    const char *about;        /* what it does: text printed after the synopsis ("" none) */
    const char *notes;        /* text printed after the options (exit status...; "" none) */
    const cli_opt *opts;      /* its options, in the order the help lists them, ended by { NULL } */
    int max_sets;             /* most --set options it takes (0: CLI_MAX_SETS) */
    int dash_args;            /* 1: a word with one leading '-' (other than -h) is an argument, not an
                                 option: an ID such as -1 is then refused as an ID */
} cli_cmd;

/* The shared options and the arguments, after cli_parse. */
typedef struct cli_args {
    const char *db;           /* --db PATH; NULL when not given */
    int json;                 /* 1: --json was given */
    const char *sets[CLI_MAX_SETS]; /* the --set values, in order (pointers into argv) */
    int nsets;                /* how many */
    char **pos;               /* the arguments (words that are no option or option value), in order */
    int npos;                 /* how many */
} cli_args;

/* Receives each of the command's own options, in the order given: its ID and
 * its value (NULL for a flag).  Returns 0, or the exit status (2) after
 * printing one line. */
typedef int (*cli_opt_fn)(void *ctx, int id, const char *val);

/* cli_parse's "go on": the command line was parsed and the command runs. */
#define CLI_GO (-1)

/* Parses ARGC words ARGV (those after the command's name) of command C with
 * getopt_long: --help or -h prints cli_usage on stdout; --db, --json and --set
 * go into A; every other option of C's table goes to FN (with CTX).  Options
 * may come before or after the arguments; "--" ends the options.  The
 * arguments are moved, in order, to the front of ARGV (A->pos).  Returns
 * CLI_GO, or the exit status: 0 after --help; 2 after one line on stderr,
 * "latsim: CMD: unknown option '--x' (see latsim CMD --help)", "latsim: CMD:
 * --seed needs a value (see latsim CMD --help)", "latsim: CMD: --json takes no
 * value, got '--json=1' (...)", "latsim: CMD: too many --set options (max N)",
 * "latsim: CMD: missing --vary SPEC (see latsim CMD --help)" (CLI_REQUIRED),
 * or FN's own; 1 when memory ran out. */
int cli_parse(const cli_cmd *c, int argc, char **argv, cli_args *a, cli_opt_fn fn, void *ctx);

/* Writes C's help to OUT: the synopsis (cli_synopsis), ABOUT, every option with
 * its help (cli_options), NOTES. */
void cli_usage(const cli_cmd *c, FILE *out);

/* Writes one synopsis line per form of C's arguments: LEAD ("usage: " for the
 * first; as many blanks for the others), "latsim", C's name, the form and every
 * option ("[--seed N]"), wrapped at 80 columns under the form. */
void cli_synopsis(const cli_cmd *c, const char *lead, FILE *out);

/* Writes C's options to OUT, one "  --seed N   help" each, then "-h, --help". */
void cli_options(const cli_cmd *c, FILE *out);

/* Writes "  LEFT" and HELP from column COL (on the next line when LEFT does not
 * fit), HELP wrapped at 80 columns. */
void cli_row(FILE *out, const char *left, const char *help, int col);

#endif
