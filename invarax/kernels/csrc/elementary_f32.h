/* elementary_f32.h - the fast float32 paths of invarax's elementary functions (exp, log,
 * expm1, log1p, tanh, logistic, sin, cos, exp2, sinh, cosh; docs/numerics.md, "float32 fast
 * paths").
 *
 * Each function evaluates its float32 input (converted to double, exactly) in double with a
 * short polynomial and no table, to a relative error below 2^-43 (the bound of each is
 * derived next to it and in docs/numerics.md; the polynomials and their approximation
 * errors come from tools/f32_polys.py). ef_near_midpoint then tells whether rounding that
 * double to float could differ from rounding the exact value: only where the double lies
 * within 2^-39 (relative) of a float32 rounding boundary; each function also flags the
 * inputs outside its fast range (and NaN). Flagged elements, about 1 in 16,000 of ordinary
 * inputs, are redone by elementary.c's elem_f32_fix (the 2^-52 algorithm of
 * elementary_math.h and the hard-case table), so every result is the correctly rounded one
 * (tools/exhaustive_f32.py checks all 2^32 inputs).
 *
 * Like elementary_math.h: IEEE double operations, explicit fma(), bit operations and
 * selects, no data-dependent branches, so the loops vectorise without changing a bit.
 */
#ifndef INVARAX_ELEMENTARY_F32_H
#define INVARAX_ELEMENTARY_F32_H

#include "elementary_math.h"

/* Whether a value within 2^-39 |d| of d may round to a float other than (float)d, for a d
 * in float's normal range (or a float itself: callers keep to inputs whose results are):
 * whether d lies within 2^14 of its ulps of a float32 rounding boundary, which in d's
 * binade is where its 29 low bits are 2^28. */
#define EF_MID_WIDTH 0x8000ULL
EM_INLINE uint64_t ef_mid_key(double d) {
    return (em_bits(d) & 0x1fffffffULL) - (0x10000000ULL - 0x4000ULL);
}
EM_INLINE int ef_near_midpoint(double d) { return ef_mid_key(d) < EF_MID_WIDTH; }

/* The loops (elementary_loops.h) first scan a block without flagging each element: the
 * minimum of ef_mid_key over the block tells whether an element is near a boundary, and
 * the maximum of a key of the float inputs' bits whether one is outside the fast range:
 * ef_abs_key with the function's bound (|x| >= bound, or NaN), ef_log_key (not a positive
 * normal float), ef_log1p_key (x <= -1, +inf or NaN). Each is exactly the per-element
 * flag's range test. */
EM_INLINE uint32_t ef_fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
EM_INLINE float ef_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
EM_INLINE uint32_t ef_abs_key(uint32_t fb) { return fb & 0x7fffffffu; }
EM_INLINE int ef_abs_out(uint32_t key, double bound) {
    return !em_abs_below((double)ef_float(key), bound);
}
EM_INLINE uint32_t ef_log_key(uint32_t fb) { return fb - 0x00800000u; }
EM_INLINE int ef_log_key_out(uint32_t key) { return key >= 0x7f000000u; }
/* positive x: its bits; negative x: |x|'s bits + 2^30, so -1 < x < inf is key < inf's bits */
EM_INLINE uint32_t ef_log1p_key(uint32_t fb) {
    return (fb >> 31) ? (fb & 0x7fffffffu) + 0x40000000u : fb;
}
EM_INLINE int ef_log1p_key_out(uint32_t key) { return key >= 0x7f800000u; }

/* ---- exp: x = k ln2 + r, exp x = 2^k exp(r) ------------------------------------------- */

/* 2^k and exp(r) = 1 + r (1 + r q(r)) for x = k ln2 + r, |x| < 87.34: exp x = 2^k p, with
 * p's relative error below 2^-45.4: |r| <= ln2/2 (+2^-45); r's error below 126 2^-55.3 +
 * 2^-55 = 2^-48.2 (|k| <= 126, ln 2's rounding below 2^-55.3, fma rounds once; r = x
 * exactly when k = 0); the polynomial's 2^-45.65 and its last two roundings (2^-53 each).
 * *u = r (1 + r q(r)) = expm1(r), within 2^-45.5 of it (relatively). Other x: garbage,
 * which the callers flag. */
