#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_atfork */
/* gemm.c - the canonical contraction kernel (docs/numerics.md, "Contractions").
 *
 * C[b] = A[b] @ B[b] for float and double, with strided operands. gemm_impl.h holds the
 * type-generic loops; this file holds the microkernels, the dispatch and the threads.
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2 1
#include <immintrin.h>
#endif

/* Cache blocking: rows per packed block of A, columns per packed block of B. */
#ifndef MC
#define MC 144
#endif
#ifndef NC
#define NC 1024
#endif
#define MAX_MR 8
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
#define SPIN_NS 500000L
#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* A microkernel with its tile shape. */
typedef struct {
    int mr, nr;
    void (*ukr)(void);
} kernel_desc;

/* One gemm call, shared by its threads. */
typedef struct {
    kernel_desc desc;
    operand3 a, b;
    void *c;
    ptrdiff_t m, n, k, units, chunks;
    int dbl, split_m, nthreads;
    void *bufs[MAX_THREADS];
} gemm_job;

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

/* The microkernel for products of m rows. */
static kernel_desc select_kernel(int dbl, ptrdiff_t m) {
    kernel_desc d = {SCALAR_MR, SCALAR_NR,
                     dbl ? (void (*)(void))ukr_scalar_f64 : (void (*)(void))ukr_scalar_f32};
#ifdef HAVE_AVX2
    if (isa_current() == ISA_AVX2 && m == 1) {
        d.mr = 1;
        d.nr = dbl ? 32 : 64;
        d.ukr = dbl ? (void (*)(void))ukr_row_avx2_f64 : (void (*)(void))ukr_row_avx2_f32;
    } else if (isa_current() == ISA_AVX2) {
        d.mr = 6;
        d.nr = dbl ? 8 : 16;
        d.ukr = dbl ? (void (*)(void))ukr_avx2_f64 : (void (*)(void))ukr_avx2_f32;
    }
#else
    (void)m;
#endif
    return d;
}

/* ---- buffers: packed blocks, kept between calls (fresh pages cost more than the work) - */

#define BUF_BYTES ((size_t)(ABUF_ELEMS + BBUF_ELEMS) * sizeof(double))
#define POOL_CAP 8

static void *g_pool[POOL_CAP];
static int g_pool_n;
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

/* ---- threads: a pool of workers, started on first use and kept ------------------------ */

static void run_units(gemm_job *job, int t) {
    if (job->dbl)
        gemm_units_f64(job, t);
    else
        gemm_units_f32(job, t);
}

#ifndef _WIN32
/* Worker i (1-based) computes share i of the current job when i < active. One parallel
 * call runs at a time (call_lock); a concurrent call runs on its own thread alone. */
static pthread_mutex_t g_call_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER, g_done = PTHREAD_COND_INITIALIZER;
static int g_workers, g_active, g_atfork;
/* Jobs started, and helper shares finished (the count to reach: g_target). */
static unsigned long g_generation, g_born[MAX_THREADS], g_finished, g_target;
static gemm_job *g_job;

/* Wait until *word != old: spinning for up to SPIN_NS first (back-to-back calls find the
 * threads awake), then sleeping on cond; g_lock is held on entry and on return. */
static void await_change(unsigned long *word, unsigned long old, pthread_cond_t *cond) {
    if (*word == old) {
        struct timespec start, now;
        pthread_mutex_unlock(&g_lock);
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (long i = 1; __atomic_load_n(word, __ATOMIC_ACQUIRE) == old; i++) {
            CPU_RELAX();
            if (i % 64 == 0) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - start.tv_sec) * 1000000000L + now.tv_nsec - start.tv_nsec >
                    SPIN_NS)
                    break;
            }
        }
        pthread_mutex_lock(&g_lock);
    }
    while (*word == old) pthread_cond_wait(cond, &g_lock);
}

