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
#define ORD_FMAF(x, y, z) __fmaf_rn(x, y, z)
#define ORD_FMA(x, y, z) __fma_rn(x, y, z)
#else
#define ORD_FN static inline
#define ORD_FMAF(x, y, z) fmaf(x, y, z)
#define ORD_FMA(x, y, z) fma(x, y, z)
#endif

/* The contraction's blocks: KB consecutive products per FMA chain. */
#define ORD_KB 256
/* The pairwise sum's leaf: at most this many elements, eight accumulators. */
#define ORD_PW_BLOCK 128
/* The pairwise tree's depth bound: each level at least halves n (n < 2^63). */
#define ORD_PW_DEPTH 64

/* ORD_PAIRWISE(NAME, T, PARAMS, ARGS, AT) defines NAME(PARAMS..., lo, n): NumPy's pairwise
 * summation of the n values AT for i = lo, ..., lo + n - 1 (AT an expression in i and the
 * names of PARAMS; ARGS passes PARAMS on to the recursion):
 *   n < 8: r = +0; r = r + x[i] in order;
 *   8 <= n <= ORD_PW_BLOCK: eight accumulators r_j = x[j]; r_j = r_j + x[i + j] for each
 *     further whole group of eight; ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)); then
 *     the last n % 8 in order;
 *   n > ORD_PW_BLOCK: the first n2 = n / 2 rounded down to a multiple of 8, plus the rest. */
#define ORD_UNPAREN(...) __VA_ARGS__
#define ORD_PAIRWISE(NAME, T, PARAMS, ARGS, AT)                                             \
    ORD_FN T NAME##_leaf(ORD_UNPAREN PARAMS, int64_t lo, int64_t n) {                       \
        if (n < 8) {                                                                        \
            T r = 0;                                                                        \
            for (int64_t i = lo; i < lo + n; i++) r += AT;                                  \
            return r;                                                                       \
        }                                                                                   \
        T r[8];                                                                             \
        int64_t q, end = n - n % 8;                                                         \
        for (int j = 0; j < 8; j++) {                                                       \
            int64_t i = lo + j;                                                             \
            r[j] = AT;                                                                      \
        }                                                                                   \
        for (q = 8; q < end; q += 8)                                                        \
            for (int j = 0; j < 8; j++) {                                                   \
                int64_t i = lo + q + j;                                                     \
                r[j] += AT;                                                                 \
            }                                                                               \
        T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));          \
        for (int64_t i = lo + q; i < lo + n; i++) res += AT;                                \
        return res;                                                                         \
    }                                                                                       \
    /* The tree walked with an explicit stack (no recursion: a GPU thread's stack is small \
     * and its size must be known): each node sums its left half, then its right half,   \
     * then adds them, exactly as the recursive definition. */                            \
    ORD_FN T NAME(ORD_UNPAREN PARAMS, int64_t lo, int64_t n) {                              \
        int64_t at[ORD_PW_DEPTH], len[ORD_PW_DEPTH];                                        \
        T left[ORD_PW_DEPTH];                                                               \
        int side[ORD_PW_DEPTH], top = 0; /* side: 0 going left, 1 going right */            \
        T value;                                                                            \
        for (;;) {                                                                          \
            while (n > ORD_PW_BLOCK) { /* descend to the leftmost leaf */                   \
                int64_t n2 = n / 2;                                                         \
                n2 -= n2 % 8;                                                               \
                at[top] = lo, len[top] = n, side[top] = 0, top++;                           \
                n = n2;                                                                     \
            }                                                                               \
            value = NAME##_leaf(ORD_UNPAREN ARGS, lo, n);                                   \
            /* climb while the finished subtree is a right half */                          \
            while (top > 0 && side[top - 1] == 1) {                                         \
                top--;                                                                      \
                value = left[top] + value;                                                  \
            }                                                                               \
            if (top == 0) return value;                                                     \
            /* a left half is done: keep it, go to the right half */                        \
            int64_t n2 = len[top - 1] / 2;                                                  \
            n2 -= n2 % 8;                                                                   \
            left[top - 1] = value, side[top - 1] = 1;                                       \
            lo = at[top - 1] + n2, n = len[top - 1] - n2;                                   \
        }                                                                                   \
    }

