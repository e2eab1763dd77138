/* elementary_f32_inv.h - the fast float32 paths of atan, atan2, asin, acos, tan, erf, erfc
 * and erf_inv (docs/numerics.md, "float32 fast paths"), in the style of elementary_f32.h: each float32
 * input (converted to double, exactly) is evaluated in double with one short polynomial,
 * no branch (erfcx: three polynomials, their coefficients chosen by selects), to a relative error below 2^-43 (the bound of each is derived next
 * to it; the polynomials and their approximation errors come from tools/f32_polys.py);
 * ef_near_midpoint then flags the results that may round differently from the exact value,
 * and each function also flags the inputs outside its fast range, NaN and infinities.
 * Flagged elements are redone by the exact double-double algorithm (elementary_inverse.h,
 * elementary_special.h) in elementary_more_fast.c, so every result is the correctly rounded one.
 *
 * IEEE double operations, explicit fma(), sqrt, bit operations and selects only, so the
 * loops vectorise without changing a bit.
 */
#ifndef INVARAX_ELEMENTARY_F32_INV_H
#define INVARAX_ELEMENTARY_F32_INV_H

#include "elementary_f32.h"

#define EF_TAN_PIO8 0x1.a827999fcef32p-2   /* tan(pi/8), rounded */
#define EF_PIO4 0x1.921fb54442d18p-1        /* k pi/4 for k = 1 ... 4, each rounded */
#define EF_PIO2 0x1.921fb54442d18p+0
#define EF_3PIO4 0x1.2d97c7f3321d2p+1
#define EF_PI 0x1.921fb54442d18p+1
#define EF_SQRTPI_OVER_2 0x1.c5bf891b4ef6bp-1

/* A result that is NaN or infinite, or below float's normal range (where ef_near_midpoint's
 * test does not apply): the element goes to the exact path. */
EM_INLINE int ef_not_normal(double d) {
    return (!em_abs_below(d, INFINITY)) | em_abs_below(d, 0x1p-126);
}

/* ---- atan2, atan: atan(n / m) for 0 <= n <= m, one division ------------------------- */

/* atan(t) = t + t^3 q(t^2) for |t| <= tan(pi/8) (+ a few ulp), q of degree 8 (approximation
 * error 2^-49.71); evaluated as fma(t w, q(w), t), w = t^2: w's, t w's and Horner's roundings
 * reach the t^3 q term only (at most 0.06 |t|), so the result is within 2^-49.7 + 1.4 2^-53
 * (relative) of atan of the rounded t. */
EM_INLINE double ef_atan_poly(double t) {
    double w = t * t;
    double q = fma(w, -0x1.a153ab3653f51p-6, 0x1.9ca64f5f10e39p-5);
    q = fma(w, q, -0x1.0aa848d6c5036p-4);
    q = fma(w, q, 0x1.3a56f6efa5826p-4);
    q = fma(w, q, -0x1.744f83474286bp-4);
    q = fma(w, q, 0x1.c71bd97181ff4p-4);
    q = fma(w, q, -0x1.2492473ea69c6p-3);
    q = fma(w, q, 0x1.99999993a4ad4p-3);
    q = fma(w, q, -0x1.55555555521b9p-2);
    return fma(t * w, q, t);
}

/* atan2(y, x) for float y, x (converted exactly), relative error below 2^-45.5; flagged
 * (*hard = 1): either input zero, infinite or NaN, and results below 2^-126. With
 * a = |y|, b = |x|, n = min(a, b), m = max(a, b), theta = atan(n / m) in [0, pi/4]:
 * theta = atan(t) for n <= tan(pi/8) m, t = n / m; else theta = pi/4 + atan(t),
 * t = (n - m) / (n + m) (n - m and n + m are exact: two floats whose ratio is at least 0.41;
 * |t| <= tan(pi/8)), so t rounds once (2^-53, amplified at most once by atan). The result is
 * K + s atan(t), one rounding, with K = k pi/4 rounded (k in 0 ... 4, 2^-53.6 at most) and
 * s = +-1 by the octant: theta (a <= b, x > 0), pi/2 - theta (a > b, x > 0), pi - theta
 * (a <= b, x < 0), pi/2 + theta (a > b, x < 0); the sign of y put back. |s atan(t)| and
 * K are at most twice the result (the worst: pi/4 - atan(t), atan(t) >= -pi/8), so the
 * error is below 2 (2^-49.7 + 2.4 2^-53 + 2^-53.6) + 2^-53 < 2^-45.5. a == b gives t = 0,
 * K exactly: pi/4 or 3pi/4 rounded once. */