static void *pool_worker(void *p) {
    int id = (int)(intptr_t)p;
    pthread_mutex_lock(&g_lock);
    unsigned long seen = g_born[id]; /* the generation before the first job it serves */
    for (;;) {
        await_change(&g_generation, seen, &g_wake);
        seen = g_generation;
        if (id >= g_active) continue;
        gemm_job *job = g_job;
        pthread_mutex_unlock(&g_lock);
        run_units(job, id);
        pthread_mutex_lock(&g_lock);
        if (__atomic_add_fetch(&g_finished, 1, __ATOMIC_RELEASE) == g_target)
            pthread_cond_signal(&g_done);
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
}

/* Run shares 0 .. job->nthreads - 1 of job, share 0 on this thread. */
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
        int helpers = g_workers < job->nthreads - 1 ? g_workers : job->nthreads - 1;
        g_job = job;
        g_active = helpers + 1;
        g_target = g_finished + helpers;
        __atomic_add_fetch(&g_generation, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&g_wake);
        pthread_mutex_unlock(&g_lock);
        run_units(job, 0);
        for (int t = helpers + 1; t < job->nthreads; t++) run_units(job, t); /* not started */
        pthread_mutex_lock(&g_lock);
        for (unsigned long done = g_finished; done != g_target; done = g_finished)
            await_change(&g_finished, done, &g_done);
        pthread_mutex_unlock(&g_lock);
        pthread_mutex_unlock(&g_call_lock);
        return;
    }
    for (int t = 0; t < job->nthreads; t++) run_units(job, t);
}
#else
static void run_parallel(gemm_job *job) {
    for (int t = 0; t < job->nthreads; t++) run_units(job, t);
}
#endif

/* Work below this many multiply-adds per thread is not split (waking one costs more). */
#define MIN_FMAS_PER_THREAD 200000

int gemm(int dbl, operand3 a, operand3 b, void *c, ptrdiff_t nb, ptrdiff_t m, ptrdiff_t n,
         ptrdiff_t k, int nthreads) {
    size_t esize = dbl ? sizeof(double) : sizeof(float);
    if (nb == 0 || m == 0 || n == 0) return 0;
    if (k == 0) {
        memset(c, 0, (size_t)(nb * m * n) * esize);
        return 0;
    }
    if (n == 1 && m > 1) { /* a matrix-vector product: C.T = B.T @ A.T, the same order */
        operand3 t = {a.p, a.s0, a.s2, a.s1};
        a = (operand3){b.p, b.s0, b.s2, b.s1};
        b = t;
        n = m;
        m = 1;
    }
    gemm_job job;
    memset(&job, 0, sizeof job);
    job.desc = select_kernel(dbl, m);
    job.dbl = dbl;
    job.a = a;
    job.b = b;
    job.c = c;
    job.m = m;
    job.n = n;
    job.k = k;
    double fmas = (double)nb * m * n * k;
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    if (nthreads > fmas / MIN_FMAS_PER_THREAD) nthreads = (int)(fmas / MIN_FMAS_PER_THREAD);
    if (nthreads < 1) nthreads = 1;
    /* Cut each matrix into `chunks` row or column ranges so that there are enough units. */
    ptrdiff_t mt = (m + job.desc.mr - 1) / job.desc.mr, nt = (n + job.desc.nr - 1) / job.desc.nr;
    job.split_m = mt >= nt;
    job.chunks = nb >= nthreads ? 1 : (nthreads + nb - 1) / nb;
    if (job.chunks > (job.split_m ? mt : nt)) job.chunks = job.split_m ? mt : nt;
    job.units = nb * job.chunks;
    if (nthreads > job.units) nthreads = (int)job.units;
    job.nthreads = nthreads;
    int status = 0;
    for (int t = 0; t < nthreads; t++) {
        job.bufs[t] = buf_acquire();
        if (!job.bufs[t]) status = -1;
    }
    if (status == 0) run_parallel(&job);
    for (int t = 0; t < nthreads; t++) buf_release(job.bufs[t]);
    return status;
}
