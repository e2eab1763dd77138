/* window.c - max/min window selection and its gradient's gather and scatter
 * (docs/numerics.md, "Window reductions").
 *
 * The operand is a C-contiguous padded array x; output element o (a row-major index over
 * `outshape`) has its window at x[base(o) + woff[k]], k = 0..K-1 in window order, where
 * base(o) = sum_i o_i * step[i]. Selection keeps the first maximum (minimum) in window
 * order, or the first NaN. The scatter adds src[o] into acc[base(o) + woff[idx[o]]] in
 * increasing o, so an element receiving several values sums them in output order.
 */
#include "native.h"

#include <math.h>

/* Calls body(o, base) for every output o, with its window base offset. */
#define FOR_OUTPUTS(nd, outshape, step, body)                                           \
    do {                                                                                \
        ptrdiff_t idx_[WINDOW_MAX_DIMS] = {0}, base_ = 0, total_ = 1;                   \
        for (int d_ = 0; d_ < (nd); d_++) total_ *= (outshape)[d_];                     \
        for (ptrdiff_t o_ = 0; o_ < total_; o_++) {                                     \
            body(o_, base_);                                                            \
            for (int d_ = (nd) - 1; d_ >= 0; d_--) {                                    \
                base_ += (step)[d_];                                                    \
                if (++idx_[d_] < (outshape)[d_]) break;                                 \
                base_ -= (step)[d_] * (outshape)[d_];                                   \
                idx_[d_] = 0;                                                           \
            }                                                                           \
        }                                                                               \
    } while (0)

#define DEFINE_WINDOW(T, SFX)                                                           \
    void window_select_##SFX(int is_max, const T *x, int nd, const ptrdiff_t *outshape, \
                             const ptrdiff_t *step, const ptrdiff_t *woff, ptrdiff_t k, \
                             T *val, int *arg) {                                        \
        FOR_OUTPUTS(nd, outshape, step, SELECT_BODY_##SFX);                             \
    }                                                                                   \
    void window_gather_##SFX(const T *t, const int *arg, int nd,                        \
                             const ptrdiff_t *outshape, const ptrdiff_t *step,          \
                             const ptrdiff_t *woff, T *out) {                           \
        FOR_OUTPUTS(nd, outshape, step, GATHER_BODY);                                   \
    }                                                                                   \
    void window_scatter_##SFX(const T *src, const int *arg, int nd,                     \
                              const ptrdiff_t *outshape, const ptrdiff_t *step,         \
                              const ptrdiff_t *woff, T *acc) {                          \
        FOR_OUTPUTS(nd, outshape, step, SCATTER_BODY);                                  \
    }

#define SELECT_BODY(T, o, b)                                                            \
    {                                                                                   \
        const T *w = x + (b);                                                           \
        T best = w[woff[0]];                                                            \
        int bi = 0;                                                                     \
        if (best == best)                                                               \
            for (ptrdiff_t j = 1; j < k; j++) {                                         \
                T v = w[woff[j]];                                                       \
                if (v != v) { best = v; bi = (int)j; break; }                           \
                if (is_max ? v > best : v < best) { best = v; bi = (int)j; }            \
            }                                                                           \
        val[o] = best;                                                                  \
        arg[o] = bi;                                                                    \
    }
#define SELECT_BODY_f32(o, b) SELECT_BODY(float, o, b)
#define SELECT_BODY_f64(o, b) SELECT_BODY(double, o, b)
#define GATHER_BODY(o, b) out[o] = t[(b) + woff[arg[o]]]
#define SCATTER_BODY(o, b) acc[(b) + woff[arg[o]]] += src[o]

DEFINE_WINDOW(float, f32)
DEFINE_WINDOW(double, f64)
