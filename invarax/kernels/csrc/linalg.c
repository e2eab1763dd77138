/* linalg.c - the factorisation kernels (docs/numerics.md, "Factorisations") and their Python
 * entry points, added to invarax.kernels._native by module.c.
 *
 * Each kernel factorises a batch of matrices, one matrix at a time, each in the order that
 * linalg_impl.h writes down; threads split the batch between them (every matrix is whole
 * on one thread), except that a batch of one gives its threads to the canonical gemm
 * products of the blocked Cholesky and LU and of the SVD (gemm splits only output tiles),
 * so neither the batch nor the thread count changes a bit (N1, N5).
 * All operands are C-contiguous; outputs are overwritten in place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

enum { OP_CHOLESKY, OP_LU, OP_TRSM, OP_QR, OP_QR_Q, OP_EIGH, OP_SVD };

/* One call: the operation, its dtype, the batch, sizes and the operands' base pointers. */
typedef struct {
    int op, dbl, cplx, unit; /* cplx: complex (every op but OP_CHOLESKY); unit: bit 0 unit
                              * diagonal, bit 1 upper (OP_TRSM) */
    ptrdiff_t nb, m, n, k;  /* k: qc for OP_QR_Q, uc for OP_SVD */
    void *p[4];
    int nthreads, tid;
    int inner; /* threads for gemm within one matrix (a batch of one) */
    int failed;
} job;

/* The panel width of the blocked Cholesky and LU (linalg_blocked.h). */
#ifndef LINALG_BLK
#define LINALG_BLK 64
#endif

#define AT(base, size, b, bytes) ((char *)(base) + (size_t)(b) * (size_t)(size) * (bytes))

/* linalg_impl.h once per type for the baseline CPU and, on x86-64, once more for AVX2:
 * the same C, so the same IEEE operations on every element (no FMA either way, besides
 * those of the canonical gemm that the blocked Cholesky and LU and the SVD call). */
#ifdef INVARAX_X86
#define HAVE_AVX2 1
#endif

#define T float
#define EPS FLT_EPSILON
#define TMIN FLT_MIN
#define TMAX FLT_MAX
#define SFX f32
#define SFX_F64 f64 /* the same instruction set's double instance */
#include "linalg_impl.h"
#undef SFX
#undef SFX_F64
#ifdef HAVE_AVX2
#define SFX avx2_f32
#define SFX_F64 avx2_f64
TARGET_BEGIN("avx2")
#include "linalg_impl.h"
TARGET_END
#undef SFX
#undef SFX_F64
#endif
#undef T
#undef EPS
#undef TMIN
#undef TMAX
#define T double
#define EPS DBL_EPSILON
#define TMIN DBL_MIN
#define TMAX DBL_MAX
#define SFX f64
#define SFX_F64 f64
#include "linalg_impl.h"
#undef SFX
#undef SFX_F64
#ifdef HAVE_AVX2
#define SFX avx2_f64
#define SFX_F64 avx2_f64
TARGET_BEGIN("avx2")
#include "linalg_impl.h"
TARGET_END
#undef SFX
#undef SFX_F64
#endif
#undef T
#undef EPS
#undef TMIN
#undef TMAX

static void run_one(job *j, ptrdiff_t b, void *work) {
#ifdef HAVE_AVX2
    if (isa_current() >= ISA_AVX2) {
        if (j->dbl) run_one_avx2_f64(j, b, work);
        else run_one_avx2_f32(j, b, work);
        return;
    }
#endif
    if (j->dbl) run_one_f64(j, b, work);
    else run_one_f32(j, b, work);
}

/* Matrices tid, tid + nthreads, ... of the batch. */
static void *run_share(void *arg) {
    job *j = arg;
    size_t words = (size_t)(j->n + j->k) * 2 + 8;
    if (j->op == OP_CHOLESKY || j->op == OP_LU) { /* the panel, and gemm's product(s) */
        ptrdiff_t m = j->op == OP_LU ? j->m : j->n, n = j->n, big = m > n ? m : n;
        ptrdiff_t small = m < n ? m : n;
        words = (size_t)(LINALG_BLK * big + LINALG_BLK * LINALG_BLK);
        if (small > LINALG_BLK) words += (size_t)m * (size_t)n;
        if (j->cplx) words *= 2; /* complex LU: two parts; two products at a time */
    }
    if (j->op == OP_EIGH && j->cplx) /* ceigh1: the phases, p and the real eigenvectors */
        words += (size_t)(j->n * j->n + 4 * j->n);
    void *work = malloc(words * sizeof(double));
    if (!work) {
        j->failed = 1;
        return NULL;
    }
    for (ptrdiff_t b = j->tid; b < j->nb; b += j->nthreads) run_one(j, b, work);
    free(work);
    return NULL;
}

