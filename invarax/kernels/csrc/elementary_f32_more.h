/* elementary_f32_more.h - the fast float32 paths of log2, log10, asinh, acosh, atanh, cbrt
 * and pow (docs/numerics.md, "float32 fast paths"), in the style of elementary_f32.h.
 *
 * Each function evaluates its float32 input (converted to double, exactly) in double to a
 * relative error below 2^-43 (the bound of each is derived next to it and in
 * docs/numerics.md; the polynomials come from tools/f32_polys.py), and flags the elements
 * whose double result lies within 2^-39 of a float32 rounding boundary (ef_near_midpoint)
 * or whose input is outside the fast range (NaN included). elementary_more_fast.c redoes the
 * flagged elements with the exact scalar algorithm of elementary_inverse.h /
 * elementary_pow.h, so every result is the correctly rounded one.
 *
 * IEEE double operations, explicit fma(), sqrt, bit operations and selects, no
 * data-dependent branches, so the loops vectorise without changing a bit.
 */
#ifndef INVARAX_ELEMENTARY_F32_MORE_H
#define INVARAX_ELEMENTARY_F32_MORE_H

#include "elementary_f32.h"
#include "elementary_inverse.h"

/* ---- log2, log10: log x / ln(base) ----------------------------------------------------- */

/* log2 and log10 of a positive normal float x (others: *hard = 1), relative error below
 * 2^-43.9: ef_log's 2^-44.0 (log2 x / log x is constant, so the relative error carries
 * over), the constant's rounding (below 2^-53.5) and the product's (2^-53). Powers of two
 * (and of ten) give integers, floats far from a boundary: rounded correctly. */
EM_INLINE double ev_log_base(double x, double inv_ln_base, int *hard) {
    double d = ef_log(x, hard) * inv_ln_base;
    *hard |= ef_near_midpoint(d);
    return d;
}
EM_INLINE double ev_log2(double x, int *hard) { return ev_log_base(x, EI_INV_LN2_HI, hard); }
EM_INLINE double ev_log10(double x, int *hard) { return ev_log_base(x, EI_INV_LN10_HI, hard); }

/* ---- asinh, acosh, atanh: log1p of a double t >= 0 ------------------------------------- */

/* log(1 + t) for a double t >= 2^-30 (or t = 0), relative error below 2^-43.9 plus t's own
 * relative error (log1p's condition number t / ((1 + t) log1p t) is below 1): w = 1 + t
 * rounds, c = t - (w - 1) is its rounding error exactly (Fast2Sum, 1 >= t where w < 2), and
 * log(1 + t) = log w + log(1 + c / w). For w < 2 the correction is taken as c: the
 * difference, |c| (w - 1) / w <= 2^-53 (w - 1) / w, is below 2^-53 log1p(t); for w >= 2 it
 * is dropped: |c / w| <= 2^-53 <= 2^-52.47 log w. ef_log's 2^-44.0 is relative to log w,
 * which exceeds log1p t by at most |c / w| <= 2^-53 <= 2^-22 log1p t (t >= 2^-30); the sum
 * rounds once. In all: 2^-44.0 (1 + 2^-22) + 2^-52.47 + 2^-53 < 2^-43.9. *hard: ef_log's
 * (w outside float's normal range, or NaN; and its own boundary test, which only adds
 * work). */
EM_INLINE double ev_log1p_pos(double t, int *hard) {
    double w = 1.0 + t;
    double c = t - (w - 1.0);
    return ef_log(w, hard) + em_select(w < 2.0, c, 0.0);
}

#define EV_TINY 0x1p-28 /* below it asinh x and atanh x round to x (as ei_asinh, ei_atanh) */

/* asinh for a float x (|x| >= 2^127, inf, NaN: *hard = 1), relative error below 2^-43.8:
 * asinh |x| = log1p(t), t = a + a^2 / (1 + sqrt(1 + a^2)) (a = |x|; the quotient is
 * sqrt(1 + a^2) - 1 without its cancellation, and at most a / 2 of t). t's error: a^2, the
 * sum, the root (half of its argument's two, plus one), 1 + root, the quotient: 5 roundings
 * on the quotient, then the sum: below 5/2 + 1 = 3.5 roundings of t = 2^-51.2; then
 * ev_log1p_pos's 2^-43.9. |x| < 2^-28 gives x itself (a float; not flagged), the sign of x
 * put back (-0 stays -0). */
EM_INLINE double ev_asinh(double x, int *hard) {
    double a = em_abs(x), a2 = a * a;
    double d = ev_log1p_pos(a + a2 / (1.0 + sqrt(a2 + 1.0)), hard);
    d = em_select(em_abs_below(a, EV_TINY), a, d);
    *hard |= ef_near_midpoint(d);
    return em_with_sign(d, x);
}

