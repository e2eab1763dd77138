/* elementary_scalar.h - the elementary functions element by element: the float64 algorithm
 * of each function (elem_f64_scalar) and the float32 fix-up (elem_f32_fix: the correctly
 * rounded result of an element the fast path flagged), with Payne-Hanek's reduction for
 * large sin and cos arguments; elem_f32_value joins the float32 fast path and its fix-up. Plain C, included by elementary.c (the CPU's loops) and by
 * the GPU's kernels (NVRTC), so both compute each element by the same operations. */
#ifndef INVARAX_ELEMENTARY_SCALAR_H
#define INVARAX_ELEMENTARY_SCALAR_H

#include "elementary_math.h"
#include "elementary_f32.h"
#include "elementary_hard.h"
#include "elementary_ids.h"

/* ---- Payne-Hanek reduction for |x| >= EM_TRIG_BIG ------------------------------------- */

/* 2/pi = sum_j TWO_OVER_PI[j] 2^(-32 (j + 1)). */
static const uint32_t TWO_OVER_PI[40] = {
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
    0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
    0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
    0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d,
};

#define PH_WORDS 7              /* words of 2/pi multiplied by x's mantissa */
#define PH_LIMBS (PH_WORDS + 2) /* 32-bit limbs of the product */

/* Bits [pos, pos + 64) of the little-endian product p. */
EM_INLINE uint64_t ph_bits(const uint32_t *p, int pos) {
    int w = pos / 32, o = pos % 32;
    uint64_t lo = p[w] | ((uint64_t)(w + 1 < PH_LIMBS ? p[w + 1] : 0) << 32);
    uint64_t hi = w + 2 < PH_LIMBS ? p[w + 2] : 0;
    return o ? (lo >> o) | (hi << (64 - o)) : lo;
}

/* x = n pi/2 + rh + rl for finite |x| >= EM_TRIG_BIG, |rh + rl| <= pi/4, with the fraction of
 * x 2/pi known to 2^-138 (|x mod pi/2| >= 2^-62 for every double, so rh + rl has a relative
 * error below 2^-70). */
static void ef_reduce_big(double x, int64_t *nq, double *rh, double *rl) {
    uint64_t u = em_bits(x);
    int e = (int)((u >> 52) & 0x7ff) - 1075; /* |x| = m 2^e */
    uint64_t m = (u & 0x000fffffffffffffULL) | 0x0010000000000000ULL;
    /* words j with e - 32 (j + 1) >= 2 only add multiples of 4 to x 2/pi: skip them */
    int j0 = e >= 34 ? (e - 34) / 32 + 1 : 0;
    uint32_t w[PH_WORDS], p[PH_LIMBS] = {0};
    for (int i = 0; i < PH_WORDS; i++) w[i] = TWO_OVER_PI[j0 + PH_WORDS - 1 - i];
    uint32_t mpart[2] = {(uint32_t)m, (uint32_t)(m >> 32)};
    for (int h = 0; h < 2; h++) {
        uint64_t carry = 0;
        for (int i = 0; i < PH_WORDS; i++) {
            uint64_t acc = (uint64_t)w[i] * mpart[h] + p[i + h] + carry;
            p[i + h] = (uint32_t)acc;
            carry = acc >> 32;
        }
        for (int i = PH_WORDS + h; i < PH_LIMBS && carry; i++) {
            uint64_t acc = (uint64_t)p[i] + carry;
            p[i] = (uint32_t)acc;
            carry = acc >> 32;
        }
    }
    int s = 32 * (j0 + PH_WORDS) - e; /* bit s of p has weight 2^0 in x 2/pi */
    int64_t n = (int64_t)(ph_bits(p, s) & 3);
    uint64_t fh = ph_bits(p, s - 64), fl = ph_bits(p, s - 128);
    int neg = (int)(fh >> 63); /* fraction >= 1/2: round n up, the fraction becomes negative */
    if (neg) {
        fl = ~fl + 1;
        fh = ~fh + (fl == 0);
        n += 1;
    }
    int lz = 0;
    while (!(fh >> 63) && lz < 128) {
        fh = (fh << 1) | (fl >> 63);
        fl <<= 1;
        lz++;
    }
    double f_h = (double)(fh >> 11) * em_pow2(-53 - lz);
    double f_l = (double)(((fh & 0x7ff) << 32) | (fl >> 32)) * em_pow2(-96 - lz);
    double h = f_h * EM_PIO2_1;
    double l = fma(f_h, EM_PIO2_1, -h) + (f_h * EM_PIO2_2 + f_l * EM_PIO2_1);
    double r_h = h + l, r_l = (h - r_h) + l;
    if (neg) {
        r_h = -r_h;
        r_l = -r_l;
    }
    if (x < 0) {
        r_h = -r_h;
        r_l = -r_l;
        n = -n;
    }
    *nq = n;
    *rh = r_h;
    *rl = r_l;
}

