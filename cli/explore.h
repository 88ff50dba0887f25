/* explore.h -- what the files of `latsim explore` share (cli/explore.c,
 * exploregrid.c, exploresum.c): the exploration, its axes, rules and
 * configurations. */
#ifndef LATSIM_CLI_EXPLORE_H
#define LATSIM_CLI_EXPLORE_H

#include <stdint.h>
#include <stdio.h>
#include "latsim/slo.h"
#include "latsim/store.h"
#define MAX_AXES   24
#define MAX_VALUES 4096
#define MAX_RULES  64
#define MAX_SLOSET 16
#define BIG_GRID   10000000.0     /* tasks above which --yes is needed */

typedef struct axis {
    char name[200];           /* as written, e.g. "pool.chat.tp" */
    char sec[200], key[100];  /* the scenario section ("pool chat") and key ("tp") */
    char **v;                 /* its values */
    int nv;
    int line;                 /* line in GRID */
} axis;

typedef struct rule {
    int n;                    /* terms */
    int ax[MAX_AXES], val[MAX_AXES]; /* axis and value index of each (-1: a value not on the axis) */
    char text[300];           /* as written */
    int line;
    long hits;                /* configurations it excluded */
} rule;

typedef struct conf {
    int state;                /* 0 to run, 1 excluded, 2 skipped (reason) */
    char *reason;             /* skipped: why (malloc'd) */
    char *settings;           /* "pool chat.tp=2; workload.rate=40" (malloc'd) */
    char **sets;              /* "SEC.KEY=V" per axis (malloc'd), then the slo terms */
    double weight;            /* expected requests (largest first) */
} conf;

typedef struct explore {
    const char *file, *dbpath;
    int workers, resume, json, progress, yes;
    axis ax[MAX_AXES];
    int nax;
    rule rules[MAX_RULES];
    int nrules;
    int nseeds;
    int slo_on;               /* 1: keep only configurations meeting the SLO */
    char *sloset[MAX_SLOSET]; /* slo = TERM=LIMIT: "slo.TERM=LIMIT" (malloc'd) */
    int nsloset;
    int slo_line;             /* the GRID line of [explore] slo's terms (0: none) */
    int objective;            /* 0 cost, 1 the SLO metric (p99), 2 GPU energy (energy_kwh) */
    uint64_t base_seed;
    slo_spec slo;             /* of the base configuration */
    char metric[32], stat[8]; /* the SLO metric of the frontier */
    long nconf;               /* configurations (product) */
    conf *c;
    task *ts;                 /* nconf x nseeds, index = conf x nseeds + seed */
    int ntask;
    char *text;               /* GRID as read */
    /* run state (rank 0) */
    sqlite3 *db;
    int64_t id;               /* the exploration (sweeps row) */
    int in_tx, stored_now, failed, done_before, total_run;
    int elsewhere;            /* tasks another process claimed (a concurrent --resume) */
    char owner[320];          /* this process as the owner of its claims (planstore_owner) */
    double t0, last_print;
    char err[2048];
    int show_progress;
} explore;

/* ---- exploregrid.c: the grid ------------------------------------------------ */

/* Reads GRID's [explore] section (its own parser: line numbers, repeated
 * exclude keys).  Returns 0 or the exit status (printed). */
int parse_grid(explore *e);

/* Each axis on its own: some value must load with the base scenario (a key
 * the scenario does not know, a value no configuration can take: bad input).
 * Also reads the base seed and [slo].  Returns 0 or the exit status (printed). */
int check_axes(explore *e);

/* The configurations and tasks (rank 0; the other ranks receive each task whole).  Returns 0
 * or the exit status (printed). */
int expand(explore *e);

/* Rank 0: validates each configuration not excluded (the skipped ones keep the
 * reason) and warns about the rules that exclude nothing.  Returns 0 or the
 * exit status (printed). */
int validate(explore *e);

/* ---- exploresum.c: the result --------------------------------------------- */

/* Reads every stored task of the exploration back, then prints and stores the
 * frontier and the best configuration.  Returns 0 or the exit status. */
int summarise(explore *e, double wall, const char *lost);

#endif
