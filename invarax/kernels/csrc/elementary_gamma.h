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
 * double-double steps), which keeps its error small next to the zeros not tabulated; next to
 * digamma's zeros below -8 float64 sums the reflection in triple-double (eg_digamma_neg_td),
 * and its windows subtract the zeros to three parts.
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
#define EG_FAST_SHARE 0x1p-6 /* float64 redoes with the precise parts where |value| < it * terms */
#define EG_TD_BELOW 0x1p-10 /* float64 digamma below -8 sums in triple-double where |value| < it */

/* (ah + al) + (bh + bl) = sh + sl. */
EM_INLINE void eg_add(double ah, double al, double bh, double bl, double *sh, double *sl) {
    double s, e;
    ei_two_sum(ah, bh, &s, &e);
    ei_fast_two_sum(s, e + (al + bl), sh, sl);
}

/* The parts of log h = k ln 2 + log c + log1p t for a positive normal h: pow's reduction
 * (h = 2^k m, c = i/128 nearest m, t = (m - c)/c as a double-double), then
 * log1p t = ph + pl = t sum_j (-1)^(j+1) t^(j-1) / j (j <= 14; Horner, the last six steps in
 * double-double; about 2^-104 relative, |t| <= 2^-7.5). */
EM_INLINE void eg_log_parts(double h, double *kd, int64_t *i, double *ph, double *pl) {
    int64_t k;
    double m = em_split(em_bits(h), &k);
    *kd = em_int_to_double(k);
    double f = m * 128.0 + EM_SHIFT;
    *i = (int64_t)(em_bits(f) - em_bits(EM_SHIFT));
    double c = em_int_to_double(*i) * 0x1p-7;
    double u = m - c; /* exact (Sterbenz) */
    double th = u / c, tl = fma(-th, c, u) / c;
    double p = EG_LOG1P[13][0];
    for (int j = 12; j >= 6; j--) p = EG_LOG1P[j][0] + th * p;
    double sh = p, sl = 0.0;
    for (int j = 5; j >= 0; j--) {
        ep_mul(th, tl, sh, sl, &sh, &sl);
        eg_add(EG_LOG1P[j][0], EG_LOG1P[j][1], sh, sl, &sh, &sl);
    }
    ep_mul(th, tl, sh, sl, ph, pl); /* log1p t */
}

/* log h = lh + ll to about 2^-100 for a positive normal h (float64's kernels): the parts
 * above, k ln 2 with ln 2 in three parts. */