/* ORD_FIRST_EXTREMUM(NAME, T, PARAMS, AT) defines NAME(PARAMS..., n, is_max): the index i
 * < n of the first maximum (minimum) of the values AT, or of the first NaN; n >= 1. */
#define ORD_FIRST_EXTREMUM(NAME, T, PARAMS, AT)                                             \
    ORD_FN int64_t NAME(ORD_UNPAREN PARAMS, int64_t n, int is_max) {                        \
        int64_t best = 0;                                                                   \
        T b;                                                                                \
        {                                                                                   \
            int64_t i = 0;                                                                  \
            b = AT;                                                                         \
        }                                                                                   \
        for (int64_t i = 1; i < n; i++) {                                                   \
            T v = AT;                                                                       \
            if ((is_max ? v > b : v < b) || (v != v && b == b)) best = i, b = v;            \
        }                                                                                   \
        return best;                                                                        \
    }

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
    ORD_PAIRWISE(ord_pw_strided_##SFX, T, (const T *a, int64_t s), (a, s), a[i * s])        \
    ORD_FN T ord_pairwise_##SFX(const T *a, int64_t n, int64_t s) {                         \
        return ord_pw_strided_##SFX(a, s, 0, n);                                            \
    }                                                                                       \
    ORD_FIRST_EXTREMUM(ord_first_strided_##SFX, T, (const T *a, int64_t s), a[i * s])       \
    ORD_FN T ord_sum_##SFX(const T *a, int64_t n, int64_t s) {                              \
        return (T)0 + ord_pairwise_##SFX(a, n, s);                                          \
    }                                                                                       \
    ORD_FN T ord_prod_##SFX(const T *a, int64_t n, int64_t s) {                             \
        T r = n > 0 ? a[0] : (T)1;                                                          \
        for (int64_t i = 1; i < n; i++) r *= a[i * s];                                      \
        return r;                                                                           \
    }                                                                                       \
    ORD_FN int64_t ord_extremum_##SFX(const T *a, int64_t n, int64_t s, int is_max) {       \
        return ord_first_strided_##SFX(a, s, n, is_max);                                    \
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

/* Window reductions (docs/numerics.md, "Window reductions") of a contiguous operand x of
 * up to ORD_WIN_DIMS axes, described by int64 values at these indices (ORD_WIN_DIMS each
 * but the count): */
#define ORD_WIN_DIMS 6
enum {
    ORD_WIN_NDIM = 0,
    ORD_WIN_S = 1,         /* x's shape */
    ORD_WIN_W = 7,         /* the window's */
    ORD_WIN_Y = 13,        /* the output's */
    ORD_WIN_STRIDE = 19,   /* window strides */
    ORD_WIN_PAD_LO = 25,   /* low padding (negative crops) */
    ORD_WIN_BASE_DIL = 31, /* base (operand) dilation */
    ORD_WIN_WIN_DIL = 37,  /* window dilation */
    ORD_WIN_LEN = 43
};

/* The window of output element `out` (flat): its origin org (per axis: its first position,
 * padded and dilated coordinates, less the low padding); returns its size K. */
ORD_FN int64_t ord_win_origin(const int64_t *d, int64_t out, int64_t *org) {
    int64_t k = 1;
    for (int64_t a = d[ORD_WIN_NDIM] - 1; a >= 0; a--) {
        const int64_t y = d[ORD_WIN_Y + a];
        org[a] = (out % y) * d[ORD_WIN_STRIDE + a] - d[ORD_WIN_PAD_LO + a];
        out /= y;
        k *= d[ORD_WIN_W + a];
    }
    return k;
}