EM_INLINE double ef_atan2(double y, double x, int *hard) {
    double a = em_abs(y), b = em_abs(x);
    int swap = em_ibits(a) > em_ibits(b);
    double n = em_select(swap, b, a), m = em_select(swap, a, b);
    int mid = em_ibits(n) > em_ibits(EF_TAN_PIO8 * m);
    double t = em_select(mid, n - m, n) / em_select(mid, n + m, m);
    double p = ef_atan_poly(t);
    int neg = em_ibits(x) < 0;
    /* K = k pi/4: k = 2 (a > b) + 4 (x < 0 and a <= b) + s (mid), s = -1 when flip */
    int flip = swap ^ neg;
    double K = em_select(swap, em_select(mid, em_select(neg, EF_3PIO4, EF_PIO4), EF_PIO2),
                         em_select(neg, em_select(mid, EF_3PIO4, EF_PI),
                                   em_select(mid, EF_PIO4, 0.0)));
    double d = em_with_sign(K + em_select(flip, -p, p), y);
    *hard = ef_near_midpoint(d) | ef_not_normal(d) | em_is_zero(y) | em_is_zero(x) |
            !em_abs_below(y, INFINITY) | !em_abs_below(x, INFINITY);
    return d;
}

/* atan(x), the same reduction with b = 1 (atan2(x, 1)), written out: with a = |x|,
 * atan a = atan(a) (a <= tan(pi/8)), pi/4 + atan((a - 1) / (a + 1)) (a < 1 / tan(pi/8),
 * a - 1 and a + 1 exact) or pi/2 + atan(-1 / a), the sign of x put back: the same error
 * bound as atan2. Flagged: NaN and +-inf (+-0 and subnormals give x, which is right). */
EM_INLINE double ef_atan(double x, int *hard) {
    double a = em_abs(x);
    int lo = !(em_ibits(a) > em_ibits(EF_TAN_PIO8));
    int hi = em_ibits(a) >= em_ibits(0x1.3504f333f9de6p+1); /* 1 / tan(pi/8), rounded */
    double num = em_select(lo, a, em_select(hi, -1.0, a - 1.0));
    double den = em_select(lo, 1.0, em_select(hi, a, a + 1.0));
    double K = em_select(lo, 0.0, em_select(hi, EF_PIO2, EF_PIO4));
    double d = em_with_sign(K + ef_atan_poly(num / den), x);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, INFINITY);
    return d;
}

/* ---- asin, acos: asin(s) = s + s^3 q(s^2) for 0 <= s <= 1/2 ---------------------------- */

/* asin(s) for z = s^2 (or within 2^-52 of it), 0 <= s <= 1/2 (+ an ulp), q of degree 9
 * (approximation error 2^-47.80): fma(s z, q(z), s), the roundings reaching the s^3 q term
 * only (at most 0.05 s): within 2^-47.8 + 1.3 2^-53 of asin(s). */
EM_INLINE double ef_asin_poly(double s, double z) {
    double q = fma(z, 0x1.0201aaa240721p-5, -0x1.dd9fd4d734bd6p-8);
    q = fma(z, q, 0x1.25578b2ad58fap-6);
    q = fma(z, q, 0x1.9b8d6a699fc40p-7);
    q = fma(z, q, 0x1.1f803788a8141p-6);
    q = fma(z, q, 0x1.6e440d3857c51p-6);
    q = fma(z, q, 0x1.f1caf56934c50p-6);
    q = fma(z, q, 0x1.6db6cc4bafda4p-5);
    q = fma(z, q, 0x1.3333335092cc6p-4);
    q = fma(z, q, 0x1.5555555541a21p-3);
    return fma(s * z, q, s);
}

