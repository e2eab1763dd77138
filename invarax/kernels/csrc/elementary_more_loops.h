/* elementary_more_loops.h - the loops of elementary_more.c, included once per dispatch level
 * with SFX naming it and MORE_TARGET its function attribute (a target with FMA lets the
 * compiler use the instruction for C99's fma: the same correctly rounded result as the
 * library call). */
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, SFX)

static MORE_TARGET double EL(more_tan)(double x) {
    if (em_abs(x) < EM_TRIG_BIG) return ei_tan_small(x);
    if (!(em_abs(x) < INFINITY)) return x - x;
    int64_t n;
    double rh, rl;
    em_reduce_big(x, &n, &rh, &rl);
    return ei_tan_reduced(n, rh, rl);
}

/* y[i] = F(x[i]) in double, or rounded to float with the hard cases of table fn looked up. */
#define MORE_LOOP(F) EM_ROUNDED_LOOP(F, F, HARD_MORE)

static MORE_TARGET void EL(elementary_more)(int fn, int dbl, const void *x, void *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_LOG2: MORE_LOOP(ei_log2) break;
    case ELEM_LOG10: MORE_LOOP(ei_log10) break;
    case ELEM_ASINH: MORE_LOOP(ei_asinh) break;
    case ELEM_ACOSH: MORE_LOOP(ei_acosh) break;
    case ELEM_ATANH: MORE_LOOP(ei_atanh) break;
    case ELEM_ATAN: MORE_LOOP(ei_atan) break;
    case ELEM_ASIN: MORE_LOOP(ei_asin) break;
    case ELEM_ACOS: MORE_LOOP(ei_acos) break;
    case ELEM_TAN:
        if (dbl) EM_BLOCKED_LOOP((const double *)x, (double *)y, ei_tan_small, EM_TRIG_OK, EL(more_tan))
        else EM_ROUNDED_LOOP_F32(EL(more_tan), HARD_MORE)
        break;
    case ELEM_CBRT: MORE_LOOP(ei_cbrt) break;
    case ELEM_ERF: MORE_LOOP(es_erf) break;
    case ELEM_ERFC: MORE_LOOP(es_erfc) break;
    case ELEM_ERF_INV: EM_ROUNDED_LOOP(es_erf_inv_f64, es_erf_inv, HARD_MORE) break;
    }
}

/* out[i] = fn(a[i], b[i]): fn 0 atan2(a, b) (float32: the double-double rounded once,
 * ei_round_f32), fn 1 pow(a, b) (float32: ep_pow_f32). */
static MORE_TARGET void EL(elementary2)(int fn, int dbl, const void *a, const void *b,
                                        void *out, ptrdiff_t n) {
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

#undef MORE_LOOP
