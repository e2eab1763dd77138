/* elementary_gamma.h - invarax's lgamma and digamma in double precision (docs/numerics.md,
 * "lgamma and digamma"), on top of elementary_math.h, elementary_inverse.h and
 * elementary_pow.h.
 *
 * Both are computed as a double-double hi + lo and returned as hi + lo rounded once:
 * - within a window |x - z| < delta of a zero z of the function (lgamma: 1, 2 and the first
 *   twelve below -2; digamma: 1.4616... and the first eight below 0; elementary_gamma_tables.h),
 *   its Taylor series at the double-double zero, so that relative accuracy holds there;
 * - x > 0: the shift z = x + n >= 16 (n = 0 for x >= 16), then Stirling's series (lgamma) or
 *   the asymptotic series (digamma) at z, less log(x (x + 1) ... (x + n - 1)) or
 *   1/x + ... + 1/(x + n - 1), all in double-double;
 * - x < 0: the reflections lgamma x = log pi - log|x sin(pi x)| - lgamma|x| and
 *   digamma x = digamma(1 - x) - pi cos(pi x) / sin(pi x), with sin(pi x) and cos(pi x)
 *   from x = n/2 + r (exact) and their Taylor series in r, in double-double.
 * float32 uses parts accurate to about 2^-75 (eg_lgamma_f32, eg_digamma_f32), float64 the
 * same formulas with parts to about 2^-100 (precise: eg_log_precise, more series terms and
 * double-double steps), which keeps its error small next to the zeros not tabulated.
 * Only IEEE operations, floor and fma; compiled with contraction off (setup.py).
 */
#ifndef INVARAX_ELEMENTARY_GAMMA_H
#define INVARAX_ELEMENTARY_GAMMA_H

#include "elementary_inverse.h"
#include "elementary_pow.h"
#include "elementary_gamma_tables.h"

#define EG_SHIFT_TO 16.0  /* the series are used at z >= EG_SHIFT_TO */
#define EG_TINY 0x1p-60   /* below it lgamma|x| = -log|x| and digamma x = -1/x (rounded) */
#define EG_HUGE 0x1p1000  /* above it lgamma x = x (log x - 1) in double */

/* (ah + al) + (bh + bl) = sh + sl. */
EM_INLINE void eg_add(double ah, double al, double bh, double bl, double *sh, double *sl) {
    double s, e;
    ei_two_sum(ah, bh, &s, &e);
    ei_fast_two_sum(s, e + (al + bl), sh, sl);
}

/* log h = lh + ll to about 2^-100 for a positive normal h (float64's kernels): pow's
 * reduction (h = 2^k m, c = i/128 nearest m, t = (m - c)/c as a double-double), then
 * log1p t = t sum_j (-1)^(j+1) t^(j-1) / j (j <= 14; Horner, the last six steps in
 * double-double) and k ln 2 with ln 2 in three parts. */
EM_INLINE void eg_log_precise(double h, double *lh, double *ll) {
    int64_t k;
    double m = em_split(em_bits(h), &k);
    double kd = em_int_to_double(k);
    double f = m * 128.0 + EM_SHIFT;
    int64_t i = (int64_t)(em_bits(f) - em_bits(EM_SHIFT));
    double c = em_int_to_double(i) * 0x1p-7;
    double u = m - c; /* exact (Sterbenz) */
    double th = u / c, tl = fma(-th, c, u) / c;
    double p = EG_LOG1P[13][0];
    for (int j = 12; j >= 6; j--) p = EG_LOG1P[j][0] + th * p;
    double ph = p, pl = 0.0;
    for (int j = 5; j >= 0; j--) {
        ep_mul(th, tl, ph, pl, &ph, &pl);
        eg_add(EG_LOG1P[j][0], EG_LOG1P[j][1], ph, pl, &ph, &pl);
    }
    ep_mul(th, tl, ph, pl, &ph, &pl); /* log1p t */
    double a = kd * EM_LN2_HI; /* exact */
    double b = kd * EM_LN2_LO, bl = fma(kd, EM_LN2_LO, -b) + kd * EG_LN2_LO2;
    double sh, sl;
    eg_add(a, 0.0, EP_LOGC[i - 90][0], EP_LOGC[i - 90][1], &sh, &sl);
    eg_add(sh, sl, b, bl, &sh, &sl);
    eg_add(sh, sl, ph, pl, lh, ll);
}

