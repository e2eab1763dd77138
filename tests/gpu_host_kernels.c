/* gpu_host_kernels.c - the GPU kernels' entry points (csrc/device/*.cu) as host functions
 * with the same names and arguments, for tests/fake_cupy.py: each computes every output
 * by the same per-output functions (order.h, elementary_scalar*.h) the device code calls, so
 * the launch code of invarax.kernels.cuda runs in CI without a GPU. (The device kernels'
 * own tiling is checked on a GPU: tests/test_gpu_kernels.py.) */
#include "elementary_scalar_more.h"
#include "order.h"

#define HOST_KERNELS(T, SFX)                                                                \
    void reduce_sum_##SFX(const T *a, T *out, long long m, long long k, long long sm,       \
                          long long sk) {                                                   \
        for (long long i = 0; i < m; i++) out[i] = ord_sum_##SFX(a + i * sm, k, sk);        \
    }                                                                                       \
    void reduce_prod_##SFX(const T *a, T *out, long long m, long long k, long long sm,      \
                           long long sk) {                                                  \
        for (long long i = 0; i < m; i++) out[i] = ord_prod_##SFX(a + i * sm, k, sk);       \
    }                                                                                       \
    void reduce_extremum_##SFX(const T *a, T *out, long long m, long long k, long long sm,  \
                               long long sk, int is_max) {                                  \
        for (long long i = 0; i < m; i++) {                                                 \
            const T *row = a + i * sm;                                                      \
            out[i] = k == 0 ? (is_max ? -(T)INFINITY : (T)INFINITY)                         \
                            : row[ord_extremum_##SFX(row, k, sk, is_max) * sk];             \
        }                                                                                   \
    }                                                                                       \
    void reduce_argextremum_##SFX(const T *a, long long *out, long long m, long long k,     \
                                  long long sm, long long sk, int is_max) {                 \
        for (long long i = 0; i < m; i++) out[i] = ord_extremum_##SFX(a + i * sm, k, sk, is_max); \
    }                                                                                       \
    void gemm_##SFX(const T *a, const T *b, T *c, long long m, long long n, long long k,    \
                    long long sab, long long sam, long long sak, long long sbb,             \
                    long long sbk, long long sbn, long long batch) {                        \
        for (long long z = 0; z < batch; z++)                                               \
            for (long long i = 0; i < m; i++)                                               \
                for (long long j = 0; j < n; j++)                                           \
                    c[(z * m + i) * n + j] = ord_dot_##SFX(a + z * sab + i * sam, sak,      \
                                                           b + z * sbb + j * sbn, sbk, k);  \
    }                                                                                       \
    void conv_##SFX(const T *x, const T *w, T *y, const long long *d, long long n) {       \
        for (long long i = 0; i < n; i++) y[i] = ord_conv_##SFX(x, w, (const int64_t *)d, i); \
    }                                                                                       \
    void window_##SFX(const T *x, T *y, const long long *d, long long n, int op) {         \
        for (long long i = 0; i < n; i++) y[i] = ord_window_##SFX(x, (const int64_t *)d, i, op); \
    }                                                                                       \
    void scatter_##SFX(T *t, const long long *rows, const T *u, long long m, long long r,    \
                       int op) {                                                            \
        for (long long c = 0; c < r; c++)                                                   \
            ord_scatter_column_##SFX(t, (const int64_t *)rows, u, m, r, c, op);             \
    }                                                                                       \
    void scan_##SFX(const T *x, T *y, long long m, long long k, long long sm, long long sk,  \
                    int op, int reverse) {                                                  \
        for (long long i = 0; i < m; i++) ord_scan_##SFX(x + i * sm, sk, y + i * k, k, op, reverse); \
    }

HOST_KERNELS(float, f32)
HOST_KERNELS(double, f64)

#define HOST_SCATTER(T, SFX)                                                                \
    void scatter_##SFX(T *t, const long long *rows, const T *u, long long m, long long r,    \
                       int op) {                                                            \
        for (long long c = 0; c < r; c++)                                                   \
            ord_scatter_column_##SFX(t, (const int64_t *)rows, u, m, r, c, op);             \
    }

HOST_SCATTER(int8_t, i8)
HOST_SCATTER(uint8_t, u8)
HOST_SCATTER(int16_t, i16)
HOST_SCATTER(uint16_t, u16)
HOST_SCATTER(int32_t, i32)
HOST_SCATTER(uint32_t, u32)
HOST_SCATTER(int64_t, i64)
HOST_SCATTER(uint64_t, u64)
HOST_SCATTER(uint8_t, b8)

void elementary_more_f32(int fn, const float *x, float *y, long long n) {
    for (long long i = 0; i < n; i++) y[i] = elem_more_f32_value(fn, x[i]);
}

void elementary_more_f64(int fn, const double *x, double *y, long long n) {
    for (long long i = 0; i < n; i++) y[i] = elem_more_f64(fn, x[i]);
}

void elementary2_f32(int fn, const float *a, const float *b, float *y, long long n) {
    for (long long i = 0; i < n; i++) y[i] = elem2_f32_value(fn, a[i], b[i]);
}