/* ORD_WINDOW_DEFINE(T, SFX) defines
 *   ord_win_at_SFX(x, d, org, k, ident): the element at window position k (row-major) of
 *     the window at org (per axis: its first position, padded and dilated coordinates, less
 *     the low padding), or ident where that is padding or dilation;
 *   ord_window_SFX(x, d, out, op): output element `out` (flat) of the sum (op 0: +0 +
 *     pairwise of the window's K values in window order), maximum (1) or minimum (2: the
 *     first extremum in window order, or the first NaN) of its window, padded with the
 *     identity (0, -inf, +inf); an empty window gives the identity. */
#define ORD_WINDOW_DEFINE(T, SFX)                                                           \
    ORD_FN T ord_win_at_##SFX(const T *x, const int64_t *d, const int64_t *org, int64_t k,  \
                              T ident) {                                                    \
        const int64_t nd = d[ORD_WIN_NDIM];                                                 \
        int64_t q[ORD_WIN_DIMS], off = 0;                                                   \
        for (int64_t a = nd - 1; a >= 0; a--) {                                             \
            const int64_t w = d[ORD_WIN_W + a];                                             \
            q[a] = org[a] + (k % w) * d[ORD_WIN_WIN_DIL + a];                               \
            k /= w;                                                                         \
        }                                                                                   \
        for (int64_t a = 0; a < nd; a++) {                                                  \
            const int64_t dil = d[ORD_WIN_BASE_DIL + a];                                    \
            if (q[a] < 0 || q[a] % dil != 0 || q[a] / dil >= d[ORD_WIN_S + a]) return ident; \
            off = off * d[ORD_WIN_S + a] + q[a] / dil;                                      \
        }                                                                                   \
        return x[off];                                                                      \
    }                                                                                       \
    ORD_PAIRWISE(ord_pw_window_##SFX, T, (const T *x, const int64_t *d, const int64_t *org), \
                 (x, d, org), ord_win_at_##SFX(x, d, org, i, (T)0))                         \
    ORD_FIRST_EXTREMUM(ord_first_window_##SFX, T,                                          \
                       (const T *x, const int64_t *d, const int64_t *org, T ident),         \
                       ord_win_at_##SFX(x, d, org, i, ident))                               \
    ORD_FN T ord_window_##SFX(const T *x, const int64_t *d, int64_t out, int op) {          \
        int64_t org[ORD_WIN_DIMS];                                                          \
        const int64_t k = ord_win_origin(d, out, org);                                      \
        if (op == 0) return (T)0 + ord_pw_window_##SFX(x, d, org, 0, k);                    \
        const T ident = op == 1 ? -(T)INFINITY : (T)INFINITY;                               \
        if (k == 0) return ident;                                                           \
        return ord_win_at_##SFX(x, d, org, ord_first_window_##SFX(x, d, org, ident, k, op == 1), \
                                ident);                                                     \
    }

ORD_WINDOW_DEFINE(float, f32)
ORD_WINDOW_DEFINE(double, f64)

/* NumPy's maximum and minimum of two floats: the first operand if it is a NaN or wins,
 * else the second (so a tie of zeros gives the second; c_forms.py's FMAX and FMIN). */
#define ORD_MAXIMUM(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define ORD_MINIMUM(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))

/* ORD_SCAN_WITH(NAME, T, STEP) defines NAME(x, sx, y, k, op, reverse): the inclusive scan of
 * the k values x[0], x[sx], ... into y[0..k): y[0] = x[0], y[p] = STEP(y[p-1], x[p], op) in
 * order (reverse: from the last value to the first, y[k-1] = x[k-1]). */
#define ORD_SCAN_WITH(NAME, T, STEP)                                                        \
    ORD_FN void NAME(const T *x, int64_t sx, T *y, int64_t k, int op, int reverse) {        \
        for (int64_t q = 0; q < k; q++) {                                                   \
            const int64_t p = reverse ? k - 1 - q : q;                                      \
            const T v = x[p * sx];                                                          \
            y[p] = q == 0 ? v : STEP(y[reverse ? p + 1 : p - 1], v, op);                    \
        }                                                                                   \
    }

