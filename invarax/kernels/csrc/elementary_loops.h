/* elementary_loops.h - the loops of the elementary-function kernels, included by elementary.c
 * once per dispatch level with SFX naming the level (and a target pragma around it). The
 * loops only call elementary_math.h's functions, so every level computes the same IEEE
 * operations for each element: vectorisation changes how many at once, never a bit.
 *
 * float32: the double result d of each element is rounded to float; where em_f32_is_hard(d)
 * (or, for sin and cos, |x| >= EM_TRIG_BIG or x is not finite) the block is redone by
 * elem_f32_fix, element by element. The blocked loops read their inputs from a copy of the
 * block, so x and y may be the same buffer. */
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, SFX)

#define EL_LOOP_F64(F)                                                                      \
    for (ptrdiff_t i = 0; i < n; i++) y[i] = F(x[i]);

#define EL_LOOP_TRIG_F64(C)                                                                 \
    for (ptrdiff_t b = 0; b < n; b += ELEM_BLOCK) {                                         \
        ptrdiff_t e = n - b < ELEM_BLOCK ? n : b + ELEM_BLOCK;                               \
        int big = 0;                                                                        \
        double xb[ELEM_BLOCK];                                                              \
        memcpy(xb, x + b, (size_t)(e - b) * sizeof *xb);                                    \
        for (ptrdiff_t i = b; i < e; i++) {                                                 \
            y[i] = em_sincos_small(xb[i - b], C);                                           \
            big |= !(em_abs(xb[i - b]) < EM_TRIG_BIG);                                      \
        }                                                                                   \
        if (big)                                                                            \
            for (ptrdiff_t i = b; i < e; i++)                                               \
                if (!(em_abs(xb[i - b]) < EM_TRIG_BIG)) y[i] = elem_sincos_big(xb[i - b], C); \
    }

#define EL_LOOP_F32(FN, EXPR, EXTRA)                                                        \
    for (ptrdiff_t b = 0; b < n; b += ELEM_BLOCK) {                                         \
        ptrdiff_t e = n - b < ELEM_BLOCK ? n : b + ELEM_BLOCK;                               \
        int hard = 0;                                                                       \
        float xb[ELEM_BLOCK];                                                               \
        memcpy(xb, x + b, (size_t)(e - b) * sizeof *xb);                                    \
        for (ptrdiff_t i = b; i < e; i++) {                                                 \
            double v = (double)xb[i - b];                                                   \
            double d = EXPR;                                                                \
            y[i] = (float)d;                                                                \
            hard |= em_f32_is_hard(d) | (EXTRA);                                            \
        }                                                                                   \
        if (hard)                                                                           \
            for (ptrdiff_t i = b; i < e; i++) y[i] = elem_f32_fix(FN, xb[i - b]);           \
    }

static void EL(elementary_f64)(int fn, const double *x, double *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_EXP: EL_LOOP_F64(em_exp) break;
    case ELEM_LOG: EL_LOOP_F64(em_log) break;
    case ELEM_EXPM1: EL_LOOP_F64(em_expm1) break;
    case ELEM_LOG1P: EL_LOOP_F64(em_log1p) break;
    case ELEM_TANH: EL_LOOP_F64(em_tanh) break;
    case ELEM_LOGISTIC: EL_LOOP_F64(em_logistic) break;
    case ELEM_SIN: EL_LOOP_TRIG_F64(0) break;
    case ELEM_COS: EL_LOOP_TRIG_F64(1) break;
    }
}

static void EL(elementary_f32)(int fn, const float *x, float *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_EXP: EL_LOOP_F32(fn, em_exp(v), 0) break;
    case ELEM_LOG: EL_LOOP_F32(fn, em_log(v), 0) break;
    case ELEM_EXPM1: EL_LOOP_F32(fn, em_expm1(v), 0) break;
    case ELEM_LOG1P: EL_LOOP_F32(fn, em_log1p(v), 0) break;
    case ELEM_TANH: EL_LOOP_F32(fn, em_tanh(v), 0) break;
    case ELEM_LOGISTIC: EL_LOOP_F32(fn, em_logistic(v), 0) break;
    case ELEM_SIN: EL_LOOP_F32(fn, em_sincos_small(v, 0), !(em_abs(v) < EM_TRIG_BIG)) break;
    case ELEM_COS: EL_LOOP_F32(fn, em_sincos_small(v, 1), !(em_abs(v) < EM_TRIG_BIG)) break;
    }
}

#undef EL_LOOP_F64
#undef EL_LOOP_TRIG_F64
#undef EL_LOOP_F32
