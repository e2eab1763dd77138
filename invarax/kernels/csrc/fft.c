/* fft.c - invarax's FFT (docs/numerics.md, "The FFT"): plans and the Python entry points,
 * added to invarax.kernels._native by module.c.
 *
 * A plan fixes, for one length n and float type, the whole sequence of operations: the
 * Stockham stages (radix 4 while 4 divides what is left, then 2, then the odd primes in
 * ascending order; a length with a prime factor above FFT_MAX_RADIX goes by Bluestein's
 * algorithm through a power of two) and their twiddle factors, computed here once, in
 * double, by a fixed sequence of IEEE operations and C99 fma (correctly rounded wherever
 * it runs), then rounded to the type: the same bits on every machine. fft_impl.h runs a
 * plan on blocks of transforms; threads take whole blocks, so neither the batch, nor the
 * thread count, nor the dispatch level changes a bit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elementary_math.h"
#include "native.h"

#define FFT_MAX_RADIX 31
#define FFT_MAX_STAGES 64

enum { FFT_FFT = 0, FFT_IFFT, FFT_RFFT, FFT_IRFFT };

typedef struct fft_plan {
    ptrdiff_t n;
    int dbl, nst, bluestein;
    int radix[FFT_MAX_STAGES];
    ptrdiff_t m[FFT_MAX_STAGES], twoff[FFT_MAX_STAGES], rootoff[FFT_MAX_STAGES];
    void *tw;          /* stage twiddles (and odd radices' roots), of the plan's type */
    ptrdiff_t bm;      /* Bluestein: the power of two M >= 2n - 1 */
    struct fft_plan *sub; /* Bluestein: the plan of M; a real plan: the complex plan of n/2 */
    void *chirp;       /* Bluestein: c_k (re n, im n), then the filter (re M, im M) */
    void *rtw;         /* a real plan (n even): W_n^k for k = 0..n/2 (re, then im) */
} fft_plan;

typedef struct {
    const fft_plan *plan;
    int kind;
    ptrdiff_t n, lines, inner, lanes, scratch;
    int bluestein; /* whether the plan (or its half-length plan) goes by Bluestein */
    const void *x;
    void *y;
} fft_job;

/* exp(-2 pi i k / n) = (*c, *s): the angle is reduced exactly to phi in [0, pi/4] by the
 * quadrant (4k div n) and the octant, phi = (pi/2) f with f = rem / n in double-double,
 * phi = rh + rl by fma; cos and sin of it are elementary_math.h's kernels (within 1 ulp of
 * the exact value); the quadrant's signs and swaps are exact. */
static void twiddle(uint64_t k, uint64_t n, double *c, double *s) {
    k %= n;
    uint64_t quad = (4 * k) / n, rem = (4 * k) % n;
    int back = 2 * rem > n; /* angle = (quad + 1) pi/2 - phi */
    if (back) {
        rem = n - rem;
        quad += 1;
    }
    double fh = (double)rem / (double)n, fl = fma(-fh, (double)n, (double)rem) / (double)n;
    double th = fh * EM_PIO2_1, tl = fma(fh, EM_PIO2_1, -th) + (fl * EM_PIO2_1 + fh * EM_PIO2_2);
    double rh = th + tl, rl = (th - rh) + tl;
    double cx = em_cos_kernel(rh, rl), sx = em_sin_kernel(rh, rl);
    if (back) sx = -sx;
    double cq, sq; /* cos, sin of quad pi/2 + x */
    switch (quad & 3) {
    case 0: cq = cx; sq = sx; break;
    case 1: cq = -sx; sq = cx; break;
    case 2: cq = -cx; sq = -sx; break;
    default: cq = sx; sq = -cx; break;
    }
    *c = cq;
    *s = -sq;
}

static void free_plan(fft_plan *pl) {
    if (!pl) return;
    free_plan(pl->sub);
    free(pl->tw);
    free(pl->chirp);
    free(pl->rtw);
    free(pl);
}

/* Store v at index i of a float (dbl = 0) or double array. */
static void put(void *a, int dbl, ptrdiff_t i, double v) {
    if (dbl) ((double *)a)[i] = v;
    else ((float *)a)[i] = (float)v;
}

static fft_plan *complex_plan(ptrdiff_t n, int dbl);

