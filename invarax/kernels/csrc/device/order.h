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

#endif
