/* engines.h -- the table of serving engines (`engine = NAME` of an LLM pool).
 *
 * A row names an engine whose measurements the learned step model was trained
 * on per engine (calib/clearn.c keys its offsets by these names), or "generic",
 * the cross-engine mean.  The pool's `engine` key, its error message and its
 * line in `latsim keys` are the rows, in table order; the first row is the
 * default.  Adding an engine is one row here (and its training rows, calib/).
 */
#ifndef LATSIM_LLM_ENGINES_H
#define LATSIM_LLM_ENGINES_H

#include <stddef.h>

typedef struct llm_engine {
    const char *name;         /* the value of `engine =` */
    const char *help;         /* one line: what it stands for */
} llm_engine;

/* Engines in table order (the first is the default); NULL outside. */
int llm_engine_count(void);
const llm_engine *llm_engine_at(int i);

/* The engine named NAME (case-insensitive), or NULL. */
const llm_engine *llm_engine_find(const char *name);

/* The default engine's name ("vllm"). */
const char *llm_engine_default(void);

/* The engines' names joined by '|' ("vllm|sglang|...") into BUF (N bytes). */
void llm_engine_choices(char *buf, size_t n);

#endif