/* ---- the loops, once per type and dispatch level ---------------------------------------- */

#define T float
#define SFX f32_scalar
#include "fft_impl.h"
#undef SFX
#undef T
#define T double
#define SFX f64_scalar
#include "fft_impl.h"
#undef SFX
#undef T

#ifdef INVARAX_X86
#define FFT_HAVE_X86 1
TARGET_BEGIN("avx2")
#define T float
#define SFX f32_avx2
#include "fft_impl.h"
#undef SFX
#undef T
#define T double
#define SFX f64_avx2
#include "fft_impl.h"
#undef SFX
#undef T
TARGET_END
TARGET_BEGIN("avx512f,avx512dq,avx512vl,avx512bw,avx2")
#define T float
#define SFX f32_avx512
#include "fft_impl.h"
#undef SFX
#undef T
#define T double
#define SFX f64_avx512
#include "fft_impl.h"
#undef SFX
#undef T
TARGET_END
#endif

/* ---- plans -------------------------------------------------------------------------------- */

/* The stages of n: radix 4 while 4 divides, then 2, then odd primes ascending. Returns the
 * count, or -1 if a prime factor exceeds FFT_MAX_RADIX (Bluestein then). */
static int factorise(ptrdiff_t n, int *radix) {
    int nst = 0;
    while (n % 4 == 0) radix[nst++] = 4, n /= 4;
    if (n % 2 == 0) radix[nst++] = 2, n /= 2;
    for (ptrdiff_t p = 3; n > 1; p += 2) {
        if (p > FFT_MAX_RADIX) return -1;
        while (n % p == 0) radix[nst++] = (int)p, n /= p;
    }
    return nst;
}

static fft_plan *complex_plan(ptrdiff_t n, int dbl) {
    fft_plan *pl = calloc(1, sizeof(fft_plan));
    if (!pl) return NULL;
    pl->n = n;
    pl->dbl = dbl;
    size_t sz = dbl ? sizeof(double) : sizeof(float);
    int nst = factorise(n, pl->radix);
    if (nst < 0) { /* Bluestein */
        ptrdiff_t M = 1;
        while (M < 2 * n - 1) M *= 2;
        pl->bluestein = 1;
        pl->bm = M;
        pl->sub = complex_plan(M, dbl);
        fft_plan *dsub = dbl ? pl->sub : complex_plan(M, 1);
        pl->chirp = malloc(sz * (size_t)(2 * n + 2 * M));
        double *fbuf = malloc(sizeof(double) * (size_t)(8 * M));
        if (!pl->sub || !dsub || !pl->chirp || !fbuf) {
            if (dsub != pl->sub) free_plan(dsub);
            free(fbuf);
            free_plan(pl);
            return NULL;
        }
        /* c_k = W_{2n}^{k^2}; the filter: FFT_M of b (b_k = b_{M-k} = conj c_k for k < n,
         * zero between), in double by the f64 plan of M, times 1/M, rounded to the type. */
        double *brr = fbuf, *bii = fbuf + M;
        for (ptrdiff_t e = 0; e < M; e++) brr[e] = bii[e] = 0;
        for (ptrdiff_t k = 0; k < n; k++) {
            double c, s;
            twiddle(((uint64_t)k * (uint64_t)k) % (uint64_t)(2 * n), (uint64_t)(2 * n), &c, &s);
            put(pl->chirp, dbl, k, c);
            put(pl->chirp, dbl, n + k, s);
            brr[k] = c;
            bii[k] = -s;
            if (k) {
                brr[M - k] = c;
                bii[M - k] = -s;
            }
        }
        double *wr = fbuf + 2 * M, *wi = fbuf + 3 * M;
        transform_f64_scalar(dsub, 1, brr, bii, wr, wi, NULL, NULL, NULL, NULL);
        double inv = 1.0 / (double)M;
        for (ptrdiff_t e = 0; e < M; e++) {
            put(pl->chirp, dbl, 2 * n + e, brr[e] * inv);
            put(pl->chirp, dbl, 2 * n + M + e, bii[e] * inv);
        }
        if (dsub != pl->sub) free_plan(dsub);
        free(fbuf);
        return pl;
    }
    pl->nst = nst;
    ptrdiff_t words = 0, cur = n;
    for (int st = 0; st < nst; st++) {
        int r = pl->radix[st];
        pl->m[st] = cur / r;
        pl->rootoff[st] = words;
        if (r % 2) words += 2 * r;
        pl->twoff[st] = words;
        words += 2 * (r - 1) * pl->m[st];
        cur /= r;
    }
    pl->tw = malloc(sz * (size_t)(words + 1));
    if (!pl->tw) {
        free_plan(pl);
        return NULL;
    }
    cur = n;
    for (int st = 0; st < nst; st++) {
        int r = pl->radix[st];
        ptrdiff_t m = pl->m[st], o = pl->twoff[st];
        if (r % 2)
            for (int t = 0; t < r; t++) {
                double c, s;
                twiddle((uint64_t)t, (uint64_t)r, &c, &s);
                put(pl->tw, dbl, pl->rootoff[st] + t, c);
                put(pl->tw, dbl, pl->rootoff[st] + r + t, s);
            }
        for (int j = 1; j < r; j++)
            for (ptrdiff_t p = 0; p < m; p++) {
                double c, s;
                twiddle((uint64_t)j * (uint64_t)p, (uint64_t)cur, &c, &s);
                put(pl->tw, dbl, o + (j - 1) * m + p, c);
                put(pl->tw, dbl, o + (r - 1) * m + (j - 1) * m + p, s);
            }
        cur /= r;
    }
    return pl;
}

