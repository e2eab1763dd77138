/* elementary_inverse.h - invarax's log2, log10, asinh, acosh, atanh, atan, asin, acos, tan
 * and cbrt in double precision (docs/numerics.md, "Elementary functions"), on top of
 * elementary_math.h.
 *
 * Each function computes its result as a double-double hi + lo (relative error below 2^-57)
 * and returns hi + lo rounded once: within 1 ulp in float64, and within 2^-52 relative for
 * elementary_more.c's float32 rounding test (em_f32_is_hard, which assumes 2^-48). Only
 * IEEE operations, sqrt and fma; compiled with contraction off (setup.py).
 */
#ifndef INVARAX_ELEMENTARY_INVERSE_H
#define INVARAX_ELEMENTARY_INVERSE_H

#include "elementary_math.h"

/* ---- double-double steps ------------------------------------------------------------- */

/* s + e = a + b exactly (TwoSum). */
EM_INLINE void ei_two_sum(double a, double b, double *s, double *e) {
    double t = a + b, bb = t - a;
    *e = (a - (t - bb)) + (b - bb);
    *s = t;
}

/* s + e = a + b exactly, for |a| >= |b| or a == 0 (Fast2Sum). */
EM_INLINE void ei_fast_two_sum(double a, double b, double *s, double *e) {
    double t = a + b;
    *e = (a - t) + b;
    *s = t;
}

/* (ah + al) / (bh + bl) = qh + ql (relative error below 2^-104 + 2^-53 |ql / qh|). */
EM_INLINE void ei_div(double ah, double al, double bh, double bl, double *qh, double *ql) {
    double q = ah / bh;
    *ql = ((fma(-q, bh, ah) + al) - q * bl) / bh;
    *qh = q;
}

/* sqrt(sh + sl) = rh + rl for sh > 0 (one Newton correction of the rounded root). */
EM_INLINE void ei_sqrt(double sh, double sl, double *rh, double *rl) {
    double r = sqrt(sh);
    *rl = (fma(-r, r, sh) + sl) / (2.0 * r);
    *rh = r;
}

/* log(wh + wl) + kx ln2 = lh + ll for a positive normal wh and |wl| <= ulp(wh): em_log_parts
 * with the correction log(1 + wl / wh) = wl / wh (+ O(2^-106)). */
EM_INLINE void ei_log_dd(double wh, double wl, double kx, double *lh, double *ll) {
    int64_t k;
    double m = em_split(em_bits(wh), &k);
    em_log_parts(em_int_to_double(k) + kx, m - 1.0, wl / wh, lh, ll);
}

/* ---- log2, log10: x = 2^k m, m in [sqrt(2)/2, sqrt(2)) ------------------------------- */

#define EI_INV_LN2_HI 0x1.71547652b82fep+0
#define EI_INV_LN2_LO 0x1.777d0ffda0d24p-56
#define EI_INV_LN10_HI 0x1.bcb7b1526e50ep-2
#define EI_INV_LN10_LO 0x1.95355baaafad3p-57
#define EI_LG2_HI 0x1.34413509f7800p-2 /* log10(2) to 42 bits: k * EI_LG2_HI is exact */
#define EI_LG2_LO 0x1.fef311f12b358p-46

/* For positive finite x: k (as a double) and log m = lh + ll (subnormals scaled by 2^54). */
EM_INLINE double ei_log_mantissa(double x, double *lh, double *ll) {
    int sub = em_bits(x) < 0x0010000000000000ULL;
    int64_t k;
    double m = em_split(em_bits(x * em_select(sub, 0x1p54, 1.0)), &k);
    em_log_parts(0.0, m - 1.0, 0.0, lh, ll);
    return em_int_to_double(k - (int64_t)sub * 54);
}

/* k + log(m) / ln(base): k_scaled + (lh + ll) (ih + il), |log m / ln base| <= |k_scaled| / 2 or
 * k == 0. */
EM_INLINE double ei_log_base(double x, double kh, double kl, double lh, double ll, double ih,
                             double il) {
    double th = lh * ih, tl = fma(lh, ih, -th) + (lh * il + ll * ih);
    double s, e;
    ei_two_sum(kh, th, &s, &e);
    return em_log_specials(x, s + (e + (kl + tl)));
}