/* acosh for a float x >= 1 (others, x >= 2^127 and NaN: *hard = 1), relative error below
 * 2^-43.8: acosh x = log1p(t), t = u + sqrt(u (x + 1)), u = x - 1 (u and x + 1 exact for
 * x < 2^53, one rounding each above): the product, the root and the sum, t within 4
 * roundings (2^-51); then ev_log1p_pos's 2^-43.9 (t >= 2^-11.5 or t = 0 at x = 1, which
 * gives +0 exactly). */
EM_INLINE double ev_acosh(double x, int *hard) {
    double u = x - 1.0;
    double d = ev_log1p_pos(u + sqrt(u * (x + 1.0)), hard);
    *hard |= ef_near_midpoint(d) | (em_ibits(x) < em_ibits(1.0));
    return d;
}

/* atanh for a float x, |x| < 1 (others, NaN included: *hard = 1), relative error below
 * 2^-43.8: atanh |x| = log1p(t) / 2, t = 2a / (1 - a) (a = |x|; 1 - a exact, one rounding);
 * then ev_log1p_pos's 2^-43.9 (the halving is exact). |x| < 2^-28 gives x itself. */
EM_INLINE double ev_atanh(double x, int *hard) {
    double a = em_abs(x);
    double d = 0.5 * ev_log1p_pos((a + a) / (1.0 - a), hard);
    d = em_select(em_abs_below(a, EV_TINY), a, d);
    *hard |= ef_near_midpoint(d) | !em_abs_below(a, 1.0);
    return em_with_sign(d, x);
}

/* ---- cbrt: |x| = 2^(3q + r) m, m in [1, 2), r in {0, 1, 2} ------------------------------ */

/* 1 + A r + B r^2 = 2^(-r/3) at r = 0, 1, 2 (within 2^-52) */
#define EV_RCBRT_A -0x1.d2150c92f732ep-3
#define EV_RCBRT_B 0x1.5ca5af1296110p-6

/* cbrt for a float x (NaN: *hard = 1; +-0 and +-inf are themselves), relative error below
 * 2^-50, without a division: A = 2^r m in [1, 8) exactly; z = P(m) 2^(-r/3), P a degree-4
 * fit of m^(-1/3) on [1, 2] (relative error 2^-14.56, tools/f32_polys.py) and 2^(-r/3) by a
 * quadratic in r (within 2^-52), so z = A^(-1/3) (1 + e), |e| < 2^-14.55; d = 1 - A z^3 (z^3
 * rounds twice, the fma once: d within 2.001 roundings of 1 - A z^3, |d| < 2^-12.96), and
 * A^(-1/3) = z (1 - d)^(-1/3) = z (1 + d/3 + 2d^2/9 + 14d^3/81 + R), |R| < 0.15 d^4 <
 * 2^-54.7; the series' roundings are relative to d (below 2^-64), d's error carries over a
 * third, the last fma rounds: z1 = A^(-1/3) within 2^-54.7 + 1.7 roundings; cbrt A = A z1 z1
 * doubles that and rounds twice: below 2^-53.7 + 5.4 roundings < 2^-50.2. The scaling by 2^q
 * is exact (the result is normal: |cbrt x| >= 2^-49.7). The exponent's q = round((e - 1) / 3)
 * and r = e - 3q in double (exact: e is an integer, |e| < 150, and (e - 1) / 3 is at least
 * 1/3 - 2^-40 from a half-integer). */
