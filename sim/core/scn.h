/* scn.h -- how a station kind reads its keys: typed getters over the parsed
 * scenario file (config.h), each reporting a bad value as the one line
 * "FILE:LINE: [SEC] KEY: what is wrong", and the few facts about the rest of
 * the scenario a kind may need when it resolves (catalog additions, the
 * workload's token ranges).  The scenario loader (run/scenario.c) fills an
 * scn_ctx and hands it to each kind's hooks (kind.h); kinds never see the
 * scenario itself.
 */
#ifndef LATSIM_SCN_H
#define LATSIM_SCN_H

#include <stddef.h>
#include <stdint.h>
#include "core/catalog.h"
#include "core/config.h"
#include "core/dist.h"

/* What a kind's resolve hook may know of the scenario beyond its own section. */
typedef struct scn_facts {
    const model_spec *models; /* [model NAME] sections: catalog additions */
    int nmodels;
    const gpu_spec *gpus;     /* [gpu NAME] sections: catalog additions */
    int ngpus;
    const dist *prompt;       /* the workload's prompt tokens per request (its least value matters) */
    const dist *output;       /* its output tokens per request */
    int trace_tokens;         /* 1: a trace gives each request's token counts */
    int hash_block_tokens;    /* prompt tokens per hash id of the workload's trace (0: no trace hash ids) */
    double run_requests;      /* requests the run asks for: warm-up and measured */
    struct sqlite3 *cost_db;  /* [sim] cost_db opened read-only: where calibrated cost models are
                                 looked up (NULL: the catalog's database) */
    int32_t trace_adapter_max;/* the largest LoRA adapter a trace row names (workload adapter_column; 0 the
                                 base model), -1: none */
    const char *trace_adapter_at; /* "PATH:LINE: column 'NAME'" of the first row naming it, or NULL */
} scn_facts;

/* A kind's view of the scenario being loaded. */
typedef struct scn_ctx {
    const cfg *raw;           /* the file and its overrides, as parsed */
    const scn_facts *facts;   /* set for resolve and footprint hooks; NULL while parsing */
    char *err;                /* where a failing getter writes its one-line message */
    size_t errlen;            /* its size, bytes */
} scn_ctx;

/* One key of a kind's table (for unknown-key detection and `latsim keys`). */
typedef struct scn_key {
    const char *key;          /* NULL ends a table */
    const char *def;          /* default, as text ("" = required or derived) */
    const char *help;
} scn_key;

/* Each getter reads KEY of section SEC (DEF when absent) and returns 0, or -1
 * with the error set. */
int scn_i64(scn_ctx *x, const char *sec, const char *key, int64_t def, int64_t lo, int64_t hi, int64_t *out);
int scn_int(scn_ctx *x, const char *sec, const char *key, int def, int lo, int hi, int *out);
/* LO_OPEN: must be > lo, else >= lo; and <= HI. */
int scn_num(scn_ctx *x, const char *sec, const char *key, double def, double lo, int lo_open, double hi, double *out);
/* yes/no, true/false, on/off, 1/0. */
int scn_bool(scn_ctx *x, const char *sec, const char *key, int def, int *out);
/* One of the '|'-separated CHOICES (case-insensitive); its index in *OUT. */
int scn_enum(scn_ctx *x, const char *sec, const char *key, const char *choices, int def, int *out);
int scn_str(scn_ctx *x, const char *sec, const char *key, const char *def, char *out, size_t n);
/* A distribution; DEF NULL: the key is required. */
int scn_dist(scn_ctx *x, const char *sec, const char *key, const char *def, dist *out);
/* The raw value of KEY, or NULL when absent. */
const char *scn_value(scn_ctx *x, const char *sec, const char *key);
/* The same, with its entry (its line) in *E (NULL when absent). */
const char *scn_entry(scn_ctx *x, const char *sec, const char *key, const cfg_entry **e);
/* Sets the error for KEY at KEY's line when the key is present, else at SEC's
 * header (KEY NULL: about the section itself).  Returns -1. */
int scn_fail(scn_ctx *x, const char *sec, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same, always at SEC's header (a key that is missing or wrong in combination). */
int scn_fail_sec(scn_ctx *x, const char *sec, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same at entry E (NULL: at SEC's header). */
int scn_fail_at(scn_ctx *x, const cfg_entry *e, const char *sec, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Most self-renewing events (a unit's failures or pauses, a pool's autoscaler
 * evaluations, a gateway's pauses) one key may expect over the run's expected
 * simulated time: each is an event, so 10^8 of them are some 10 s of the
 * engine (about 10^7 events/s) and more is refused at load, naming the key. */
#define SCN_MAX_PERIODIC_EVENTS 1e8

/* Refuses KEY of SEC when UNITS x DURATION_S / CYCLE_S (the mean cycle, s:
 * CYCLE names its parts) x EACH (events per cycle) exceeds
 * SCN_MAX_PERIODIC_EVENTS.  Returns 0, or -1 with the message at KEY. */
int scn_check_period(scn_ctx *x, const char *sec, const char *key, double units, double duration_s, double cycle_s,
                     const char *cycle, int each);

#endif