EM_INLINE double ei_log2(double x) {
    double lh, ll, k = ei_log_mantissa(x, &lh, &ll);
    return ei_log_base(x, k, 0.0, lh, ll, EI_INV_LN2_HI, EI_INV_LN2_LO);
}

EM_INLINE double ei_log10(double x) {
    double lh, ll, k = ei_log_mantissa(x, &lh, &ll);
    return ei_log_base(x, k * EI_LG2_HI, k * EI_LG2_LO, lh, ll, EI_INV_LN10_HI, EI_INV_LN10_LO);
}

/* ---- asinh, acosh, atanh: log of a double-double argument ---------------------------- */

#define EI_BIG 0x1p28  /* above it asinh x = log(2x) and acosh x = log(2x) within 2^-58 */
#define EI_TINY 0x1p-28 /* below it asinh, atanh, atan, asin and tan of x round to x */

/* log(a + sqrt(a^2 + sgn)) for sgn = 1 (asinh, 0 <= a <= EI_BIG) or -1 (acosh, 1 < a <= EI_BIG),
 * with a^2 + sgn = sh + sl exactly (to 2^-106) and the root and the sum kept double-double. */
EM_INLINE double ei_log_hypot(double a, double sgn) {
    double a2 = a * a, a2l = fma(a, a, -a2);
    double sh, sl, rh, rl, wh, wl, lh, ll;
    ei_two_sum(a2, sgn, &sh, &sl);
    ei_sqrt(sh, sl + a2l, &rh, &rl);
    ei_two_sum(a, rh, &wh, &wl);
    ei_log_dd(wh, wl + rl, 0.0, &lh, &ll);
    return lh;
}

/* log(2 a) for a >= EI_BIG (finite). */
EM_INLINE double ei_log_twice(double a) {
    double lh, ll;
    ei_log_dd(a, 0.0, 1.0, &lh, &ll);
    return lh;
}

EM_INLINE double ei_asinh(double x) {
    double a = em_abs(x);
    double big = ei_log_twice(em_select(a < INFINITY, a, 1.0)), mid = ei_log_hypot(a, 1.0);
    double y = em_select(a > EI_BIG, big, mid);
    y = em_select(a < EI_TINY, a, y);
    y = em_select(a == INFINITY, a, y);
    return em_nan_or(x, em_with_sign(y, x));
}

EM_INLINE double ei_acosh(double x) {
    double big = ei_log_twice(em_select(x < INFINITY, x, 1.0));
    double y = em_select(x > EI_BIG, big, ei_log_hypot(em_select(x > 1.0, x, 2.0), -1.0));
    y = em_select(x == INFINITY, x, y);
    y = em_select(x == 1.0, 0.0, y);
    y = em_select(x < 1.0, NAN, y);
    return em_nan_or(x, y);
}

EM_INLINE double ei_atanh(double x) {
    double a = em_abs(x), ac = em_select(a < 1.0, a, 0.5);
    double uh, ul, vh, vl, ph, pl, qh, ql, dh, dl;
    ei_two_sum(1.0, ac, &uh, &ul);
    ei_two_sum(1.0, -ac, &vh, &vl);
    ei_log_dd(uh, ul, 0.0, &ph, &pl); /* log(1 + a) */
    ei_log_dd(vh, vl, 0.0, &qh, &ql); /* log(1 - a) */
    ei_two_sum(ph, -qh, &dh, &dl);
    double y = 0.5 * (dh + (dl + (pl - ql)));
    y = em_select(a < EI_TINY, a, y);
    y = em_select(a == 1.0, INFINITY, y);
    y = em_select(a > 1.0, NAN, y);
    return em_nan_or(x, em_with_sign(y, x));
}

/* ---- atan, asin, acos: atan(z) = atan(c) + atan((z - c) / (1 + z c)), c = i / 64 -------- */

