/* gp.h -- running gnuplot for latsim's pictures: the one place that starts it.
 *
 * gp_open starts gnuplot as a child process (no shell) reading its commands
 * from a pipe, its messages kept in a temporary file; gp_close ends it and
 * gives its exit status and last message line, so that a failure is reported
 * in one line.  `latsim plot` and `replay --plot` write files through it;
 * gp_svg draws a picture as SVG text for pages that inline it (latsim report
 * --html): the svg terminal, a temporary output file, the caller's commands
 * (data blocks and variables) and `load` of a script in plots/, the SVG read
 * back from its <svg> element on with its element ids made unique to the
 * picture (several SVGs share one page).
 */
#ifndef LATSIM_GP_H
#define LATSIM_GP_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* A running gnuplot (gp_open .. gp_close). */
typedef struct gp_proc {
    pid_t pid;                /* the gnuplot process */
    FILE *in;                 /* its standard input: the caller's commands */
    FILE *log;                /* its standard error, kept in a temporary file (NULL: inherited) */
    void (*old_pipe)(int);    /* SIGPIPE's handler before gp_open (ignored while gnuplot runs) */
} gp_proc;

/* 1 when an executable named gnuplot is on $PATH, else 0. */
int gp_on_path(void);

/* Starts gnuplot into *G.  Returns 0, or -1 with "pipe: ..." / "fork: ..." in
 * ERR (nothing left running). */
int gp_open(gp_proc *g, char *err, size_t errlen);

/* Closes G's input and waits for gnuplot.  Returns 0 when it exited with 0,
 * else its exit status (-1 when it did not exit: killed); LAST (LASTLEN bytes)
 * gets its last non-empty message line, "" when none. */
int gp_close(gp_proc *g, char *last, size_t lastlen);

/* Writes S as a single-quoted gnuplot string ('' for a quote; controls dropped). */
void gp_quote(FILE *f, const char *s);

/* The SVG of plots/SCRIPT (DIR: the plots folder) drawn W x H pixels after the
 * commands CMDS (LEN bytes); K numbers the picture on its page.  Returns the
 * SVG (malloc'd), or NULL with ERR (gnuplot missing or failing: its last
 * message). */
char *gp_svg(const char *cmds, size_t len, const char *dir, const char *script, int w, int h, int k,
             char *err, size_t errlen);

#endif
