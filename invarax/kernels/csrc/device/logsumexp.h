/* logsumexp.h - cumlogsumexp's step, written once as portable C for the GPU's kernel (NVRTC:
 * sort.cu) and the host (gcc: the tests compare it with the CPU's scan bit for bit).
 *
 * The CPU's scan (docs/numerics.md, "Reductions": scans) is y[0] = x[0],
 * y[p] = logaddexp(y[p-1], x[p]) in order, with NumPy's logaddexp formula on invarax's own
 * exp and log1p, each operation rounded to the operands' type:
 *   d = a - b;
 *   a NaN d with a != b (a NaN operand): d;
 *   a == b (equal infinities too): a + log(2) (log(2) rounded to the type);
 *   else (a if d > 0, else b) + log1p(exp(-|d|)).
 * exp and log1p are elementary_scalar.h's per-element functions, which the CPU's loops give
 * every element (float32 correctly rounded). */
#ifndef INVARAX_LOGSUMEXP_H
#define INVARAX_LOGSUMEXP_H

#include "elementary_scalar.h"
#include "order.h"

#define ORD_LOG2 0x1.62e42fefa39efp-1 /* log(2) rounded to double */

/* ORD_LSE_DEFINE(T, SFX, ELEM) defines ord_logaddexp_SFX(a, b), the step above (ELEM(fn,
 * x): the type's per-element function), and ord_cumlogsumexp_SFX(x, sx, y, k, op,
 * reverse), the scan (order.h's ORD_SCAN_WITH; op is unused). */
#define ORD_LSE_DEFINE(T, SFX, ELEM)                                                        \
    ORD_FN T ord_logaddexp_##SFX(T a, T b) {                                                \
        const T d = a - b;                                                                  \
        if (d != d && a != b) return d;                                                     \
        if (a == b) return a + (T)ORD_LOG2;                                                 \
        return (d > 0 ? a : b) + ELEM(ELEM_LOG1P, ELEM(ELEM_EXP, (T)-fabs(d)));                \
    }                                                                                       \
    ORD_SCAN_WITH(ord_cumlogsumexp_##SFX, T, ORD_LSE_STEP_##SFX)

#define ORD_LSE_STEP_f32(last, v, op) ord_logaddexp_f32(last, v)
#define ORD_LSE_STEP_f64(last, v, op) ord_logaddexp_f64(last, v)

ORD_LSE_DEFINE(float, f32, elem_f32_value)
ORD_LSE_DEFINE(double, f64, elem_f64_scalar)

#endif
