/* order.h - the canonical order of one output of each reduction and contraction
 * (docs/numerics.md, "The canonical kernels"), written once as portable per-output C for
 * the GPU kernels (NVRTC: kernels.cu) and the host (gcc: the tests compare it with the CPU
 * kernels bit for bit). The CPU kernels (reduce_impl.h, gemm_impl.h) compute many outputs
 * at once in vector lanes; each output gets exactly these operations.
 *
 * Every function reads one row (or one row and one column) with any stride, in elements.
 * Arithmetic is IEEE binary32/binary64, round to nearest even, subnormals kept; every FMA is
 * written out (the GPU build uses --fmad=false, the host -ffp-contract=off). */
#ifndef INVARAX_ORDER_H
#define INVARAX_ORDER_H

#include <math.h> /* INFINITY (NVRTC: stub/math.h) */
#include <stdint.h>

#ifdef __CUDACC__
#define ORD_FN static __device__ __forceinline__
#define ORD_REC static __device__ /* recursive: not inlined */
#define ORD_FMAF(x, y, z) __fmaf_rn(x, y, z)
#define ORD_FMA(x, y, z) __fma_rn(x, y, z)
#else
#define ORD_FN static inline
#define ORD_REC static
#define ORD_FMAF(x, y, z) fmaf(x, y, z)
#define ORD_FMA(x, y, z) fma(x, y, z)
#endif

/* The contraction's blocks: KB consecutive products per FMA chain. */
#define ORD_KB 256
/* The pairwise sum's leaf: at most this many elements, eight accumulators. */
#define ORD_PW_BLOCK 128

/* ORD_DEFINE(T, SFX, FMA) defines, for element type T:
 *   ord_pairwise_SFX(a, n, s)  NumPy's pairwise summation of a[0], a[s], ..., a[(n-1)s];
 *   ord_sum_SFX(a, n, s)       the sum of a row: +0 + pairwise (so -0 becomes +0);
 *   ord_prod_SFX(a, n, s)      the product: a[0] * a[s] * ... in order; 1 when n = 0;
 *   ord_extremum_SFX(a, n, s, is_max)
 *                              the index of the first maximum (minimum), or of the first
 *                              NaN if the row holds one; n >= 1;
 *   ord_dot_SFX(a, sa, b, sb, k)
 *                              sum_p a[p sa] b[p sb]: an FMA chain from +0 in increasing p
 *                              over each block of ORD_KB terms, the block sums added in
 *                              block order (C = s0, C = C + s1, ...); +0 when k = 0;
 *   ord_dot_block_SFX(a, sa, b, sb, k)
 *                              one block's FMA chain (k <= ORD_KB terms) from +0. */
#define ORD_DEFINE(T, SFX, FMA)                                                             \
    ORD_REC T ord_pairwise_##SFX(const T *a, int64_t n, int64_t s) {                        \
        if (n < 8) {                                                                        \
            T r = 0;                                                                        \
            for (int64_t i = 0; i < n; i++) r += a[i * s];                                  \
            return r;                                                                       \
        }                                                                                   \
        if (n <= ORD_PW_BLOCK) {                                                            \
            T r[8];                                                                         \
            int64_t i, end = n - n % 8;                                                     \
            for (int j = 0; j < 8; j++) r[j] = a[j * s];                                    \
            for (i = 8; i < end; i += 8)                                                    \
                for (int j = 0; j < 8; j++) r[j] += a[(i + j) * s];                         \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));      \
            for (; i < n; i++) res += a[i * s];                                             \
            return res;                                                                     \
        }                                                                                   \
        int64_t n2 = n / 2;                                                                 \
        n2 -= n2 % 8;                                                                       \
        return ord_pairwise_##SFX(a, n2, s) + ord_pairwise_##SFX(a + n2 * s, n - n2, s);    \
    }                                                                                       \
    ORD_FN T ord_sum_##SFX(const T *a, int64_t n, int64_t s) {                              \
        return (T)0 + ord_pairwise_##SFX(a, n, s);                                          \
    }                                                                                       \
    ORD_FN T ord_prod_##SFX(const T *a, int64_t n, int64_t s) {                             \
        T r = n > 0 ? a[0] : (T)1;                                                          \
        for (int64_t i = 1; i < n; i++) r *= a[i * s];                                      \
        return r;                                                                           \
    }                                                                                       \
    ORD_FN int64_t ord_extremum_##SFX(const T *a, int64_t n, int64_t s, int is_max) {       \
        int64_t best = 0;                                                                   \
        for (int64_t p = 1; p < n; p++) {                                                   \
            T v = a[p * s], b = a[best * s];                                                \
            if ((is_max ? v > b : v < b) || (v != v && b == b)) best = p;                   \
        }                                                                                   \
        return best;                                                                        \
    }                                                                                       \
    ORD_FN T ord_dot_block_##SFX(const T *a, int64_t sa, const T *b, int64_t sb, int64_t k) { \
        T s = 0;                                                                            \
        for (int64_t p = 0; p < k; p++) s = FMA(a[p * sa], b[p * sb], s);                   \
        return s;                                                                           \
    }                                                                                       \
    ORD_FN T ord_dot_##SFX(const T *a, int64_t sa, const T *b, int64_t sb, int64_t k) {     \
        T c = 0;                                                                            \
        for (int64_t p0 = 0; p0 < k; p0 += ORD_KB) {                                        \
            int64_t len = k - p0 < ORD_KB ? k - p0 : ORD_KB;                                \
            T s = ord_dot_block_##SFX(a + p0 * sa, sa, b + p0 * sb, sb, len);               \
            c = p0 == 0 ? s : c + s;                                                        \
        }                                                                                   \
        return c;                                                                           \
    }

