/* config.h -- scenario files: INI text read with libinih, plus --set overrides.
 *
 * This module only knows sections, keys, values and where each came from (file
 * and line, or a --set option); it keeps the file's order.  What the keys mean,
 * and which are valid, is scenario.c's business.
 */
#ifndef LATSIM_CONFIG_H
#define LATSIM_CONFIG_H

#include <stddef.h>

typedef struct cfg_entry {
    char *section;      /* section name as written, e.g. "pool cpu" (inner spaces folded) */
    char *key;          /* key, e.g. "servers" */
    char *value;        /* value with inline comment and outer spaces removed */
    int line;           /* 1-based line in the file, or 0 when it came from --set */
} cfg_entry;

typedef struct cfg_section {
    char *name;         /* as in cfg_entry.section */
    int line;           /* line of its [header], or 0 when created by --set */
    int pool;           /* scenario.c's index of the pool it defines, or -1 (count) */
} cfg_section;

/* Hash index over sections and (section, key) pairs (config.c): open
 * addressing, linear probing, at most half full, rebuilt at twice the size when
 * it fills.  A lookup costs one hash of the names plus about 1.5 string
 * comparisons on average, whatever the file's size; memory: two size_t slots
 * per entry and per section.  Loading N lines is thus O(N). */
typedef struct cfg_index cfg_index;

typedef struct cfg {
    char *path;         /* the scenario file as given */
    char *dir;          /* its directory, for relative file names in values */
    char *text;         /* the whole file, as read */
    cfg_entry *e;       /* entries in file order, overrides replacing in place */
    size_t n, cap;
    cfg_section *s;     /* sections in file order */
    size_t ns, scap;
    cfg_index *ix;      /* hash index over s and e (NULL until the first add) */
} cfg;

/* Reads and parses PATH.  Returns 0, or -1 with "PATH:LINE: message" in ERR
 * (a duplicate key, a line that is neither a section nor key = value, an
 * unreadable file).  C must be cfg_free()d either way. */
int cfg_load(cfg *c, const char *path, char *err, size_t errlen);

/* Parses the same syntax from a string (PATH is used in messages only). */
int cfg_load_string(cfg *c, const char *path, const char *text, char *err, size_t errlen);

/* Applies one override "section.key=value" (the section may contain spaces,
 * e.g. "pool cpu.servers=5"; the key is what follows the last '.' before '=').
 * Returns 0, or -1 with a message in ERR. */
int cfg_set(cfg *c, const char *assignment, char *err, size_t errlen);

/* The entry for SECTION/KEY, or NULL. */
const cfg_entry *cfg_get(const cfg *c, const char *section, const char *key);

/* The section named NAME, or NULL. */
const cfg_section *cfg_section_get(const cfg *c, const char *name);

/* String comparisons made by lookups in C so far (count): for the test that
 * lookups stay O(1) on large files. */
unsigned long long cfg_compares(const cfg *c);

/* "FILE:LINE" or "--set" for where entry E came from, written into BUF. */
const char *cfg_where(const cfg *c, const cfg_entry *e, char *buf, size_t n);

void cfg_free(cfg *c);

#endif