/* log(h + l) = lh + ll for h > 0 finite (normal where precise), |l| <= ulp(h): pow's log
 * (to about 2^-75, enough for float32), or eg_log_precise (float64). */
EM_INLINE void eg_log(double h, double l, double *lh, double *ll, int precise) {
    double a, b;
    if (precise) eg_log_precise(h, &a, &b);
    else ep_log_dd(h, &a, &b);
    ei_fast_two_sum(a, b + l / h, lh, ll);
}

/* The value at x of the Taylor series of table entry z (|x - z| < delta), rounded once from
 * t c1 + t^2 (c2 + c3 t + ...), t = x - z and c1 as double-doubles. */
EM_INLINE double eg_taylor(const eg_zero *z, double x) {
    double t, tl;
    ei_two_sum(x - z->zh, -z->zl, &t, &tl); /* x - zh is exact (Sterbenz) */
    double p = z->c[z->n - 1];
    for (int k = z->n - 2; k >= 1; k--) p = z->c[k] + t * p;
    double h = z->c[0] * t;
    double l = fma(z->c[0], t, -h) + (z->c[0] * tl + z->c0l * t);
    return h + (l + t * (t * p));
}

/* The entry of table[0 .. count) whose window holds x, or NULL. */
EM_INLINE const eg_zero *eg_window(const eg_zero *table, int count, double x) {
    for (int i = 0; i < count; i++)
        if (em_abs(x - table[i].zh) < table[i].delta) return &table[i];
    return NULL;
}

/* sum_k c[k] u^k (k < n) as a double-double: Horner, the steps k >= split in double, the
 * others in double-double. */
EM_INLINE void eg_series(const double (*c)[2], int n, int split, double uh, double ul,
                         double *ph, double *pl) {
    double p = c[n - 1][0];
    for (int k = n - 2; k >= split; k--) p = c[k][0] + uh * p;
    double h = p, l = 0.0;
    for (int k = split - 1; k >= 0; k--) {
        ep_mul(uh, ul, h, l, &h, &l);
        eg_add(c[k][0], c[k][1], h, l, &h, &l);
    }
    *ph = h;
    *pl = l;
}

/* sin(pi x) = sh + sl and cos(pi x) = ch + cl for finite |x| < 2^52: x = n/2 + r exactly,
 * |r| <= 1/4 (+ a hair), sin(pi r) = r S(r^2), cos(pi r) = C(r^2) (13 terms, the first 5,
 * or 8 where precise, in double-double), then the quadrant n mod 4. */
EM_INLINE void eg_sincospi(double x, double *sh, double *sl, double *ch, double *cl,
                           int precise) {
    /* 2x + 0.5 may round (leaving |r| at most a hair above 1/4); from 2^51 on, 2x is whole */
    double n = em_abs(x) < 0x1p51 ? floor(2.0 * x + 0.5) : 2.0 * x;
    double r = x - 0.5 * n; /* exact */
    double uh = r * r, ul = fma(r, r, -uh);
    double s1, s2, c1, c2;
    int split = precise ? 8 : 5;
    eg_series(EG_SINPI, 13, split, uh, ul, &s1, &s2);
    double p = r * s1;
    ei_fast_two_sum(p, fma(r, s1, -p) + r * s2, &s1, &s2);
    eg_series(EG_COSPI, 13, split, uh, ul, &c1, &c2);
    int64_t q = (int64_t)(n - 4.0 * floor(0.25 * n)); /* n mod 4, exactly */
    int swap = (int)(q & 1), neg_s = q >= 2, neg_c = q == 1 || q == 2;
    double a = swap ? c1 : s1, al = swap ? c2 : s2;
    double b = swap ? s1 : c1, bl = swap ? s2 : c2;
    *sh = neg_s ? -a : a;
    *sl = neg_s ? -al : al;
    *ch = neg_c ? -b : b;
    *cl = neg_c ? -bl : bl;
}

/* ---- lgamma -------------------------------------------------------------------------- */

/* lgamma x = hi + lo for EG_TINY <= x <= EG_HUGE: z = x + n >= EG_SHIFT_TO, Stirling's
 * series at z less log(x (x + 1) ... (x + n - 1)). */
