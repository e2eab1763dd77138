#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_atfork */
/* gemm.c - the canonical contraction kernel (docs/numerics.md, "Contractions").
 *
 * C[b] = A[b] @ B[b] for float and double, with strided operands. gemm_impl.h holds the
 * type-generic loops, gemm_avx512.h the AVX-512 microkernels; this file holds the others,
 * the dispatch and the threads.
 * Each thread computes whole output tiles, so the thread count never changes an
 * element's order of operations.
 */
#include "native.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <pthread.h>
#include <time.h>
#endif

#ifdef INVARAX_X86
#define HAVE_AVX2 1
#include <immintrin.h>
#endif

/* Cache blocking: rows per packed block of A, columns per packed block of B. */
#ifndef MC
#define MC 144
#endif
#ifndef NC
#define NC 1024
/* Columns of B that a thread packs at a time when the threads share its packing (a
 * multiple of every microkernel's nr) */
#define PACK_COLS 128
#endif
#define MAX_MR 12
#define MAX_NR 64
#define SCALAR_MR 4
#define SCALAR_NR 8
/* Products of at most this many rows read B in place when its rows are contiguous. */
#ifndef DIRECT_M
#define DIRECT_M 48
#endif
#define ABUF_ELEMS ((ptrdiff_t)MC * INVARAX_KB)
#define BBUF_ELEMS ((ptrdiff_t)INVARAX_KB * (NC + MAX_NR))
#define MAX_THREADS 64
/* How long idle workers (and a caller waiting for them) spin before they sleep. */
#ifndef SPIN_NS
#define SPIN_NS 500000L
#endif
#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* A microkernel with its tile shape; `narrow`: the narrow-product path (AVX2 only). */
typedef struct {
    int mr, nr, narrow;
    void (*ukr)(void);
} kernel_desc;

/* One gemm call, shared by its threads, which claim its units (next) until none is left. */
typedef struct {
    kernel_desc desc;
    operand3 a, b;
    void *c;
    const void *bpack; /* B packed once for every unit (pack_b_all), or NULL */
    /* B's packing into bpack as units too, claimed before the product's units: pack_units
     * pieces of at most PACK_COLS columns of one (column, K) block; 0: bpack is ready */
    ptrdiff_t pack_units, pack_next, pack_done;
    ptrdiff_t bld;     /* a kept packing's (gemm_packed) padded width; 0: bpack is per call */
    /* An implicit A (conv_gemm): A[b, i, p] = a.p[b*a.s0 + rowoff[i] + coloff[p]], or NULL */
    const ptrdiff_t *rowoff, *coloff;
    ptrdiff_t m, n, k, nbi, units, chunks, next; /* nbi: the inner batch axis (operand3) */
    /* An epilogue, or NULL: C[.., i, j] = C + bias[j * bias_step] (bias + C if bias_first)
     * once C is whole, in the unit that computed it (bias_step 0: one value for all) */
    const void *bias;
    ptrdiff_t bias_step;
    int bias_first;
    /* Or another job for the pool (run_ranges): work(wp, lo, hi, wblk) on the runs [lo, hi)
     * of wrun items of [0, wsize), claimed from next; wfail set if a call returned nonzero */
    int (*work)(void **, int64_t, int64_t, int64_t);
    void **wp;
    ptrdiff_t wsize, wrun, wblk;
    int wfail;
    int dbl, split_m, direct, nthreads;
    void *bufs[MAX_THREADS];
} gemm_job;

/* The epilogue of rows [0, rows) x columns [j0, j1) of C (row length ldc, from c): each
 * element plus bias[j * step] (bias first if `first`), one rounding, as the separate
 * addition of eager evaluation computes it. */
static void gemm_bias_rows(int dbl, const void *bias, ptrdiff_t step, int first, void *c,
                           ptrdiff_t rows, ptrdiff_t ldc, ptrdiff_t j0, ptrdiff_t j1) {
#define BIAS_ROWS(T)                                                                          \
    for (ptrdiff_t i = 0; i < rows; i++) {                                                    \
        T *ci = (T *)c + i * ldc;                                                             \
        const T *bi = (const T *)bias;                                                        \
        if (first)                                                                            \
            for (ptrdiff_t j = j0; j < j1; j++) ci[j] = bi[j * step] + ci[j];                 \
        else                                                                                  \
            for (ptrdiff_t j = j0; j < j1; j++) ci[j] = ci[j] + bi[j * step];                 \
    }
    if (dbl) BIAS_ROWS(double) else BIAS_ROWS(float)
#undef BIAS_ROWS
}