void elementary2_f64(int fn, const double *a, const double *b, double *y, long long n) {
    for (long long i = 0; i < n; i++) y[i] = elem2_f64(fn, a[i], b[i]);
}

void elementary_f32(int fn, const float *x, float *y, long long n) {
    for (long long i = 0; i < n; i++) y[i] = elem_f32_value(fn, x[i]);
}

void elementary_f64(int fn, const double *x, double *y, long long n) {
    for (long long i = 0; i < n; i++) y[i] = elem_f64_scalar(fn, x[i]);
}

/* sort.cu's kernels. argsort: each row's phases (sort.h), the launch's `threads` (its block
 * size, which fake_cupy passes last) run one after the other in reverse order, so a thread
 * reading what another writes in the same phase would show. */
#include "logsumexp.h"
#include "sort.h"

#define HOST_SORT(T, SFX)                                                                   \
    void argsort_##SFX(const T *key, long long *perm, long long *scratch, long long m,       \
                       long long k, long long sm, long long sk, int mode, int init,         \
                       long long threads) {                                                 \
        for (long long row = 0; row < m; row++)                                             \
            for (int q = 0; q < ord_sort_phases(k); q++)                                    \
                for (long long t = threads - 1; t >= 0; t--)                                \
                    ord_sort_phase_##SFX(q, key + row * sm, sk, (int64_t *)perm + row * k,  \
                                         (int64_t *)scratch + row * k, k, mode, init, t,    \
                                         threads);                                          \
    }

HOST_SORT(float, f32)
HOST_SORT(double, f64)
HOST_SORT(int8_t, i8)
HOST_SORT(uint8_t, u8)
HOST_SORT(int16_t, i16)
HOST_SORT(uint16_t, u16)
HOST_SORT(int32_t, i32)
HOST_SORT(uint32_t, u32)
HOST_SORT(int64_t, i64)
HOST_SORT(uint64_t, u64)

#define HOST_LSE(T, SFX)                                                                    \
    void cumlogsumexp_##SFX(const T *x, T *y, long long m, long long k, long long sm,       \
                            long long sk, int reverse) {                                    \
        for (long long i = 0; i < m; i++)                                                   \
            ord_cumlogsumexp_##SFX(x + i * sm, sk, y + i * k, k, 0, reverse);               \
    }

HOST_LSE(float, f32)
HOST_LSE(double, f64)

/* index.cu's kernels: their threads one after the other. */
#include "index.h"

#define HOST_ROWS(T, SFX)                                                                   \
    void index_rows_##SFX(long long n, const T *idx, const long long *dims, long long k,    \
                          long long *rows, int drop) {                                      \
        for (long long i = 0; i < n; i++)                                                   \
            idx_rows_##SFX(i, idx, (const int64_t *)dims, k, (int64_t *)rows, drop);        \
    }

HOST_ROWS(int8_t, i8)
HOST_ROWS(uint8_t, u8)
HOST_ROWS(int16_t, i16)
HOST_ROWS(uint16_t, u16)
HOST_ROWS(int32_t, i32)
HOST_ROWS(uint32_t, u32)
HOST_ROWS(int64_t, i64)
HOST_ROWS(uint64_t, u64)

#define HOST_MOVE(U, SFX)                                                                   \
    void index_take_##SFX(long long n, const U *src, const long long *rows, const U *fill,  \
                          U *dst, long long w, long long e) {                               \
        for (long long t = 0; t < n; t++)                                                   \
            idx_take_##SFX(t, src, (const int64_t *)rows, fill, dst, w, e);                 \
    }                                                                                       \
    void index_window_##SFX(long long n, U *big, U *small, const long long *desc,           \
                            const long long *starts, long long e, int update) {             \
        for (long long t = 0; t < n; t++)                                                   \
            idx_window_##SFX(t, big, small, (const int64_t *)desc, (const int64_t *)starts, \
                             e, update);                                                    \
    }

HOST_MOVE(uint8_t, u8)
HOST_MOVE(uint16_t, u16)
HOST_MOVE(uint32_t, u32)
HOST_MOVE(uint64_t, u64)

/* windows_grad.cu's kernels (windows.h): one output, or one operand element, after another. */
#include "windows.h"

#define HOST_WGRAD(T, SFX)                                                                  \
    void wgrad_argselect_##SFX(const T *x, int *idx, const long long *d, int is_max,        \
                               long long n) {                                               \
        for (long long i = 0; i < n; i++)                                                   \
            idx[i] = ord_win_argselect_##SFX(x, (const int64_t *)d, i, is_max);             \
    }                                                                                       \
    void wgrad_gather_##SFX(const T *t, const int *idx, T *out, const long long *d,         \
                            long long n) {                                                  \
        for (long long i = 0; i < n; i++)                                                   \
            out[i] = ord_win_gather_##SFX(t, (const int64_t *)d, idx, i);                   \
    }                                                                                       \
    void wgrad_scatter_##SFX(const T *src, const int *idx, T *out, const long long *d,      \
                             long long n) {                                                 \
        for (long long i = 0; i < n; i++)                                                   \
            out[i] = ord_win_scatter_##SFX(src, idx, (const int64_t *)d, i);                \
    }

HOST_WGRAD(float, f32)
HOST_WGRAD(double, f64)
