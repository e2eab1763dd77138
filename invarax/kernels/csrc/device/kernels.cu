/* kernels.cu - the GPU's canonical reductions and contractions, compiled by NVRTC
 * (invarax/kernels/nvrtc.py) with --fmad=false -ftz=false -prec-div=true -prec-sqrt=true.
 * Each output gets exactly the operations of order.h, so the CPU's bits: threads and tiles
 * split the outputs, never one output's sum (no atomics, no tensor cores, no split-K).
 *
 * Operands are read with any strides (in elements); outputs are written contiguous. */
#include "order.h"

/* ---- reductions: rows of an (m, k) operand with strides (sm, sk), one thread a row ------- */

#define ROW_KERNELS(T, SFX)                                                                 \
    extern "C" __global__ void reduce_sum_##SFX(const T *a, T *out, long long m, long long k,  \
                                                long long sm, long long sk) {               \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < m) out[i] = ord_sum_##SFX(a + i * sm, k, sk);                               \
    }                                                                                       \
    extern "C" __global__ void reduce_prod_##SFX(const T *a, T *out, long long m, long long k, \
                                                 long long sm, long long sk) {              \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < m) out[i] = ord_prod_##SFX(a + i * sm, k, sk);                              \
    }                                                                                       \
    /* max (is_max = 1) or min: the first extremum's value, the first NaN if any; an empty  \
     * row gives -inf (+inf) */                                                              \
    extern "C" __global__ void reduce_extremum_##SFX(const T *a, T *out, long long m,       \
                                                     long long k, long long sm,             \
                                                     long long sk, int is_max) {            \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i >= m) return;                                                                 \
        const T *row = a + i * sm;                                                          \
        out[i] = k == 0 ? (is_max ? -(T)INFINITY : (T)INFINITY)                             \
                        : row[ord_extremum_##SFX(row, k, sk, is_max) * sk];                 \
    }                                                                                       \
    extern "C" __global__ void reduce_argextremum_##SFX(const T *a, long long *out,         \
                                                        long long m, long long k,           \
                                                        long long sm, long long sk,         \
                                                        int is_max) {                       \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < m) out[i] = ord_extremum_##SFX(a + i * sm, k, sk, is_max);                 \
    }

ROW_KERNELS(float, f32)
ROW_KERNELS(double, f64)

/* ---- contractions: (B, M, K) x (B, K, N) -> (B, M, N) ------------------------------------
 * A block of GT x GT threads computes a TILE x TILE tile of outputs, RT x RT per thread,
 * through shared-memory slices of DEPTH terms. Each output keeps its running block sum s
 * (an FMA chain in increasing p from +0) and its total c; at the end of each block of
 * ORD_KB terms (a whole number of slices) c = s (first block) or c = c + s, and s = +0. A
 * slice past K is cut short, never padded (an FMA with a zero could turn -0 into +0);
 * rows and columns past M and N are computed from zeros and not stored. */
#define GT 16
#define RT 4
#define TILE (GT * RT)
#define DEPTH 16