/* The start of chunk `c` of `chunks` when `total` items are cut at multiples of `unit`. */
static ptrdiff_t chunk_bound(ptrdiff_t total, int unit, ptrdiff_t chunks, ptrdiff_t c) {
    ptrdiff_t tiles = (total + unit - 1) / unit;
    ptrdiff_t bound = (tiles * c / chunks) * unit;
    return bound < total ? bound : total;
}

/* ---- dispatch ------------------------------------------------------------------------ */

static int g_isa = -1;

int isa_detect(void) {
#ifdef HAVE_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return ISA_AVX2;
#endif
    return ISA_SCALAR;
}

int isa_current(void) {
    if (g_isa < 0) g_isa = isa_detect();
    return g_isa;
}

int isa_set(int isa) {
    if (isa < 0 || isa > isa_detect()) return -1;
    g_isa = isa;
    return 0;
}

/* ---- AVX2 + FMA microkernels: 6 x 16 floats, 6 x 8 doubles; rows of 64 and 32 -------- */

#ifdef HAVE_AVX2
#define AVX2 __attribute__((target("avx2,fma")))

/* One FMA chain per element: s = fma(a[i], b[j], s) for p in increasing order. */
#define UKR_AVX2(NAME, T, V, ZERO, LOADU, STOREU, ADD, BCAST, FMADD, W)                     \
    static AVX2 void NAME(ptrdiff_t kb, const T *a, const T *b, ptrdiff_t ldb, T *c,       \
                          ptrdiff_t ldc, int first) {                                      \
        V s00 = ZERO(), s01 = ZERO(), s10 = ZERO(), s11 = ZERO(), s20 = ZERO();          \
        V s21 = ZERO(), s30 = ZERO(), s31 = ZERO(), s40 = ZERO(), s41 = ZERO();          \
        V s50 = ZERO(), s51 = ZERO();                                                      \
        for (ptrdiff_t p = 0; p < kb; p++, a += 6, b += ldb) {                             \
            V b0 = LOADU(b), b1 = LOADU(b + W), x;                                         \
            x = BCAST(a + 0); s00 = FMADD(x, b0, s00); s01 = FMADD(x, b1, s01);            \
            x = BCAST(a + 1); s10 = FMADD(x, b0, s10); s11 = FMADD(x, b1, s11);            \
            x = BCAST(a + 2); s20 = FMADD(x, b0, s20); s21 = FMADD(x, b1, s21);            \
            x = BCAST(a + 3); s30 = FMADD(x, b0, s30); s31 = FMADD(x, b1, s31);            \
            x = BCAST(a + 4); s40 = FMADD(x, b0, s40); s41 = FMADD(x, b1, s41);            \
            x = BCAST(a + 5); s50 = FMADD(x, b0, s50); s51 = FMADD(x, b1, s51);            \
        }                                                                                  \
        V s[12] = {s00, s01, s10, s11, s20, s21, s30, s31, s40, s41, s50, s51};            \
        for (int i = 0; i < 6; i++)                                                        \
            for (int h = 0; h < 2; h++) {                                                  \
                T *ci = c + i * ldc + h * W;                                               \
                STOREU(ci, first ? s[2 * i + h] : ADD(LOADU(ci), s[2 * i + h]));           \
            }                                                                              \
    }

/* A single row: 1 x 8 vectors, eight independent chains (vector-matrix products). */
#define UKR_ROW_AVX2(NAME, T, V, ZERO, LOADU, STOREU, ADD, BCAST, FMADD, W)                 \
    static AVX2 void NAME(ptrdiff_t kb, const T *a, const T *b, ptrdiff_t ldb, T *c,       \
                          ptrdiff_t ldc, int first) {                                      \
        (void)ldc;                                                                         \
        V s[8];                                                                            \
        for (int h = 0; h < 8; h++) s[h] = ZERO();                                         \
        for (ptrdiff_t p = 0; p < kb; p++, b += ldb) {                                     \
            V x = BCAST(a + p);                                                            \
            for (int h = 0; h < 8; h++) s[h] = FMADD(x, LOADU(b + h * W), s[h]);           \
        }                                                                                  \
        for (int h = 0; h < 8; h++)                                                        \
            STOREU(c + h * W, first ? s[h] : ADD(LOADU(c + h * W), s[h]));                 \
    }

#define AVX2_F32 float, __m256, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_storeu_ps, \
                 _mm256_add_ps, _mm256_broadcast_ss, _mm256_fmadd_ps, 8
#define AVX2_F64 double, __m256d, _mm256_setzero_pd, _mm256_loadu_pd, _mm256_storeu_pd, \
                 _mm256_add_pd, _mm256_broadcast_sd, _mm256_fmadd_pd, 4
#define EXPAND(MACRO, ...) MACRO(__VA_ARGS__)

