/* native.h - shared declarations of invarax's canonical kernels (see docs/numerics.md).
 *
 * Every kernel here computes each output element with an order of floating-point
 * operations that is a fixed function of the reduction length alone. The vector
 * code paths (AVX2+FMA on x86-64) and the portable scalar path perform, for every
 * output element, the very same IEEE operations in the same order, so they give
 * the same bits; the dispatch level only changes how many outputs are computed
 * at once.
 */
#ifndef INVARAX_NATIVE_H
#define INVARAX_NATIVE_H

#include <stddef.h>
#include <stdint.h>

/* The contraction block: the inner product over K is split into blocks of KB terms. */
#define INVARAX_KB 256

/* Compile the functions between TARGET_BEGIN("isa,...") and TARGET_END for those x86-64
 * instruction sets (one place for GCC's and clang's pragmas; INVARAX_X86 where they exist). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define INVARAX_X86 1
#define INVARAX_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define TARGET_BEGIN(isa) \
    INVARAX_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define TARGET_END INVARAX_PRAGMA(clang attribute pop)
#else
#define TARGET_BEGIN(isa) INVARAX_PRAGMA(GCC push_options) INVARAX_PRAGMA(GCC target(isa))
#define TARGET_END INVARAX_PRAGMA(GCC pop_options)
#endif
#endif

/* Dispatch levels of the kernels: every level gives the same bits. */
enum { ISA_SCALAR = 0, ISA_AVX2 = 1, ISA_AVX512 = 2, ISA_COUNT = 3 };

/* The best level this CPU supports. */
int isa_detect(void);
/* The level the kernels use (isa_detect() unless set with isa_set). */
int isa_current(void);
/* Use level `isa`; returns 0, or -1 if this CPU lacks it. */
int isa_set(int isa);

/* A strided 3-d operand: element (b, i, j) is at p + b*s0 + i*s1 + j*s2 (strides in elements).
 * gemm_split reads a batch of two axes (nbo, nbi): matrix b = bo*nbi + bi is at
 * p + bo*s0 + bi*si (si: 0 where unused). */
typedef struct {
    const void *p;
    ptrdiff_t s0, s1, s2, si;
} operand3;

/* C[b] = A[b] @ B[b] for b < nb, A: (nb, m, k), B: (nb, k, n), C: (nb, m, n) C-contiguous.
 * `dbl` selects double (1) or float (0). Uses up to `nthreads` threads, each
 * computing whole output tiles. Returns 0, or -1 when out of memory. */
int gemm(int dbl, operand3 a, operand3 b, void *c, ptrdiff_t nb, ptrdiff_t m,
         ptrdiff_t n, ptrdiff_t k, int nthreads);
/* gemm of a batch of nbo * nbi matrices laid out on two batch axes (see operand3): the
 * operands of a contraction whose batch axes do not merge into one stride, without a copy;
 * C: (nbo * nbi, m, n) C-contiguous. With `bias` (n contiguous elements of C's type, or
 * NULL), each finished element then gets C[.., i, j] + bias[j] (bias[j] + C if
 * `bias_first`), one rounding: a bias added to a product as its epilogue. */
int gemm_split(int dbl, operand3 a, operand3 b, void *c, ptrdiff_t nbo, ptrdiff_t nbi,
               ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, int nthreads, const void *bias,
               int bias_first);

/* work(p, lo, hi, blk) for the runs [lo, hi) of `run` items of [0, size), claimed by up to
 * nthreads threads of the contraction kernel's pool (a native fusion group's chunks).
 * Returns nonzero if a call did. */
int run_ranges(int (*work)(void **, int64_t, int64_t, int64_t), void **p, ptrdiff_t size,
               ptrdiff_t run, ptrdiff_t blk, int nthreads);
/* The run of run_ranges for `size` items on nthreads threads: about four runs a thread (so
 * that a slower or descheduled thread takes fewer), a multiple of `align` items. */
ptrdiff_t pool_run(ptrdiff_t size, int nthreads, ptrdiff_t align);

/* A kept packing of a B of k x n, for products of m rows (C = A @ B, nb == 1) that reuse one
 * B many times (a loop body's weight): gemm_packed_size gives its bytes (0: such products
 * do not use one), gemm_pack writes it, gemm_packed computes C = A @ B from it. The packing
 * only moves B's elements; every element of C gets gemm's operations. */
size_t gemm_packed_size(int dbl, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k);
void gemm_pack(int dbl, operand3 b, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, void *dst);
int gemm_packed(int dbl, operand3 a, const void *packed, void *c, ptrdiff_t m, ptrdiff_t n,
                ptrdiff_t k, int nthreads, const void *bias, int bias_first);

/* A convolution as an implicit product (docs/numerics.md, "Convolutions"): gemm with
 * A[g, i, p] = x[g*gstride + rowoff[i] + coloff[p]] (i < m, p < k), never built whole;
 * each element of C gets exactly the operations gemm gives it. coloff[k + p] is, for each
 * block of INVARAX_KB terms, the order (local indices) in which to gather them. */
int conv_gemm(int dbl, const void *x, ptrdiff_t gstride, const ptrdiff_t *rowoff,
              const ptrdiff_t *coloff, operand3 b, void *c, ptrdiff_t nb, ptrdiff_t m,
              ptrdiff_t n, ptrdiff_t k, int nthreads);

