/* elementary_more.c - invarax's log2, log10, asinh, acosh, atanh, atan, asin, acos, tan,
 * cbrt, erf, erfc and erf_inv in float32 and float64 (docs/numerics.md, "Elementary functions"); elementary.c hands
 * these functions here.
 *
 * float64: elementary_inverse.h's and elementary_special.h's algorithms, within 1 ulp. float32: the same double algorithm
 * rounded once, the correctly rounded result wherever em_f32_is_hard is false; where it is
 * true, elementary_hard.h (made by tools/exhaustive_f32.py over all 2^32 inputs) holds the
 * inputs whose double result rounds the wrong way, with their correctly rounded results.
 *
 * One portable loop per function: it has no instruction-set variants, so every CPU runs the
 * same operations (fma is C99's, in hardware or software).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"
#include "elementary_inverse.h"
#include "elementary_special.h"
#include "elementary_pow.h"
#include "elementary_hard.h"

static const elem_hard_table HARD_MORE[ELEM_COUNT] = ELEM_HARD_TABLES;

static double more_tan(double x) {
    if (em_abs(x) < EM_TRIG_BIG) return ei_tan_small(x);
    if (!(em_abs(x) < INFINITY)) return x - x;
    int64_t n;
    double rh, rl;
    em_reduce_big(x, &n, &rh, &rl);
    return ei_tan_reduced(n, rh, rl);
}

/* y[i] = F(x[i]) in double, or rounded to float with the hard cases of table fn looked up. */
#define MORE_LOOP(F)                                                                         \
    if (dbl) {                                                                               \
        const double *xd = x;                                                                \
        double *yd = y;                                                                      \
        for (ptrdiff_t i = 0; i < n; i++) yd[i] = F(xd[i]);                                  \
    } else {                                                                                 \
        const float *xf = x;                                                                 \
        float *yf = y;                                                                       \
        for (ptrdiff_t i = 0; i < n; i++) {                                                  \
            float v = xf[i];                                                                 \
            double d = F((double)v);                                                         \
            yf[i] = em_f32_is_hard(d) ? elem_hard_lookup(&HARD_MORE[fn], v, (float)d)        \
                                      : (float)d;                                            \
        }                                                                                    \
    }

void elementary_more(int fn, int dbl, const void *x, void *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_LOG2: MORE_LOOP(ei_log2) break;
    case ELEM_LOG10: MORE_LOOP(ei_log10) break;
    case ELEM_ASINH: MORE_LOOP(ei_asinh) break;
    case ELEM_ACOSH: MORE_LOOP(ei_acosh) break;
    case ELEM_ATANH: MORE_LOOP(ei_atanh) break;
    case ELEM_ATAN: MORE_LOOP(ei_atan) break;
    case ELEM_ASIN: MORE_LOOP(ei_asin) break;
    case ELEM_ACOS: MORE_LOOP(ei_acos) break;
    case ELEM_TAN: MORE_LOOP(more_tan) break;
    case ELEM_CBRT: MORE_LOOP(ei_cbrt) break;
    case ELEM_ERF: MORE_LOOP(es_erf) break;
    case ELEM_ERFC: MORE_LOOP(es_erfc) break;
    case ELEM_ERF_INV: MORE_LOOP(es_erf_inv) break;
    }
}

/* ---- two operands: atan2, pow ---------------------------------------------------------- */

/* out[i] = fn(a[i], b[i]): fn 0 atan2(a, b) (float32: the double-double rounded once,
 * ei_round_f32), fn 1 pow(a, b) (float32: ep_pow_f32). */
void elementary2(int fn, int dbl, const void *a, const void *b, void *out, ptrdiff_t n) {
    double hi, lo;
    if (dbl) {
        const double *ad = a, *bd = b;
        double *od = out;
        if (fn == 1) {
            for (ptrdiff_t i = 0; i < n; i++) od[i] = ep_pow(ad[i], bd[i]);
            return;
        }
        for (ptrdiff_t i = 0; i < n; i++) {
            ei_atan2(ad[i], bd[i], &hi, &lo);
            od[i] = hi;
        }
    } else {
        const float *af = a, *bf = b;
        float *of = out;
        if (fn == 1) {
            for (ptrdiff_t i = 0; i < n; i++) of[i] = ep_pow_f32(af[i], bf[i]);
            return;
        }
        for (ptrdiff_t i = 0; i < n; i++) {
            ei_atan2((double)af[i], (double)bf[i], &hi, &lo);
            of[i] = ei_round_f32(hi, lo);
        }
    }
}

PyObject *py_elementary2(PyObject *self, PyObject *args) {
    int fn;
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "iOOO", &fn, &objs[0], &objs[1], &objs[2])) return NULL;
    if (fn != 0 && fn != 1) {
        PyErr_Format(PyExc_ValueError, "elementary2: unknown function %d", fn);
        return NULL;
    }
    Py_buffer v[3];
    int got = 0, ok = 0, kind[3] = {-1, -1, -1};
    for (; got < 3; got++) {
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (got == 2 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[got], &v[got], flags) < 0) goto release;
        const char *f = v[got].format ? v[got].format : "B";
        if (f[0] == '=' || f[0] == '<' || f[0] == '@') f++;
        kind[got] = (strcmp(f, "d") == 0 && v[got].itemsize == 8) ? 1
                    : (strcmp(f, "f") == 0 && v[got].itemsize == 4) ? 0 : -1;
    }
    if (kind[0] < 0 || kind[0] != kind[1] || kind[0] != kind[2] || v[0].len != v[1].len ||
        v[0].len != v[2].len) {
        PyErr_SetString(PyExc_ValueError,
                        "elementary2: operands must be C-contiguous float32 or float64 of one "
                        "dtype and size");
        goto release;
    }
    ptrdiff_t n = v[0].len / v[0].itemsize;
    Py_BEGIN_ALLOW_THREADS
    elementary2(fn, kind[0], v[0].buf, v[1].buf, v[2].buf, n);
    Py_END_ALLOW_THREADS
    ok = 1;
release:
    while (got > 0) PyBuffer_Release(&v[--got]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}
