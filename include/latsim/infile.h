/* latsim/infile.h -- the one check of a file a command reads: a regular file (once
 * symbolic links are followed) of at most a stated size, opened without ever
 * blocking.  A FIFO with no writer would block the reader for good, a device
 * such as /dev/zero never ends, a folder cannot be read as text: each is
 * refused with one line before anything is read.  The command line checks
 * every input path with infile_check before any work (cli/cliutil.c
 * cu_check_in); the readers open with infile_open, which repeats the checks on
 * the opened descriptor (a file replaced by a FIFO since is refused too).
 */
#ifndef LATSIM_PUB_INFILE_H
#define LATSIM_PUB_INFILE_H

#include <stdio.h>

/* Size bounds of the inputs, bytes (docs/input-limits.md). */
#define INFILE_MAX_SCENARIO  (16LL << 20)   /* scenario and explore grid files */
#define INFILE_MAX_JSON      (16LL << 20)   /* a Hugging Face config.json, a bench metadata file */
#define INFILE_MAX_TABLE     (256LL << 20)  /* measurement tables: nccl, power, steps, profiles */
#define INFILE_MAX_OBSERVED  (1LL << 30)    /* an observed benchmark run */
#define INFILE_MAX_TRACE     (4LL << 30)    /* a request trace */

/* What kind of file MODE (st_mode) is, for messages: "a FIFO", "a folder",
 * "a character device", ... */
const char *infile_kind(unsigned mode);

/* Checks PATH, without opening it: it exists, is a regular file and holds at
 * most MAX bytes (MAX <= 0: no bound).  Returns 0, or -1 with ERR "PATH: not a
 * regular file (a FIFO)", "PATH: cannot open: No such file or directory",
 * "PATH: 2147483648 bytes, larger than the 1024 MB this input may hold" (PATH
 * escaped, one printable line). */
int infile_check(const char *path, long long max, char *err, size_t errlen);

/* Opens PATH for reading ("rb") with the checks of infile_check made on the
 * opened descriptor (opened with O_NONBLOCK, which is cleared once it is known
 * to be a regular file).  Returns the stream, or NULL with ERR. */
FILE *infile_open(const char *path, long long max, char *err, size_t errlen);

#endif