/* atan(i / 64) = EI_ATAN[i][0] + EI_ATAN[i][1] (to 2^-106), i = 0 ... 64. */
static const double EI_ATAN[65][2] = {
    {0x0.0p+0, 0x0.0p+0},
    {0x1.fff555bbb729bp-7, -0x1.220c39d4dff50p-61},
    {0x1.ffd55bba97625p-6, -0x1.5ec431444912cp-60},
    {0x1.7fb818430da2ap-5, -0x1.86ef8f794f105p-63},
    {0x1.ff55bb72cfdeap-5, -0x1.c934d86d23f1dp-60},
    {0x1.3f59f0e7c559dp-4, 0x1.ac4ce285df847p-58},
    {0x1.7ee182602f10fp-4, -0x1.cfb654c0c3d98p-58},
    {0x1.be39ebe6f07c3p-4, 0x1.f7b8f29a05987p-58},
    {0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59},
    {0x1.1e1fafb043727p-3, -0x1.b485914dacf8cp-59},
    {0x1.3d6eee8c6626cp-3, 0x1.61a3b0ce9281bp-57},
    {0x1.5c9811e3ec26ap-3, -0x1.054ab2c010f3dp-58},
    {0x1.7b97b4bce5b02p-3, 0x1.347b0b4f881cap-58},
    {0x1.9a6a8e96c8626p-3, 0x1.cf601e7b4348ep-59},
    {0x1.b90d7529260a2p-3, 0x1.17b10d2e0e5abp-61},
    {0x1.d77d5df205736p-3, 0x1.c648d1534597ep-57},
    {0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57},
    {0x1.09dc597d86362p-2, 0x1.62e47390cb865p-56},
    {0x1.18bf5a30bf178p-2, 0x1.30ca4748b1bf9p-57},
    {0x1.278372057ef46p-2, -0x1.077cdd36dfc81p-56},
    {0x1.362773707ebccp-2, -0x1.963a544b672d8p-57},
    {0x1.44aa436c2af0ap-2, -0x1.5d5e43c55b3bap-56},
    {0x1.530ad9951cd4ap-2, -0x1.2566480884082p-57},
    {0x1.614840309cfe2p-2, -0x1.a725715711f00p-56},
    {0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56},
    {0x1.7d5604b63b3f7p-2, 0x1.69c885c2b249ap-56},
    {0x1.8b24d394a1b25p-2, 0x1.b6d0ba3748fa8p-56},
    {0x1.98cd5454d6b18p-2, 0x1.9e6c988fd0a77p-56},
    {0x1.a64eec3cc23fdp-2, -0x1.24dec1b50b7ffp-56},
    {0x1.b3a911da65c6cp-2, 0x1.ae187b1ca5040p-56},
    {0x1.c0db4c94ec9f0p-2, -0x1.cc1ce70934c34p-56},
    {0x1.cde53432c1351p-2, -0x1.a2cfa4418f1adp-56},
    {0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56},
    {0x1.e77eb7f175a34p-2, 0x1.0e53dc1bf3435p-56},
    {0x1.f40dd0b541418p-2, -0x1.a3992dc382a23p-57},
    {0x1.0039c73c1a40cp-1, -0x1.b32c949c9d593p-55},
    {0x1.0657e94db30d0p-1, -0x1.d5b495f6349e6p-56},
    {0x1.0c6145b5b43dap-1, 0x1.974fa13b5404fp-58},
    {0x1.1255d9bfbd2a9p-1, -0x1.2bdaee1c0ee35p-58},
    {0x1.1835a88be7c13p-1, 0x1.c621cec00c301p-55},
    {0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58},
    {0x1.23b71e2cc9e6ap-1, 0x1.c421c9f38224ep-57},
    {0x1.2958e59308e31p-1, -0x1.09e73b0c6c087p-56},
    {0x1.2ee628406cbcap-1, 0x1.c5d5e9ff0cf8dp-55},
    {0x1.345f01cce37bbp-1, 0x1.1021137c71102p-55},
    {0x1.39c391cd4171ap-1, -0x1.2304331d8bf46p-55},
    {0x1.3f13fb89e96f4p-1, 0x1.ecf8b492644f0p-56},
    {0x1.445065b795b56p-1, -0x1.f76d0163f79c8p-56},
    {0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56},
    {0x1.4e8de5bb6ec04p-1, 0x1.4a33dbeb3796cp-55},
    {0x1.538f57b89061fp-1, -0x1.1bb74abda520cp-55},
    {0x1.587d81f732fbbp-1, -0x1.5e5c9d8c5a950p-56},
    {0x1.5d58987169b18p-1, 0x1.0028e4bc5e7cap-57},
    {0x1.6220d115d7b8ep-1, -0x1.2b785350ee8c1p-57},
    {0x1.66d663923e087p-1, -0x1.6ea6febe8bbbap-56},
    {0x1.6b798920b3d99p-1, -0x1.a80386188c50ep-55},
    {0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56},
    {0x1.748978fba8e0fp-1, 0x1.7b2a6165884a1p-59},
    {0x1.78f6bbd5d315ep-1, 0x1.406a089803740p-55},
    {0x1.7d528289fa093p-1, 0x1.560821e2f3aa9p-55},
    {0x1.819d0b7158a4dp-1, -0x1.bf76229d3b917p-56},
    {0x1.85d69576cc2c5p-1, 0x1.6b66e7fc8b8c3p-57},
    {0x1.89ff5ff57f1f8p-1, -0x1.55b9a5e177a1bp-55},
    {0x1.8e17aa99cc05ep-1, -0x1.ec182ab042f61p-56},
    {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55},
};