/* dst[q*ldd + r] = src[r*ss + q] for r, q < 8: an 8 x 8 block of floats, transposed. */
static AVX2 void transpose_avx2_f32(const float *src, ptrdiff_t ss, float *dst, ptrdiff_t ldd) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * ss);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
        _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
}

/* The same for a 4 x 4 block of doubles. */
static AVX2 void transpose_avx2_f64(const double *src, ptrdiff_t ss, double *dst,
                                    ptrdiff_t ldd) {
    __m256d r[4], t[4];
    for (int i = 0; i < 4; i++) r[i] = _mm256_loadu_pd(src + i * ss);
    t[0] = _mm256_unpacklo_pd(r[0], r[1]);
    t[1] = _mm256_unpackhi_pd(r[0], r[1]);
    t[2] = _mm256_unpacklo_pd(r[2], r[3]);
    t[3] = _mm256_unpackhi_pd(r[2], r[3]);
    _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t[0], t[2], 0x20));
    _mm256_storeu_pd(dst + ldd, _mm256_permute2f128_pd(t[1], t[3], 0x20));
    _mm256_storeu_pd(dst + 2 * ldd, _mm256_permute2f128_pd(t[0], t[2], 0x31));
    _mm256_storeu_pd(dst + 3 * ldd, _mm256_permute2f128_pd(t[1], t[3], 0x31));
}
EXPAND(UKR_AVX2, ukr_avx2_f32, AVX2_F32)
EXPAND(UKR_AVX2, ukr_avx2_f64, AVX2_F64)
EXPAND(UKR_ROW_AVX2, ukr_row_avx2_f32, AVX2_F32)
EXPAND(UKR_ROW_AVX2, ukr_row_avx2_f64, AVX2_F64)

/* Narrow products (n <= 2 vectors of columns, e.g. a 10 x 10 weight): every row of C is
 * one or two vectors, computed for NARROW_MR rows at a time from A read in place (any
 * strides: the products are too thin for packing A to pay) and a packed, zero-padded
 * panel of B (b[p*nr + j]); only the n valid columns are stored: when the rows of C are
 * contiguous (ldc == n), a row's whole vectors are stored where their spill into the next
 * rows of the block is overwritten by those rows' own stores. Each element is
 * one FMA chain in increasing p, as in every kernel. */
