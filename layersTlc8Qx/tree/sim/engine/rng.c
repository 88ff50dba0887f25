/* rng.c -- per-entity GSL random streams (see rng.h).
 *
 * The stream of entity NAME under run seed SEED is a gsl_rng_mt19937 seeded with
 * rng_derive(SEED, NAME): the FNV-1a hash of NAME is XORed into SEED and the
 * result goes through the splitmix64 finaliser twice, so that nearby seeds and
 * similar names ("replica-1", "replica-2") give unrelated streams.
 *
 * GSL's mt19937 keeps only the low 32 bits of the seed it is given (and turns 0
 * into its default 4357), so the 64-bit derived value is folded to 32 bits here
 * explicitly, the same way on every platform whatever the width of unsigned long.
 */
#include "engine/rng.h"

#include <stddef.h>

/* The splitmix64 finaliser (Steele, Lea, Flood 2014): a bijection on 64-bit
 * words whose every output bit depends on every input bit.  Cannot fail. */
static uint64_t splitmix64_mix(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* 64-bit FNV-1a hash of the bytes of S; a NULL S hashes like "".  Cannot fail. */
static uint64_t fnv1a64(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);   /* FNV offset basis */
    if (s == NULL)
        return h;
    for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++) {
        h ^= *p;
        h *= UINT64_C(0x100000001b3);            /* FNV prime */
    }
    return h;
}

uint64_t rng_derive(uint64_t seed, const char *name)
{
    return splitmix64_mix(splitmix64_mix(seed ^ fnv1a64(name)));
}

gsl_rng *rng_stream(uint64_t seed, const char *name)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r == NULL)
        return NULL;
    uint64_t d = rng_derive(seed, name);
    /* mt19937 uses 32 seed bits: fold the high half in rather than drop it.
     * A folded 0 becomes GSL's default 4357 inside gsl_rng_set, which is just one
     * more 2^-32 coincidence, like any other pair of equal folded seeds. */
    unsigned long s = (unsigned long) ((d ^ (d >> 32)) & UINT64_C(0xffffffff));
    gsl_rng_set(r, s);
    return r;
}
