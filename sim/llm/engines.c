/* engines.c -- the table of serving engines (see engines.h). */
#include "llm/engines.h"
#include "engine/rowtab.h"

/* In the order of `latsim keys` and of error messages; the first is the default. */
static const llm_engine ROWS[] = {
    { "vllm", "vLLM" },
    { "sglang", "SGLang" },
    { "trtllm", "TensorRT-LLM" },
    { "generic", "the cross-engine mean of the learned efficiencies" },
};
static rowtab table = ROWTAB_STRUCTS(ROWS, llm_engine);

int llm_engine_count(void) { return rowtab_count(&table); }
const llm_engine *llm_engine_at(int i) { return rowtab_at(&table, i); }
const llm_engine *llm_engine_find(const char *name) { return rowtab_find(&table, name); }
const char *llm_engine_default(void) { return ROWS[0].name; }
void llm_engine_choices(char *buf, size_t n) { rowtab_choices(&table, buf, n); }