#define NARROW_MR 6
#define UKR_NARROW_AVX2(NAME, T, V, ZERO, LOADU, STOREU, ADD, BCAST, FMADD, W, PART)   \
    /* Store row i of the block (vectors v0, v1): C = s (first) or C = C + s. */           \
    static inline AVX2 __attribute__((always_inline)) void NAME##_row(                     \
        T *c, V v0, V v1, int nv, int i, int rows, int cols, ptrdiff_t ldc, int first) {   \
        c += i * ldc;                                                                      \
        if (first && ldc == cols && (rows - i) * cols >= nv * W) {                         \
            STOREU(c, v0); /* spills into the next rows, stored after it */                \
            if (nv == 2) STOREU(c + W, v1);                                                \
            return;                                                                        \
        }                                                                                  \
        if (nv == 2) {                                                                     \
            STOREU(c, first ? v0 : ADD(LOADU(c), v0));                                     \
            PART(c + W, v1, cols - W, first);                                              \
        } else {                                                                           \
            PART(c, v0, cols, first);                                                      \
        }                                                                                  \
    }                                                                                      \
    static AVX2 void NAME(ptrdiff_t kb, const T *a, ptrdiff_t sam, ptrdiff_t sak,          \
                          const T *b, int nv, T *c, ptrdiff_t ldc, int rows, int cols,     \
                          int first) {                                                     \
        const T *a0 = a, *a1 = a + sam, *a2 = a + 2 * sam, *a3 = a + 3 * sam;              \
        const T *a4 = a + 4 * sam, *a5 = a + 5 * sam;                                      \
        if (rows == NARROW_MR && nv == 2) {                                                \
            V s00 = ZERO(), s01 = ZERO(), s10 = ZERO(), s11 = ZERO(), s20 = ZERO();        \
            V s21 = ZERO(), s30 = ZERO(), s31 = ZERO(), s40 = ZERO(), s41 = ZERO();        \
            V s50 = ZERO(), s51 = ZERO();                                                  \
            for (ptrdiff_t p = 0, o = 0; p < kb; p++, o += sak, b += 2 * W) {              \
                V b0 = LOADU(b), b1 = LOADU(b + W), x;                                     \
                x = BCAST(a0 + o); s00 = FMADD(x, b0, s00); s01 = FMADD(x, b1, s01);       \
                x = BCAST(a1 + o); s10 = FMADD(x, b0, s10); s11 = FMADD(x, b1, s11);       \
                x = BCAST(a2 + o); s20 = FMADD(x, b0, s20); s21 = FMADD(x, b1, s21);       \
                x = BCAST(a3 + o); s30 = FMADD(x, b0, s30); s31 = FMADD(x, b1, s31);       \
                x = BCAST(a4 + o); s40 = FMADD(x, b0, s40); s41 = FMADD(x, b1, s41);       \
                x = BCAST(a5 + o); s50 = FMADD(x, b0, s50); s51 = FMADD(x, b1, s51);       \
            }                                                                              \
            NAME##_row(c, s00, s01, 2, 0, rows, cols, ldc, first);                         \
            NAME##_row(c, s10, s11, 2, 1, rows, cols, ldc, first);                         \
            NAME##_row(c, s20, s21, 2, 2, rows, cols, ldc, first);                         \
            NAME##_row(c, s30, s31, 2, 3, rows, cols, ldc, first);                         \
            NAME##_row(c, s40, s41, 2, 4, rows, cols, ldc, first);                         \
            NAME##_row(c, s50, s51, 2, 5, rows, cols, ldc, first);                         \
        } else if (rows == NARROW_MR) {                                                    \
            V s0 = ZERO(), s1 = ZERO(), s2 = ZERO(), s3 = ZERO(), s4 = ZERO(), s5 = ZERO(); \
            for (ptrdiff_t p = 0, o = 0; p < kb; p++, o += sak, b += W) {                  \
                V b0 = LOADU(b);                                                           \
                s0 = FMADD(BCAST(a0 + o), b0, s0);                                         \
                s1 = FMADD(BCAST(a1 + o), b0, s1);                                         \
                s2 = FMADD(BCAST(a2 + o), b0, s2);                                         \
                s3 = FMADD(BCAST(a3 + o), b0, s3);                                         \
                s4 = FMADD(BCAST(a4 + o), b0, s4);                                         \
                s5 = FMADD(BCAST(a5 + o), b0, s5);                                         \
            }                                                                              \
            NAME##_row(c, s0, s0, 1, 0, rows, cols, ldc, first);                           \
            NAME##_row(c, s1, s1, 1, 1, rows, cols, ldc, first);                           \
            NAME##_row(c, s2, s2, 1, 2, rows, cols, ldc, first);                           \
            NAME##_row(c, s3, s3, 1, 3, rows, cols, ldc, first);                           \
            NAME##_row(c, s4, s4, 1, 4, rows, cols, ldc, first);                           \
            NAME##_row(c, s5, s5, 1, 5, rows, cols, ldc, first);                           \
        } else {                                                                           \
            for (int i = 0; i < rows; i++) {                                               \
                V t0 = ZERO(), t1 = ZERO();                                                \
                const T *ai = a + i * sam, *bp = b;                                        \
                for (ptrdiff_t p = 0; p < kb; p++, bp += nv * W) {                         \
                    V x = BCAST(ai + p * sak);                                             \
                    t0 = FMADD(x, LOADU(bp), t0);                                          \
                    if (nv == 2) t1 = FMADD(x, LOADU(bp + W), t1);                         \
                }                                                                          \
                NAME##_row(c, t0, t1, nv, i, rows, cols, ldc, first);                      \
            }                                                                              \
        }                                                                                  \
    }

/* Store the first `cols` (1 to W) lanes of v at c: c = v (first), else c = c + v. */
static inline AVX2 void part_f32(float *c, __m256 v, int cols, int first) {
    if (cols == 8 && first) {
        _mm256_storeu_ps(c, v);
        return;
    }
    if (!first) {
        float t[8];
        _mm256_storeu_ps(t, v);
        for (int j = 0; j < cols; j++) c[j] = c[j] + t[j];
        return;
    }
    __m128 x = _mm256_castps256_ps128(v);
    if (cols >= 4) {
        _mm_storeu_ps(c, x);
        x = _mm256_extractf128_ps(v, 1);
        c += 4;
        cols -= 4;
    }
    if (cols >= 2) {
        _mm_storel_pi((__m64 *)c, x);
        x = _mm_movehl_ps(x, x);
        c += 2;
        cols -= 2;
    }
    if (cols) _mm_store_ss(c, x);
}

static inline AVX2 void part_f64(double *c, __m256d v, int cols, int first) {
    if (cols == 4 && first) {
        _mm256_storeu_pd(c, v);
        return;
    }
    if (!first) {
        double t[4];
        _mm256_storeu_pd(t, v);
        for (int j = 0; j < cols; j++) c[j] = c[j] + t[j];
        return;
    }
    __m128d x = _mm256_castpd256_pd128(v);
    if (cols >= 2) {
        _mm_storeu_pd(c, x);
        x = _mm256_extractf128_pd(v, 1);
        c += 2;
        cols -= 2;
    }
    if (cols) _mm_store_sd(c, x);
}

