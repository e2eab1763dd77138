/* elementary_loops.h - the loops of the elementary-function kernels, included by elementary.c
 * once per dispatch level with SFX naming the level (and a target pragma around it). The
 * loops only call elementary_math.h's functions, so every level computes the same IEEE
 * operations for each element: vectorisation changes how many at once, never a bit.
 *
 * float32: the fast paths of elementary_f32.h give each element's double result, rounded to
 * float, and a flag; flagged elements are redone by elem_f32_fix. float64 sin and cos: a
 * block with an element of |x| >= EM_TRIG_BIG (or not finite) is redone element by element.
 * The blocked loops write to a local buffer first where x and y overlap. */
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, SFX)

#define EL_LOOP_F64(F)                                                                      \
    for (ptrdiff_t i = 0; i < n; i++) y[i] = F(x[i]);

/* One block of at most ELEM_BLOCK elements, computed into yb (so x may alias the output);
 * returns whether an element needs elem_f32_fix / elem_sincos_big. */
#define EL_BLOCK_FN(NAME, T, EXPR, OUT, FLAG)                                               \
    static int EL(NAME)(const T *restrict x, T *restrict yb, ptrdiff_t m) {                 \
        int flag = 0;                                                                       \
        for (ptrdiff_t i = 0; i < m; i++) {                                                 \
            double v = (double)x[i];                                                        \
            double d = EXPR;                                                                \
            yb[i] = OUT;                                                                    \
            flag |= FLAG;                                                                   \
        }                                                                                   \
        return flag;                                                                        \
    }

EL_BLOCK_FN(sin_f64, double, em_sincos_small(v, 0), d, !em_abs_below(v, EM_TRIG_BIG))
EL_BLOCK_FN(cos_f64, double, em_sincos_small(v, 1), d, !em_abs_below(v, EM_TRIG_BIG))

/* The float32 fast paths (elementary_f32.h): one block computed into yb, with fl[i] set where
 * element i needs elem_f32_fix; returns whether one does. */
#define EL_FAST_FN(NAME, EXPR)                                                              \
    static int EL(NAME)(const float *restrict x, float *restrict yb,                        \
                        unsigned char *restrict fl, ptrdiff_t m) {                          \
        int any = 0;                                                                        \
        for (ptrdiff_t i = 0; i < m; i++) {                                                 \
            double v = (double)x[i];                                                        \
            int hard;                                                                       \
            double d = EXPR;                                                                \
            yb[i] = (float)d;                                                               \
            fl[i] = (unsigned char)hard;                                                    \
            any |= hard;                                                                    \
        }                                                                                   \
        return any;                                                                         \
    }

EL_FAST_FN(exp_fast, ef_exp(v, &hard))
EL_FAST_FN(log_fast, ef_log(v, &hard))
EL_FAST_FN(sin_fast, ef_sincos(v, 0, &hard))
EL_FAST_FN(cos_fast, ef_sincos(v, 1, &hard))
EL_FAST_FN(tanh_fast, ef_tanh(v, &hard))
EL_FAST_FN(expm1_fast, ef_expm1(v, &hard))
EL_FAST_FN(logistic_fast, ef_logistic(v, &hard))
EL_FAST_FN(exp2_fast, ef_exp2(v, &hard))
EL_FAST_FN(sinh_fast, ef_coshsinh(v, 1, &hard))
EL_FAST_FN(cosh_fast, ef_coshsinh(v, 0, &hard))
EL_FAST_FN(log1p_fast, ef_log1p(v, &hard))

/* Only the flagged elements of a block are redone by elem_f32_fix. The block is written
 * into y directly unless x and y overlap (then into yb first, keeping x for the fixes). */