/* Window selection (docs/numerics.md, "Window reductions"): output o of the row-major
 * grid `outshape` (nd <= WINDOW_MAX_DIMS axes) has its window at x[base(o) + woff[j]],
 * j < k, base(o) = sum_i o_i * step[i] (elements of the C-contiguous padded operand).
 * select: val[o], arg[o] = the first maximum (is_max) or minimum, or the first NaN, and j;
 * gather: out[o] = t[base(o) + woff[arg[o]]];
 * scatter: acc[base(o) + woff[arg[o]]] += src[o], for o in increasing order. */
#define WINDOW_MAX_DIMS 32
void window_select_f32(int is_max, const float *x, int nd, const ptrdiff_t *outshape,
                       const ptrdiff_t *step, const ptrdiff_t *woff, ptrdiff_t k, float *val,
                       int *arg);
void window_select_f64(int is_max, const double *x, int nd, const ptrdiff_t *outshape,
                       const ptrdiff_t *step, const ptrdiff_t *woff, ptrdiff_t k, double *val,
                       int *arg);
void window_gather_f32(const float *t, const int *arg, int nd, const ptrdiff_t *outshape,
                       const ptrdiff_t *step, const ptrdiff_t *woff, float *out);
void window_gather_f64(const double *t, const int *arg, int nd, const ptrdiff_t *outshape,
                       const ptrdiff_t *step, const ptrdiff_t *woff, double *out);
void window_scatter_f32(const float *src, const int *arg, int nd, const ptrdiff_t *outshape,
                        const ptrdiff_t *step, const ptrdiff_t *woff, float *acc);
void window_scatter_f64(const double *src, const int *arg, int nd, const ptrdiff_t *outshape,
                        const ptrdiff_t *step, const ptrdiff_t *woff, double *acc);

/* Reductions of an (m, k) operand whose element (i, j) is at p + i*sm + j*sk
 * (strides in elements) into out[i], i < m (contiguous). */
enum { RED_SUM = 0, RED_PROD, RED_MAX, RED_MIN, RED_ARGMAX, RED_ARGMIN, RED_COUNT };
/* `out` has the operand's type, or int64 for RED_ARGMAX / RED_ARGMIN (k >= 1 then).
 * Returns 0, or -1 when out of memory. */
int reduce(int dbl, int op, const void *p, ptrdiff_t m, ptrdiff_t k, ptrdiff_t sm,
           ptrdiff_t sk, void *out);

/* Inclusive scans (scan.c): y[o, i, j] = y[o, i - 1, j] op x[o, i, j] along i (from the end
 * when `reverse`), y[o, first, j] = x[o, first, j]; x's element (o, i, j) at
 * x + o*so + i*sn + j*si (strides in elements), y C-contiguous (outer, n, inner). */
enum { SCAN_SUM = 0, SCAN_PROD };
void scan(int dbl, int op, const void *x, ptrdiff_t outer, ptrdiff_t n, ptrdiff_t inner,
          ptrdiff_t so, ptrdiff_t sn, ptrdiff_t si, void *y, int reverse);

/* out[i] = a[i] * b[i] + c[i] rounded once (C99 fma), for contiguous operands of n elements. */
void fma_f32(const float *a, const float *b, const float *c, float *out, ptrdiff_t n);
void fma_f64(const double *a, const double *b, const double *c, double *out, ptrdiff_t n);

/* Elementary functions (elementary.c): y[i] = fn(x[i]) for contiguous x, y of n float
 * (dbl = 0, correctly rounded) or double (dbl = 1) elements. */
#include "elementary_ids.h"
void elementary(int fn, int dbl, const void *x, void *y, ptrdiff_t n);
/* Elements of a run that a thread of the pool claims (run_ranges): a multiple of a cache
 * line's, so that no two threads write one line. */
#define ELEM_RUN_ALIGN 64
void elementary_more(int fn, int dbl, const void *x, void *y, ptrdiff_t n);
void elementary_gamma(int fn, int dbl, const void *x, void *y, ptrdiff_t n);
/* out[i] = atan2(a[i], b[i]) (fn 0) or pow(a[i], b[i]) (fn 1) (elementary_more.c), float32
 * rounded once from a double-double. */
void elementary2(int fn, int dbl, const void *a, const void *b, void *out, ptrdiff_t n);
/* The vectorised float32 paths (elementary_more_fast.c) of elementary_more's log2, log10, asinh,
 * acosh, atanh, cbrt, atan, asin, acos, tan, erf, erfc and erf_inv and of elementary_gamma's
 * lgamma and digamma (elementary_more_fast), and of elementary2's atan2 and pow
 * (elementary2_fast): 1 with y (out) computed, or 0 where fn has
 * none. Their fix-up: one element by the exact path (elementary_more_exact_f32 for log2 to
 * digamma, elementary2_exact_f32; elementary_scalar_more.h). */
int elementary_more_fast(int fn, const float *x, float *y, ptrdiff_t n);
int elementary2_fast(int fn, const float *a, const float *b, float *out, ptrdiff_t n);
float elementary_more_exact_f32(int fn, float x);
float elementary2_exact_f32(int fn, float a, float b);

#ifdef Py_PYTHON_H
/* The buffers of objs[0..n) for an elementwise kernel named `name`: C-contiguous, the last
 * one writable, all float32 or all float64 of one byte size. Returns 1 (float64) or 0
 * (float32) with every buffer held in v, or -1 with an exception set and none held
 * (module.c). */
int float_buffers(const char *name, PyObject **objs, int n, Py_buffer *v);
#endif

#endif