#define EI_PIO2_HI 0x1.921fb54442d18p+0
#define EI_PIO2_LO 0x1.1a62633145c07p-54
#define EI_PI_HI 0x1.921fb54442d18p+1
#define EI_PI_LO 0x1.1a62633145c07p-53

/* atan(zh + zl) = rh + rl for 0 <= zh <= 1 (+ a few ulp): c = i / 64 nearest zh, t the reduced
 * argument (|t| <= 1/128 + 2^-50), atan t = t - t^3/3 + ... - t^11/11 (next term below
 * 2^-84 |t|). */
EM_INLINE void ei_atan_dd(double zh, double zl, double *rh, double *rl) {
    double f = zh * 64.0 + EM_SHIFT;
    int64_t i = (int64_t)(em_bits(f) - em_bits(EM_SHIFT));
    i = i > 64 ? 64 : i;
    double c = em_int_to_double(i) * 0x1p-6;
    double uh, ul, dh, dl, th, tl, sh, sl;
    ei_two_sum(zh - c, zl, &uh, &ul); /* zh - c is exact (Sterbenz, or c = 0) */
    double p = c * zh, pl = fma(c, zh, -p);
    ei_two_sum(1.0, p, &dh, &dl);
    ei_div(uh, ul, dh, dl + (pl + c * zl), &th, &tl);
    double t2 = th * th;
    double poly = -1.0 / 3.0 + t2 * (0.2 + t2 * (-1.0 / 7.0 + t2 * (1.0 / 9.0 + t2 * (-1.0 / 11.0))));
    ei_two_sum(EI_ATAN[i][0], th, &sh, &sl);
    ei_fast_two_sum(sh, sl + (EI_ATAN[i][1] + (tl + th * t2 * poly)), rh, rl);
}

/* atan((nh + nl) / (dh + dl)) = rh + rl for n, d >= 0, not both 0, both finite: atan of the
 * quotient when n <= d, else pi/2 - atan(d / n). */
EM_INLINE void ei_atan2_dd(double nh, double nl, double dh, double dl, double *rh, double *rl) {
    int swap = nh > dh;
    double zh, zl, ah, al;
    ei_div(em_select(swap, dh, nh), em_select(swap, dl, nl), em_select(swap, nh, dh),
           em_select(swap, nl, dl), &zh, &zl);
    ei_atan_dd(zh, zl, &ah, &al);
    double sh, sl;
    ei_two_sum(EI_PIO2_HI, -ah, &sh, &sl);
    *rh = em_select(swap, sh, ah);
    *rl = em_select(swap, sl + (EI_PIO2_LO - al), al);
}

EM_INLINE double ei_atan(double x) {
    double a = em_abs(x), rh, rl;
    ei_atan2_dd(em_select(a < INFINITY, a, 1.0), 0.0, 1.0, 0.0, &rh, &rl);
    double y = rh + rl;
    y = em_select(a < EI_TINY, a, y);
    y = em_select(a == INFINITY, EI_PIO2_HI, y);
    return em_nan_or(x, em_with_sign(y, x));
}