EXPAND(UKR_NARROW_AVX2, ukr_narrow_avx2_f32, AVX2_F32, part_f32)
EXPAND(UKR_NARROW_AVX2, ukr_narrow_avx2_f64, AVX2_F64, part_f64)

#include "gemm_avx512.h"

/* A row block of A is a whole number of tiles (no ragged tile inside a block). */
_Static_assert(MC % SCALAR_MR == 0 && MC % 6 == 0 && MC % AVX512_MR == 0,
               "MC must be a multiple of every microkernel's rows");
#endif

/* ---- the type-generic loops ---------------------------------------------------------- */

#define T float
#define SFX f32
#define FMA fmaf
#define TL 8
#include "gemm_impl.h"
#undef T
#undef SFX
#undef FMA
#undef TL

#define T double
#define SFX f64
#define FMA fma
#define TL 4
#include "gemm_impl.h"
#undef T
#undef SFX
#undef FMA
#undef TL

/* The microkernel for products of m rows and n columns. */
static kernel_desc select_kernel(int dbl, ptrdiff_t m, ptrdiff_t n) {
    kernel_desc d = {SCALAR_MR, SCALAR_NR, 0,
                     dbl ? (void (*)(void))ukr_scalar_f64 : (void (*)(void))ukr_scalar_f32};
#ifdef HAVE_AVX2
    int w = dbl ? 4 : 8;
    if (isa_current() >= ISA_AVX2 && n <= 2 * w) {
        d.mr = NARROW_MR;
        d.nr = n <= w ? w : 2 * w;
        d.narrow = 1;
        d.ukr = NULL;
    } else if (isa_current() >= ISA_AVX2 && m == 1) {
        d.mr = 1;
        d.nr = dbl ? 32 : 64;
        d.ukr = dbl ? (void (*)(void))ukr_row_avx2_f64 : (void (*)(void))ukr_row_avx2_f32;
    } else if (isa_current() >= ISA_AVX512) {
        d.mr = AVX512_MR;
        d.nr = dbl ? 16 : 32;
        d.ukr = dbl ? (void (*)(void))ukr_avx512_f64 : (void (*)(void))ukr_avx512_f32;
    } else if (isa_current() >= ISA_AVX2) {
        d.mr = 6;
        d.nr = dbl ? 8 : 16;
        d.ukr = dbl ? (void (*)(void))ukr_avx2_f64 : (void (*)(void))ukr_avx2_f32;
    }
#else
    (void)m;
    (void)n;
#endif
    return d;
}

/* ---- buffers: packed blocks, kept between calls (fresh pages cost more than the work) - */

#define BUF_BYTES ((size_t)(ABUF_ELEMS + BBUF_ELEMS) * sizeof(double))
#define POOL_CAP 8
/* The largest B packed once for all the threads of a call (larger ones: per unit). */
#define BPACK_MAX_BYTES ((size_t)32 << 20)

static void *g_pool[POOL_CAP];
static int g_pool_n;
static void *g_bpack; /* a kept buffer for packed B, of g_bpack_bytes */
static size_t g_bpack_bytes;
#ifndef _WIN32
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
#define LOCK() pthread_mutex_lock(&g_pool_lock)
#define UNLOCK() pthread_mutex_unlock(&g_pool_lock)
#else
#define LOCK()
#define UNLOCK()
#endif

static void *buf_acquire(void) {
    void *p = NULL;
    LOCK();
    if (g_pool_n > 0) p = g_pool[--g_pool_n];
    UNLOCK();
    return p ? p : aligned_alloc(64, BUF_BYTES);
}

static void buf_release(void *p) {
    if (!p) return;
    LOCK();
    if (g_pool_n < POOL_CAP) {
        g_pool[g_pool_n++] = p;
        p = NULL;
    }
    UNLOCK();
    free(p);
}

/* A buffer of at least *bytes for packed B; *bytes becomes its size. */
static void *bpack_acquire(size_t *bytes) {
    void *p = NULL;
    LOCK();
    if (g_bpack && g_bpack_bytes >= *bytes) {
        p = g_bpack;
        *bytes = g_bpack_bytes;
        g_bpack = NULL;
    }
    UNLOCK();
    if (!p) {
        *bytes = (*bytes + 63) / 64 * 64;
        p = aligned_alloc(64, *bytes);
    }
    return p;
}

/* Keep the larger of p and the kept buffer. */
static void bpack_release(void *p, size_t bytes) {
    if (!p) return;
    LOCK();
    if (!g_bpack || g_bpack_bytes < bytes) {
        void *old = g_bpack;
        g_bpack = p;
        g_bpack_bytes = bytes;
        p = old;
    }
    UNLOCK();
    free(p);
}