/* For a = |x|: p = asin(s) with s = a (a < 1/2, z = a^2) or s = sqrt((1 - a) / 2)
 * (a >= 1/2: z = (1 - a) / 2 is exact, s rounds once, and asin's relative condition number
 * is at most 1.21 for s <= 1/2), so p is within 2^-47.8 + 2.6 2^-53 of asin(s). *big says
 * which; a > 1 gives NaN. */
EM_INLINE double ef_asin_half(double a, int *big) {
    *big = !em_abs_below(a, 0.5);
    double z = em_select(*big, 0.5 - 0.5 * a, a * a);
    return ef_asin_poly(em_select(*big, sqrt(z), a), z);
}

/* asin(x) = p (|x| < 1/2) or pi/2 - 2p (|x| >= 1/2, the result at least pi/6, so the terms
 * are at most 3 times it), the sign of x put back: error below 3 (2^-47.8 + 2.6 2^-53 +
 * 2^-53.6) + 2^-53 < 2^-45.7. Flagged: |x| > 1, NaN, results below 2^-126. */
EM_INLINE double ef_asin(double x, int *hard) {
    int big;
    double p = ef_asin_half(em_abs(x), &big);
    double d = em_with_sign(em_select(big, fma(-2.0, p, EF_PIO2), p), x);
    *hard = ef_near_midpoint(d) | (ef_not_normal(d) & !em_is_zero(x));
    return d;
}

/* acos(x) = pi/2 - s p (|x| < 1/2, s the sign of x; the result is in [pi/3, 2pi/3]),
 * 2p (x >= 1/2) or pi - 2p (x <= -1/2; the result is at least 2pi/3): the terms at most
 * 1.5 times the result, error below 1.5 (2^-47.8 + 2.6 2^-53 + 2^-53.6) + 2^-53 < 2^-46.9.
 * acos(1) = +0. Flagged: |x| > 1, NaN, results below 2^-126 other than 0. */
EM_INLINE double ef_acos(double x, int *hard) {
    int big, neg = em_ibits(x) < 0;
    double p = ef_asin_half(em_abs(x), &big);
    double K = em_select(big, em_select(neg, EF_PI, 0.0), EF_PIO2);
    double c = em_select(big, em_select(neg, -2.0, 2.0), em_select(neg, 1.0, -1.0));
    double d = fma(c, p, K);
    *hard = ef_near_midpoint(d) | (ef_not_normal(d) & !em_is_zero(d));
    return d;
}

/* ---- tan: x = n pi/2 + r, tan x = tan r (n even) or -1 / tan r (n odd) ----------------- */

/* tan for a float x, |x| < 2^20 (others, NaN included: *hard = 1), relative error below
 * 2^-47.3: the reduction of ef_sincos (r within 2^-52.9 |r| of x - n pi/2, |r| <= pi/4 +
 * 2^-20), amplified at most pi/2 times by tan (2r / sin 2r); tan r = fma(r z, q(z), r),
 * z = r^2, q of degree 11 (approximation error 2^-48.47), the roundings reaching the r^3 q
 * term only (at most 0.22 tan r): 2^-48.47 + 1.9 2^-53; -1 / tan r rounds once more.
 * The results are at least 2^-28 and at most 2^28 in magnitude for every |x| < 2^20 but tiny
 * ones, where tan x = x + x^3 q exactly as for larger x (and +-0 gives +-0). */