EM_INLINE void eg_log_precise(double h, double *lh, double *ll) {
    double kd, ph, pl;
    int64_t i;
    eg_log_parts(h, &kd, &i, &ph, &pl);
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
 * t c1 + t^2 (c2 + c3 t + ...), t = x - z and c1 as double-doubles; t from the zero to three
 * parts where precise (float64: x may lie closer to the zero than 2^-106 |z|), two else. */
EM_INLINE double eg_taylor(const eg_zero *z, double x, int precise) {
    double t, tl;
    ei_two_sum(x - z->zh, -z->zl, &t, &tl); /* x - zh is exact (Sterbenz) */
    if (precise) ei_fast_two_sum(t, tl - z->z3, &t, &tl);
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
EM_INLINE void eg_lgamma_pos(double x, double *hi, double *lo, int precise, double *terms) {
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
    *terms = em_abs(mh);
    if (k > 0.0) { /* less log of the product */
        double qh, ql;
        eg_log(ph, pl, &qh, &ql, precise);
        *terms += em_abs(qh);
        eg_add(mh, ml, -qh, -ql, &mh, &ml);
    }
    *hi = mh;
    *lo = ml;
}

/* lgamma x = hi + lo for 0 < |x| <= EG_HUGE, x not a negative integer, outside the windows. */
EM_INLINE void eg_lgamma_dd(double x, double *hi, double *lo, int precise, double *terms) {
    double a = em_abs(x);
    if (a < EG_TINY) { /* -log|x| */
        ep_log_dd(a, hi, lo);
        *hi = -*hi;
        *lo = -*lo;
        *terms = em_abs(*hi);
        return;
    }
    if (x > 0.0) {
        eg_lgamma_pos(x, hi, lo, precise, terms);
        return;
    }
    /* log pi - log|x sin(pi x)| - lgamma|x| */
    double gh, gl, sh, sl, ch, cl, lh, ll;
    eg_lgamma_pos(a, &gh, &gl, precise, terms);
    eg_sincospi(x, &sh, &sl, &ch, &cl, precise);
    double p = a * sh;
    ei_fast_two_sum(p, fma(a, sh, -p) + a * sl, &sh, &sl);
    if (sh < 0.0) {
        sh = -sh;
        sl = -sl;
    }
    eg_log(sh, sl, &lh, &ll, precise);
    *terms += EG_LOG_PI_HI + em_abs(lh);
    eg_add(EG_LOG_PI_HI, EG_LOG_PI_LO, -lh, -ll, &lh, &ll);
    eg_add(lh, ll, -gh, -gl, hi, lo);
}

/* lgamma x = log|Gamma(x)|: +inf at 0, the negative integers and +-inf; NaN at NaN.
 * precise (float64): the float32 components first (error below about 2^-67 of the terms
 * that may cancel: pow's log, 2^-68 relative, dominates), kept where the value is at least
 * EG_FAST_SHARE of the terms (relative error below 2^-61); else redone with components to
 * about 2^-100. */
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
        if (z) return eg_taylor(z, x, precise);
    }
    double hi, lo, terms;
    eg_lgamma_dd(x, &hi, &lo, 0, &terms);
    if (precise && em_abs(hi) < EG_FAST_SHARE * terms) eg_lgamma_dd(x, &hi, &lo, 1, &terms);
    return hi + lo;
}

EM_INLINE double eg_lgamma(double x) { return eg_lgamma_p(x, 1); }
EM_INLINE double eg_lgamma_f32(double x) { return eg_lgamma_p(x, 0); }

/* ---- digamma ------------------------------------------------------------------------- */

/* digamma(x + m) = hi + lo for m = 0 (EG_TINY <= x) or m = 1 (0 < x), x finite:
 * z = x + m + n >= EG_SHIFT_TO, the asymptotic series at z less the n reciprocals
 * 1/(x + m) + ... + 1/(x + m + n - 1), summed as one fraction N/D (N' = N z + D, D' = D z). */
