/* elementary.c - invarax's elementary functions (docs/numerics.md, "Elementary functions"):
 * exp, log, expm1, log1p, tanh, logistic, sin, cos, exp2, sinh, cosh in float32 and float64.
 *
 * float64: elementary_math.h's algorithm, within 1 ulp. float32: elementary_f32.h's fast
 * path, which flags the rare elements it cannot round with certainty; those go through
 * elem_f32_fix: the double algorithm rounded once, which is the correctly rounded result
 * wherever em_f32_is_hard is false; where it is true, the exact result lies within 2^-48
 * of a rounding boundary, and the table elementary_hard.h (made by tools/exhaustive_f32.py
 * over all 2^32 inputs) gives the inputs among those whose double result rounds the wrong
 * way, with their correctly rounded results.
 *
 * The same loops (elementary_loops.h) are compiled for every dispatch level.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"
#include "elementary_math.h"
#include "elementary_f32.h"
#include "elementary_hard.h"

#define ELEM_FAST_BLOCK 1024 /* the float32 fast paths' blocks (elementary_loops.h) */
#define ELEM_SCAN_BLOCK 256  /* those of the scanned ones */

#include "elementary_scalar.h"

/* ---- the loops, once per dispatch level ----------------------------------------------- */

#define SFX scalar
#include "elementary_loops.h"
#undef SFX

#ifdef INVARAX_X86
#define ELEM_HAVE_X86 1
TARGET_BEGIN("avx2,fma")
#define SFX avx2
#include "elementary_loops.h"
#undef SFX
TARGET_END
TARGET_BEGIN("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")
#include "elementary_f32_avx512.h"
#define EL_EXP_SCAN ef512_exp_scan
#define EL_LOG_SCAN ef512_log_scan
#define EL_SIN_SCAN ef512_sin_scan
#define EL_COS_SCAN ef512_cos_scan
#define EL_TANH_SCAN ef512_tanh_scan
#define EL_TRIG_BLOCK ELEM_SCAN_BLOCK
#define SFX avx512
#include "elementary_loops.h"
#undef SFX
TARGET_END
#endif

void elementary(int fn, int dbl, const void *x, void *y, ptrdiff_t n) {
    if (fn >= ELEM_LGAMMA) { /* elementary_gamma.c */
        elementary_gamma(fn, dbl, x, y, n);
        return;
    }
    if (fn >= ELEM_LOG2) { /* elementary_more.c */
        elementary_more(fn, dbl, x, y, n);
        return;
    }
#ifdef ELEM_HAVE_X86
    int isa = isa_current();
    if (isa >= ISA_AVX512) {
        if (dbl) elementary_f64_avx512(fn, x, y, n);
        else elementary_f32_avx512(fn, x, y, n);
        return;
    }
    if (isa >= ISA_AVX2) {
        if (dbl) elementary_f64_avx2(fn, x, y, n);
        else elementary_f32_avx2(fn, x, y, n);
        return;
    }
#endif
    if (dbl) elementary_f64_scalar(fn, x, y, n);
    else elementary_f32_scalar(fn, x, y, n);
}

/* ---- Python entry point ---------------------------------------------------------------- */

/* run_ranges' work for elementary on several threads: p = {fn, dbl, x, y}. */
static int elementary_range(void **p, int64_t lo, int64_t hi, int64_t blk) {
    (void)blk;
    int fn = (int)(intptr_t)p[0], dbl = (int)(intptr_t)p[1];
    size_t es = dbl ? sizeof(double) : sizeof(float);
    elementary(fn, dbl, (const char *)p[2] + (size_t)lo * es, (char *)p[3] + (size_t)lo * es,
               (ptrdiff_t)(hi - lo));
    return 0;
}


PyObject *py_elementary(PyObject *self, PyObject *args) {
    int fn, nthreads = 1;
    PyObject *objs[2];
    if (!PyArg_ParseTuple(args, "iOO|i", &fn, &objs[0], &objs[1], &nthreads)) return NULL;
    if (fn < 0 || fn >= ELEM_COUNT) {
        PyErr_Format(PyExc_ValueError, "elementary: unknown function %d", fn);
        return NULL;
    }
    Py_buffer v[2];
    int dbl = float_buffers("elementary", objs, 2, v);
    if (dbl < 0) return NULL;
    ptrdiff_t n = v[0].len / v[0].itemsize;
    Py_BEGIN_ALLOW_THREADS
    if (nthreads > 1) { /* each element's bits whatever the split */
        void *p[4] = {(void *)(intptr_t)fn, (void *)(intptr_t)dbl, v[0].buf, v[1].buf};
        run_ranges(elementary_range, p, n, pool_run(n, nthreads, ELEM_RUN_ALIGN), 1, nthreads);
    } else {
        elementary(fn, dbl, v[0].buf, v[1].buf, n);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v[0]);
    PyBuffer_Release(&v[1]);
    Py_RETURN_NONE;
}