/* The steps of NumPy's accumulate: op 0: +, 1: *, 2: maximum, 3: minimum. */
#define ORD_SCAN_STEP(last, v, op)                                                          \
    ((op) == 0 ? (last) + (v) : (op) == 1 ? (last) * (v)                                    \
     : (op) == 2 ? ORD_MAXIMUM(last, v) : ORD_MINIMUM(last, v))

/* ORD_SCAN_DEFINE(T, SFX) defines ord_scan_SFX(x, sx, y, k, op, reverse): the scans of
 * cumsum, cumprod, cummax and cummin (ORD_SCAN_STEP's op). */
#define ORD_SCAN_DEFINE(T, SFX) ORD_SCAN_WITH(ord_scan_##SFX, T, ORD_SCAN_STEP)

ORD_SCAN_DEFINE(float, f32)
ORD_SCAN_DEFINE(double, f64)

/* ORD_SCATTER_DEFINE(T, SFX) defines ord_scatter_column_SFX(t, rows, u, m, r, c, op): column
 * c of the scatter of the m update rows u (each r values) into the rows rows[i] of t (r
 * values each), in update order: t[rows[i], c] = t[rows[i], c] op u[i, c] for i = 0, 1, ...
 * (op 0: set, 1: +, 2: *, 3: minimum, 4: maximum; NumPy's ufunc.at); an update whose row
 * is negative is dropped. A column's updates touch that column alone, so columns may run at
 * once. */
#define ORD_SCATTER_BODY(T, SFX, ADD, MUL, MIN, MAX)                                        \
    ORD_FN void ord_scatter_column_##SFX(T *t, const int64_t *rows, const T *u, int64_t m,  \
                                         int64_t r, int64_t c, int op) {                    \
        for (int64_t i = 0; i < m; i++) {                                                   \
            if (rows[i] < 0) continue;                                                      \
            T *dst = t + rows[i] * r + c;                                                   \
            const T v = u[i * r + c];                                                       \
            *dst = op == 0 ? v : op == 1 ? (ADD) : op == 2 ? (MUL) : op == 3 ? (MIN) : (MAX); \
        }                                                                                   \
    }
#define ORD_SCATTER_DEFINE(T, SFX)                                                          \
    ORD_SCATTER_BODY(T, SFX, *dst + v, *dst * v, ORD_MINIMUM(*dst, v), ORD_MAXIMUM(*dst, v))
/* Integers wrap around (the arithmetic modulo 2^64, then the type's bits: no overflow in
 * C); bools (0 or 1 in a byte) add as "or" and multiply as "and", as NumPy's ufuncs. */
#define ORD_SCATTER_INT_DEFINE(T, SFX)                                                      \
    ORD_SCATTER_BODY(T, SFX, (T)((uint64_t)*dst + (uint64_t)v),                             \
                     (T)((uint64_t)*dst * (uint64_t)v), (*dst < v ? *dst : v),              \
                     (*dst > v ? *dst : v))

ORD_SCATTER_DEFINE(float, f32)
ORD_SCATTER_DEFINE(double, f64)
ORD_SCATTER_INT_DEFINE(int8_t, i8)
ORD_SCATTER_INT_DEFINE(uint8_t, u8)
ORD_SCATTER_INT_DEFINE(int16_t, i16)
ORD_SCATTER_INT_DEFINE(uint16_t, u16)
ORD_SCATTER_INT_DEFINE(int32_t, i32)
ORD_SCATTER_INT_DEFINE(uint32_t, u32)
ORD_SCATTER_INT_DEFINE(int64_t, i64)
ORD_SCATTER_INT_DEFINE(uint64_t, u64)
ORD_SCATTER_BODY(uint8_t, b8, *dst | v, *dst & v, *dst & v, *dst | v)

#endif