EM_INLINE void eg_digamma_pos(double x, double m, double *hi, double *lo, int precise,
                              double *terms) {
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
    *terms = em_abs(lh) + em_abs(sh);
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

/* ---- float64 digamma next to its zeros below -8: triple-double ---------------------- */

/* h + m + l, with |m| about ulp(h) or below and |l| about ulp(m) or below. */
typedef struct {
    double h, m, l;
} eg_td;

/* The triple-double h + m + l (a function, not a compound literal: the GPU's compiler is C++). */
EM_INLINE eg_td eg_td_of(double h, double m, double l) {
    eg_td t = {h, m, l};
    return t;
}

/* s += a: TwoSum into h, its error TwoSum into m, that one's error added to l (error about
 * 2^-53 |l|). */
EM_INLINE void eg_td_acc(eg_td *s, double a) {
    double e, f;
    ei_two_sum(s->h, a, &s->h, &e);
    ei_two_sum(s->m, e, &s->m, &f);
    s->l += f;
}

/* s renormalised (two passes of TwoSum from the low part up; exact but for the last add). */
EM_INLINE eg_td eg_td_norm(eg_td s) {
    for (int pass = 0; pass < 2; pass++) {
        ei_two_sum(s.m, s.l, &s.m, &s.l);
        ei_two_sum(s.h, s.m, &s.h, &s.m);
    }
    return s;
}

/* s += f a, part by part, for an exact scaling f (a power of two, or its negative). */
EM_INLINE void eg_td_acc_td(eg_td *s, eg_td a, double f) {
    eg_td_acc(s, f * a.h);
    eg_td_acc(s, f * a.m);
    eg_td_acc(s, f * a.l);
}

EM_INLINE eg_td eg_td_add(eg_td a, eg_td b) {
    eg_td_acc_td(&a, b, 1.0);
    return eg_td_norm(a);
}

/* a b (relative error about 2^-150): the products of the leading parts exact by fma. */
EM_INLINE eg_td eg_td_mul(eg_td a, eg_td b) {
    double p = a.h * b.h, q = a.h * b.m, r = a.m * b.h;
    eg_td s = {p, fma(a.h, b.h, -p), 0.0};
    eg_td_acc(&s, q);
    eg_td_acc(&s, r);
    eg_td_acc(&s, (fma(a.h, b.m, -q) + fma(a.m, b.h, -r)) +
                       ((a.h * b.l + a.l * b.h) + a.m * b.m));
    return eg_td_norm(s);
}

/* a / b: three quotient digits, each from the remainder a - (q0 + ...) b. */
EM_INLINE eg_td eg_td_div(eg_td a, eg_td b) {
    double q[3];
    eg_td r = a;
    for (int j = 0; j < 3; j++) {
        q[j] = r.h / b.h;
        eg_td p = eg_td_mul(b, eg_td_of(-q[j], 0.0, 0.0));
        r = eg_td_add(r, p);
    }
    eg_td s = {q[0], 0.0, 0.0};
    eg_td_acc(&s, q[1]);
    eg_td_acc(&s, q[2]);
    return eg_td_norm(s);
}

/* sum_k c[k] v^k (k < EG_TD_TERMS), Horner in triple-double. */
EM_INLINE eg_td eg_td_series(const double (*c)[3], eg_td v) {
    eg_td p = {c[EG_TD_TERMS - 1][0], c[EG_TD_TERMS - 1][1], c[EG_TD_TERMS - 1][2]};
    for (int k = EG_TD_TERMS - 2; k >= 0; k--)
        p = eg_td_add(eg_td_mul(p, v), eg_td_of(c[k][0], c[k][1], c[k][2]));
    return p;
}

/* digamma x for x < -8, not a pole: digamma(1 - x) - pi cot(pi x) as above, each part to
 * about 2^-110 absolute (log c to three parts, 1/z and the reciprocals of the recurrence
 * and cot(pi x) in triple-double, sin(pi r) and cos(pi r) to 16 terms), summed without
 * rounding: the terms, of magnitude log|x|, cancel next to the zeros, where the double-double
 * sum keeps about 2^-100 absolute only. */
EM_INLINE double eg_digamma_neg_td(double x) {
    eg_td acc = {0.0, 0.0, 0.0};
    double zh, zl, k = 1.0;
    ei_two_sum(-x, k, &zh, &zl);
    while (zh < EG_SHIFT_TO) { /* less 1/(1 - x) + ... */
        eg_td_acc_td(&acc, eg_td_div(eg_td_of(-1.0, 0.0, 0.0), eg_td_of(zh, zl, 0.0)), 1.0);
        k += 1.0;
        ei_two_sum(-x, k, &zh, &zl);
    }
    /* log z = k ln 2 + log c + log1p t + log1p(zl/zh) */
    double kd, ph, pl;
    int64_t i;
    eg_log_parts(zh, &kd, &i, &ph, &pl);
    double b = kd * EM_LN2_LO;
    double qh = zl / zh, ql = fma(-qh, zh, zl) / zh;
    eg_td_acc(&acc, kd * EM_LN2_HI); /* exact */
    eg_td_acc(&acc, EP_LOGC[i - 90][0]);
    eg_td_acc(&acc, b);
    eg_td_acc(&acc, fma(kd, EM_LN2_LO, -b));
    eg_td_acc(&acc, EP_LOGC[i - 90][1]);
    eg_td_acc(&acc, ph);
    eg_td_acc(&acc, pl);
    eg_td_acc(&acc, qh);
    eg_td_acc(&acc, (ql - 0.5 * qh * qh) + (kd * EG_LN2_LO2 + EG_LOGC3[i - 90]));
    /* - 1/(2z) - w^2 sum_k P_k w^(2k-2) */
    eg_td w = eg_td_div(eg_td_of(1.0, 0.0, 0.0), eg_td_of(zh, zl, 0.0));
    eg_td_acc_td(&acc, w, -0.5);
    double w2h = w.h * w.h, w2l = fma(w.h, w.h, -w2h) + 2.0 * w.h * w.m, th, tl;
    eg_series(EG_PSI_SERIES_DD, EG_PRECISE_TERMS, 5, w2h, w2l, &th, &tl);
    ep_mul(w2h, w2l, th, tl, &th, &tl);
    eg_td_acc(&acc, -th);
    eg_td_acc(&acc, -tl);
    /* - pi cos(pi x) / sin(pi x), x = n/2 + r as in eg_sincospi */
    double n = em_abs(x) < 0x1p51 ? floor(2.0 * x + 0.5) : 2.0 * x;
    double r = x - 0.5 * n, vh = r * r;
    eg_td v = {vh, fma(r, r, -vh), 0.0};
    eg_td sn = eg_td_mul(eg_td_series(EG_SINPI3, v), eg_td_of(r, 0.0, 0.0));
    eg_td cs = eg_td_series(EG_COSPI3, v);
    int64_t q = (int64_t)(n - 4.0 * floor(0.25 * n)); /* n mod 4 */
    /* cot(pi x) = cot(pi r) for even n, -tan(pi r) for odd n */
    eg_td cot = (q & 1) ? eg_td_div(sn, cs) : eg_td_div(cs, sn);
    eg_td pc = eg_td_mul(cot, eg_td_of(EG_PI3[0], EG_PI3[1], EG_PI3[2]));
    double sg = (q & 1) ? 1.0 : -1.0;
    eg_td_acc_td(&acc, pc, sg);
    acc = eg_td_norm(acc);
    return acc.h + (acc.m + acc.l);
}

/* digamma x = hi + lo for EG_TINY <= |x|, x finite, not a pole, outside the windows: the
 * series (x > 0) or the reflection digamma(1 - x) - pi cos(pi x) / sin(pi x); *terms the sum
 * of the magnitudes of the parts that may cancel. */
EM_INLINE void eg_digamma_dd(double x, double *hi, double *lo, int precise, double *terms) {
    if (x > 0.0) {
        eg_digamma_pos(x, 0.0, hi, lo, precise, terms);
        return;
    }
    double sh, sl, ch, cl, qh, ql;
    eg_digamma_pos(-x, 1.0, hi, lo, precise, terms);
    eg_sincospi(x, &sh, &sl, &ch, &cl, precise);
    ei_div(ch, cl, sh, sl, &qh, &ql);
    ep_mul(EG_PI_HI, EG_PI_LO, qh, ql, &qh, &ql);
    *terms += em_abs(qh);
    eg_add(*hi, *lo, -qh, -ql, hi, lo);
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
        if (z) return eg_taylor(z, x, precise);
    }
    double hi, lo, terms;
    eg_digamma_dd(x, &hi, &lo, 0, &terms);
    if (precise && em_abs(hi) < EG_FAST_SHARE * terms) {
        eg_digamma_dd(x, &hi, &lo, 1, &terms);
        /* next to a zero below -8 (none tabulated there): triple-double */
        if (x < -8.0 && em_abs(hi) < EG_TD_BELOW) return eg_digamma_neg_td(x);
    }
    return hi + lo;
}

EM_INLINE double eg_digamma(double x) { return eg_digamma_p(x, 1); }
EM_INLINE double eg_digamma_f32(double x) { return eg_digamma_p(x, 0); }

#endif