EM_INLINE double ef_exp_parts(double x, uint64_t *kb, double *u) {
    double t = x * EM_INV_LN2 + EM_SHIFT;
    *kb = em_bits(t) - em_bits(EM_SHIFT); /* k mod 2^64 */
    double kd = t - EM_SHIFT;
    double r = fma(-kd, EM_LN2, x);
    double q = fma(r, 0x1.7101794873482p-19, 0x1.a16e3fdee31f5p-16);
    q = fma(r, q, 0x1.a01b73a18b3c3p-13);
    q = fma(r, q, 0x1.6c163bded9cf1p-10);
    q = fma(r, q, 0x1.1111108e1d274p-7);
    q = fma(r, q, 0x1.5555557df39a9p-5);
    q = fma(r, q, 0x1.5555555589f85p-3);
    q = fma(r, q, 0x1.fffffffff13d2p-2);
    double a = fma(r, q, 1.0);
    *u = r * a;
    return fma(r, a, 1.0);
}

/* exp(x) for |x| < 87.34 (2^k p, the scaling exact), relative error below 2^-45.4. */
EM_INLINE double ef_exp_core(double x) {
    uint64_t kb;
    double u, p = ef_exp_parts(x, &kb, &u);
    return em_double(em_bits(p) + (kb << 52));
}

/* expm1(x) for |x| < 87.34, relative error below 2^-43.6: with s = 2^k, fma(s, u, s - 1)
 * rounds s (1 + u) - 1 once (s - 1 is exact for |k| <= 53; below, -1 is within 2^-54 of
 * it, and the result is within 2^-54 of -1). It is u itself when k = 0 (r = x exactly,
 * but for the sign of a zero u: ef_expm1_value puts x's sign back). 1 + u, summed exactly,
 * is at least as close to exp(r) as ef_exp_parts' p (u rounds at 2^-53 |u| < 2^-53 p), so
 * within 2^-45.4 of it, relatively; s (1 + u) - 1 amplifies that at most (e + 1) / |e|
 * times, below 3.42 (k >= 1: e >= sqrt(2) - 1; k <= -1: e <= 1/sqrt(2) - 1), and the fma
 * rounds once: 3.42 2^-45.4 + 2^-53 < 2^-43.6. */
EM_INLINE double ef_expm1_core(double x) {
    uint64_t kb;
    double u;
    (void)ef_exp_parts(x, &kb, &u);
    double s = em_double(em_bits(1.0) + (kb << 52));
    return fma(s, u, s - 1.0);
}

/* expm1 itself: ef_expm1_core with x's sign (expm1 has the sign of x: only -0 needs it). */
EM_INLINE double ef_expm1_value(double x) { return em_with_sign(ef_expm1_core(x), x); }

/* exp's own fast path: x = (16 k + j) ln2/16 + r, exp x = 2^k 2^(j/16) exp(r), |r| <= ln2/32
 * (+2^-40), for |x| < 87.34, relative error below 2^-46: N = 16 k + j = round(x 16/ln2)
 * (|N| <= 2016; the fma's rounding only moves r within the slack); r = x - N LN2_16 by one
 * fma, exact but for its rounding (2^-53 |r| <= 2^-58.5) and LN2_16's error (|N| 2^-59.26
 * <= 2^-48.3); exp(r) = 1 + r (1 + r q(r)), q of degree 3 (tools/f32_polys.py "exp16":
 * 2^-47.21), whose last two fmas round at 2^-53 |r| and 2^-53; EF_EXP_TAB[j] is 2^(j/16)
 * rounded (2^-53) and the product rounds once (2^-53); 2^k is put in the exponent exactly.
 * Sum: below 2^-46.0. Other x: garbage, which the callers flag. (elementary_f32_avx512.h
 * computes the same value with the table in registers.) */
