/* kinds.h -- the built-in station kinds: the one place that names them all.
 * The scenario loader calls kinds_builtin() before it looks a kind up, so the
 * table (core/kind.h) holds them, in this order, before any registered kind.
 */
#ifndef LATSIM_KINDS_H
#define LATSIM_KINDS_H

/* Puts the built-in kinds in the kind table (once; later calls do nothing). */
void kinds_builtin(void);

#endif
