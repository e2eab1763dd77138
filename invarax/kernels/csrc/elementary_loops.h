/* elementary_loops.h - the loops of the elementary-function kernels, included by elementary.c
 * once per dispatch level with SFX naming the level (and a target pragma around it). The
 * loops only call elementary_math.h's functions, so every level computes the same IEEE
 * operations for each element: vectorisation changes how many at once, never a bit.
 *
 * float32: the fast paths of elementary_f32.h give each element's double result, rounded to
 * float, and a flag; flagged elements are redone by elem_f32_fix. float64 sin and cos: a
 * block with an element of |x| >= EM_TRIG_BIG (or not finite) is redone element by element
 * (elementary_math.h's EM_BLOCKED_LOOP).
 * The blocked loops write to a local buffer first where x and y overlap. */
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, SFX)

/* The float32 fast paths (elementary_f32.h): one block computed into yb, with fl[i] set where
 * element i needs elem_f32_fix; returns whether one does. */
#define EL_FAST_FN(NAME, EXPR)                                                              \
    static int EL(NAME)(const float *restrict x, float *restrict yb,                        \
                        unsigned char *restrict fl, ptrdiff_t m) {                          \
        int any = 0;                                                                        \
        for (ptrdiff_t i = 0; i < m; i++) {                                                 \
            double v = (double)x[i];                                                        \
            int hard;                                                                       \
            (void)v;                                                                        \
            double d = EXPR;                                                                \
            yb[i] = (float)d;                                                               \
            fl[i] = (unsigned char)hard;                                                    \
            any |= hard;                                                                    \
        }                                                                                   \
        return any;                                                                         \
    }

EL_FAST_FN(exp_fast, ef_exp(v, &hard))
EL_FAST_FN(log_fast, ef_log_f32(x[i], &hard))
EL_FAST_FN(sin_fast, ef_sincos(v, 0, &hard))
EL_FAST_FN(cos_fast, ef_sincos(v, 1, &hard))
EL_FAST_FN(tanh_fast, ef_tanh(v, &hard))
EL_FAST_FN(expm1_fast, ef_expm1(v, &hard))
EL_FAST_FN(logistic_fast, ef_logistic(v, &hard))
EL_FAST_FN(exp2_fast, ef_exp2(v, &hard))
EL_FAST_FN(sinh_fast, ef_coshsinh(v, 1, &hard))
EL_FAST_FN(cosh_fast, ef_coshsinh(v, 0, &hard))
EL_FAST_FN(log1p_fast, ef_log1p(v, &hard))

/* The scan of a block (elementary_f32.h): each element's result into yb, and whether any
 * element of the block needs the per-element pass (the same test as its flags, taken as
 * the block's minimum and maximum of two keys: no per-element flag is stored). The vector
 * loop is unrolled four times, so that four vectors' polynomial chains overlap (about 3-4%
 * on a Zen 2 core at avx2: benchmarks/elementary_results.md). */
#define EL_SCAN_FN(NAME, VALUE, KEY, OUT)                                                   \
    static int EL(NAME)(const float *restrict x, float *restrict yb, ptrdiff_t m) {         \
        uint64_t mid = ~0ULL;                                                               \
        uint32_t key = 0;                                                                   \
        _Pragma("GCC unroll 4")                                                             \
        for (ptrdiff_t i = 0; i < m; i++) {                                                 \
            double v = (double)x[i];                                                        \
            double d = VALUE;                                                               \
            (void)v;                                                                        \
            yb[i] = (float)d;                                                               \
            uint64_t k = ef_mid_key(d);                                                     \
            mid = k < mid ? k : mid;                                                        \
            uint32_t kx = KEY(ef_fbits(x[i]));                                              \
            key = kx > key ? kx : key;                                                      \
        }                                                                                   \
        return (mid < EF_MID_WIDTH) | (OUT);                                                \
    }

#ifndef EL_EXP_SCAN /* elementary.c names elementary_f32_avx512.h's at that level */
EL_SCAN_FN(exp_scan, ef_exp_value(v), ef_abs_key, ef_abs_out(key, EF_EXP_BOUND))
#define EL_EXP_SCAN EL(exp_scan)
#endif
#ifndef EL_LOG_SCAN
EL_SCAN_FN(log_scan, ef_log_value_f32(x[i]), ef_log_key, ef_log_key_out(key))
#define EL_LOG_SCAN EL(log_scan)
#endif
#ifndef EL_TANH_SCAN
EL_SCAN_FN(tanh_scan, ef_tanh_value(v), ef_abs_key, ef_abs_out(key, EF_TANH_BOUND))
#define EL_TANH_SCAN EL(tanh_scan)
#endif
EL_SCAN_FN(expm1_scan, ef_expm1_value(v), ef_abs_key, ef_abs_out(key, EF_EXPM1_BOUND))
EL_SCAN_FN(logistic_scan, ef_logistic_value(v), ef_abs_key, ef_abs_out(key, EF_LOGISTIC_BOUND))
EL_SCAN_FN(sinh_scan, ef_coshsinh_value(v, 1), ef_abs_key, ef_abs_out(key, EF_COSHSINH_BOUND))
EL_SCAN_FN(cosh_scan, ef_coshsinh_value(v, 0), ef_abs_key, ef_abs_out(key, EF_COSHSINH_BOUND))
EL_SCAN_FN(log1p_scan, ef_log1p_value(v), ef_log1p_key, ef_log1p_key_out(key))