/* atan2(y, x) = hi + lo (|lo| <= ulp(hi) / 2; lo = 0 for the special values), C99's and
 * NumPy's special values: NaN if y or x is; +-0 or +-pi for y = +-0 (by x's sign bit); +-pi/2
 * for x = +-0; +-pi/4, +-3pi/4 for two infinities; +-0 or +-pi for x = +-inf. */
EM_INLINE void ei_atan2(double y, double x, double *hi, double *lo) {
    double ay = em_abs(y), ax = em_abs(x);
    int yinf = ay == INFINITY, xinf = ax == INFINITY;
    /* the quotient's operands: infinities as 1 or 0, both zero as 0 / 1, tiny ones scaled */
    double n = em_select(yinf, 1.0, em_select(xinf, 0.0, ay));
    double d = em_select(xinf, 1.0, em_select(yinf, 0.0, ax));
    d = em_select((n == 0.0) & (d == 0.0), 1.0, d);
    double sc = em_select((n < 0x1p-900) & (d < 0x1p-900), 0x1p600, 1.0);
    double rh, rl, sh, sl;
    ei_atan2_dd(n * sc, 0.0, d * sc, 0.0, &rh, &rl);
    rh = em_select(n == 0.0, 0.0, rh);
    rl = em_select(n == 0.0, 0.0, rl);
    ei_two_sum(EI_PI_HI, -rh, &sh, &sl); /* x < 0 (its sign bit): pi - atan(|y| / |x|) */
    sl += EI_PI_LO - rl;
    int neg = em_ibits(x) < 0;
    ei_fast_two_sum(em_select(neg, sh, rh), em_select(neg, sl, rl), hi, lo);
    int ysign = em_ibits(y) < 0, nan = (y != y) | (x != x);
    double h = em_select(ysign, -*hi, *hi), l = em_select(ysign, -*lo, *lo);
    *hi = em_select(nan, em_nan_or(y, x + x), h); /* one NaN's payload */
    *lo = em_select(nan, 0.0, l);
}

/* The float nearest hi + lo (|lo| <= ulp(hi) / 2): (float)hi, unless hi is a float midpoint
 * exactly, when lo's sign decides. */
EM_INLINE float ei_round_f32(double hi, double lo) {
    float r = (float)hi;
    double back = (double)r;
    if (hi == back || lo == 0.0 || !(em_abs(hi) < INFINITY)) return r;
    float other = nextafterf(r, hi > back ? INFINITY : -INFINITY);
    if (hi != 0.5 * (back + (double)other)) return r;
    return ((lo > 0.0) == ((double)other > back)) ? other : r;
}

/* sqrt(1 - a^2) = rh + rl for 0 <= a < 1: 1 - a^2 exactly, as (1 - a)(1 + a) for a >= 1/2. */
EM_INLINE void ei_sqrt_one_minus_sq(double a, double *rh, double *rl) {
    double m = 1.0 - a, ph, pl; /* exact for a >= 1/2 */
    ei_two_sum(1.0, a, &ph, &pl);
    double bh = m * ph, bl = fma(m, ph, -bh) + m * pl;
    double a2 = a * a, a2l = fma(a, a, -a2), ch, cl;
    ei_two_sum(1.0, -a2, &ch, &cl);
    cl -= a2l;
    int big = a >= 0.5;
    ei_sqrt(em_select(big, bh, ch), em_select(big, bl, cl), rh, rl);
}

EM_INLINE double ei_asin(double x) {
    double a = em_abs(x), ac = em_select(a < 1.0, a, 0.0), ch, cl, rh, rl;
    ei_sqrt_one_minus_sq(ac, &ch, &cl);
    ei_atan2_dd(ac, 0.0, ch, cl, &rh, &rl);
    double y = rh + rl;
    y = em_select(a < EI_TINY, a, y);
    y = em_select(a == 1.0, EI_PIO2_HI, y);
    y = em_select(a > 1.0, NAN, y);
    return em_nan_or(x, em_with_sign(y, x));
}