EM_INLINE double ef_tan(double x, int *hard) {
    double t = x * EM_TWO_OVER_PI + EM_SHIFT;
    uint64_t nb = em_bits(t) - em_bits(EM_SHIFT); /* n mod 2^64 */
    double nd = t - EM_SHIFT;
    double r = fma(-nd, EM_PIO2_2, fma(-nd, EM_PIO2_1, x));
    double z = r * r;
    double q = fma(z, 0x1.9321b04eb6b3bp-14, -0x1.3498a8917f543p-13);
    q = fma(z, q, 0x1.4b8b065ea6727p-12);
    q = fma(z, q, 0x1.5668c39c941ddp-14);
    q = fma(z, q, 0x1.5c3f7a625ef5cp-11);
    q = fma(z, q, 0x1.7775c85059111p-10);
    q = fma(z, q, 0x1.d77d685fc4a62p-9);
    q = fma(z, q, 0x1.22683078d789ap-7);
    q = fma(z, q, 0x1.664f8dc6d451cp-6);
    q = fma(z, q, 0x1.ba1b9fe8eb140p-5);
    q = fma(z, q, 0x1.111111141de44p-3);
    q = fma(z, q, 0x1.5555555551c5cp-2);
    double tr = fma(r * z, q, r);
    double d = em_select((int)(nb & 1), -1.0 / tr, tr);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, 0x1p20);
    return d;
}

/* ---- erf, erfc: x S(x^2) below 1, exp(-a^2) erfcx(a) above -------------------------- */

/* erf(x) for |x| < 1 (or within 2^-52 of such an x squared): x S(z), z = x^2, S of degree 10
 * (approximation error 2^-50.99 relative); the Horner terms shrink at least 3 times from one
 * to the next, so S's roundings add below 2^-51.5, and x S one more: within 2^-50.1. */
EM_INLINE double ef_erf_small(double x) {
    double z = x * x;
    double q = fma(z, 0x1.433e4c94d7affp-27, -0x1.45f0766358e0fp-23);
    q = fma(z, q, 0x1.b5c4692493e9fp-20);
    q = fma(z, q, -0x1.f465fb77c5f58p-17);
    q = fma(z, q, 0x1.f99bf4a691170p-14);
    q = fma(z, q, -0x1.c02d64f65be1fp-11);
    q = fma(z, q, 0x1.565bcaeed0791p-8);
    q = fma(z, q, -0x1.b82ce3016db40p-6);
    q = fma(z, q, 0x1.ce2f219ffbce5p-4);
    q = fma(z, q, -0x1.812746b0372b3p-2);
    q = fma(z, q, 0x1.20dd750429b6bp+0);
    return x * q;
}

/* erfcx(a) = exp(a^2) erfc(a): on [1, 2) and [2, 3) a polynomial in t = a - 1.5 or a - 2.5
 * (exact for a float a), on [3, 10.1] r g(v) with r = 1 / a, g a polynomial in v = r^2; the
 * coefficients of t^j or v^j (row 0: [1, 2), degree 13, relative approximation error
 * 2^-47.65; row 1: [2, 3), degree 12, 2^-48.41; row 2: [3, 10.1], degree 13, 2^-50.06),
 * chosen by selects and evaluated by one Horner loop. */
