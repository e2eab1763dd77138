/* scan.c - cumulative sums and products (lax.cumsum, lax.cumprod) of float and double arrays:
 * y[i] = y[i-1] + x[i] (or *) along the scanned axis, one rounding per step, in the order of
 * the axis (or its reverse): the definition of an inclusive scan (docs/numerics.md,
 * "Cumulative reductions"), the same operations as NumPy's accumulate. The lanes of the
 * vectorised loop run across the axes after the scanned one, so every element gets exactly
 * its own chain of operations.
 */
#include "native.h"

#define SCAN_LOOP(T, OP)                                                                      \
    for (ptrdiff_t o = 0; o < outer; o++) {                                                   \
        const T *xo = (const T *)x + o * so;                                                  \
        T *yo = (T *)y + o * n * inner;                                                       \
        if (inner == 1 && n > 0) { /* one chain: the running value stays in a register */    \
            ptrdiff_t i = reverse ? n - 1 : 0, step = reverse ? -1 : 1;                       \
            T acc = xo[i * sn];                                                               \
            yo[i] = acc;                                                                      \
            for (ptrdiff_t t = 1; t < n; t++) {                                               \
                i += step;                                                                    \
                acc = acc OP xo[i * sn];                                                      \
                yo[i] = acc;                                                                  \
            }                                                                                 \
            continue;                                                                         \
        }                                                                                     \
        for (ptrdiff_t t = 0; t < n; t++) {                                                   \
            ptrdiff_t i = reverse ? n - 1 - t : t;                                            \
            const T *xi = xo + i * sn;                                                        \
            T *yi = yo + i * inner;                                                           \
            if (t == 0) {                                                                     \
                for (ptrdiff_t j = 0; j < inner; j++) yi[j] = xi[j * si];                     \
            } else {                                                                          \
                const T *prev = reverse ? yi + inner : yi - inner;                            \
                for (ptrdiff_t j = 0; j < inner; j++) yi[j] = prev[j] OP xi[j * si];          \
            }                                                                                 \
        }                                                                                     \
    }

void scan(int dbl, int op, const void *restrict x, ptrdiff_t outer, ptrdiff_t n, ptrdiff_t inner,
          ptrdiff_t so, ptrdiff_t sn, ptrdiff_t si, void *restrict y, int reverse) {
    if (dbl && op == SCAN_SUM) SCAN_LOOP(double, +)
    else if (dbl) SCAN_LOOP(double, *)
    else if (op == SCAN_SUM) SCAN_LOOP(float, +)
    else SCAN_LOOP(float, *)
}
