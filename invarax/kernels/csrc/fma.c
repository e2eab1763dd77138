/* fma.c - a * b + c rounded once, elementwise (C99 fma/fmaf: correctly rounded by the
 * standard, in hardware where the CPU has an FMA unit and in the C library otherwise, so
 * every machine gives the same bits). */
#include <math.h>

#include "native.h"

void fma_f32(const float *a, const float *b, const float *c, float *out, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) out[i] = fmaf(a[i], b[i], c[i]);
}

void fma_f64(const double *a, const double *b, const double *c, double *out, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) out[i] = fma(a[i], b[i], c[i]);
}
