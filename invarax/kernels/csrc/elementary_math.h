/* elementary_math.h - invarax's elementary functions in double precision (docs/numerics.md,
 * "Elementary functions").
 *
 * Every function is a fixed sequence of IEEE-754 double operations (+ - * /, comparisons,
 * conversions, bit manipulation) and C99 fma(), with no branches on data other than selects,
 * so the compiler can vectorise the loops that call them (elementary.c) without changing a
 * bit: the same source gives the same results on every instruction set. The file is
 * compiled with floating-point contraction off (setup.py), so each written product and sum
 * rounds where it is written.
 *
 * Each function returns its result in double; the float64 kernels return it, the float32
 * kernels round it once to float (elementary.c), after a test that the rounding cannot
 * depend on the result's error (see f32_is_hard).
 */
#ifndef INVARAX_ELEMENTARY_MATH_H
#define INVARAX_ELEMENTARY_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define EM_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define EM_INLINE static __forceinline
#else
#define EM_INLINE static inline
#endif

EM_INLINE uint64_t em_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

EM_INLINE double em_double(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 2^k for -1022 <= k <= 1023, exactly. */
EM_INLINE double em_pow2(int64_t k) { return em_double((uint64_t)(k + 1023) << 52); }

/* y * 2^k for |k| <= 2044, rounded once (two exact-power scalings; the second rounds). */
EM_INLINE double em_scale(double y, int64_t k) {
    int64_t k1 = (int64_t)((uint64_t)(k + 4096) >> 1) - 2048; /* floor(k / 2), logical shift */
    return y * em_pow2(k1) * em_pow2(k - k1);
}

/* The integer k as a double (|k| < 2^51), exactly, without an int-to-float conversion. */
EM_INLINE double em_int_to_double(int64_t k) {
    return em_double(0x4338000000000000ULL + (uint64_t)k) - 0x1.8p52;
}

EM_INLINE double em_abs(double x) { return em_double(em_bits(x) & 0x7fffffffffffffffULL); }

/* Tests on the bits, so that for a float input converted to double the compiler keeps them
 * in double lanes (a comparison it narrows to float stops the loop's vectorisation). */
EM_INLINE int64_t em_ibits(double x) { return (int64_t)em_bits(x); }
/* |x| < |bound| (false for NaN), for a positive finite bound. */
EM_INLINE int em_abs_below(double x, double bound) {
    return (em_ibits(x) & 0x7fffffffffffffffLL) < em_ibits(bound);
}
EM_INLINE int em_is_zero(double x) { return (em_bits(x) << 1) == 0; }
/* x < b for a negative b (NaNs with the sign bit set count as below: callers settle NaN). */
EM_INLINE int em_below_negative(double x, double b) {
    return em_ibits(x) < 0 && em_ibits(x) > em_ibits(b);
}
EM_INLINE int em_is_bits(double x, double b) { return em_bits(x) == em_bits(b); }
/* c ? a : b on the bits (a select of a float input converted to double also stops GCC's
 * vectorisation when written with ?:). */
EM_INLINE double em_select(int c, double a, double b) {
    uint64_t m = (uint64_t)0 - (uint64_t)(c != 0);
    return em_double((em_bits(a) & m) | (em_bits(b) & ~m));
}

/* x + x (x's NaN, quieted) where x is a NaN, else y: computed unconditionally and selected, as
 * every select here (GCC does not if-convert an arm that holds a floating-point operation,
 * which stops the loop's vectorisation). */
EM_INLINE double em_nan_or(double x, double y) { return em_select(x != x, x + x, y); }

/* m / 3 for 0 <= m < 2^32, exactly, by a multiply and a shift (0xaaaaaaab = ceil(2^33 / 3)):
 * GCC does not vectorise an integer division. */
EM_INLINE uint64_t em_div3(uint64_t m) { return (m * 0xaaaaaaabULL) >> 33; }

/* |x| with the sign of s. */
EM_INLINE double em_with_sign(double x, double s) {
    return em_double(em_bits(x) | (em_bits(s) & 0x8000000000000000ULL));
}

/* ---- exp, expm1: x = k ln2 + r, |r| <= ln2/2 (+ a little) ---------------------------- */

#define EM_INV_LN2 0x1.71547652b82fep+0
#define EM_LN2_HI 0x1.62e42fee00000p-1 /* ln 2 to 32 bits: k * EM_LN2_HI is exact */
#define EM_LN2_LO 0x1.a39ef35793c76p-33
#define EM_SHIFT 0x1.8p52 /* adding it rounds to an integer, kept in the low bits */

/* expm1(r + cr) = eh + el for |r| <= 0.35 and |cr| <= 2^-50 |r| (|el| <= ulp(eh); relative
 * error below 2^-62). */
EM_INLINE void em_expm1_poly(double r, double cr, double *eh, double *el) {
    double r2 = r * r, r2l = fma(r, r, -r2);
    double p = 0x1.ae7f3e733b81fp-41;
    p = p * r + 0x1.93974a8c07c9dp-37;
    p = p * r + 0x1.6124613a86d09p-33;
    p = p * r + 0x1.1eed8eff8d898p-29;
    p = p * r + 0x1.ae64567f544e4p-26;
    p = p * r + 0x1.27e4fb7789f5cp-22;
    p = p * r + 0x1.71de3a556c734p-19;
    p = p * r + 0x1.a01a01a01a01ap-16;
    p = p * r + 0x1.a01a01a01a01ap-13;
    p = p * r + 0x1.6c16c16c16c17p-10;
    p = p * r + 0x1.1111111111111p-7;
    p = p * r + 0x1.5555555555555p-5;
    p = p * r + 0x1.5555555555555p-3; /* p = sum_{j>=3} r^(j-3) / j! */
    double t = r2 * r * p;
    double h2 = 0.5 * r2;
    double a = r + h2, al = (r - a) + h2; /* Fast2Sum: |r| >= r^2 / 2 */
    double lo = al + (0.5 * r2l + t + cr * (1.0 + r));
    *eh = a + lo;
    *el = (a - *eh) + lo;
}

/* For |x| <= 746: k, and expm1(x - k ln2) = eh + el. */
EM_INLINE void em_expm1_reduced(double x, int64_t *k, double *eh, double *el) {
    double z = x * EM_INV_LN2 + EM_SHIFT;
    *k = (int64_t)(em_bits(z) - em_bits(EM_SHIFT));
    double kd = z - EM_SHIFT;
    double rh = x - kd * EM_LN2_HI; /* exact */
    double rl = kd * EM_LN2_LO;
    double r = rh - rl, bb = r - rh;
    double cr = (rh - (r - bb)) + (-rl - bb); /* r + cr = rh - rl exactly (TwoSum) */
    em_expm1_poly(r, cr, eh, el);
}

/* exp(x) = 2^k (ph + pl), for |x| <= 746. */
EM_INLINE void em_exp_reduced(double x, int64_t *k, double *ph, double *pl) {
    double eh, el;
    em_expm1_reduced(x, k, &eh, &el);
    *ph = 1.0 + eh;
    *pl = ((1.0 - *ph) + eh) + el; /* Fast2Sum: |eh| < 1 */
}

EM_INLINE double em_clamp_exp_arg(double x) {
    double c = em_select(x > 709.8, 709.8, x);
    return em_select(c < -746.0, -746.0, c); /* NaN stays NaN */
}

EM_INLINE double em_exp(double x) {
    int64_t k;
    double ph, pl;
    em_exp_reduced(em_clamp_exp_arg(x), &k, &ph, &pl);
    double y = em_scale(ph + pl, k); /* overflows to inf, underflows to 0 by itself */
    return em_nan_or(x, y);
}

EM_INLINE double em_expm1(double x) {
    int64_t k;
    double eh, el;
    em_expm1_reduced(em_clamp_exp_arg(x), &k, &eh, &el);
    /* k >= 1: ((1 - 2^-k) + e) 2^k, with 1 - 2^-min(k, 53) (exact) in the sum and
     * 2^-53 - 2^-k (exact to 2^-106) in the tail */
    int64_t kp = k > 53 ? 53 : (k < 1 ? 1 : k);
    int64_t kq = k > 1000 ? 1000 : (k < 1 ? 1 : k);
    double s = 1.0 - em_pow2(-kp);
    double v = s + eh, vb = v - s;
    double vl = (s - (v - vb)) + (eh - vb);
    double up = em_scale(v + ((vl + el) + (em_pow2(-kp) - em_pow2(-kq))), k);
    /* k <= -1: 2^k e + (2^k - 1) */
    int64_t kn = k < -60 ? -60 : (k > -1 ? -1 : k);
    double p2 = em_pow2(kn);
    double down = (p2 - 1.0) + (p2 * eh + p2 * el);
    double y = em_select(k == 0, eh, em_select(k > 0, up, down));
    y = em_select(em_is_zero(x), x, y); /* expm1(-0) = -0 */
    return em_nan_or(x, y);
}

#define EM_LN2 0x1.62e42fefa39efp-1
#define EM_LN2_TAIL 0x1.abc9e3b39803fp-56

EM_INLINE double em_exp2(double x) {
    double xc = em_select(x > 1024.5, 1024.5, x);
    xc = em_select(xc < -1076.0, -1076.0, xc);
    double z = xc + EM_SHIFT;
    int64_t k = (int64_t)(em_bits(z) - em_bits(EM_SHIFT));
    double r = xc - (z - EM_SHIFT); /* exact, |r| <= 1/2 */
    double rh = r * EM_LN2, rl = fma(r, EM_LN2, -rh) + r * EM_LN2_TAIL;
    double eh, el;
    em_expm1_poly(rh, rl, &eh, &el);
    double ph = 1.0 + eh, pl = ((1.0 - ph) + eh) + el;
    double y = em_scale(ph + pl, k);
    return em_nan_or(x, y);
}

/* cosh (sinh_ = 0) or sinh (sinh_ = 1). */
EM_INLINE double em_coshsinh(double x, int sinh_) {
    double ax = em_abs(x);
    int64_t k;
    double eh, el;
    em_expm1_reduced(em_select(ax > 711.0, 711.0, ax), &k, &eh, &el);
    double ph = 1.0 + eh, pl = ((1.0 - ph) + eh) + el;
    /* E/2 = 2^(k-1) (ph + pl), 1/(2E) = 2^(-k-1) (q + ql) */
    double q = 1.0 / ph, ql = (fma(-q, ph, 1.0) - q * pl) * q;
    double ah = em_scale(ph, k - 1), al = em_scale(pl, k - 1);
    double sgn = sinh_ ? -1.0 : 1.0;
    double bh = sgn * em_scale(q, -k - 1), bl = sgn * em_scale(ql, -k - 1);
    double s = ah + bh, sl = (ah - s) + bh; /* Fast2Sum: ah >= |bh| */
    double big = em_select(em_is_bits(ah, INFINITY), ah, s + (sl + (al + bl))); /* overflow */
    /* sinh, k == 0 (|x| <= 0.35): (e + e / (1 + e)) / 2, e = expm1(|x|) */
    double dh = 1.0 + eh, dl = ((1.0 - dh) + eh) + el;
    double qq = eh / dh, qql = ((fma(-qq, dh, eh) + el) - qq * dl) / dh;
    double u = eh + qq, ub = u - eh;
    double ul = (eh - (u - ub)) + (qq - ub);
    double small = 0.5 * (u + (ul + (el + qql)));
    double y = sinh_ ? em_with_sign(em_select(k == 0, small, big), x) : big;
    return em_nan_or(x, y);
}

EM_INLINE double em_sinh(double x) { return em_coshsinh(x, 1); }
EM_INLINE double em_cosh(double x) { return em_coshsinh(x, 0); }

/* ---- log, log1p: x = 2^k m, m in [sqrt(2)/2, sqrt(2)), log m = 2 atanh(f / (2 + f)) ----- */

/* k ln2 + log(1 + f) + c = lh + ll (|ll| <= ulp(lh)), where f = m - 1 (fdlibm's polynomial,
 * error below 2^-58.45). */
EM_INLINE void em_log_parts(double dk, double f, double c, double *lh, double *ll) {
    double s = f / (2.0 + f);
    double z = s * s, w = z * z;
    double t1 = w * (0x1.999999997fa04p-2 + w * (0x1.c71c51d8e78afp-3 + w * 0x1.39a09d078c69fp-3));
    double t2 = z * (0x1.5555555555593p-1 +
                     w * (0x1.2492494229359p-2 + w * (0x1.7466496cb03dep-3 + w * 0x1.2f112df3e5244p-3)));
    double r = t2 + t1, hf = 0.5 * f, hfsq = hf * f, hfsql = fma(hf, f, -hfsq);
    /* (k ln2_hi + f) - hfsq with both sums' errors kept (TwoSum), then the small terms */
    double a = dk * EM_LN2_HI, u = a + f, ub = u - a;
    double ul = (a - (u - ub)) + (f - ub);
    double v = u - hfsq, vb = v - u;
    double vl = (u - (v - vb)) + (-hfsq - vb);
    double t = (ul + vl) + ((s * (hfsq + r) + (dk * EM_LN2_LO + c)) - hfsql);
    *lh = v + t;
    *ll = (v - *lh) + t;
}

/* The exponent k and the mantissa m in [sqrt(2)/2, sqrt(2)) of a positive normal u. */
EM_INLINE double em_split(uint64_t u, int64_t *k) {
    uint64_t hx = u & 0x000fffffffffffffULL;
    uint64_t i = (hx + 0x95f6400000000ULL) & 0x0010000000000000ULL;
    *k = (int64_t)(u >> 52) - 1023 + (int64_t)(i >> 52);
    return em_double(hx | (i ^ 0x3ff0000000000000ULL));
}

/* log x = lh + ll for positive finite x (subnormals scaled by 2^54 first); the other x are
 * the callers' to settle. */
EM_INLINE void em_log_dd(double x, double *lh, double *ll) {
    int sub = em_bits(x) < 0x0010000000000000ULL; /* +0 or a positive subnormal */
    double xs = x * em_select(sub, 0x1p54, 1.0);
    int64_t k;
    double m = em_split(em_bits(xs), &k);
    k -= (int64_t)sub * 54;
    em_log_parts(em_int_to_double(k), m - 1.0, 0.0, lh, ll);
}

/* y, with log's special cases: -inf at +-0, NaN below 0, inf at inf, NaN at NaN. */
EM_INLINE double em_log_specials(double x, double y) {
    y = em_select(em_is_zero(x), -INFINITY, y);
    y = em_select((em_ibits(x) < 0) & !em_is_zero(x), NAN, y);
    y = em_select(em_is_bits(x, INFINITY), x, y);
    return em_nan_or(x, y);
}

EM_INLINE double em_log(double x) {
    double lh, ll;
    em_log_dd(x, &lh, &ll);
    return em_log_specials(x, lh);
}

EM_INLINE double em_log1p(double x) {
    double u = 1.0 + x, bb = u - 1.0;
    double c = (1.0 - (u - bb)) + (x - bb); /* 1 + x = u + c exactly (TwoSum) */
    double us = em_select(u > 0.0, u, 1.0);         /* x <= -1 is settled below */
    int64_t k;
    double m = em_split(em_bits(us), &k);
    /* k == 0: u is within [sqrt(2)/2, sqrt(2)), and f = x exactly */
    double f = em_select(k == 0, x, m - 1.0);
    double cu = c / us; /* log(u + c) = log u + c / u (+ O(2^-106)) */
    cu = em_select(k == 0, 0.0, cu);
    double y, yl;
    em_log_parts(em_int_to_double(k), f, cu, &y, &yl);
    y = em_select(em_is_zero(x), x, y); /* log1p(-0) = -0 */
    y = em_select(em_is_bits(x, -1.0), -INFINITY, y);
    y = em_select(em_below_negative(x, -1.0), NAN, y);
    y = em_select(em_is_bits(x, INFINITY), x, y);
    return em_nan_or(x, y);
}

/* ---- tanh, logistic: from exp in double-double --------------------------------------- */

EM_INLINE double em_tanh(double x) {
    double ax = em_abs(x);
    double a2 = 2.0 * em_select(ax > 40.0, 40.0, ax);
    int64_t k;
    double eh, el;
    em_expm1_reduced(a2, &k, &eh, &el);
    /* k == 0 (|x| <= 0.1733): e / (e + 2), e = expm1(2|x|) */
    double dh = 2.0 + eh, dl = ((2.0 - dh) + eh) + el;
    double q = eh / dh;
    double small = q + ((fma(-q, dh, eh) + el) - q * dl) / dh;
    /* k >= 1: 1 - 2 / (1 + E), E = exp(2|x|) = 2^k (1 + e) */
    double ph = 1.0 + eh, pl = ((1.0 - ph) + eh) + el;
    double Eh = em_scale(ph, k), El = em_scale(pl, k);
    double Dh = Eh + 1.0, Dl = ((Eh - Dh) + 1.0) + El;
    double t = 2.0 / Dh;
    double tl = (fma(-t, Dh, 2.0) - t * Dl) / Dh;
    double s = 1.0 - t, sl = (1.0 - s) - t;
    double large = s + (sl - tl);
    double y = em_with_sign(em_select(k == 0, small, large), x);
    return em_nan_or(x, y);
}

EM_INLINE double em_logistic(double x) {
    int64_t k;
    double ph, pl;
    em_exp_reduced(em_clamp_exp_arg(-em_abs(x)), &k, &ph, &pl);
    double Eh = em_scale(ph, k), El = em_scale(pl, k); /* exp(-|x|) <= 1 */
    double Dh = 1.0 + Eh, Dl = ((1.0 - Dh) + Eh) + El;
    double q1 = 1.0 / Dh;
    double pos = q1 + (fma(-q1, Dh, 1.0) - q1 * Dl) / Dh;      /* 1 / (1 + E) */
    double q2 = Eh / Dh;
    double neg = q2 + ((fma(-q2, Dh, Eh) + El) - q2 * Dl) / Dh; /* E / (1 + E) */
    double y = em_select(x < 0.0, neg, pos);
    return em_nan_or(x, y);
}

/* ---- sin, cos: x = n pi/2 + r, |r| <= pi/4 (+ a little), r = rh + rl ------------------ */

#define EM_TWO_OVER_PI 0x1.45f306dc9c883p-1
#define EM_PIO2_1 0x1.921fb54442d18p+0
#define EM_PIO2_2 0x1.1a62633145c07p-54
#define EM_PIO2_3 -0x1.f1976b7ed8fbcp-110
/* Below this |x|, em_reduce_pio2 is exact to 2^-130 absolute; above it, the
 * Payne-Hanek reduction (ef_reduce_big, elementary_scalar.h) takes over. */
#define EM_TRIG_BIG 0x1p30

EM_INLINE void em_reduce_pio2(double x, int64_t *n, double *rh, double *rl) {
    double z = x * EM_TWO_OVER_PI + EM_SHIFT;
    *n = (int64_t)(em_bits(z) - em_bits(EM_SHIFT));
    double nd = z - EM_SHIFT;
    double r1 = fma(-nd, EM_PIO2_1, x); /* exact */
    double th = nd * EM_PIO2_2, tl = fma(nd, EM_PIO2_2, -th);
    double a = r1 - th, bb = a - r1;
    double al = (r1 - (a - bb)) + (-th - bb); /* TwoSum */
    al = al - (tl + nd * EM_PIO2_3);
    *rh = a + al;
    *rl = (a - *rh) + al;
}

#define EM_SIN_C1 -0x1.5555555555555p-3

/* The sin polynomial but its last step: sin r = r + r z (EM_SIN_C1 + z em_sin_q(z)), z = r^2
 * (elementary_inverse.h's tan takes the terms apart). */
EM_INLINE double em_sin_q(double z) {
    double p = 0x1.952c77030ad4ap-49 + z * -0x1.2f49b46814157p-57;
    p = p * z - 0x1.ae7f3e733b81fp-41;
    p = p * z + 0x1.6124613a86d09p-33;
    p = p * z - 0x1.ae64567f544e4p-26;
    p = p * z + 0x1.71de3a556c734p-19;
    p = p * z - 0x1.a01a01a01a01ap-13;
    return p * z + 0x1.1111111111111p-7;
}

/* sin(rh + rl) - rh (em_sin_kernel's tail). */
EM_INLINE double em_sin_tail(double rh, double rl) {
    double z = rh * rh;
    double p = em_sin_q(z) * z + EM_SIN_C1;
    return (rh * z) * p + rl * (1.0 - 0.5 * z);
}

EM_INLINE double em_sin_kernel(double rh, double rl) { return rh + em_sin_tail(rh, rl); }

/* cos(rh + rl) = w + tail, before em_cos_kernel adds them (elementary_inverse.h's tan keeps
 * them apart). */
EM_INLINE void em_cos_parts(double rh, double rl, double *w_, double *tail) {
    double z = rh * rh;
    double zl = fma(rh, rh, -z) + 2.0 * rh * rl;
    double p = -0x1.6827863b97d97p-53 + z * 0x1.e542ba4020225p-62;
    p = p * z + 0x1.ae7f3e733b81fp-45;
    p = p * z - 0x1.93974a8c07c9dp-37;
    p = p * z + 0x1.1eed8eff8d898p-29;
    p = p * z - 0x1.27e4fb7789f5cp-22;
    p = p * z + 0x1.a01a01a01a01ap-16;
    p = p * z - 0x1.6c16c16c16c17p-10;
    p = p * z + 0x1.5555555555555p-5;
    double hz = 0.5 * z, w = 1.0 - hz;
    double wl = (1.0 - w) - hz; /* Fast2Sum */
    *w_ = w;
    *tail = (wl - 0.5 * zl) + (z * z) * p;
}

EM_INLINE double em_cos_kernel(double rh, double rl) {
    double w, tail;
    em_cos_parts(rh, rl, &w, &tail);
    return w + tail;
}

/* sin (cos_ = 0) or cos (cos_ = 1) of x = n pi/2 + rh + rl. */
EM_INLINE double em_sincos_quadrant(int64_t n, double rh, double rl, int cos_) {
    double s = em_sin_kernel(rh, rl), c = em_cos_kernel(rh, rl);
    int64_t q = (n + cos_) & 3;
    double y = em_select(q & 1, c, s);
    return em_select(q & 2, -y, y);
}

/* sin or cos for |x| < EM_TRIG_BIG (other x: a placeholder the caller replaces). */
EM_INLINE double em_sincos_small(double x, int cos_) {
    int64_t n;
    double rh, rl;
    em_reduce_pio2(em_select(em_abs_below(x, EM_TRIG_BIG), x, 0.0), &n, &rh, &rl);
    double y = em_sincos_quadrant(n, rh, rl, cos_);
    /* sin x = x for |x| < 2^-26 (correctly rounded, and the sign of zero kept) */
    int tiny = em_abs_below(x, 0x1p-26) & (cos_ == 0);
    return em_select(tiny, x, y);
}

/* ---- float32: one rounding of the double result -------------------------------------- */

/* Whether rounding y to float could differ from rounding the exact value, given that y's
 * relative error is below 2^-48 (every function above is within 2^-52). */
EM_INLINE int em_f32_is_hard(double y) {
    return (float)(y * (1.0 - 0x1p-48)) != (float)(y * (1.0 + 0x1p-48));
}

/* The float64 loop y[i] = F(x[i]) over the double arrays x, y and the n in scope. */
#define EM_LOOP_F64(F)                                                                       \
    for (ptrdiff_t i = 0; i < n; i++) y[i] = F(x[i]);

/* The float64 loop of a function with a rare range (sin, cos, tan beyond EM_TRIG_BIG), over
 * the double arrays XD, YD and the n in scope: blocks of EM_BLOCK elements computed by FAST
 * (vectorised; an element outside the range gets a placeholder) into a local buffer (so XD
 * may alias YD), a block with an element outside the range (OK false) computed again element
 * by element by FULL. Every element gets FAST's bits or FULL's, whatever its neighbours. */
#define EM_BLOCK 256
#define EM_BLOCKED_LOOP(XD, YD, FAST, OK, FULL)                                              \
    for (ptrdiff_t b = 0; b < n; b += EM_BLOCK) {                                            \
        ptrdiff_t m = n - b < EM_BLOCK ? n - b : EM_BLOCK;                                   \
        double yb[EM_BLOCK];                                                                 \
        int bad = 0;                                                                         \
        for (ptrdiff_t i = 0; i < m; i++) {                                                  \
            double v = (XD)[b + i];                                                          \
            yb[i] = FAST(v);                                                                 \
            bad |= !OK(v);                                                                   \
        }                                                                                    \
        if (bad)                                                                             \
            for (ptrdiff_t i = 0; i < m; i++) yb[i] = FULL((XD)[b + i]);                     \
        memcpy((YD) + b, yb, (size_t)m * sizeof *yb);                                        \
    }

/* |v| < EM_TRIG_BIG: the range of the trigonometric functions' fast reduction. */
#define EM_TRIG_OK(v) em_abs_below(v, EM_TRIG_BIG)

#endif
