/* rephtml.h -- the design review page's HTML parts (latsim report --html):
 * escaped text, number cells, design names, its style sheet and its pictures
 * (gnuplot's SVG written into the page).
 *
 * Shared by report.c (the page of designs), reptables.c (its tables) and
 * repexplore.c (the page of an exploration).
 */
#ifndef LATSIM_CLI_REPHTML_H
#define LATSIM_CLI_REPHTML_H

#include <stdio.h>
#include "design.h"

/* A growing string the gnuplot commands are written into. */
typedef struct mbuf {
    char *p;
    size_t n;
    FILE *f;
} mbuf;

/* The page's style sheet. */
extern const char *CSS;

/* Writes S as HTML text: &<>"' as entities, controls other than tab and
 * newline dropped, each byte that is not valid UTF-8 as its Latin-1 code point. */
void rh_esc(FILE *f, const char *s);

/* A number cell: V (x SCALE) written for people, with the half-width CI of its interval when known. */
void rh_numcell_s(FILE *f, double v, double ci, double scale);

void rh_numcell(FILE *f, double v, double ci);

/* Design D's title as page text (escaped), "A: title". */
void rh_dname(FILE *f, const design *d);

int rh_mb_open(mbuf *m);

void rh_mb_close(mbuf *m);

/* Writes the SVG drawn from M's commands by SCRIPT, or a line saying why there is none. */
void rh_picture(FILE *out, mbuf *m, const char *dir, const char *script, int w, int h, int *k);

/* The CDF of METRIC over the designs, with the [slo] limits on it; TAIL: the
 * tail view instead, 1 - CDF on a log axis (P99 at 0.01, P99.9 at 0.001).
 * Each design's curve in its colour (DESIGN_COLORS). */
void rh_cdf_picture(FILE *out, const design *d, int n, const char *metric, const char *title, int tail,
                        const char *dir, int *k);

/* The time series of stored run ID (design D), when it recorded one. */
void rh_ts_picture(FILE *out, const design *d, const char *dbpath, const char *dir, int *k);

#endif