/* ---- threads: a pool of workers, started on first use and kept ------------------------ */

static void run_units(gemm_job *job, int t) {
    if (job->work) {
        for (;;) {
            ptrdiff_t lo = __atomic_fetch_add(&job->next, job->wrun, __ATOMIC_RELAXED);
            if (lo >= job->wsize) break;
            ptrdiff_t hi = job->wsize - lo < job->wrun ? job->wsize : lo + job->wrun;
            if (job->work(job->wp, lo, hi, job->wblk))
                __atomic_store_n(&job->wfail, 1, __ATOMIC_RELAXED);
        }
        return;
    }
    if (job->dbl)
        gemm_units_f64(job, t);
    else
        gemm_units_f32(job, t);
}

#ifndef _WIN32
/* The calling thread claims units of its job at once; a worker that wakes while the job is
 * open (g_job) joins it and claims units too. Units are claimed one at a time, so a busy
 * or descheduled worker delays a call by at most the unit it is running, never by units it
 * has not started. One parallel call runs at a time (call_lock); a concurrent call runs on
 * its own thread alone. */
static pthread_mutex_t g_call_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER, g_done = PTHREAD_COND_INITIALIZER;
static int g_workers, g_atfork;
/* Jobs opened so far; the open job (NULL once its caller ran out of units); the workers
 * running units of it. */
static unsigned long g_generation, g_born[MAX_THREADS];
static gemm_job *g_job;
static unsigned long g_busy;

/* Spin for up to SPIN_NS until *word != old (so that back-to-back calls find the threads
 * awake); g_lock is released meanwhile. Returns with g_lock held. */
static void spin_while(unsigned long *word, unsigned long old) {
    struct timespec start, now;
    pthread_mutex_unlock(&g_lock);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 1; __atomic_load_n(word, __ATOMIC_ACQUIRE) == old; i++) {
        CPU_RELAX();
        if (i % 64 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec > SPIN_NS)
                break;
        }
    }
    pthread_mutex_lock(&g_lock);
}

static void *pool_worker(void *p) {
    int id = (int)(intptr_t)p;
    pthread_mutex_lock(&g_lock);
    unsigned long seen = g_born[id]; /* the generation before the first job it may serve */
    for (;;) {
        if (g_generation == seen) spin_while(&g_generation, seen);
        while (g_generation == seen) pthread_cond_wait(&g_wake, &g_lock);
        seen = g_generation;
        gemm_job *job = g_job;
        if (!job || id >= job->nthreads) continue;
        __atomic_add_fetch(&g_busy, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&g_lock);
        run_units(job, id);
        pthread_mutex_lock(&g_lock);
        if (__atomic_sub_fetch(&g_busy, 1, __ATOMIC_RELEASE) == 0) pthread_cond_signal(&g_done);
    }
    return NULL;
}

/* In a forked child the workers are gone: start afresh. */
static void pool_reset(void) {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
    g_call_lock = g_lock = lock;
    g_wake = g_done = cond;
    g_workers = 0;
    g_job = NULL;
    g_busy = 0;
}

/* Run every unit of job, on this thread and on the workers that join. */
static void run_parallel(gemm_job *job) {
    if (job->nthreads > 1 && pthread_mutex_trylock(&g_call_lock) == 0) {
        pthread_mutex_lock(&g_lock);
        if (!g_atfork) g_atfork = pthread_atfork(NULL, NULL, pool_reset) == 0;
        while (g_workers < job->nthreads - 1) {
            pthread_t tid;
            g_born[g_workers + 1] = g_generation;
            if (pthread_create(&tid, NULL, pool_worker, (void *)(intptr_t)(g_workers + 1))) break;
            pthread_detach(tid);
            g_workers++;
        }
        g_job = job;
        __atomic_add_fetch(&g_generation, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&g_wake);
        pthread_mutex_unlock(&g_lock);
        run_units(job, 0);
        pthread_mutex_lock(&g_lock);
        g_job = NULL; /* no worker joins any more; wait for those that did */
        for (unsigned long busy = g_busy; busy != 0; busy = g_busy) {
            spin_while(&g_busy, busy);
            while (g_busy == busy) pthread_cond_wait(&g_done, &g_lock);
        }
        pthread_mutex_unlock(&g_lock);
        pthread_mutex_unlock(&g_call_lock);
        return;
    }
    run_units(job, 0);
}
#else
static void run_parallel(gemm_job *job) { run_units(job, 0); }
#endif

/* Work below this many multiply-adds per thread is not split (waking one costs more).
 * Zen 4, jitted float32 products back to back, one thread against two: 512x256x10 49 ->
 * 33 us, 256x784x10 75 -> 56 us, 100x100x100 38 -> 35 us; 80x80x80 (512K) unchanged. */
