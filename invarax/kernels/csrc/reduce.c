/* reduce.c - the canonical reduction kernels (docs/numerics.md, "Reductions"):
 * pairwise sum, sequential product, max, min, argmax and argmin of float and double rows.
 */
#include "native.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* The leaf size of the pairwise sum, and the outputs computed at once for column layouts. */
#define PW_BLOCK 128
#define W 64

#define T float
#define SFX f32
#include "reduce_impl.h"
#undef T
#undef SFX

#define T double
#define SFX f64
#include "reduce_impl.h"
#undef T
#undef SFX

int reduce(int dbl, int op, const void *p, ptrdiff_t m, ptrdiff_t k, ptrdiff_t sm, ptrdiff_t sk,
           void *out) {
    return dbl ? reduce_f64(op, p, m, k, sm, sk, out) : reduce_f32(op, p, m, k, sm, sk, out);
}
