/* gp.h -- a picture from gnuplot as SVG text, for pages that inline it (latsim
 * report --html): gnuplot is started as a child process (no shell), given the
 * svg terminal, a temporary output file, the caller's commands (data blocks
 * and variables) and `load` of a script in plots/; the SVG it wrote is read
 * back from its <svg> element on, with its element ids made unique to the
 * picture (several SVGs share one page).
 */
#ifndef LATSIM_GP_H
#define LATSIM_GP_H

#include <stddef.h>
#include <stdio.h>

/* Writes S as a single-quoted gnuplot string ('' for a quote; controls dropped). */
void gp_quote(FILE *f, const char *s);

/* The SVG of plots/SCRIPT (DIR: the plots folder) drawn W x H pixels after the
 * commands CMDS (LEN bytes); K numbers the picture on its page.  Returns the
 * SVG (malloc'd), or NULL with ERR (gnuplot missing or failing: its last
 * message). */
char *gp_svg(const char *cmds, size_t len, const char *dir, const char *script, int w, int h, int k,
             char *err, size_t errlen);

#endif