static const double EF_EXP_TAB[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0};
#define EF_EXP16_C 0x1.71547652b82fep+4 /* 16/ln2 */
#define EF_LN2_16 0x1.62e42fefa39efp-5  /* ln2/16 */
#define EF_EXP16_Q0 0x1.fffffffdc0145p-2
#define EF_EXP16_Q1 0x1.555555576ac9ap-3
#define EF_EXP16_Q2 0x1.55573b7509d59p-5
#define EF_EXP16_Q3 0x1.11108d1f1f161p-7
EM_INLINE double ef_exp_value(double x) {
    double t = fma(x, EF_EXP16_C, EM_SHIFT);
    uint64_t nb = em_bits(t) - em_bits(EM_SHIFT); /* N mod 2^64 */
    double nd = t - EM_SHIFT;
    double r = fma(-nd, EF_LN2_16, x);
    double q = fma(r, EF_EXP16_Q3, EF_EXP16_Q2);
    q = fma(r, q, EF_EXP16_Q1);
    q = fma(r, q, EF_EXP16_Q0);
    double p = fma(r, fma(r, q, 1.0), 1.0);
    double y = EF_EXP_TAB[nb & 15] * p;
    return em_double(em_bits(y) + ((nb >> 4) << 52)); /* k = floor(N / 16), mod 2^12 */
}

/* Where exp's float result may be outside the normal range (|x| >= 87.33: exp(-87.3366) is
 * 2^-126) or x is NaN, the element is flagged; elem_f32_fix settles it. */
#define EF_EXP_BOUND 87.33
EM_INLINE double ef_exp(double x, int *hard) {
    double d = ef_exp_value(x);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, EF_EXP_BOUND);
    return d;
}

/* ---- log: x = 2^k z, z in [OFF, 2 OFF), log z = 2 atanh(s), s = (z - 1) / (z + 1) ------ */

#define EF_LOG_OFF 0x3fe6600000000000ULL /* bits of 0.69921875 */

/* x = 2^k z for a positive double x, z in [OFF, 2 OFF): z (exact) into *z, and k (exact, a
 * double). Shared by log's fast path and pow's double-double log (elementary_f32_more.h). */
EM_INLINE double ef_log_split(double x, double *z) {
    uint64_t tb = em_bits(x) - EF_LOG_OFF + (1024ULL << 52); /* > 0 for every positive x */
    uint64_t kb = (tb >> 52) - 1024;                         /* k mod 2^64 */
    *z = em_double(em_bits(x) - (kb << 52));
    return em_double(em_bits(EM_SHIFT) + kb) - EM_SHIFT; /* exact, |k| < 2^11 */
}

/* log(x) = k ln2 + log z for z in [OFF, 2 OFF) and k (exact), relative error below 2^-44.0
 * where x = 2^k z is a positive normal float (the callers flag the others):
 * z - 1 is exact, s has a relative error below 2^-52 (two roundings), |s| <= 0.17701; the
 * polynomial's 2^-44.26 and the roundings of 2s + 2s w P(w); for k != 0, |log x| >= 0.33
 * and |log z| <= 0.358, so k ln2's error (|k| 2^-55.3) and the last rounding add 2^-53. */
#define EF_LOG_P4 0x1.9305cdf489208p-4
#define EF_LOG_P3 0x1.c60a02ef4d35ap-4
#define EF_LOG_P2 0x1.249471fc5ed4ap-3
#define EF_LOG_P1 0x1.999995d0c70a9p-3
#define EF_LOG_P0 0x1.55555556688fep-2
EM_INLINE double ef_log_reduced(double z, double kd) {
    double s = (z - 1.0) / (z + 1.0);
    double s2 = s + s, w = s * s;
    double p = fma(w, EF_LOG_P4, EF_LOG_P3);
    p = fma(w, p, EF_LOG_P2);
    p = fma(w, p, EF_LOG_P1);
    p = fma(w, p, EF_LOG_P0);
    return fma(kd, EM_LN2, fma(s2 * w, p, s2));
}

/* log(x) for a double x (ef_log: the others than positive normal floats get *hard = 1;
 * ef_log_value: garbage for them). */
EM_INLINE double ef_log_value(double x) {
    double z, kd = ef_log_split(x, &z);
    return ef_log_reduced(z, kd);
}

/* Whether x is outside log's fast range: not a positive normal float (2^-126 <= x < 2^128). */
EM_INLINE int ef_log_out(double x) {
    int64_t ib = em_ibits(x);
    return !((ib >= (int64_t)(897ULL << 52)) & (ib < (int64_t)(1151ULL << 52)));
}

