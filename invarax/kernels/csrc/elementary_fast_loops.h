/* elementary_fast_loops.h - the block loops of elementary_fast.c, included once per dispatch
 * level with SFX naming it (and a target pragma around it). The loops only call
 * elementary_f32_more.h's functions, so every level computes the same IEEE operations for
 * each element: vectorisation changes how many at once, never a bit. Each block function
 * computes at most EV_BLOCK results into yb, sets fl[i] where element i needs the exact
 * path, and returns whether one does. The flags are ints, not bytes: a byte store would set
 * the loop's vectorisation factor to 64 lanes (8 vectors of doubles per step on AVX-512,
 * spilling registers); with ints it is float's 16. */
#define EV_CAT2(a, b) a##_##b
#define EV_CAT(a, b) EV_CAT2(a, b)
#define EV(name) EV_CAT(name, SFX)

#define EV_FAST1(NAME, F)                                                                   \
    static int EV(NAME)(const float *restrict x, float *restrict yb,                        \
                        int *restrict fl, ptrdiff_t m) {                                    \
        int any = 0;                                                                        \
        for (ptrdiff_t i = 0; i < m; i++) {                                                 \
            int hard;                                                                       \
            double d = F((double)x[i], &hard);                                              \
            yb[i] = (float)d;                                                               \
            fl[i] = hard;                                                    \
            any |= hard;                                                                    \
        }                                                                                   \
        return any;                                                                         \
    }

EV_FAST1(log2_fast, ev_log2)
EV_FAST1(log10_fast, ev_log10)
EV_FAST1(asinh_fast, ev_asinh)
EV_FAST1(acosh_fast, ev_acosh)
EV_FAST1(atanh_fast, ev_atanh)
EV_FAST1(cbrt_fast, ev_cbrt)

static int EV(pow_fast)(const float *restrict a, const float *restrict b, float *restrict yb,
                        int *restrict fl, ptrdiff_t m) {
    int any = 0;
    for (ptrdiff_t i = 0; i < m; i++) {
        int hard;
        double d = ev_pow((double)a[i], (double)b[i], &hard);
        yb[i] = (float)d;
        fl[i] = hard;
        any |= hard;
    }
    return any;
}

/* The block function of unary fn at this level, or NULL where fn has no fast path. */
static ev_block1 EV(unary_block)(int fn) {
    switch (fn) {
    case ELEM_LOG2: return EV(log2_fast);
    case ELEM_LOG10: return EV(log10_fast);
    case ELEM_ASINH: return EV(asinh_fast);
    case ELEM_ACOSH: return EV(acosh_fast);
    case ELEM_ATANH: return EV(atanh_fast);
    case ELEM_CBRT: return EV(cbrt_fast);
    }
    return NULL;
}

#undef EV_FAST1
