/* elementary_more.c - invarax's log2, log10, asinh, acosh, atanh, atan, asin, acos, tan,
 * cbrt, erf, erfc and erf_inv, and atan2 and pow of two operands, in float32 and float64
 * (docs/numerics.md, "Elementary functions"); elementary.c hands these functions here.
 *
 * float64: elementary_inverse.h's, elementary_special.h's and elementary_pow.h's algorithms,
 * within 1 ulp. float32: elementary_more_fast.c's vectorised fast paths, which redo the
 * elements they flag by the exact path (elementary_scalar_more.h: the double algorithm
 * rounded once, the correctly rounded result wherever em_f32_is_hard is false; where it is
 * true, elementary_hard.h, made by tools/exhaustive_f32.py over all 2^32 inputs, holds the
 * inputs whose double result rounds the wrong way, with their correctly rounded results).
 *
 * The float64 loops (elementary_more_loops.h) are compiled for the baseline and for AVX2+FMA;
 * both perform the same IEEE operations (fma is C99's, correctly rounded in hardware or
 * software), so every dispatch level gives the same bits.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"
#include "elementary_scalar_more.h"

#define MORE_TARGET
#define SFX scalar
#include "elementary_more_loops.h"
#undef SFX
#undef MORE_TARGET

#ifdef INVARAX_X86
#define MORE_HAVE_X86 1
#define MORE_TARGET __attribute__((target("avx2,fma")))
#define SFX avx2
#include "elementary_more_loops.h"
#undef SFX
#undef MORE_TARGET
#endif

void elementary_more(int fn, int dbl, const void *x, void *y, ptrdiff_t n) {
    if (!dbl) { /* elementary_more_fast.c: every function of this file has a fast path */
        elementary_more_fast(fn, x, y, n);
        return;
    }
#ifdef MORE_HAVE_X86
    if (isa_current() >= ISA_AVX2) {
        elementary_more_f64_avx2(fn, x, y, n);
        return;
    }
#endif
    elementary_more_f64_scalar(fn, x, y, n);
}

void elementary2(int fn, int dbl, const void *a, const void *b, void *out, ptrdiff_t n) {
    if (!dbl) { /* elementary_more_fast.c */
        elementary2_fast(fn, a, b, out, n);
        return;
    }
#ifdef MORE_HAVE_X86
    if (isa_current() >= ISA_AVX2) {
        elementary2_f64_avx2(fn, a, b, out, n);
        return;
    }
#endif
    elementary2_f64_scalar(fn, a, b, out, n);
}

/* The exact float32 path of one element (the fast paths' fix-up), log2 to digamma. */
float elementary_more_exact_f32(int fn, float x) { return elem_more_f32_exact(fn, x); }

float elementary2_exact_f32(int fn, float a, float b) { return elem2_f32_exact(fn, a, b); }

/* run_ranges' work for elementary2 on several threads: p = {fn, dbl, a, b, out}. */
static int elementary2_range(void **p, int64_t lo, int64_t hi, int64_t blk) {
    (void)blk;
    int fn = (int)(intptr_t)p[0], dbl = (int)(intptr_t)p[1];
    size_t o = (size_t)lo * (dbl ? sizeof(double) : sizeof(float));
    elementary2(fn, dbl, (const char *)p[2] + o, (const char *)p[3] + o, (char *)p[4] + o,
                (ptrdiff_t)(hi - lo));
    return 0;
}

PyObject *py_elementary2(PyObject *self, PyObject *args) {
    int fn, nthreads = 1;
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "iOOO|i", &fn, &objs[0], &objs[1], &objs[2], &nthreads))
        return NULL;
    if (fn < 0 || fn >= ELEM2_COUNT) {
        PyErr_Format(PyExc_ValueError, "elementary2: unknown function %d", fn);
        return NULL;
    }
    Py_buffer v[3];
    int dbl = float_buffers("elementary2", objs, 3, v);
    if (dbl < 0) return NULL;
    ptrdiff_t n = v[0].len / v[0].itemsize;
    Py_BEGIN_ALLOW_THREADS
    if (nthreads > 1) { /* each element's bits whatever the split */
        void *p[5] = {(void *)(intptr_t)fn, (void *)(intptr_t)dbl, v[0].buf, v[1].buf, v[2].buf};
        run_ranges(elementary2_range, p, n, pool_run(n, nthreads, ELEM_RUN_ALIGN), 1, nthreads);
    } else {
        elementary2(fn, dbl, v[0].buf, v[1].buf, v[2].buf, n);
    }
    Py_END_ALLOW_THREADS
    for (int i = 0; i < 3; i++) PyBuffer_Release(&v[i]);
    Py_RETURN_NONE;
}
