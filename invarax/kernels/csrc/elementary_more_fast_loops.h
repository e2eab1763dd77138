/* elementary_more_fast_loops.h - the loops of elementary_more_fast.c, included once per
 * dispatch level with SFX naming it (and a target pragma around it). The block loops only
 * call elementary_f32_more.h's and elementary_f32_inv.h's functions, so every level computes
 * the same IEEE operations for each element: vectorisation changes how many at once, never
 * a bit. */
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, SFX)

/* for (i < m) yb[i] = EXPR rounded, fl[i] = hard; any |= hard (EXPR sets hard). The flags
 * are ints, not bytes: a byte store would set the loop's vectorisation factor to 64 lanes
 * (8 vectors of doubles per step on AVX-512, spilling registers); with ints it is 16. */
#define MF_BLOCK(EXPR)                                                                      \
    for (ptrdiff_t i = 0; i < m; i++) {                                                     \
        int hard;                                                                           \
        double d = EXPR;                                                                    \
        yb[i] = (float)d;                                                                   \
        fl[i] = hard;                                                                       \
        any |= hard;                                                                        \
    }

/* One block of at most MF_BLOCK_LEN elements of fn into yb, fl[i] set where element i needs
 * the exact path; returns whether one does (0 also for a function without a fast path). */
static int EL(more_fast_block)(int fn, const float *restrict x, const float *restrict x2,
                               float *restrict yb, int *restrict fl, ptrdiff_t m) {
    int any = 0;
    switch (fn) {
    case ELEM_LOG2: MF_BLOCK(ev_log2((double)x[i], &hard)) break;
    case ELEM_LOG10: MF_BLOCK(ev_log10((double)x[i], &hard)) break;
    case ELEM_ASINH: MF_BLOCK(ev_asinh((double)x[i], &hard)) break;
    case ELEM_ACOSH: MF_BLOCK(ev_acosh((double)x[i], &hard)) break;
    case ELEM_ATANH: MF_BLOCK(ev_atanh((double)x[i], &hard)) break;
    case ELEM_CBRT: MF_BLOCK(ev_cbrt((double)x[i], &hard)) break;
    case ELEM_ATAN: MF_BLOCK(ef_atan((double)x[i], &hard)) break;
    case ELEM_ASIN: MF_BLOCK(ef_asin((double)x[i], &hard)) break;
    case ELEM_ACOS: MF_BLOCK(ef_acos((double)x[i], &hard)) break;
    case ELEM_TAN: MF_BLOCK(ef_tan((double)x[i], &hard)) break;
    case ELEM_ERF: MF_BLOCK(ef_erf((double)x[i], &hard)) break;
    case ELEM_ERFC: MF_BLOCK(ef_erfc((double)x[i], &hard)) break;
    case ELEM_ERF_INV: MF_BLOCK(ef_erf_inv((double)x[i], &hard)) break;
    case ELEM_LGAMMA: MF_BLOCK(ef_lgamma((double)x[i], &hard)) break;
    case ELEM_DIGAMMA: MF_BLOCK(ef_digamma((double)x[i], &hard)) break;
    case MF_ATAN2: MF_BLOCK(ef_atan2((double)x[i], (double)x2[i], &hard)) break;
    case MF_POW: MF_BLOCK(ev_pow((double)x[i], (double)x2[i], &hard)) break;
    }
    return any;
}

/* y = fn(x) (x2 == NULL) or fn(x, x2), block by block; each block is written into y directly
 * unless an input overlaps y (then into yb first, keeping the inputs for the fixes). */
static void EL(more_fast)(int fn, const float *x, const float *x2, float *y, ptrdiff_t n) {
    int apart = mf_apart(x, y, n) && (x2 == NULL || mf_apart(x2, y, n));
    for (ptrdiff_t b = 0; b < n; b += MF_BLOCK_LEN) {
        ptrdiff_t m = n - b < MF_BLOCK_LEN ? n - b : MF_BLOCK_LEN;
        float yb[MF_BLOCK_LEN];
        int fl[MF_BLOCK_LEN];
        float *yw = apart ? y + b : yb;
        if (EL(more_fast_block)(fn, x + b, x2 ? x2 + b : x + b, yw, fl, m))
            for (ptrdiff_t i = 0; i < m; i++)
                if (fl[i]) yw[i] = mf_exact(fn, x[b + i], x2 ? x2[b + i] : 0.0f);
        if (!apart) memcpy(y + b, yb, (size_t)m * sizeof *yb);
    }
}

#undef MF_BLOCK