EM_INLINE void eg_lgamma_pos(double x, double *hi, double *lo, int precise) {
    double ph = x, pl = 0.0, zh = x, zl = 0.0, k = 0.0;
    while (zh < EG_SHIFT_TO) {
        k += 1.0;
        ei_two_sum(x, k, &zh, &zl);
        if (zh < EG_SHIFT_TO) ep_mul(ph, pl, zh, zl, &ph, &pl);
    }
    double lh, ll, ah, al, mh, ml, wh, wl, th, tl;
    eg_log(zh, zl, &lh, &ll, precise);
    ei_two_sum(zh, -0.5, &ah, &al);
    al += zl;
    ep_mul(ah, al, lh, ll, &mh, &ml);      /* (z - 1/2) log z */
    eg_add(mh, ml, -zh, -zl, &mh, &ml);    /* - z */
    eg_add(mh, ml, EG_HALF_LOG_2PI_HI, EG_HALF_LOG_2PI_LO, &mh, &ml);
    ei_div(1.0, 0.0, zh, zl, &wh, &wl);    /* w = 1/z */
    if (precise) { /* w sum_k S_k w^(2k-2), the first five steps in double-double */
        double w2h = wh * wh, w2l = fma(wh, wh, -w2h) + 2.0 * wh * wl;
        eg_series(EG_STIRLING_DD, EG_PRECISE_TERMS, 5, w2h, w2l, &th, &tl);
        ep_mul(wh, wl, th, tl, &th, &tl);
        eg_add(mh, ml, th, tl, &mh, &ml);
    } else {
        ep_mul(EG_TWELFTH_HI, EG_TWELFTH_LO, wh, wl, &th, &tl);
        double w2 = wh * wh, s = EG_STIRLING[9];
        for (int i = 8; i >= 1; i--) s = EG_STIRLING[i] + w2 * s;
        eg_add(mh, ml, th, tl + wh * w2 * s, &mh, &ml);
    }
    if (k > 0.0) { /* less log of the product */
        double qh, ql;
        eg_log(ph, pl, &qh, &ql, precise);
        eg_add(mh, ml, -qh, -ql, &mh, &ml);
    }
    *hi = mh;
    *lo = ml;
}

/* lgamma x = hi + lo for 0 < |x| <= EG_HUGE, x not a negative integer, outside the windows. */
EM_INLINE void eg_lgamma_dd(double x, double *hi, double *lo, int precise) {
    double a = em_abs(x);
    if (a < EG_TINY) { /* -log|x| */
        ep_log_dd(a, hi, lo);
        *hi = -*hi;
        *lo = -*lo;
        return;
    }
    if (x > 0.0) {
        eg_lgamma_pos(x, hi, lo, precise);
        return;
    }
    /* log pi - log|x sin(pi x)| - lgamma|x| */
    double gh, gl, sh, sl, ch, cl, lh, ll;
    eg_lgamma_pos(a, &gh, &gl, precise);
    eg_sincospi(x, &sh, &sl, &ch, &cl, precise);
    double p = a * sh;
    ei_fast_two_sum(p, fma(a, sh, -p) + a * sl, &sh, &sl);
    if (sh < 0.0) {
        sh = -sh;
        sl = -sl;
    }
    eg_log(sh, sl, &lh, &ll, precise);
    eg_add(EG_LOG_PI_HI, EG_LOG_PI_LO, -lh, -ll, &lh, &ll);
    eg_add(lh, ll, -gh, -gl, hi, lo);
}

/* lgamma x = log|Gamma(x)|: +inf at 0, the negative integers and +-inf; NaN at NaN.
 * precise: float64's components (to about 2^-100 rather than 2^-75). */
EM_INLINE double eg_lgamma_p(double x, int precise) {
    if (x != x) return x + x;
    if (x <= 0.0 && floor(x) == x) return INFINITY; /* poles, -inf, and x <= -2^52 */
    if (x > EG_HUGE) {                              /* x (log x - 1), +inf at +inf */
        double lh, ll;
        ep_log_dd(x < INFINITY ? x : EG_HUGE, &lh, &ll);
        return x * (lh - 1.0);
    }
    if (x > -8.0 && x < 2.0625) {
        const eg_zero *z = eg_window(EG_LGAMMA_ZEROS, EG_LGAMMA_ZEROS_COUNT, x);
        if (z) return eg_taylor(z, x);
    }
    double hi, lo;
    eg_lgamma_dd(x, &hi, &lo, precise);
    return hi + lo;
}

