/* sched.c -- the table of LLM schedulers (see sched.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "llm/sched.h"

/* The built-in rows, in the order of `latsim keys` and of error messages.  A
 * new built-in scheduler is its file plus one entry here. */
static const llm_sched *const BUILTIN[] = { &llm_sched_static, &llm_sched_dynamic, &llm_sched_continuous,
                                            &llm_sched_chunked };
#define NBUILTIN ((int) (sizeof BUILTIN / sizeof BUILTIN[0]))

#define MAX_EXTRA 16
static const llm_sched *extra[MAX_EXTRA];   /* registered rows, in order */
static int nextra;

int llm_sched_count(void) { return NBUILTIN + nextra; }

const llm_sched *llm_sched_at(int i)
{
    if (i < 0 || i >= NBUILTIN + nextra) return NULL;
    return i < NBUILTIN ? BUILTIN[i] : extra[i - NBUILTIN];
}

int llm_sched_index(const llm_sched *s)
{
    for (int i = 0; i < llm_sched_count(); i++)
        if (llm_sched_at(i) == s) return i;
    return -1;
}

const char *llm_sched_name(const llm_sched *s) { return s->name; }

const llm_sched *llm_sched_find(const char *name)
{
    for (int i = 0; i < llm_sched_count(); i++)
        if (!strcasecmp(llm_sched_at(i)->name, name)) return llm_sched_at(i);
    return NULL;
}

int llm_sched_register(const llm_sched *row)
{
    const llm_sched *had = llm_sched_find(row->name);
    if (had) return had == row ? 0 : -1;
    if (nextra == MAX_EXTRA || !row->plan || !row->complete) return -1;
    extra[nextra++] = row;
    return 0;
}

void llm_sched_choices(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < llm_sched_count() && len < n; i++)
        len += (size_t) snprintf(buf + len, n - len, "%s%s", i ? "|" : "", llm_sched_at(i)->name);
}

void llm_sched_names_with(unsigned flags, char *buf, size_t n)
{
    int total = 0, k = 0;
    for (int i = 0; i < llm_sched_count(); i++) total += (llm_sched_at(i)->flags & flags) == flags;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < llm_sched_count() && len < n; i++) {
        const llm_sched *s = llm_sched_at(i);
        if ((s->flags & flags) != flags) continue;
        const char *sep = k == 0 ? "" : k == total - 1 ? " or " : ", ";
        len += (size_t) snprintf(buf + len, n - len, "%s%s", sep, s->name);
        k++;
    }
}