/* sin, cos and exp2 go to the per-element pass directly, in blocks of ELEM_FAST_BLOCK: GCC's
 * scan of them was 1-7% slower than their flagging loop (the in-cache timings of
 * benchmarks/elementary_results.md); at the AVX-512 level sin and cos are scanned by
 * elementary_f32_avx512.h's intrinsics. The scanned functions use blocks of ELEM_SCAN_BLOCK,
 * short enough that redoing a block is rare (about 1 in 60 of ordinary inputs). */
#define EL_NO_SCAN(x, yb, m) 1
#ifndef EL_SIN_SCAN /* elementary.c names elementary_f32_avx512.h's scans at that level */
#define EL_SIN_SCAN EL_NO_SCAN
#define EL_COS_SCAN EL_NO_SCAN
#define EL_TRIG_BLOCK ELEM_FAST_BLOCK
#endif

/* Each block is scanned; where the scan finds an element to redo, the block is computed
 * again with per-element flags and only the flagged elements are redone by elem_f32_fix
 * (and the next block goes to the flagging pass directly while blocks keep having flagged
 * elements: inputs mostly outside the fast range cost no scan). The block is written into
 * y directly unless x and y overlap (then into yb first, keeping x for the fixes). */
#define EL_LOOP_FAST(NAME, SCAN, BLOCK)                                                     \
    {                                                                                       \
        uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, nb = (uintptr_t)n * sizeof *x;      \
        int apart = xa + nb <= ya || ya + nb <= xa, flagged = 0;                            \
        for (ptrdiff_t b = 0; b < n; b += BLOCK) {                                          \
            ptrdiff_t m = n - b < BLOCK ? n - b : BLOCK;                                    \
            float yb[BLOCK];                                                                \
            float *yw = apart ? y + b : yb;                                                 \
            unsigned char fl[BLOCK];                                                        \
            if (flagged || SCAN(x + b, yw, m)) {                                            \
                flagged = EL(NAME##_fast)(x + b, yw, fl, m);                                \
                if (flagged)                                                                \
                    for (ptrdiff_t i = 0; i < m; i++)                                       \
                        if (fl[i]) yw[i] = elem_f32_fix(fn, x[b + i]);                      \
            }                                                                               \
            if (!apart) memcpy(y + b, yb, (size_t)m * sizeof *yb);                          \
        }                                                                                   \
    }

#define EL_SIN(v) em_sincos_small(v, 0)
#define EL_COS(v) em_sincos_small(v, 1)
#define EL_SIN_FIX(v) (EM_TRIG_OK(v) ? EL_SIN(v) : elem_sincos_big(v, 0))
#define EL_COS_FIX(v) (EM_TRIG_OK(v) ? EL_COS(v) : elem_sincos_big(v, 1))

static void EL(elementary_f64)(int fn, const double *x, double *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_EXP: EM_LOOP_F64(em_exp) break;
    case ELEM_LOG: EM_LOOP_F64(em_log) break;
    case ELEM_EXPM1: EM_LOOP_F64(em_expm1) break;
    case ELEM_LOG1P: EM_LOOP_F64(em_log1p) break;
    case ELEM_TANH: EM_LOOP_F64(em_tanh) break;
    case ELEM_LOGISTIC: EM_LOOP_F64(em_logistic) break;
    case ELEM_SIN: EM_BLOCKED_LOOP(x, y, EL_SIN, EM_TRIG_OK, EL_SIN_FIX) break;
    case ELEM_COS: EM_BLOCKED_LOOP(x, y, EL_COS, EM_TRIG_OK, EL_COS_FIX) break;
    case ELEM_EXP2: EM_LOOP_F64(em_exp2) break;
    case ELEM_SINH: EM_LOOP_F64(em_sinh) break;
    case ELEM_COSH: EM_LOOP_F64(em_cosh) break;
    }
}

static void EL(elementary_f32)(int fn, const float *x, float *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_EXP: EL_LOOP_FAST(exp, EL_EXP_SCAN, ELEM_SCAN_BLOCK) break;
    case ELEM_LOG: EL_LOOP_FAST(log, EL_LOG_SCAN, ELEM_SCAN_BLOCK) break;
    case ELEM_EXPM1: EL_LOOP_FAST(expm1, EL(expm1_scan), ELEM_SCAN_BLOCK) break;
    case ELEM_LOG1P: EL_LOOP_FAST(log1p, EL(log1p_scan), ELEM_SCAN_BLOCK) break;
    case ELEM_TANH: EL_LOOP_FAST(tanh, EL_TANH_SCAN, ELEM_SCAN_BLOCK) break;
    case ELEM_LOGISTIC: EL_LOOP_FAST(logistic, EL(logistic_scan), ELEM_SCAN_BLOCK) break;
    case ELEM_SIN: EL_LOOP_FAST(sin, EL_SIN_SCAN, EL_TRIG_BLOCK) break;
    case ELEM_COS: EL_LOOP_FAST(cos, EL_COS_SCAN, EL_TRIG_BLOCK) break;
    case ELEM_EXP2: EL_LOOP_FAST(exp2, EL_NO_SCAN, ELEM_FAST_BLOCK) break;
    case ELEM_SINH: EL_LOOP_FAST(sinh, EL(sinh_scan), ELEM_SCAN_BLOCK) break;
    case ELEM_COSH: EL_LOOP_FAST(cosh, EL(cosh_scan), ELEM_SCAN_BLOCK) break;
    }
}

#undef EL_FAST_FN
#undef EL_SCAN_FN
#undef EL_EXP_SCAN
#undef EL_LOG_SCAN
#undef EL_TANH_SCAN
#undef EL_SIN_SCAN
#undef EL_COS_SCAN
#undef EL_TRIG_BLOCK
#undef EL_LOOP_FAST
#undef EL_SIN
#undef EL_COS
#undef EL_SIN_FIX
#undef EL_COS_FIX