EM_INLINE double eg_lgamma(double x) { return eg_lgamma_p(x, 1); }
EM_INLINE double eg_lgamma_f32(double x) { return eg_lgamma_p(x, 0); }

/* ---- digamma ------------------------------------------------------------------------- */

/* digamma(x + m) = hi + lo for m = 0 (EG_TINY <= x) or m = 1 (0 < x), x finite:
 * z = x + m + n >= EG_SHIFT_TO, the asymptotic series at z less the n reciprocals
 * 1/(x + m) + ... + 1/(x + m + n - 1), summed as one fraction N/D (N' = N z + D, D' = D z). */
EM_INLINE void eg_digamma_pos(double x, double m, double *hi, double *lo, int precise) {
    double nh = 0.0, nl = 0.0, dh = 1.0, dl = 0.0, zh, zl, k = m, sh = 0.0, sl = 0.0;
    ei_two_sum(x, k, &zh, &zl);
    while (zh < EG_SHIFT_TO) {
        ep_mul(nh, nl, zh, zl, &nh, &nl);
        eg_add(nh, nl, dh, dl, &nh, &nl);
        ep_mul(dh, dl, zh, zl, &dh, &dl);
        k += 1.0;
        ei_two_sum(x, k, &zh, &zl);
    }
    if (k > m) ei_div(nh, nl, dh, dl, &sh, &sl);
    double lh, ll, wh, wl, th, tl;
    eg_log(zh, zl, &lh, &ll, precise);
    ei_div(1.0, 0.0, zh, zl, &wh, &wl);
    eg_add(lh, ll, -0.5 * wh, -0.5 * wl, &lh, &ll); /* log z - 1/(2z) */
    double w2h = wh * wh, w2l = fma(wh, wh, -w2h) + 2.0 * wh * wl;
    if (precise) { /* w^2 sum_k P_k w^(2k-2), the first five steps in double-double */
        eg_series(EG_PSI_SERIES_DD, EG_PRECISE_TERMS, 5, w2h, w2l, &th, &tl);
        ep_mul(w2h, w2l, th, tl, &th, &tl);
        eg_add(lh, ll, -th, -tl, &lh, &ll);
    } else {
        ep_mul(EG_TWELFTH_HI, EG_TWELFTH_LO, w2h, w2l, &th, &tl);
        double s = EG_PSI_SERIES[9];
        for (int i = 8; i >= 1; i--) s = EG_PSI_SERIES[i] + w2h * s;
        eg_add(lh, ll, -th, -(tl + w2h * w2h * s), &lh, &ll);
    }
    eg_add(lh, ll, -sh, -sl, hi, lo);
}

/* digamma x: NaN at 0, the negative integers, -inf and NaN; +inf at +inf. precise: as
 * for lgamma. */
EM_INLINE double eg_digamma_p(double x, int precise) {
    if (x != x) return x + x;
    if (x <= 0.0 && floor(x) == x) return NAN; /* poles, -inf, and x <= -2^52 */
    if (!(x < INFINITY)) return x;
    if (em_abs(x) < EG_TINY) return -1.0 / x;
    if (x > -8.0 && x < 1.5) {
        const eg_zero *z = eg_window(EG_DIGAMMA_ZEROS, EG_DIGAMMA_ZEROS_COUNT, x);
        if (z) return eg_taylor(z, x);
    }
    double hi, lo;
    if (x > 0.0) {
        eg_digamma_pos(x, 0.0, &hi, &lo, precise);
        return hi + lo;
    }
    /* digamma(1 - x) - pi cos(pi x) / sin(pi x) */
    double sh, sl, ch, cl, qh, ql;
    eg_digamma_pos(-x, 1.0, &hi, &lo, precise);
    eg_sincospi(x, &sh, &sl, &ch, &cl, precise);
    ei_div(ch, cl, sh, sl, &qh, &ql);
    ep_mul(EG_PI_HI, EG_PI_LO, qh, ql, &qh, &ql);
    eg_add(hi, lo, -qh, -ql, &hi, &lo);
    return hi + lo;
}

EM_INLINE double eg_digamma(double x) { return eg_digamma_p(x, 1); }
EM_INLINE double eg_digamma_f32(double x) { return eg_digamma_p(x, 0); }

#endif