EM_INLINE double ef_log(double x, int *hard) {
    double d = ef_log_value(x);
    *hard = ef_log_out(x) | ef_near_midpoint(d);
    return d;
}

/* log's own loops: the same z and k as ef_log_split's, from the float's bits (a positive
 * normal float's fields are the double's, shifted: fb - OFF32 is (bits - OFF) / 2^29), in
 * 32-bit lanes, twice as many per vector as 64-bit ones; so the same result as ef_log_value
 * for every positive normal float. Others: garbage (fb - OFF32 fits an int32 for every fb,
 * so k is some integer), flagged by ef_log_key. */
#define EF_LOG_OFF32 0x3f330000u /* bits of 0.69921875 as a float */
EM_INLINE double ef_log_value_f32(float x) {
    uint32_t fb = ef_fbits(x);
    int32_t k = (int32_t)(fb - EF_LOG_OFF32) >> 23; /* arithmetic shift (GCC, Clang, MSVC) */
    return ef_log_reduced((double)ef_float(fb - ((uint32_t)k << 23)), (double)k);
}

EM_INLINE double ef_log_f32(float x, int *hard) {
    double d = ef_log_value_f32(x);
    *hard = ef_log_key_out(ef_log_key(ef_fbits(x))) | ef_near_midpoint(d);
    return d;
}

/* log1p for a float x > -1 (others: *hard = 1), relative error below 2^-44.0: for
 * 2^-29 <= |x| < 2^29, u = 1 + x is exact and log1p x = log u; above, u rounds (2^-53) but
 * log u >= 20, so the absolute 2^-53 is relatively below 2^-57; below, log1p x = x - x^2/2
 * + ... rounds to x (|x|/2 < 2^-30 is far below half a float ulp), the sign of 0 kept. */
EM_INLINE double ef_log1p_value(double x) {
    return em_select(em_abs_below(x, 0x1p-29), x, ef_log_value(1.0 + x));
}

/* Whether x is outside log1p's fast range: not above -1, +inf or NaN. */
EM_INLINE int ef_log1p_out(double x) {
    return (!em_abs_below(x, 0x1p-29)) & ef_log_out(1.0 + x);
}

EM_INLINE double ef_log1p(double x, int *hard) {
    double d = ef_log1p_value(x);
    *hard = ef_log1p_out(x) | ef_near_midpoint(d);
    return d;
}

/* ---- sin, cos: x = n pi/2 + r, |r| <= pi/4 (+2^-20), for |x| < 2^20 ------------------- */

/* sin (cos_ = 0) or cos (cos_ = 1) for a float x, |x| < 2^20 (ef_sincos: others, NaN
 * included, get *hard = 1), relative error below 2^-42.7: r1 = fma(-n, PIO2_1, x) is exact
 * (both are multiples of 2^-52 and |r1| < 1); r = r1 - n PIO2_2 rounds once, and PIO2_1 +
 * PIO2_2 is pi/2 to 2^-107, so r is within 2^-53 |r| + 2^-87 of x - n pi/2, below
 * 2^-52.9 |r| since |x - n pi/2| >= 2^-27.83 for every float 0 < |x| < 2^20
 * (tools/f32_polys.py --trig); the polynomials' 2^-47.37 (sin) and 2^-42.80 (cos) and
 * their roundings. sin x = x for |x| < 2^-12 (correctly rounded there, and the sign of
 * zero kept). (Evaluating one polynomial per lane, its terms selected by the quadrant, was
 * slower with GCC's vectorisation: the selects cost more than the second polynomial; the
 * AVX-512 scan, elementary_f32_avx512.h, does so with mask blends.) */