EM_INLINE double ev_cbrt(double x, int *hard) {
    double a = em_abs(x);
    uint64_t ab = em_bits(a);
    double m = em_double((ab & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
    double e = em_int_to_double((int64_t)(ab >> 52) - 1023);
    double t = (e - 1.0) * (1.0 / 3.0) + EM_SHIFT;
    uint64_t qb = em_bits(t) - em_bits(EM_SHIFT); /* q mod 2^64 */
    double r = e - 3.0 * (t - EM_SHIFT);
    double p = fma(m, 0x1.d46f79bdd23f4p-6, -0x1.c5185e801b106p-3);
    p = fma(m, p, 0x1.64164effd6adep-1);
    p = fma(m, p, -0x1.2c41e19cbabc0p+0);
    p = fma(m, p, 0x1.ab85900d0b290p+0);
    double z = p * fma(r, fma(r, EV_RCBRT_B, EV_RCBRT_A), 1.0);
    double A = m * fma(r, fma(r, 0.5, 0.5), 1.0); /* 2^r, exactly */
    double d = fma(-A, z * z * z, 1.0);
    double c = fma(d, fma(d, 14.0 / 81.0, 2.0 / 9.0), 1.0 / 3.0);
    double z1 = fma(z, d * c, z);
    double y = A * z1 * z1;
    double out = em_double(em_bits(y) + (qb << 52));
    out = em_select(em_is_zero(a) | em_is_bits(a, INFINITY), a, out);
    *hard = ef_near_midpoint(out) | (em_ibits(a) > em_ibits(INFINITY)); /* NaN */
    return em_with_sign(out, x);
}

/* ---- pow: x^y = exp(y log|x|), log|x| as a double-double --------------------------------- */

/* log(x) = k ln2 + log z for a positive float x: x = 2^k z, z in [0.699, 1.398) (as
 * ef_log), log z = 2 atanh(s), s = (z - 1) / (z + 1) = sh + sl, without a division: z - 1
 * and z + 1 are exact (z is a float); r = 1 / (z + 1) by a quadratic (2^-9.48) and two
 * Newton steps r + r (1 - (z + 1) r) (2^-37.9 and a rounding); sh = (z - 1) r and sl = (z -
 * 1 - sh (z + 1)) r, the remainder by fma (below 2^-37.8 |z - 1|, rounded once), so that s =
 * sh + sl within 2^-75 |s|. 2 atanh(s) = 2 sh + c, c = 2 sl + 2 s1 w P(w) (s1 = sh + sl
 * rounded, w = s1^2), P a degree-6 fit of (atanh(s) / s - 1) / s^2 on [0, 0.17701^2]
 * (relative error 2^-58.3 in atanh s, tools/f32_polys.py); c is below 0.0107 |2s|, and its
 * roundings (s1, w and its two factors, 2 s1 w, Horner's last fma and the sum) are below 7.1
 * roundings of it: below 2^-56.7 |2s|. k ln2 = k LN2_HI (exact) + k LN2_LO; the exact
 * Fast2Sum of k LN2_HI and 2 sh (|k LN2_HI| >= 0.69 > |2 sh| unless k = 0) and the rest
 * (rounding below 2^-60), renormalised: lh + ll = log x with relative error below 2^-55.7
 * (|log z| <= 1.07 |log x| for k != 0, and |log x| >= 0.335 there). */
EM_INLINE double ev_log_dd(double a, double *ll) {
    double z, kd = ef_log_split(a, &z); /* |k| <= 150 */
    double u = z - 1.0, v = z + 1.0;
    double r = fma(v, fma(v, 0x1.e6e45ba472368p-4, -0x1.76159328e8804p-1), 0x1.7c6d7781dc8dep+0);
    r = fma(r, fma(-v, r, 1.0), r);
    r = fma(r, fma(-v, r, 1.0), r);
    double sh = u * r;
    double sl = fma(-sh, v, u) * r;
    double s1 = sh + sl, w = s1 * s1;
    double p = fma(w, 0x1.3114c2e729cfap-4, 0x1.396e4edf4398fp-4);
    p = fma(w, p, 0x1.746831f2d1197p-4);
    p = fma(w, p, 0x1.c71c48cad4542p-4);
    p = fma(w, p, 0x1.2492494cef537p-3);
    p = fma(w, p, 0x1.9999999973f46p-3);
    p = fma(w, p, 0x1.55555555555b4p-2);
    double c = fma((s1 + s1) * w, p, sl + sl);
    double h, e, lh;
    ei_fast_two_sum(kd * EM_LN2_HI, sh + sh, &h, &e);
    ei_fast_two_sum(h, e + fma(kd, EM_LN2_LO, c), &lh, ll);
    return lh;
}

/* pow for float x, y where |x^y| is a normal float, |y log|x|| < 87.33 (others, and every
 * special case of C99's pow - a zero, infinite or NaN operand, x < 0 with y not an integer
 * - *hard = 1), relative error below 2^-45.2: E = y log|x| = eh + el (the product of y and
 * ev_log_dd's lh + ll by fma; |E| 2^-55.7 + 2^-104 |E| < 2^-49.2 absolutely), exp(eh) = 2^k
 * p by ef_exp_parts (2^-45.4), times 1 + el by one fma (el^2 / 2 < 2^-90, one rounding),
 * the scaling exact. x < 0 with y an integer: the sign of (-1)^y (floats of 2^24 and above
 * are even). Exact results (integer powers, x = 2^k, y = 1/2 of a square, ...) are floats
 * (far from a boundary: rounded correctly) or float midpoints (flagged, and settled by
 * ep_pow_f32's exact powers). */
EM_INLINE double ev_pow(double x, double y, int *hard) {
    double a = em_abs(x), ll;
    double lh = ev_log_dd(a, &ll);
    double eh = y * lh, el = fma(y, lh, -eh) + y * ll;
    uint64_t kb;
    double u, p = ef_exp_parts(eh, &kb, &u);
    double d = em_double(em_bits(fma(p, el, p)) + (kb << 52));
    double ts = y + EM_SHIFT; /* round(y) in its low bits, for |y| < 2^51 */
    int small = em_abs_below(y, 0x1p24); /* floats of 2^24 and above are even integers */
    int neg = em_ibits(x) < 0;
    double flip = em_select(small & neg, em_double(em_bits(ts) << 63), 0.0); /* -0: odd */
    *hard = ef_near_midpoint(d) | !em_abs_below(eh, 87.33) | em_is_zero(a)
            | !em_abs_below(a, INFINITY) | (neg & small & !em_is_bits(ts - EM_SHIFT, y));
    return em_double(em_bits(d) ^ em_bits(flip));
}

#endif