#define GEMM_KERNEL(T, SFX, FMA)                                                            \
    extern "C" __global__ void __launch_bounds__(GT * GT)                                   \
        gemm_##SFX(const T *a, const T *b, T *c, long long m, long long n, long long k,     \
                   long long sab, long long sam, long long sak, long long sbb,              \
                   long long sbk, long long sbn) {                                          \
        __shared__ T as[DEPTH][TILE + 1];                                                   \
        __shared__ T bs[DEPTH][TILE + 1];                                                   \
        const int tx = threadIdx.x, ty = threadIdx.y, t = ty * GT + tx;                     \
        const long long i0 = (long long)blockIdx.y * TILE, j0 = (long long)blockIdx.x * TILE; \
        a += (long long)blockIdx.z * sab;                                                   \
        b += (long long)blockIdx.z * sbb;                                                   \
        c += (long long)blockIdx.z * m * n;                                                 \
        T s[RT][RT], acc[RT][RT];                                                           \
        for (int u = 0; u < RT; u++)                                                        \
            for (int v = 0; v < RT; v++) s[u][v] = 0, acc[u][v] = 0;                        \
        for (long long p0 = 0; p0 < k; p0 += DEPTH) {                                       \
            const int len = k - p0 < DEPTH ? (int)(k - p0) : DEPTH;                         \
            for (int e = t; e < DEPTH * TILE; e += GT * GT) {                               \
                const int p = e / TILE, r = e % TILE;                                       \
                const long long i = i0 + r, j = j0 + r;                                     \
                as[p][r] = p < len && i < m ? a[i * sam + (p0 + p) * sak] : (T)0;           \
                bs[p][r] = p < len && j < n ? b[(p0 + p) * sbk + j * sbn] : (T)0;           \
            }                                                                               \
            __syncthreads();                                                                \
            for (int p = 0; p < len; p++) {                                                 \
                T x[RT], y[RT];                                                             \
                for (int u = 0; u < RT; u++) x[u] = as[p][ty + u * GT];                     \
                for (int v = 0; v < RT; v++) y[v] = bs[p][tx + v * GT];                     \
                for (int u = 0; u < RT; u++)                                                \
                    for (int v = 0; v < RT; v++) s[u][v] = FMA(x[u], y[v], s[u][v]);        \
            }                                                                               \
            __syncthreads();                                                                \
            const long long done = p0 + len;                                                \
            if (done % ORD_KB == 0 || done == k) {                                          \
                const int first = done <= ORD_KB;                                           \
                for (int u = 0; u < RT; u++)                                                \
                    for (int v = 0; v < RT; v++) {                                          \
                        acc[u][v] = first ? s[u][v] : acc[u][v] + s[u][v];                  \
                        s[u][v] = 0;                                                        \
                    }                                                                       \
            }                                                                               \
        }                                                                                   \
        for (int u = 0; u < RT; u++)                                                        \
            for (int v = 0; v < RT; v++) {                                                  \
                const long long i = i0 + ty + u * GT, j = j0 + tx + v * GT;                 \
                if (i < m && j < n) c[i * n + j] = acc[u][v];                               \
            }                                                                               \
    }

GEMM_KERNEL(float, f32, ORD_FMAF)
GEMM_KERNEL(double, f64, ORD_FMA)

/* ---- convolutions: one thread an output (order.h's ord_conv) --------------------------- */

#define CONV_KERNEL(T, SFX)                                                                 \
    extern "C" __global__ void conv_##SFX(const T *x, const T *w, T *y, const long long *d, \
                                          long long n) {                                    \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) y[i] = ord_conv_##SFX(x, w, d, i);                                       \
    }

CONV_KERNEL(float, f32)
CONV_KERNEL(double, f64)

/* ---- window reductions: one thread an output (order.h's ord_window) ------------------- */

#define WINDOW_KERNEL(T, SFX)                                                               \
    extern "C" __global__ void window_##SFX(const T *x, T *y, const long long *d, long long n, \
                                            int op) {                                       \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < n) y[i] = ord_window_##SFX(x, (const int64_t *)d, i, op);                   \
    }

WINDOW_KERNEL(float, f32)
WINDOW_KERNEL(double, f64)

/* ---- cumulative ops: one thread a row of an (m, k) operand (order.h's ord_scan) -------- */

#define SCAN_KERNEL(T, SFX)                                                                 \
    extern "C" __global__ void scan_##SFX(const T *x, T *y, long long m, long long k,       \
                                          long long sm, long long sk, int op, int reverse) { \
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (i < m) ord_scan_##SFX(x + i * sm, sk, y + i * k, k, op, reverse);               \
    }

SCAN_KERNEL(float, f32)
SCAN_KERNEL(double, f64)

/* ---- scatter: one thread a column of the rows (order.h's ord_scatter_column) ----------- */

#define SCATTER_KERNEL(T, SFX)                                                              \
    extern "C" __global__ void scatter_##SFX(T *t, const long long *rows, const T *u,       \
                                             long long m, long long r, int op) {            \
        long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;                     \
        if (c < r) ord_scatter_column_##SFX(t, (const int64_t *)rows, u, m, r, c, op);      \
    }

SCATTER_KERNEL(float, f32)
SCATTER_KERNEL(double, f64)
SCATTER_KERNEL(int8_t, i8)
SCATTER_KERNEL(uint8_t, u8)
SCATTER_KERNEL(int16_t, i16)
SCATTER_KERNEL(uint16_t, u16)
SCATTER_KERNEL(int32_t, i32)
SCATTER_KERNEL(uint32_t, u32)
SCATTER_KERNEL(int64_t, i64)
SCATTER_KERNEL(uint64_t, u64)
SCATTER_KERNEL(uint8_t, b8)