/* The plan of a real transform of length n: for odd n the complex plan of n; for even n the
 * complex plan of n/2 (sub) and W_n^k, k = 0..n/2 (rtw). */
static fft_plan *real_plan(ptrdiff_t n, int dbl) {
    if (n % 2) return complex_plan(n, dbl);
    fft_plan *pl = calloc(1, sizeof(fft_plan));
    if (!pl) return NULL;
    ptrdiff_t h = n / 2;
    pl->n = n;
    pl->dbl = dbl;
    pl->sub = complex_plan(h, dbl);
    pl->rtw = malloc((dbl ? sizeof(double) : sizeof(float)) * (size_t)(2 * h + 2));
    if (!pl->sub || !pl->rtw) {
        free_plan(pl);
        return NULL;
    }
    for (ptrdiff_t k = 0; k <= h; k++) {
        double c, s;
        twiddle((uint64_t)k, (uint64_t)n, &c, &s);
        put(pl->rtw, dbl, k, c);
        put(pl->rtw, dbl, h + 1 + k, s);
    }
    return pl;
}

/* Elements of scratch per lane that a call with this plan needs. */
static ptrdiff_t plan_scratch(const fft_plan *pl) {
    ptrdiff_t s = pl->n + 2;
    if (pl->bluestein && pl->bm > s) s = pl->bm;
    if (pl->sub && plan_scratch(pl->sub) > s) s = plan_scratch(pl->sub);
    return s;
}

/* ---- running a call ----------------------------------------------------------------------- */

static int run_share(const fft_job *j, int tid, int nthreads) {
    int dbl = j->plan->dbl;
#ifdef FFT_HAVE_X86
    int isa = isa_current();
    if (isa >= ISA_AVX512)
        return dbl ? run_share_f64_avx512(j, tid, nthreads) : run_share_f32_avx512(j, tid, nthreads);
    if (isa >= ISA_AVX2)
        return dbl ? run_share_f64_avx2(j, tid, nthreads) : run_share_f32_avx2(j, tid, nthreads);
#endif
    return dbl ? run_share_f64_scalar(j, tid, nthreads) : run_share_f32_scalar(j, tid, nthreads);
}

typedef struct {
    const fft_job *j;
    int tid, nthreads, rc;
} fft_thread;

static void *thread_main(void *arg) {
    fft_thread *t = arg;
    t->rc = run_share(t->j, t->tid, t->nthreads);
    return NULL;
}

/* Threads pay off from about this many elements (times log n) per thread. */
#define FFT_WORK_PER_THREAD 262144.0