#define EL_LOOP_FAST(BLOCK_FN)                                                              \
    {                                                                                       \
        uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, nb = (uintptr_t)n * sizeof *x;      \
        int apart = xa + nb <= ya || ya + nb <= xa;                                         \
        for (ptrdiff_t b = 0; b < n; b += ELEM_FAST_BLOCK) {                                \
            ptrdiff_t m = n - b < ELEM_FAST_BLOCK ? n - b : ELEM_FAST_BLOCK;                \
            float yb[ELEM_FAST_BLOCK];                                                      \
            float *yw = apart ? y + b : yb;                                                 \
            unsigned char fl[ELEM_FAST_BLOCK];                                              \
            if (EL(BLOCK_FN)(x + b, yw, fl, m))                                             \
                for (ptrdiff_t i = 0; i < m; i++)                                           \
                    if (fl[i]) yw[i] = elem_f32_fix(fn, x[b + i]);                          \
            if (!apart) memcpy(y + b, yb, (size_t)m * sizeof *yb);                          \
        }                                                                                   \
    }

#define EL_LOOP_BLOCKS(T, BLOCK_FN, FIX)                                                    \
    for (ptrdiff_t b = 0; b < n; b += ELEM_BLOCK) {                                         \
        ptrdiff_t m = n - b < ELEM_BLOCK ? n - b : ELEM_BLOCK;                               \
        T yb[ELEM_BLOCK];                                                                   \
        if (EL(BLOCK_FN)(x + b, yb, m))                                                     \
            for (ptrdiff_t i = 0; i < m; i++) yb[i] = FIX(x[b + i]);                        \
        memcpy(y + b, yb, (size_t)m * sizeof *yb);                                          \
    }

#define EL_SIN_FIX(v) (em_abs_below(v, EM_TRIG_BIG) ? em_sincos_small(v, 0) : elem_sincos_big(v, 0))
#define EL_COS_FIX(v) (em_abs_below(v, EM_TRIG_BIG) ? em_sincos_small(v, 1) : elem_sincos_big(v, 1))

static void EL(elementary_f64)(int fn, const double *x, double *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_EXP: EL_LOOP_F64(em_exp) break;
    case ELEM_LOG: EL_LOOP_F64(em_log) break;
    case ELEM_EXPM1: EL_LOOP_F64(em_expm1) break;
    case ELEM_LOG1P: EL_LOOP_F64(em_log1p) break;
    case ELEM_TANH: EL_LOOP_F64(em_tanh) break;
    case ELEM_LOGISTIC: EL_LOOP_F64(em_logistic) break;
    case ELEM_SIN: EL_LOOP_BLOCKS(double, sin_f64, EL_SIN_FIX) break;
    case ELEM_COS: EL_LOOP_BLOCKS(double, cos_f64, EL_COS_FIX) break;
    case ELEM_EXP2: EL_LOOP_F64(em_exp2) break;
    case ELEM_SINH: EL_LOOP_F64(em_sinh) break;
    case ELEM_COSH: EL_LOOP_F64(em_cosh) break;
    }
}

static void EL(elementary_f32)(int fn, const float *x, float *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_EXP: EL_LOOP_FAST(exp_fast) break;
    case ELEM_LOG: EL_LOOP_FAST(log_fast) break;
    case ELEM_EXPM1: EL_LOOP_FAST(expm1_fast) break;
    case ELEM_LOG1P: EL_LOOP_FAST(log1p_fast) break;
    case ELEM_TANH: EL_LOOP_FAST(tanh_fast) break;
    case ELEM_LOGISTIC: EL_LOOP_FAST(logistic_fast) break;
    case ELEM_SIN: EL_LOOP_FAST(sin_fast) break;
    case ELEM_COS: EL_LOOP_FAST(cos_fast) break;
    case ELEM_EXP2: EL_LOOP_FAST(exp2_fast) break;
    case ELEM_SINH: EL_LOOP_FAST(sinh_fast) break;
    case ELEM_COSH: EL_LOOP_FAST(cosh_fast) break;
    }
}

#undef EL_BLOCK_FN
#undef EL_LOOP_BLOCKS
#undef EL_FAST_FN
#undef EL_LOOP_FAST
#undef EL_SIN_FIX
#undef EL_COS_FIX
#undef EL_LOOP_F64
