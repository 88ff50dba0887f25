/* cimport.h -- importing measurements into the calibration store.
 *
 *   cimp_steps()  whole-step times of one's own serving stack, a CSV with
 *                 columns model,gpu,tp,phase,batch_size,tokens,step_ms
 *                 (optional weights, source);
 *   cimp_vidur()  the Vidur operator profiles laid out as in
 *                 shared/data/profiles/vidur/ (compute/<gpu>/<org>/<model>/mlp.csv,
 *                 attention_a100/{attention,cpu_overheads}.csv,
 *                 network/<cluster>/{all_reduce,send_recv}.csv).
 * Both insert through the caller's open transaction and stop at the first bad
 * cell with one line "FILE:LINE: column NAME: what is wrong"; the caller rolls
 * back, so the database is untouched.
 */
#ifndef LATSIM_CIMPORT_H
#define LATSIM_CIMPORT_H

#include <stddef.h>
#include <stdio.h>
#include <sqlite3.h>
#include "calib.h"   /* cimp_opts and the importers: public */

/* The catalog model whose geometry (heads, kv_heads, hidden, intermediate)
 * matches, the closest vocabulary winning a tie.  Returns 1 with NAME filled, 0
 * when none matches, -1 on a database error. */
int cimp_model_by_geometry(sqlite3 *db, int heads, int kv_heads, int hidden, int intermediate,
                           int vocab, char *name, size_t n);

#endif