#define MIN_FMAS_PER_THREAD 500000
/* With several threads, each matrix is cut into about UNITS_PER_THREAD units per thread
 * (so that threads that start late or run slower take fewer), of at least UNIT_ROWS rows
 * or UNIT_COLS columns (each unit reads all of the other operand's packed panels). */
#ifndef UNITS_PER_THREAD
#define UNITS_PER_THREAD 4
#endif
#ifndef UNIT_ROWS
#define UNIT_ROWS 32
#endif
#define UNIT_COLS 64

/* The pieces of B's packing for all the threads of a call: each (NC column, K) block cut
 * into pieces of PACK_COLS columns, so that the threads share it. */
static ptrdiff_t pack_unit_count(ptrdiff_t n, ptrdiff_t k) {
    ptrdiff_t units = 0;
    for (ptrdiff_t jc = 0; jc < n; jc += NC) {
        ptrdiff_t nc = n - jc < NC ? n - jc : NC;
        units += (nc + PACK_COLS - 1) / PACK_COLS;
    }
    return units * ((k + INVARAX_KB - 1) / INVARAX_KB);
}

/* Whether a product of m rows and n columns can use a kept packing of its B (gemm_packed):
 * one column block (n <= NC) and the blocked kernels (not the narrow or one-row ones). */
static int packable(int dbl, ptrdiff_t m, ptrdiff_t n) {
    kernel_desc d = select_kernel(dbl, m, n);
    return n <= NC && !d.narrow && d.mr > 1 && m > 0 && n > 1;
}

size_t gemm_packed_size(int dbl, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k) {
    if (!packable(dbl, m, n) || k <= 0) return 0;
    ptrdiff_t nr = select_kernel(dbl, m, n).nr;
    return (size_t)k * (size_t)((n + nr - 1) / nr * nr) * (dbl ? sizeof(double) : sizeof(float));
}

void gemm_pack(int dbl, operand3 b, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, void *dst) {
    int nr = select_kernel(dbl, m, n).nr;
    if (dbl)
        pack_b_all_f64(b.p, b.s1, b.s2, k, n, nr, dst);
    else
        pack_b_all_f32(b.p, b.s1, b.s2, k, n, nr, dst);
}

/* gemm, or conv_gemm when rowoff is not NULL (A implicit, see gemm_job); `packed`: B already
 * packed by gemm_pack (nb == 1), or NULL. */
static int gemm_run(int dbl, operand3 a, const ptrdiff_t *rowoff, const ptrdiff_t *coloff,
                    operand3 b, const void *packed, void *c, ptrdiff_t nb, ptrdiff_t nbi,
                    ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, int nthreads, const void *bias,
                    int bias_first) {
    size_t esize = dbl ? sizeof(double) : sizeof(float);
    if (nb == 0 || m == 0 || n == 0) return 0;
    ptrdiff_t bias_step = 1;
    if (k == 0) {
        memset(c, 0, (size_t)(nb * m * n) * esize);
        if (bias) gemm_bias_rows(dbl, bias, 1, bias_first, c, nb * m, n, 0, n);
        return 0;
    }
    if (n == 1 && m > 1 && !rowoff) { /* matrix-vector: C.T = B.T @ A.T, the same order */
        bias_step = 0;
        operand3 t = {a.p, a.s0, a.s2, a.s1, a.si};
        a = (operand3){b.p, b.s0, b.s2, b.s1, b.si};
        b = t;
        n = m;
        m = 1;
    }
    gemm_job job;
    memset(&job, 0, sizeof job);
    job.rowoff = rowoff;
    job.coloff = coloff;
    job.desc = select_kernel(dbl, m, n);
    job.dbl = dbl;
    job.a = a;
    job.b = b;
    job.c = c;
    job.m = m;
    job.n = n;
    job.k = k;
    job.nbi = nbi;
    job.bias = bias;
    job.bias_step = bias_step;
    job.bias_first = bias_first;
    job.direct = b.s2 == 1 && m <= DIRECT_M && !rowoff && !packed;
    if (packed) {
        job.bpack = packed;
        job.bld = (n + job.desc.nr - 1) / job.desc.nr * job.desc.nr;
    }
    double fmas = (double)nb * m * n * k;
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    if (nthreads > fmas / MIN_FMAS_PER_THREAD) nthreads = (int)(fmas / MIN_FMAS_PER_THREAD);
    if (nthreads < 1) nthreads = 1;
    /* Cut each matrix into `chunks` row or column ranges, so that there are enough units. */
    const int mr = job.desc.mr, nr = job.desc.nr;
    ptrdiff_t mt = (m + mr - 1) / mr, nt = (n + nr - 1) / nr;
    job.split_m = job.desc.narrow || mt >= nt;
    ptrdiff_t tiles = job.split_m ? mt : nt, chunks = 1;
    if (nthreads > 1 && nb < (ptrdiff_t)nthreads * UNITS_PER_THREAD) {
        ptrdiff_t most = job.split_m ? m / UNIT_ROWS : n / UNIT_COLS;
        ptrdiff_t least = (nthreads + nb - 1) / nb;
        chunks = ((ptrdiff_t)nthreads * UNITS_PER_THREAD + nb - 1) / nb;
        if (chunks > most) chunks = most;
        if (chunks < least) chunks = least;
        if (chunks > tiles) chunks = tiles;
    }
    job.chunks = chunks;
    job.units = nb * chunks;
    if (nthreads > job.units) nthreads = (int)job.units;
    job.nthreads = nthreads;
    /* Row ranges of one matrix share B, and so do the matrices of a batch whose B is one
     * matrix repeated (stride 0: the row blocks of an A whose rows do not merge into one
     * stride): pack it once, for all of them. */
    void *bpack = NULL;
    size_t bpack_bytes = (size_t)k * (size_t)((n + nr - 1) / nr * nr) * esize;
    int status = 0;
    int one_b = (nb == nbi || b.s0 == 0) && (nbi == 1 || b.si == 0);
    if (!packed && one_b && job.units > 1 && job.split_m && !job.direct && !job.desc.narrow &&
        bpack_bytes <= BPACK_MAX_BYTES) {
        bpack = bpack_acquire(&bpack_bytes);
        if (!bpack) status = -1;
        job.bpack = bpack; /* packed by the threads first (gemm_units) */
        job.pack_units = pack_unit_count(n, k);
    }
    for (int t = 0; t < nthreads; t++) {
        job.bufs[t] = buf_acquire();
        if (!job.bufs[t]) status = -1;
    }
    if (status == 0) run_parallel(&job);
    for (int t = 0; t < nthreads; t++) buf_release(job.bufs[t]);
    bpack_release(bpack, bpack_bytes);
    return status;
}

