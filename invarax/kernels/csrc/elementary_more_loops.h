/* elementary_more_loops.h - the float64 loops of elementary_more.c, included once per dispatch
 * level with SFX naming it and MORE_TARGET its function attribute (a target with FMA lets the
 * compiler use the instruction for C99's fma: the same correctly rounded result as the
 * library call). Each element is elementary_scalar_more.h's float64 value; the float32
 * elements go through elementary_more_fast.c. */
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, SFX)

static MORE_TARGET void EL(elementary_more_f64)(int fn, const double *x, double *y,
                                                ptrdiff_t n) {
    switch (fn) {
    case ELEM_LOG2: EM_LOOP_F64(ei_log2) break;
    case ELEM_LOG10: EM_LOOP_F64(ei_log10) break;
    case ELEM_ASINH: EM_LOOP_F64(ei_asinh) break;
    case ELEM_ACOSH: EM_LOOP_F64(ei_acosh) break;
    case ELEM_ATANH: EM_LOOP_F64(ei_atanh) break;
    case ELEM_ATAN: EM_LOOP_F64(ei_atan) break;
    case ELEM_ASIN: EM_LOOP_F64(ei_asin) break;
    case ELEM_ACOS: EM_LOOP_F64(ei_acos) break;
    case ELEM_TAN: EM_BLOCKED_LOOP(x, y, ei_tan_small, EM_TRIG_OK, elem_tan) break;
    case ELEM_CBRT: EM_LOOP_F64(ei_cbrt) break;
    case ELEM_ERF: EM_LOOP_F64(es_erf) break;
    case ELEM_ERFC: EM_LOOP_F64(es_erfc) break;
    case ELEM_ERF_INV: EM_LOOP_F64(es_erf_inv_f64) break;
    }
}

/* out[i] = fn(a[i], b[i]) (ELEM2_ATAN2, ELEM2_POW) in float64. */
static MORE_TARGET void EL(elementary2_f64)(int fn, const double *a, const double *b,
                                            double *out, ptrdiff_t n) {
    if (fn == ELEM2_POW)
        for (ptrdiff_t i = 0; i < n; i++) out[i] = ep_pow(a[i], b[i]);
    else
        for (ptrdiff_t i = 0; i < n; i++) out[i] = elem_atan2_f64(a[i], b[i]);
}