ORD_DEFINE(float, f32, ORD_FMAF)
ORD_DEFINE(double, f64, ORD_FMA)

/* A convolution in canonical layout (docs/numerics.md, "Convolutions"): input x (N, C, S0,
 * S1, S2) and kernel w (O, C/G, W0, W1, W2), both contiguous, three spatial axes (unused
 * ones of size 1), described by int64 values at these indices: */
enum {
    ORD_CONV_N, ORD_CONV_C, ORD_CONV_O, ORD_CONV_G, ORD_CONV_B, /* G, B: group counts */
    ORD_CONV_S = 5,          /* S0..S2: the input's spatial sizes */
    ORD_CONV_W = 8,          /* the window's */
    ORD_CONV_Y = 11,         /* the output's */
    ORD_CONV_STRIDE = 14,    /* window strides */
    ORD_CONV_LHS_DIL = 17,   /* lhs (input) dilation */
    ORD_CONV_RHS_DIL = 20,   /* rhs (window) dilation */
    ORD_CONV_PAD_LO = 23,    /* low padding (negative crops) */
    ORD_CONV_LEN = 26
};

/* ORD_CONV_DEFINE(T, SFX, FMA) defines ord_conv_SFX(x, w, d, out): output element `out`
 * (flat, of (N / B, O, Y0, Y1, Y2)) as the canonical contraction of its K = C/G W0 W1 W2
 * terms (c, w0, w1, w2) row-major: x's padded, dilated element times w's, an FMA chain
 * over each block of ORD_KB terms, the block sums added in order. A padding or dilation
 * position is a real zero term. */
#define ORD_CONV_DEFINE(T, SFX, FMA)                                                        \
    ORD_FN T ord_conv_##SFX(const T *x, const T *w, const int64_t *d, int64_t out) {        \
        const int64_t *S = d + ORD_CONV_S, *W = d + ORD_CONV_W, *Y = d + ORD_CONV_Y;        \
        const int64_t cg = d[ORD_CONV_C] / d[ORD_CONV_G];                                   \
        int64_t y[3];                                                                       \
        for (int a = 2; a >= 0; a--) y[a] = out % Y[a], out /= Y[a];                        \
        const int64_t o = out % d[ORD_CONV_O], n = out / d[ORD_CONV_O];                     \
        const int64_t g = o / (d[ORD_CONV_O] / d[ORD_CONV_G]);                              \
        const int64_t nb = d[ORD_CONV_N] / d[ORD_CONV_B];                                   \
        const int64_t n_in = n + (o / (d[ORD_CONV_O] / d[ORD_CONV_B])) * nb;                \
        T acc = 0, s = 0;                                                                   \
        int64_t p = 0;                                                                      \
        for (int64_t c = 0; c < cg; c++) {                                                  \
            const T *xc = x + (n_in * d[ORD_CONV_C] + g * cg + c) * S[0] * S[1] * S[2];     \
            const T *wc = w + (o * cg + c) * W[0] * W[1] * W[2];                            \
            for (int64_t k = 0; k < W[0] * W[1] * W[2]; k++) {                              \
                int64_t kk = k, off = 0, inside = 1, wi[3];                                 \
                for (int a = 2; a >= 0; a--) wi[a] = kk % W[a], kk /= W[a];                 \
                for (int a = 0; a < 3; a++) {                                               \
                    int64_t q = y[a] * d[ORD_CONV_STRIDE + a] +                             \
                                wi[a] * d[ORD_CONV_RHS_DIL + a] - d[ORD_CONV_PAD_LO + a];   \
                    int64_t dil = d[ORD_CONV_LHS_DIL + a];                                  \
                    if (q < 0 || q % dil != 0 || q / dil >= S[a]) inside = 0;               \
                    else off = off * S[a] + q / dil;                                        \
                }                                                                           \
                s = FMA(inside ? xc[off] : (T)0, wc[k], s);                                 \
                if (++p % ORD_KB == 0) {                                                    \
                    acc = p == ORD_KB ? s : acc + s;                                        \
                    s = 0;                                                                  \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        if (p % ORD_KB != 0) acc = p < ORD_KB ? s : acc + s;                                \
        return acc;                                                                         \
    }

ORD_CONV_DEFINE(float, f32, ORD_FMAF)
ORD_CONV_DEFINE(double, f64, ORD_FMA)

#endif
