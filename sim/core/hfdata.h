/* hfdata.h -- the Hugging Face config.json files of tests/data/hf/, compiled
 * into the program.
 *
 * The catalog's built-in models are read from these files (core/catbuiltin.c
 * names, for each, its file; core/hfcfg.c computes its geometry and parameter
 * counts), so that a model's figures are written once, as published.  `make`
 * generates the definitions (build/VARIANT/gen/hfdata.c) from every
 * .json file of tests/data/hf, each file's bytes unchanged.
 */
#ifndef LATSIM_HFDATA_H
#define LATSIM_HFDATA_H

#include <stddef.h>

typedef struct hf_file {
    const char *name;         /* file name, e.g. "llama-3.1-8b.json" */
    const char *text;         /* its contents, NUL-terminated */
} hf_file;

extern const hf_file hf_files[];  /* in file-name order */
extern const size_t hf_nfiles;

#endif