static const double EF_ERFCX[3][14] = {
    {0x1.494daffa2ad80p-2, -0x1.4f1988444ca72p-3, 0x1.37ea271bbc474p-4, -0x1.0dc51d294cf94p-5, 0x1.b65945056a93bp-7, -0x1.513ed759e7945p-8, 0x1.ee7050d89740ap-10, -0x1.5b0abf59e7211p-11, 0x1.d455787e7673dp-13, -0x1.30c22482b9b38p-14, 0x1.7eb65393d7c46p-16, -0x1.d3668d093133fp-18, 0x1.29db06da88ae5p-19, -0x1.538f3fad3314fp-21},
    {0x1.afbb3f3b7343ap-3, -0x1.3086d7f01a8dcp-4, 0x1.98958a7a8eac6p-6, -0x1.06320768d7253p-7, 0x1.435c04e1e942ep-9, -0x1.809ce7109e4eap-11, 0x1.ba8a673bd8612p-13, -0x1.edd58346f2e3dp-15, 0x1.0bcc0f2929757p-16, -0x1.1a88052b2d625p-18, 0x1.2317e9308dbaep-20, -0x1.339205ed5e36ep-22, 0x1.2cf5f3a9640a8p-24, 0x0.0p+0},
    {0x1.20dd750426d3ap-1, -0x1.20dd74fa40fd9p-2, 0x1.b14c28135b69fp-2, -0x1.0ececcd91a235p+0, 0x1.d9cd5cf498f5cp+1, -0x1.09d42601d4f39p+4, 0x1.67870600f1a16p+6, -0x1.11253169e7ad8p+9, 0x1.a838a6dce970fp+11, -0x1.2de8df60fcd0ep+14, 0x1.619a2364d88b3p+16, -0x1.317b33557ad3cp+18, 0x1.5118dd10e17bbp+19, -0x1.5f6331c2e7e97p+19},
};

/* erfcx(a) for 1 <= a <= 10.1 (others: garbage), relative error below 2^-47.3 (the
 * approximation's 2^-47.65 plus the evaluation's roundings, below 2^-51 for each row:
 * tools/f32_polys.py --erf computes the sum of |terms| over |result|). */
EM_INLINE double ef_erfcx(double a) {
    int in1 = em_ibits(a) < em_ibits(2.0), in12 = em_ibits(a) < em_ibits(3.0);
    double r = 1.0 / a;
    double t = em_select(in12, a - em_select(in1, 1.5, 2.5), r * r);
    double p = em_select(in1, EF_ERFCX[0][13], em_select(in12, EF_ERFCX[1][13], EF_ERFCX[2][13]));
    for (int j = 12; j >= 0; j--)
        p = fma(t, p, em_select(in1, EF_ERFCX[0][j], em_select(in12, EF_ERFCX[1][j], EF_ERFCX[2][j])));
    return em_select(in12, p, r * p);
}

/* erfc(a) = E erfcx(a), E = exp(-a^2) (ef_exp_core of -a^2, exact for a float a: 2^-45.3 for
 * a^2 <= 102.1, |k| <= 148 in its reduction), for 1 <= a <= 10.1: relative error below
 * 2^-45.3 + 2^-47.3 + 2^-53 < 2^-45. */
EM_INLINE double ef_erfc_big(double a, double *E) {
    *E = ef_exp_core(-(a * a));
    return *E * ef_erfcx(a);
}

/* a clamped to [1, hi] (NaN: hi). */
EM_INLINE double ef_clamp1(double a, double hi) {
    return em_select(em_abs_below(a, 1.0), 1.0, em_select(em_abs_below(a, hi), a, hi));
}

/* erf(x): x S(x^2) for |x| < 1 (2^-50.1); 1 - erfc|x| with the sign of x above (erf >= 0.84,
 * erfc <= 0.16: 2^-45 0.19 + 2^-53 < 2^-47.2; erfc(6) < 2^-55, so 1 - erfc rounds to 1 from
 * 6 on and |x| is clamped there). Flagged: NaN, +-inf, results below 2^-126 but +-0. */
EM_INLINE double ef_erf(double x, int *hard) {
    double E, c = ef_erfc_big(ef_clamp1(em_abs(x), 6.0), &E);
    double d = em_select(em_abs_below(x, 1.0), ef_erf_small(x), em_with_sign(1.0 - c, x));
    *hard = ef_near_midpoint(d) | (ef_not_normal(d) & !em_is_zero(x)) | !em_abs_below(x, INFINITY);
    return d;
}

/* erfc(x): 1 - x S(x^2) for |x| < 1 (the result at least 0.157: 2^-50.1 0.843 / 0.157 +
 * 2^-53 < 2^-47.5), erfc|x| for x >= 1 (2^-45; |x| clamped at 10.1, where erfc is below
 * 2^-149), 2 - erfc|x| for x <= -1. Flagged: NaN, +-inf, results below 2^-126 (x > 9.1). */
