/* windows.h - the gradient of a max (min) window, per output, written once for the GPU
 * (windows_grad.cu) and the host (the tests compare it with the CPU's window.c bit for bit;
 * docs/numerics.md, "Window reductions"). The operand is contiguous and described by
 * order.h's window description (ORD_WIN_*: shape, window, output shape, strides, low
 * padding, base and window dilation).
 *
 * ORD_WINGRAD_DEFINE(T, SFX) defines
 *   ord_win_argselect_SFX(x, d, out, is_max): the window position (row-major) of output
 *     `out`'s first maximum (minimum), or first NaN, padding holding -inf (+inf); 0 for an
 *     empty window;
 *   ord_win_gather_SFX(t, d, idx, out): t, padded and dilated with zeros, at output `out`'s
 *     window position idx[out];
 *   ord_win_scatter_SFX(src, idx, d, e): element e (flat) of the transpose of the gather:
 *     the sum ((+0 + src[o1]) + src[o2]) + ... over the outputs o1 < o2 < ... whose window
 *     position idx[o] is element e, in increasing output position: the CPU's scatter, which
 *     adds src[o] into its element for o = 0, 1, ... An element no window reaches (cropped
 *     by negative padding too) is +0. */
#ifndef INVARAX_WINDOWS_H
#define INVARAX_WINDOWS_H

#include "order.h"

#define ORD_WINGRAD_DEFINE(T, SFX)                                                          \
    ORD_FN int32_t ord_win_argselect_##SFX(const T *x, const int64_t *d, int64_t out,       \
                                           int is_max) {                                    \
        int64_t org[ORD_WIN_DIMS];                                                          \
        const int64_t k = ord_win_origin(d, out, org);                                      \
        const T ident = is_max ? -(T)INFINITY : (T)INFINITY;                                \
        return k == 0 ? 0 : (int32_t)ord_first_window_##SFX(x, d, org, ident, k, is_max);  \
    }                                                                                       \
    ORD_FN T ord_win_gather_##SFX(const T *t, const int64_t *d, const int32_t *idx,         \
                                  int64_t out) {                                            \
        int64_t org[ORD_WIN_DIMS];                                                          \
        ord_win_origin(d, out, org);                                                        \
        return ord_win_at_##SFX(t, d, org, idx[out], (T)0);                                 \
    }                                                                                       \
    ORD_FN T ord_win_scatter_##SFX(const T *src, const int32_t *idx, const int64_t *d,      \
                                   int64_t e) {                                             \
        const int64_t nd = d[ORD_WIN_NDIM];                                                 \
        int64_t p[ORD_WIN_DIMS], lo[ORD_WIN_DIMS], hi[ORD_WIN_DIMS], y[ORD_WIN_DIMS];       \
        T acc = 0;                                                                          \
        /* the element's padded position p, and the outputs y whose windows span it */      \
        for (int64_t a = nd - 1; a >= 0; a--) {                                             \
            const int64_t s = d[ORD_WIN_STRIDE + a], w = d[ORD_WIN_W + a];                  \
            p[a] = (e % d[ORD_WIN_S + a]) * d[ORD_WIN_BASE_DIL + a] + d[ORD_WIN_PAD_LO + a]; \
            e /= d[ORD_WIN_S + a];                                                          \
            const int64_t first = p[a] - (w - 1) * d[ORD_WIN_WIN_DIL + a];                  \
            lo[a] = first <= 0 ? 0 : (first + s - 1) / s;                                   \
            hi[a] = p[a] < 0 ? -1 : p[a] / s;                                               \
            if (hi[a] > d[ORD_WIN_Y + a] - 1) hi[a] = d[ORD_WIN_Y + a] - 1;                 \
            if (w == 0 || lo[a] > hi[a]) return acc;                                        \
            y[a] = lo[a];                                                                   \
        }                                                                                   \
        for (;;) { /* the outputs in increasing (row-major) order */                        \
            int64_t o = 0, k = 0, a;                                                        \
            int hit = 1;                                                                    \
            for (a = 0; a < nd; a++) {                                                      \
                const int64_t r = p[a] - y[a] * d[ORD_WIN_STRIDE + a];                      \
                const int64_t wd = d[ORD_WIN_WIN_DIL + a];                                  \
                hit &= r % wd == 0;                                                         \
                k = k * d[ORD_WIN_W + a] + r / wd;                                          \
                o = o * d[ORD_WIN_Y + a] + y[a];                                            \
            }                                                                               \
            if (hit && idx[o] == k) acc += src[o];                                          \
            for (a = nd - 1; a >= 0; a--) {                                                 \
                if (++y[a] <= hi[a]) break;                                                 \
                y[a] = lo[a];                                                               \
            }                                                                               \
            if (a < 0) return acc;                                                          \
        }                                                                                   \
    }

ORD_WINGRAD_DEFINE(float, f32)
ORD_WINGRAD_DEFINE(double, f64)

#endif