#define EF_TRIG_BOUND 0x1p20
#define EF_SIN_S5 -0x1.a961a0b808b09p-26
#define EF_SIN_S4 0x1.71d76d145df37p-19
#define EF_SIN_S3 -0x1.a019f93964ecep-13
#define EF_SIN_S2 0x1.1111110c87308p-7
#define EF_SIN_S1 -0x1.5555555552239p-3
#define EF_COS_C4 -0x1.241e9be166fa7p-22
#define EF_COS_C3 0x1.a010decf0da8bp-16
#define EF_COS_C2 -0x1.6c16b82a13144p-10
#define EF_COS_C1 0x1.5555554ed982cp-5
#define EF_SIN_TINY 0x1p-12
EM_INLINE double ef_sincos_value(double x, int cos_) {
    double t = x * EM_TWO_OVER_PI + EM_SHIFT;
    uint64_t nb = em_bits(t) - em_bits(EM_SHIFT); /* n mod 2^64 */
    double nd = t - EM_SHIFT;
    double r = fma(-nd, EM_PIO2_2, fma(-nd, EM_PIO2_1, x));
    double z = r * r;
    double sp = fma(z, EF_SIN_S5, EF_SIN_S4);
    sp = fma(z, sp, EF_SIN_S3);
    sp = fma(z, sp, EF_SIN_S2);
    sp = fma(z, sp, EF_SIN_S1);
    double s = fma(r * z, sp, r);
    double cp = fma(z, EF_COS_C4, EF_COS_C3);
    cp = fma(z, cp, EF_COS_C2);
    cp = fma(z, cp, EF_COS_C1);
    double c = fma(z * z, cp, 1.0 - 0.5 * z);
    uint64_t q = nb + (uint64_t)cos_;
    double y = em_double(em_bits(em_select((int)(q & 1), c, s)) ^ ((q & 2) << 62));
    if (!cos_) y = em_select(em_abs_below(x, EF_SIN_TINY), x, y);
    return y;
}

EM_INLINE double ef_sincos(double x, int cos_, int *hard) {
    double y = ef_sincos_value(x, cos_);
    *hard = ef_near_midpoint(y) | !em_abs_below(x, EF_TRIG_BOUND);
    return y;
}

/* ---- the functions of exp ------------------------------------------------------------- */

/* expm1 for a float x, |x| < 87.34 (others, NaN included: *hard = 1): 2^-43.6. */
#define EF_EXPM1_BOUND 87.34
EM_INLINE double ef_expm1(double x, int *hard) {
    double d = ef_expm1_value(x);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, EF_EXPM1_BOUND);
    return d;
}

/* 2^x for a float x, |x| < 126 (others: *hard = 1), relative error below 2^-45.3: x = k + f,
 * k = round(x), f exact, |f| <= 1/2; f ln2 = f * LN2 rounds once (2^-53 |f ln2|, below
 * 2^-54.5 absolute) and LN2's error adds 2^-55.3 |f|; then exp's 2^-45.4 (r = f ln2, k = 0
 * in its reduction) times 2^k, exactly. Integer x give exact powers of two. */
#define EF_EXP2_BOUND 126.0
EM_INLINE double ef_exp2_value(double x) {
    double t = x + EM_SHIFT;
    uint64_t kb = em_bits(t) - em_bits(EM_SHIFT);
    return em_double(em_bits(ef_exp_core((x - (t - EM_SHIFT)) * EM_LN2)) + (kb << 52));
}

EM_INLINE double ef_exp2(double x, int *hard) {
    double d = ef_exp2_value(x);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, EF_EXP2_BOUND);
    return d;
}

/* logistic(x) = 1 / (1 + exp(-x)) for a float x, |x| < 87.33 (others: *hard = 1), relative
 * error below 2^-44.9: E = exp(-|x|) <= 1 (2^-45.4), then 1 / (1 + E) (x >= 0) or
 * E / (1 + E) (x < 0, or -0): 1 + E rounds once and does not amplify E's error, the quotient
 * rounds once. */
#define EF_LOGISTIC_BOUND 87.33
EM_INLINE double ef_logistic_value(double x) {
    double e = ef_exp_core(-em_abs(x));
    return em_select(em_ibits(x) < 0, e, 1.0) / (1.0 + e);
}

EM_INLINE double ef_logistic(double x, int *hard) {
    double d = ef_logistic_value(x);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, EF_LOGISTIC_BOUND);
    return d;
}

/* sinh (sinh_ = 1) or cosh (sinh_ = 0) for a float x, |x| < 87.34 (others: *hard = 1),
 * relative error below 2^-43: cosh = (E + 1/E) / 2, E = exp(|x|) (2^-45.4; no cancellation);
 * sinh |x| = (e + e / (e + 1)) / 2, e = expm1(|x|) (2^-43.6; all terms positive), the sign
 * of x put back. */