EM_INLINE double ei_acos(double x) {
    double a = em_abs(x), ac = em_select(a < 1.0, a, 0.0), ch, cl, rh, rl, sh, sl;
    ei_sqrt_one_minus_sq(ac, &ch, &cl);
    ei_atan2_dd(ch, cl, ac, 0.0, &rh, &rl);
    ei_two_sum(EI_PI_HI, -rh, &sh, &sl); /* x < 0: pi - acos|x| */
    double y = em_select(x < 0.0, sh + (sl + (EI_PI_LO - rl)), rh + rl);
    y = em_select(x == 1.0, 0.0, y);
    y = em_select(x == -1.0, EI_PI_HI, y);
    y = em_select(a > 1.0, NAN, y);
    return em_nan_or(x, y);
}

/* ---- tan: x = n pi/2 + r, tan x = sin r / cos r (n even) or -cos r / sin r (n odd) ---- */

/* sin(rh + rl) = sh + sl to 2^-60: em_sin_kernel's terms with r z EM_SIN_C1 as a
 * double-double (z = rh^2 and r z by fma). */
EM_INLINE void ei_sin_dd(double rh, double rl, double *sh, double *sl) {
    double z = rh * rh, zl = fma(rh, rh, -z);
    double rz = rh * z, rzl = fma(rh, z, -rz) + rh * zl;
    double th = rz * EM_SIN_C1, tl = fma(rz, EM_SIN_C1, -th) + rzl * EM_SIN_C1;
    double rest = rz * (z * em_sin_q(z)) + rl * (1.0 - 0.5 * z);
    double s, e;
    ei_fast_two_sum(rh, th, &s, &e);
    ei_fast_two_sum(s, e + (tl + rest), sh, sl);
}

EM_INLINE double ei_tan_reduced(int64_t n, double rh, double rl) {
    double sh, sl, ch, cl, w, tail, qh, ql;
    ei_sin_dd(rh, rl, &sh, &sl);
    em_cos_parts(rh, rl, &w, &tail);
    ei_fast_two_sum(w, tail, &ch, &cl);
    int odd = (int)(n & 1);
    ei_div(em_select(odd, ch, sh), em_select(odd, cl, sl), em_select(odd, sh, ch),
           em_select(odd, sl, cl), &qh, &ql);
    double q = qh + ql;
    return em_select(odd, -q, q);
}

/* tan for |x| < EM_TRIG_BIG (other x: elem_tan, elementary_scalar_more.h). */
EM_INLINE double ei_tan_small(double x) {
    int64_t n;
    double rh, rl;
    em_reduce_pio2(x, &n, &rh, &rl);
    double y = ei_tan_reduced(n, rh, rl);
    return em_select(em_abs(x) < EI_TINY, x, y);
}

/* ---- cbrt: |x| = 2^(3q) A, A in [1, 8); Newton in double, then one double-double step ---- */

EM_INLINE double ei_cbrt(double x) {
    double a = em_abs(x);
    int sub = em_bits(a) < 0x0010000000000000ULL;
    uint64_t u = em_bits(a * em_select(sub, 0x1p54, 1.0));
    int64_t e = (int64_t)(u >> 52) - 1023 - (int64_t)sub * 54;
    int64_t q = (int64_t)em_div3((uint64_t)(e + 1200)) - 400, r = e - 3 * q; /* q = floor(e / 3), r in {0, 1, 2} */
    double A = em_double((u & 0x000fffffffffffffULL) | ((uint64_t)(1023 + r) << 52));
    /* 5 bits from the exponent divided by 3 (fdlibm's constant), then 4 Newton steps */
    double y = em_double((em_div3(em_bits(A) >> 32) + 715094163ULL) << 32);
    for (int it = 0; it < 4; it++) y = y - (y * y * y - A) / (3.0 * (y * y));
    /* y^3 - A exactly (to 2^-106 A), then cbrt A = y - (y^3 - A) / (3 y^2) */
    double y2 = y * y, y2l = fma(y, y, -y2);
    double y3 = y2 * y, y3l = fma(y2, y, -y3) + y2l * y;
    double res = (y3 - A) + y3l; /* y3 - A is exact: y3 is within 2^-50 of A */
    double c = y - res / (3.0 * y2);
    double out = c * em_pow2(q);
    out = em_select((a == 0.0) | (a == INFINITY), a, out);
    return em_nan_or(x, em_with_sign(out, x));
}

#endif