/* Threads only pay off for enough work: about 2^21 multiply-adds per thread at least. */
#define WORK_PER_THREAD 2097152.0

static int run_job(job *j) {
    int nt = j->nthreads;
    double big = j->m > j->n ? j->m : j->n, work = (double)j->nb * big * big * big;
    if (j->op == OP_EIGH || j->op == OP_SVD) work *= 10; /* several sweeps */
    if (nt > 1 + work / WORK_PER_THREAD) nt = (int)(1 + work / WORK_PER_THREAD);
    if (nt > j->nb) nt = (int)j->nb;
    j->inner = j->nb == 1 ? j->nthreads : 1;
    if (nt <= 1) {
        j->nthreads = 1;
        j->tid = 0;
        run_share(j);
        return j->failed ? -1 : 0;
    }
    job *jobs = malloc(sizeof(job) * (size_t)nt);
    pthread_t *threads = malloc(sizeof(pthread_t) * (size_t)nt);
    if (!jobs || !threads) {
        free(jobs);
        free(threads);
        return -1;
    }
    int started = 0, failed = 0;
    for (int t = 0; t < nt; t++) {
        jobs[t] = *j;
        jobs[t].nthreads = nt;
        jobs[t].tid = t;
        jobs[t].failed = 0;
    }
    for (int t = 1; t < nt; t++, started++)
        if (pthread_create(&threads[t], NULL, run_share, &jobs[t]) != 0) break;
    run_share(&jobs[0]);
    for (int t = 1; t <= started; t++) pthread_join(threads[t], NULL);
    for (int t = started + 1; t < nt; t++) run_share(&jobs[t]);
    for (int t = 0; t < nt; t++) failed |= jobs[t].failed;
    free(jobs);
    free(threads);
    return failed ? -1 : 0;
}

/* Argument parsing: op, nthreads, unit, k, then 1-4 C-contiguous writable arrays whose
 * first dimension is the batch. The float operands share one dtype; int32 ones are the
 * LU pivots and permutation. Sizes m, n come from the first operand's last two dims. */
PyObject *py_linalg(PyObject *self, PyObject *args) {
    int op, nthreads, unit;
    Py_ssize_t k;
    PyObject *objs[4] = {NULL, NULL, NULL, NULL};
    if (!PyArg_ParseTuple(args, "iiinO|OOO", &op, &nthreads, &unit, &k, &objs[0], &objs[1],
                          &objs[2], &objs[3]))
        return NULL;
    Py_buffer v[4];
    int got = 0, ok = 0;
    job j = {0};
    j.op = op;
    j.unit = unit;
    j.k = k;
    j.nthreads = nthreads < 1 ? 1 : nthreads;
    for (; got < 4 && objs[got]; got++) {
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE;
        if (PyObject_GetBuffer(objs[got], &v[got], flags) < 0) goto release;
        j.p[got] = v[got].buf;
        if (v[got].ndim < 2) {
            got++;
            PyErr_SetString(PyExc_ValueError, "linalg kernel operands need a batch dimension");
            goto release;
        }
    }
    if (op < OP_CHOLESKY || op > OP_SVD || got == 0) {
        PyErr_SetString(PyExc_ValueError, "linalg kernel: unknown op or no operands");
        goto release;
    }
    const char *f = v[0].format;
    if (f[0] == '=' || f[0] == '<' || f[0] == '@') f++;
    j.cplx = f[0] == 'Z';
    if (j.cplx) f++;
    j.dbl = f[0] == 'd';
    if (!(f[0] == 'd' || f[0] == 'f') || f[1]) {
        PyErr_SetString(PyExc_TypeError, "linalg kernel operands must be float32 or float64"
                                         " (complex64 or complex128 for all but Cholesky)");
        goto release;
    }
    if (j.cplx && op == OP_CHOLESKY) {
        PyErr_SetString(PyExc_TypeError, "linalg kernel: complex operands are taken by all"
                                         " factorisations but Cholesky");
        goto release;
    }
    j.nb = v[0].shape[0];
    j.m = v[0].ndim == 3 ? v[0].shape[1] : 0;
    j.n = v[0].shape[v[0].ndim - 1];
    if (op == OP_QR || op == OP_QR_Q || op == OP_SVD) {  /* stored by columns: (n, m) */
        ptrdiff_t t = j.m;
        j.m = j.n;
        j.n = t;
    }
    if (op == OP_TRSM) j.n = v[1].shape[2];
    Py_BEGIN_ALLOW_THREADS
    ok = run_job(&j) == 0;
    Py_END_ALLOW_THREADS
    if (!ok) PyErr_NoMemory();
release:
    while (got > 0) PyBuffer_Release(&v[--got]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}