EM_INLINE double ef_erfc(double x, int *hard) {
    double E, c = ef_erfc_big(ef_clamp1(em_abs(x), 10.1), &E);
    double d = em_select(em_abs_below(x, 1.0), 1.0 - ef_erf_small(x),
                         em_select(em_ibits(x) < 0, 2.0 - c, c));
    *hard = ef_near_midpoint(d) | ef_not_normal(d) | !em_abs_below(x, INFINITY);
    return d;
}

/* ---- erf_inv: a first approximation to 2^-21.7, then one Halley step ------------------ */

/* erf_inv(x), |x| < 1: a = |x|, w = -log((1 - a)(1 + a)) (ef_log; the product's rounding
 * changes w by 2^-53 absolutely, which y0 does not see); y0 = a P(w) for w < 5, a Q(sqrt w)
 * above (w <= 15.95 for floats below 1), P of degree 7 on [0, 5] and Q of degree 6 on
 * [sqrt 5, 4], relative errors 2^-21.7 (tools/f32_polys.py --erf). Then Halley's step for
 * erf(y) = a: with f = erf(y0) - a and E = exp(-y0^2), f / f' = f K / E (K = sqrt(pi) / 2),
 * f'' / f' = -2y, y = y0 - f K / (E + y0 f K), which leaves C y0^2 e^3 of y0's relative error
 * e (C < 7), below 2^-58. f is erf_small(y0) - a (y0 < 1; the difference is exact, erf_small's
 * 2^-50.1 a moves y by 2^-49 y at most: erf(y) / (y erf'(y)) <= 2.03 for y <= 1) or
 * (1 - a) - E erfcx(y0) (y0 >= 1, a > 0.84: 1 - a exact; erfc's 2^-45 moves y by
 * 2^-45 erfcx(y) K <= 2^-46.4 y); E's own error only scales the correction. Relative error
 * below 2^-46.2. Flagged: |x| >= 1, NaN, results below 2^-126 but +-0. */
EM_INLINE double ef_erf_inv(double x, int *hard) {
    double a = em_abs(x);
    int hl;
    double w = -ef_log((1.0 - a) * (1.0 + a), &hl);
    double p = fma(w, 0x1.52e88d8b149eap-22, -0x1.243db7a869fc7p-17);
    p = fma(w, p, 0x1.6505e1e481c4bp-14);
    p = fma(w, p, -0x1.a940025fc5180p-13);
    p = fma(w, p, -0x1.27cc524275c34p-9);
    p = fma(w, p, 0x1.7922c8710acd5p-7);
    p = fma(w, p, 0x1.db2e048680b9ap-3);
    p = fma(w, p, 0x1.c5bf812a9455fp-1);
    double s = sqrt(w);
    double q = fma(s, 0x1.11b045a70d1c9p-10, -0x1.6e440eee5cc53p-6);
    q = fma(s, q, 0x1.9a27ce844b474p-3);
    q = fma(s, q, -0x1.eceb44af72dc6p-1);
    q = fma(s, q, 0x1.50389aea5de39p+1);
    q = fma(s, q, -0x1.6e69bdba38e17p+1);
    q = fma(s, q, 0x1.1c92a8ce62a89p+1);
    double y0 = a * em_select(em_ibits(w) < em_ibits(5.0), p, q);
    int small = em_abs_below(y0, 1.0);
    double E = ef_exp_core(-(y0 * y0)); /* y0 <= 4.5 */
    double f = em_select(small, ef_erf_small(y0) - a, (1.0 - a) - E * ef_erfcx(ef_clamp1(y0, 4.5)));
    double fk = f * EF_SQRTPI_OVER_2;
    double d = em_with_sign(y0 - fk / fma(y0, fk, E), x);
    *hard = ef_near_midpoint(d) | hl | (ef_not_normal(d) & !em_is_zero(x));
    return d;
}

#endif
