/* sched.c -- the table of LLM schedulers (see sched.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "llm/sched.h"
#include "engine/rowtab.h"

/* The built-in rows, in the order of `latsim keys` and of error messages.  A
 * new built-in scheduler is its file plus one entry here. */
static const llm_sched *const BUILTIN[] = { &llm_sched_static, &llm_sched_dynamic, &llm_sched_continuous,
                                            &llm_sched_chunked };
static rowtab table = ROWTAB_POINTERS(BUILTIN, llm_sched);

int llm_sched_count(void) { return rowtab_count(&table); }
const llm_sched *llm_sched_at(int i) { return rowtab_at(&table, i); }
int llm_sched_index(const llm_sched *s) { return rowtab_index(&table, s); }
const char *llm_sched_name(const llm_sched *s) { return s->name; }
const llm_sched *llm_sched_find(const char *name) { return rowtab_find(&table, name); }

int llm_sched_register(const llm_sched *row)
{
    if (!row || !row->plan || !row->complete) return -1;
    return rowtab_add(&table, row);
}

void llm_sched_choices(char *buf, size_t n) { rowtab_choices(&table, buf, n); }

/* The names of the rows with every flag of WITH and none of WITHOUT, as
 * "a, b or c", into BUF (N bytes). */
static void names_where(unsigned with, unsigned without, char *buf, size_t n)
{
    int total = 0, k = 0;
    for (int i = 0; i < llm_sched_count(); i++) {
        unsigned f = llm_sched_at(i)->flags;
        total += (f & with) == with && !(f & without);
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < llm_sched_count() && len < n; i++) {
        const llm_sched *s = llm_sched_at(i);
        if ((s->flags & with) != with || (s->flags & without)) continue;
        const char *sep = k == 0 ? "" : k == total - 1 ? " or " : ", ";
        len += (size_t) snprintf(buf + len, n - len, "%s%s", sep, s->name);
        k++;
    }
}

void llm_sched_names_with(unsigned flags, char *buf, size_t n) { names_where(flags, 0, buf, n); }
void llm_sched_names_without(unsigned flags, char *buf, size_t n) { names_where(0, flags, buf, n); }