static int run_job(fft_job *j, int nthreads) {
    ptrdiff_t nblocks = (j->lines + j->lanes - 1) / j->lanes;
    double work = (double)j->lines * (double)j->scratch * 8;
    int nt = nthreads;
    if (nt > 1 + work / FFT_WORK_PER_THREAD) nt = (int)(1 + work / FFT_WORK_PER_THREAD);
    if (nt > nblocks) nt = (int)nblocks;
    if (nt <= 1) return run_share(j, 0, 1);
    fft_thread ts[64];
    pthread_t th[64];
    if (nt > 64) nt = 64;
    int started = 0, rc = 0;
    for (int t = 0; t < nt; t++) ts[t] = (fft_thread){j, t, nt, 0};
    for (int t = 1; t < nt; t++, started++)
        if (pthread_create(&th[t], NULL, thread_main, &ts[t]) != 0) break;
    thread_main(&ts[0]);
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
    for (int t = started + 1; t < nt; t++) thread_main(&ts[t]);
    for (int t = 0; t < nt; t++) rc |= ts[t].rc;
    return rc;
}

/* ---- Python entry points ------------------------------------------------------------------ */

static const char *PLAN_CAPSULE = "invarax.fft_plan";

static void plan_destructor(PyObject *capsule) {
    free_plan(PyCapsule_GetPointer(capsule, PLAN_CAPSULE));
}

/* fft_plan(n, dbl, real) -> a capsule holding the plan. */
PyObject *py_fft_plan(PyObject *self, PyObject *args) {
    Py_ssize_t n;
    int dbl, real;
    if (!PyArg_ParseTuple(args, "npp", &n, &dbl, &real)) return NULL;
    if (n < 1 || n > ((Py_ssize_t)1 << 40)) {
        PyErr_Format(PyExc_ValueError, "fft_plan: invalid length %zd", n);
        return NULL;
    }
    fft_plan *pl;
    Py_BEGIN_ALLOW_THREADS
    pl = real ? real_plan(n, dbl) : complex_plan(n, dbl);
    Py_END_ALLOW_THREADS
    if (!pl) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(pl, PLAN_CAPSULE, plan_destructor);
    if (!cap) free_plan(pl);
    return cap;
}

/* fft(kind, plan, x, y, lines, inner, lanes, nthreads): transform `lines` lines of the
 * C-contiguous x (viewed as (B, len_in, inner), B inner = lines) into y, (B, len_out, inner);
 * complex operands as float pairs. */
PyObject *py_fft(PyObject *self, PyObject *args) {
    int kind, nthreads;
    Py_ssize_t lines, inner, lanes;
    PyObject *cap, *xo, *yo;
    if (!PyArg_ParseTuple(args, "iOOOnnni", &kind, &cap, &xo, &yo, &lines, &inner, &lanes,
                          &nthreads))
        return NULL;
    fft_plan *pl = PyCapsule_GetPointer(cap, PLAN_CAPSULE);
    if (!pl) return NULL;
    if (kind < FFT_FFT || kind > FFT_IRFFT || lines < 0 || inner < 1 || lanes < 1) {
        PyErr_SetString(PyExc_ValueError, "fft: bad kind, lines, inner or lanes");
        return NULL;
    }
    Py_buffer v[2];
    int got = 0, ok = 0;
    for (; got < 2; got++) {
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (got ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(got ? yo : xo, &v[got], flags) < 0) goto release;
    }
    ptrdiff_t n = pl->n, itemsize = pl->dbl ? 8 : 4, bins = n / 2 + 1;
    ptrdiff_t in_len = kind == FFT_RFFT ? n : kind == FFT_IRFFT ? 2 * bins : 2 * n;
    ptrdiff_t out_len = kind == FFT_IRFFT ? n : kind == FFT_RFFT ? 2 * bins : 2 * n;
    if (v[0].len != lines * in_len * itemsize || v[1].len != lines * out_len * itemsize ||
        v[0].itemsize != itemsize || v[1].itemsize != itemsize) {
        PyErr_SetString(PyExc_ValueError, "fft: operand sizes or types do not match the plan");
        goto release;
    }
    int blue = pl->bluestein || (pl->sub && pl->sub->bluestein);
    fft_job j = {pl, kind, n, lines, inner, lanes, plan_scratch(pl), blue, v[0].buf, v[1].buf};
    int rc = 0;
    if (lines > 0) {
        Py_BEGIN_ALLOW_THREADS
        rc = run_job(&j, nthreads < 1 ? 1 : nthreads);
        Py_END_ALLOW_THREADS
    }
    if (rc) PyErr_NoMemory();
    else ok = 1;
release:
    while (got > 0) PyBuffer_Release(&v[--got]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}