#define EF_COSHSINH_BOUND 87.34
EM_INLINE double ef_coshsinh_value(double x, int sinh_) {
    double ax = em_abs(x), d;
    if (sinh_) {
        double e = ef_expm1_core(ax);
        d = em_with_sign(0.5 * (e + e / (e + 1.0)), x);
    } else {
        double e = ef_exp_core(ax);
        d = 0.5 * (e + 1.0 / e);
    }
    return d;
}

EM_INLINE double ef_coshsinh(double x, int sinh_, int *hard) {
    double d = ef_coshsinh_value(x, sinh_);
    *hard = ef_near_midpoint(d) | !em_abs_below(x, EF_COSHSINH_BOUND);
    return d;
}

/* ---- tanh: e / (e + 2), e = expm1(2|x|), the sign of x put back ------------------------- */

/* tanh for a float x, |x| < 43.5 (others, NaN included: *hard = 1), relative error below
 * 2^-46.5. y = 2|x| (exact, < 87) is reduced as in ef_exp_value, y = N ln2/16 + r, N >= 0,
 * |r| <= ln2/32 (+2^-40), r within 2^-53 |r| + N 2^-59.26 (<= 2^-48.3) of y - N ln2/16 and
 * r = y for N = 0; u = r (1 + r q(r)) is expm1(r) within 2^-50.03 relatively (q of degree 4
 * fitted to expm1's relative error: tools/f32_polys.py "tanh_expm1"; exp's 2^-47.21 is
 * relative to exp(r), 2^-40.5 for expm1 near 0) and its two roundings; with s = 2^k T[j]
 * (T[j] = EF_EXP_TAB[j] within 2^-53 of 2^(j/16), 2^k put in the exponent, N = 16k + j),
 * e = fma(s, u, s - 1): for N = 0, s = 1 and e = u exactly (2^-49.7); for N >= 1, E =
 * exp(y) >= 1.0219 and E / (E - 1) <= 46.7, so T[j]'s rounding gives 46.7 2^-53 = 2^-47.45,
 * u's error 2^-49.7, r's error at most 2^-48.3 (where N is large, E / (E - 1) is near 1),
 * s - 1's rounding (|s - 1| <= 2.03 e) 2^-52 and the fma's 2^-53: below 2^-46.6 in all;
 * e + 2 and the quotient round once each and e / (e + 2) does not amplify e's relative
 * error. (Before 2026-12, e was ef_expm1_core's, 2^-43.5 in all: 13 operations more per
 * element, the same float results.) */
#define EF_TANH_BOUND 43.5
#define EF_TANH_E0 0x1.fffffffffffecp-2
#define EF_TANH_E1 0x1.55555554afd10p-3
#define EF_TANH_E2 0x1.555555567407dp-5
#define EF_TANH_E3 0x1.1112276bdc005p-7
#define EF_TANH_E4 0x1.6c16965968f00p-10
EM_INLINE double ef_tanh_value(double x) {
    double y = em_abs(x) * 2.0;
    double t = fma(y, EF_EXP16_C, EM_SHIFT);
    uint64_t nb = em_bits(t) - em_bits(EM_SHIFT);
    double nd = t - EM_SHIFT;
    double r = fma(-nd, EF_LN2_16, y);
    double q = fma(r, EF_TANH_E4, EF_TANH_E3);
    q = fma(r, q, EF_TANH_E2);
    q = fma(r, q, EF_TANH_E1);
    q = fma(r, q, EF_TANH_E0);
    double u = r * fma(r, q, 1.0);
    double s = em_double(em_bits(EF_EXP_TAB[nb & 15]) + ((nb >> 4) << 52));
    double e = fma(s, u, s - 1.0);
    return em_with_sign(e / (e + 2.0), x);
}

EM_INLINE double ef_tanh(double x, int *hard) {
    double y = ef_tanh_value(x);
    *hard = ef_near_midpoint(y) | !em_abs_below(x, EF_TANH_BOUND);
    return y;
}

#endif
