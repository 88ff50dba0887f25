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
} cfg_section;

typedef struct cfg {
    char *path;         /* the scenario file as given */
    char *dir;          /* its directory, for relative file names in values */
    char *text;         /* the whole file, as read */
    cfg_entry *e;       /* entries in file order, overrides replacing in place */
    size_t n, cap;
    cfg_section *s;     /* sections in file order */
    size_t ns, scap;
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

/* "FILE:LINE" or "--set" for where entry E came from, written into BUF. */
const char *cfg_where(const cfg *c, const cfg_entry *e, char *buf, size_t n);

void cfg_free(cfg *c);

#endif