/* sin (cos_ = 0) or cos (cos_ = 1) for |x| >= EM_TRIG_BIG, inf and NaN. */
static double elem_sincos_big(double x, int cos_) {
    if (!(em_abs(x) < INFINITY)) return x - x;
    int64_t n;
    double rh, rl;
    ef_reduce_big(x, &n, &rh, &rl);
    return em_sincos_quadrant(n, rh, rl, cos_);
}

/* The double-precision value of function fn at x, element by element. */
static double elem_f64_scalar(int fn, double x) {
    switch (fn) {
    case ELEM_EXP: return em_exp(x);
    case ELEM_LOG: return em_log(x);
    case ELEM_EXPM1: return em_expm1(x);
    case ELEM_LOG1P: return em_log1p(x);
    case ELEM_TANH: return em_tanh(x);
    case ELEM_LOGISTIC: return em_logistic(x);
    case ELEM_EXP2: return em_exp2(x);
    case ELEM_SINH: return em_sinh(x);
    case ELEM_COSH: return em_cosh(x);
    case ELEM_SIN:
    case ELEM_COS: {
        int cos_ = fn == ELEM_COS;
        return em_abs(x) < EM_TRIG_BIG ? em_sincos_small(x, cos_) : elem_sincos_big(x, cos_);
    }
    }
    return x - x;
}

static const elem_hard_table ELEM_HARD[ELEM_COUNT] = ELEM_HARD_TABLES;

/* The correctly rounded float result of fn at x, element by element. */
static float elem_f32_fix(int fn, float x) {
    /* the fast paths flag saturated inputs too: settle them here, cheaply (each bound is
     * where the exact value is beyond the last float32 rounding boundary) */
    float a = fabsf(x);
    if (x != x) return x + x; /* NaN in, NaN out */
    switch (fn) {
    case ELEM_EXP:
        if (x < -104.0f) return 0.0f;    /* exp(x) < 2^-150 */
        if (x > 89.0f) return INFINITY; /* exp(x) > 2^128 */
        break;
    case ELEM_EXPM1:
        if (x < -18.0f) return -1.0f; /* exp(x) < 2^-25 */
        if (x > 89.0f) return INFINITY;
        break;
    case ELEM_LOGISTIC:
        if (x < -104.0f) return 0.0f;
        if (x > 18.0f) return 1.0f;
        break;
    case ELEM_TANH:
        if (a > 10.0f) return copysignf(1.0f, x); /* 1 - tanh(10) < 2^-25 */
        break;
    case ELEM_EXP2:
        if (x < -151.0f) return 0.0f;
        if (x >= 128.0f) return INFINITY;
        break;
    case ELEM_SINH:
        if (a > 90.0f) return copysignf(INFINITY, x); /* sinh(90) > 2^128 */
        break;
    case ELEM_COSH:
        if (a > 90.0f) return INFINITY;
        break;
    }
    double d = elem_f64_scalar(fn, (double)x);
    float y = (float)d;
    return em_f32_is_hard(d) ? elem_hard_lookup(&ELEM_HARD[fn], x, y) : y;
}

/* The float32 result of fn (exp to cosh) at x: elementary_f32.h's fast path, or elem_f32_fix
 * where it flags x; the CPU's loops give every element this value. */
EM_INLINE float elem_f32_value(int fn, float x) {
    double v = (double)x, d = 0.0;
    int hard = 1;
    switch (fn) {
    case ELEM_EXP: d = ef_exp(v, &hard); break;
    case ELEM_LOG: d = ef_log_f32(x, &hard); break;
    case ELEM_EXPM1: d = ef_expm1(v, &hard); break;
    case ELEM_LOG1P: d = ef_log1p(v, &hard); break;
    case ELEM_TANH: d = ef_tanh(v, &hard); break;
    case ELEM_LOGISTIC: d = ef_logistic(v, &hard); break;
    case ELEM_SIN: d = ef_sincos(v, 0, &hard); break;
    case ELEM_COS: d = ef_sincos(v, 1, &hard); break;
    case ELEM_EXP2: d = ef_exp2(v, &hard); break;
    case ELEM_SINH: d = ef_coshsinh(v, 1, &hard); break;
    case ELEM_COSH: d = ef_coshsinh(v, 0, &hard); break;
    }
    return hard ? elem_f32_fix(fn, x) : (float)d;
}

#endif
