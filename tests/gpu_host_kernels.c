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
