/* elementary_scalar_more.h - the elementary functions from log2 on (log2 to digamma,
 * elementary_ids.h) and the two-operand atan2 and pow, element by element:
 * - float64: elem_more_f64 and elem2_f64, the algorithms of elementary_inverse.h,
 *   elementary_special.h, elementary_pow.h and elementary_gamma.h;
 * - the float32 exact path (elem_more_f32_exact, elem2_f32_exact): the correctly rounded
 *   result of an element the fast path flagged (the double result rounded once, with the
 *   hard-case table of elementary_hard.h; atan2 and pow round their double-double);
 * - elem_more_f32_value and elem2_f32_value: the float32 fast path (elementary_f32_more.h,
 *   elementary_f32_inv.h, elementary_f32_gamma.h) and, where it flags the element, the exact
 *   path.
 * Plain C, included by the CPU's kernels (elementary_more.c: its float64 loops and the exact
 * path its float32 fast loops call) and by the GPU's kernels (NVRTC), so both compute each
 * element by the same operations. */
#ifndef INVARAX_ELEMENTARY_SCALAR_MORE_H
#define INVARAX_ELEMENTARY_SCALAR_MORE_H

#include "elementary_scalar.h" /* the hard-case tables, Payne-Hanek's reduction */
#include "elementary_inverse.h"
#include "elementary_special.h"
#include "elementary_pow.h"
#include "elementary_gamma.h"
#include "elementary_f32_more.h"
#include "elementary_f32_inv.h"
#include "elementary_f32_gamma.h"

/* tan at every x: the reduction of ei_tan_small below EM_TRIG_BIG, Payne-Hanek's above. */
EM_INLINE double elem_tan(double x) {
    if (em_abs(x) < EM_TRIG_BIG) return ei_tan_small(x);
    if (!(em_abs(x) < INFINITY)) return x - x;
    int64_t n;
    double rh, rl;
    ef_reduce_big(x, &n, &rh, &rl);
    return ei_tan_reduced(n, rh, rl);
}

/* The double-precision value of function fn (ELEM_LOG2 to ELEM_DIGAMMA) at x. */
static double elem_more_f64(int fn, double x) {
    switch (fn) {
    case ELEM_LOG2: return ei_log2(x);
    case ELEM_LOG10: return ei_log10(x);
    case ELEM_ASINH: return ei_asinh(x);
    case ELEM_ACOSH: return ei_acosh(x);
    case ELEM_ATANH: return ei_atanh(x);
    case ELEM_ATAN: return ei_atan(x);
    case ELEM_ASIN: return ei_asin(x);
    case ELEM_ACOS: return ei_acos(x);
    case ELEM_TAN: return elem_tan(x);
    case ELEM_CBRT: return ei_cbrt(x);
    case ELEM_ERF: return es_erf(x);
    case ELEM_ERFC: return es_erfc(x);
    case ELEM_ERF_INV: return es_erf_inv_f64(x);
    case ELEM_LGAMMA: return eg_lgamma(x);
    case ELEM_DIGAMMA: return eg_digamma(x);
    }
    return x - x;
}

/* The correctly rounded float result of fn (ELEM_LOG2 to ELEM_DIGAMMA) at x: the double
 * algorithm (float32's own for erf_inv, lgamma and digamma) rounded once, with the hard
 * cases looked up where em_f32_is_hard. */
static float elem_more_f32_exact(int fn, float x) {
    double v = (double)x, d;
    switch (fn) {
    case ELEM_ERF_INV: d = es_erf_inv(v); break;
    case ELEM_LGAMMA: d = eg_lgamma_f32(v); break;
    case ELEM_DIGAMMA: d = eg_digamma_f32(v); break;
    default: d = elem_more_f64(fn, v);
    }
    return em_f32_is_hard(d) ? elem_hard_lookup(&ELEM_HARD[fn], x, (float)d) : (float)d;
}

/* The float32 result of fn (ELEM_LOG2 to ELEM_DIGAMMA) at x: the fast path, or
 * elem_more_f32_exact where it flags x; the CPU's loops give every element this value. */
EM_INLINE float elem_more_f32_value(int fn, float x) {
    double v = (double)x, d = 0.0;
    int hard = 1;
    switch (fn) {
    case ELEM_LOG2: d = ev_log2(v, &hard); break;
    case ELEM_LOG10: d = ev_log10(v, &hard); break;
    case ELEM_ASINH: d = ev_asinh(v, &hard); break;
    case ELEM_ACOSH: d = ev_acosh(v, &hard); break;
    case ELEM_ATANH: d = ev_atanh(v, &hard); break;
    case ELEM_ATAN: d = ef_atan(v, &hard); break;
    case ELEM_ASIN: d = ef_asin(v, &hard); break;
    case ELEM_ACOS: d = ef_acos(v, &hard); break;
    case ELEM_TAN: d = ef_tan(v, &hard); break;
    case ELEM_CBRT: d = ev_cbrt(v, &hard); break;
    case ELEM_ERF: d = ef_erf(v, &hard); break;
    case ELEM_ERFC: d = ef_erfc(v, &hard); break;
    case ELEM_ERF_INV: d = ef_erf_inv(v, &hard); break;
    case ELEM_LGAMMA: d = ef_lgamma(v, &hard); break;
    case ELEM_DIGAMMA: d = ef_digamma(v, &hard); break;
    }
    return hard ? elem_more_f32_exact(fn, x) : (float)d;
}

/* ---- atan2(a, b) (the angle of the point (b, a)) and pow(a, b): ELEM2_* ---------------- */

EM_INLINE double elem_atan2_f64(double a, double b) {
    double hi, lo;
    ei_atan2(a, b, &hi, &lo);
    return hi;
}

/* The double-precision value of fn at (a, b). */
EM_INLINE double elem2_f64(int fn, double a, double b) {
    return fn == ELEM2_POW ? ep_pow(a, b) : elem_atan2_f64(a, b);
}

/* The float result of fn at (a, b) rounded once from its double-double (pow: exact and
 * midpoint results decided by ep_pow_f32). */
static float elem2_f32_exact(int fn, float a, float b) {
    if (fn == ELEM2_POW) return ep_pow_f32(a, b);
    double hi, lo;
    ei_atan2((double)a, (double)b, &hi, &lo);
    return ei_round_f32(hi, lo);
}

/* The float32 result of fn at (a, b): the fast path, or elem2_f32_exact where it flags the
 * pair; the CPU's loops give every pair this value. */
EM_INLINE float elem2_f32_value(int fn, float a, float b) {
    int hard;
    double d = fn == ELEM2_POW ? ev_pow((double)a, (double)b, &hard)
                               : ef_atan2((double)a, (double)b, &hard);
    return hard ? elem2_f32_exact(fn, a, b) : (float)d;
}

#endif