int gemm(int dbl, operand3 a, operand3 b, void *c, ptrdiff_t nb, ptrdiff_t m, ptrdiff_t n,
         ptrdiff_t k, int nthreads) {
    return gemm_run(dbl, a, NULL, NULL, b, NULL, c, nb, 1, m, n, k, nthreads, NULL, 0);
}

int gemm_split(int dbl, operand3 a, operand3 b, void *c, ptrdiff_t nbo, ptrdiff_t nbi,
               ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, int nthreads, const void *bias,
               int bias_first) {
    return gemm_run(dbl, a, NULL, NULL, b, NULL, c, nbo * nbi, nbi, m, n, k, nthreads, bias,
                    bias_first);
}

int gemm_packed(int dbl, operand3 a, const void *packed, void *c, ptrdiff_t m, ptrdiff_t n,
                ptrdiff_t k, int nthreads, const void *bias, int bias_first) {
    operand3 none = {NULL, 0, 0, 0};
    if (!packable(dbl, m, n) || k <= 0) return -3;
    return gemm_run(dbl, a, NULL, NULL, none, packed, c, 1, 1, m, n, k, nthreads, bias,
                    bias_first);
}

int conv_gemm(int dbl, const void *x, ptrdiff_t gstride, const ptrdiff_t *rowoff,
              const ptrdiff_t *coloff, operand3 b, void *c, ptrdiff_t nb, ptrdiff_t m,
              ptrdiff_t n, ptrdiff_t k, int nthreads) {
    operand3 a = {x, gstride, 0, 0};
    return gemm_run(dbl, a, rowoff, coloff, b, NULL, c, nb, 1, m, n, k, nthreads, NULL, 0);
}

ptrdiff_t pool_run(ptrdiff_t size, int nthreads, ptrdiff_t align) {
    ptrdiff_t parts = 4 * (ptrdiff_t)(nthreads > 1 ? nthreads : 1);
    ptrdiff_t run = (size + parts - 1) / parts;
    return (run + align - 1) / align * align;
}

int run_ranges(int (*work)(void **, int64_t, int64_t, int64_t), void **p, ptrdiff_t size,
               ptrdiff_t run, ptrdiff_t blk, int nthreads) {
    gemm_job job;
    memset(&job, 0, sizeof job);
    job.work = work;
    job.wp = p;
    job.wsize = size;
    job.wrun = run > 0 ? run : 1;
    job.wblk = blk;
    ptrdiff_t runs = (size + job.wrun - 1) / job.wrun;
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    if (nthreads > runs) nthreads = (int)runs;
    job.nthreads = nthreads < 1 ? 1 : nthreads;
    run_parallel(&job);
    return job.wfail;
}
