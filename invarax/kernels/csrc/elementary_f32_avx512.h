/* elementary_f32_avx512.h - the AVX-512 scans of the float32 fast paths of exp, log, sin, cos
 * and tanh, written with intrinsics where GCC's vectorisation of the generic loops
 * (elementary_loops.h) falls short: 16 floats per step as two halves of 8 doubles, table
 * lookups by register permutes (vpermt2pd), signs and keys on the float lanes, and each
 * block's first operations issued before the previous block's last (EF512_PIPE_FN).
 *
 * Each scan computes its elementary_f32.h function's double to within that function's
 * error bound (docs/numerics.md): mostly the same operations; where they differ (said
 * beside each), the bound is the same and the derivation says why. The scan rounds each
 * double to float and tests it as EL_SCAN_FN's loop does; so every float it keeps is the
 * correctly rounded result, the one every dispatch level gives (tests/test_isa_invariance.py,
 * tests/test_elementary.py and tools/f32_bits.py compare them), and it returns what
 * EL_SCAN_FN's loop returns: whether an element of the block needs the per-element pass.
 * Included by elementary.c inside its AVX-512 target region only.
 */
#ifndef INVARAX_ELEMENTARY_F32_AVX512_H
#define INVARAX_ELEMENTARY_F32_AVX512_H

#include <immintrin.h>

#include "elementary_f32.h"

#define EF512_INLINE static inline __attribute__((always_inline))

/* ---- pipelined scans of 16 floats at a time ---------------------------------------------
 * STAGE maps 8 floats (one half of a 16-float block) to an ST, the first part of the
 * function's operations; VALUE maps the ST to the double results; FINISH rounds the two
 * halves to floats, puts on what goes on the float lanes (a sign, sin's tiny x), stores
 * the lanes of the mask k and returns the low 32 bits of each element's double result
 * (before its rounding to float; a sign applied after the rounding changes neither the
 * float's magnitude nor these bits), which hold the whole midpoint key (ef_mid_key's 29 low
 * bits, minus the same constant in 32-bit arithmetic: below EF_MID_WIDTH exactly where the
 * 64-bit key is). KEY maps the inputs' bits to the range key and OUT(greatest key) tells
 * whether one is outside the fast range, as EL_SCAN_FN's KEY and OUT.
 * Each iteration stages the next block before it finishes the current one, so that the
 * next block's first operations are issued while the current block's long chain of
 * dependent operations (polynomial, division, rounding) completes: on the Zen 4 the core's
 * schedulers fill with one block's dependent operations otherwise (9% faster for log,
 * where more unrolling without the staging gained nothing). */
#define EF512_PIPE_FN(NAME, ST, STAGE, VALUE, FINISH, KEY, OUT)                             \
    static int NAME(const float *restrict x, float *restrict y, ptrdiff_t m) {              \
        __m512i mid = _mm512_set1_epi32(-1), key = _mm512_setzero_si512();                  \
        ptrdiff_t i = 0;                                                                    \
        if (m >= 16) {                                                                      \
            ST s0 = STAGE(_mm256_loadu_ps(x)), s1 = STAGE(_mm256_loadu_ps(x + 8));          \
            for (;; i += 16) { /* block i is staged and whole */                            \
                __m512d d0 = VALUE(s0), d1 = VALUE(s1);                                     \
                ST c0 = s0, c1 = s1;                                                        \
                int next = i + 32 <= m;                                                     \
                if (next) {                                                                 \
                    s0 = STAGE(_mm256_loadu_ps(x + i + 16));                                \
                    s1 = STAGE(_mm256_loadu_ps(x + i + 24));                                \
                }                                                                           \
                __m512 xf = _mm512_loadu_ps(x + i);                                         \
                __m512i lo = FINISH(y + i, (__mmask16)0xffff, xf, c0, c1, d0, d1);          \
                ef512_keys(&mid, &key, (__mmask16)0xffff, lo, KEY(_mm512_castps_si512(xf))); \
                if (!next) break;                                                           \
            }                                                                               \
            i += 16;                                                                        \
        }                                                                                   \
        if (i < m) { /* the tail, by masked loads and stores */                             \
            __mmask16 k = (__mmask16)((1u << (m - i)) - 1);                                 \
            __m512 xf = _mm512_maskz_loadu_ps(k, x + i);                                    \
            ST c0 = STAGE(_mm512_castps512_ps256(xf));                                      \
            ST c1 = STAGE(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1))); \
            __m512i lo = FINISH(y + i, k, xf, c0, c1, VALUE(c0), VALUE(c1));                \
            ef512_keys(&mid, &key, k, lo, KEY(_mm512_castps_si512(xf)));                    \
        }                                                                                   \
        uint32_t least = _mm512_reduce_min_epu32(mid);                                      \
        uint32_t kx = _mm512_reduce_max_epu32(key);                                         \
        return (least < EF_MID_WIDTH) | (OUT(kx));                                          \
    }

/* The running least midpoint key and greatest range key over the lanes of k. */
EF512_INLINE void ef512_keys(__m512i *mid, __m512i *key, __mmask16 k, __m512i lo, __m512i kx) {
    __m512i mk = _mm512_sub_epi32(_mm512_and_si512(lo, _mm512_set1_epi32(0x1fffffff)),
                                  _mm512_set1_epi32(0x10000000 - 0x4000));
    *mid = _mm512_mask_min_epu32(*mid, k, *mid, mk);
    *key = _mm512_mask_max_epu32(*key, k, *key, kx);
}

/* The low 32 bits of each 64-bit lane of a (elements 0-7) and b (8-15). */
EF512_INLINE __m512i ef512_low_dwords_pd(__m512d a, __m512d b) {
    const __m512i pick =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_epi32(_mm512_castpd_si512(a), pick, _mm512_castpd_si512(b));
}
/* Two vectors of 8 doubles rounded to 16 floats. */
EF512_INLINE __m512 ef512_to_float(__m512d a, __m512d b) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(a)), _mm512_cvtpd_ps(b), 1);
}
/* 16 floats into y, the lanes of k (all of them when k is the constant 0xffff). */
EF512_INLINE void ef512_store16(float *y, __mmask16 k, __m512 v) {
    if (k == 0xffff) _mm512_storeu_ps(y, v);
    else _mm512_mask_storeu_ps(y, k, v);
}

/* The two halves rounded to floats and stored (the lanes of k), their keys' low dwords. */
EF512_INLINE __m512i ef512_store_halves(float *y, __mmask16 k, __m512d d0, __m512d d1) {
    if (k == 0xffff) {
        _mm256_storeu_ps(y, _mm512_cvtpd_ps(d0));
        _mm256_storeu_ps(y + 8, _mm512_cvtpd_ps(d1));
    } else {
        ef512_store16(y, k, ef512_to_float(d0, d1));
    }
    return ef512_low_dwords_pd(d0, d1);
}

EF512_INLINE __m512i ef512_abs_key16(__m512i xb) {
    return _mm512_and_si512(xb, _mm512_set1_epi32(0x7fffffff));
}
EF512_INLINE __m256 ef512_abs8(__m256 h) {
    return _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(h),
                                                _mm256_set1_epi32(0x7fffffff)));
}

/* ---- exp: ef_exp_value, 16 lanes -------------------------------------------------------
 * The same operations to p = exp(r) as there; y = 2^k EF_EXP_TAB[j] p with 2^k
 * EF_EXP_TAB[j] = s made from the bits of t = N + SHIFT, N = 16 k + j: EF512_EXP_TAB_BITS[j]
 * is EF_EXP_TAB[j]'s bits less j 2^48 (selected by a register permute, which reads t's low
 * 4 bits), and t's bits shifted left by 48 are N 2^48 mod 2^64 (SHIFT's bits shift out), so
 * their sum is EF_EXP_TAB[j]'s bits plus k 2^52: s, exactly (a normal double for every x the
 * scan keeps, |x| < 87.33), and s p is ef_exp_value's y (the same product, scaled by 2^k
 * before its rounding rather than after: exact either way where y is normal). */
static const uint64_t EF512_EXP_TAB_BITS[16] = {
    0x3ff0000000000000ULL, 0x3fefb5586cf9890fULL, 0x3fef72b83c7d517bULL, 0x3fef387a6e756238ULL,
    0x3fef06fe0a31b715ULL, 0x3feedea64c123422ULL, 0x3feebfdad5362a27ULL, 0x3feeab07dd485429ULL,
    0x3feea09e667f3bcdULL, 0x3feea11473eb0187ULL, 0x3feeace5422aa0dbULL, 0x3feec49182a3f090ULL,
    0x3feee89f995ad3adULL, 0x3fef199bdd85529cULL, 0x3fef5818dcfba487ULL, 0x3fefa4afa2a490daULL};
typedef struct {
    __m512d p, t;
} ef512_exp_st;
EF512_INLINE ef512_exp_st ef512_exp_stage(__m256 h) {
    const __m512d shift = _mm512_set1_pd(EM_SHIFT), one = _mm512_set1_pd(1.0);
    __m512d v = _mm512_cvtps_pd(h);
    __m512d t = _mm512_fmadd_pd(v, _mm512_set1_pd(EF_EXP16_C), shift);
    __m512d r = _mm512_fnmadd_pd(_mm512_sub_pd(t, shift), _mm512_set1_pd(EF_LN2_16), v);
    __m512d q = _mm512_fmadd_pd(r, _mm512_set1_pd(EF_EXP16_Q3), _mm512_set1_pd(EF_EXP16_Q2));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_EXP16_Q1));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_EXP16_Q0));
    ef512_exp_st st = {_mm512_fmadd_pd(r, _mm512_fmadd_pd(r, q, one), one), t};
    return st;
}
/* 2^k EF_EXP_TAB[j] from t's bits (N = 16 k + j). */
EF512_INLINE __m512d ef512_exp_scale(__m512d t) {
    __m512i tb = _mm512_castpd_si512(t);
    __m512i tab = _mm512_permutex2var_epi64(_mm512_loadu_si512(EF512_EXP_TAB_BITS), tb,
                                            _mm512_loadu_si512(EF512_EXP_TAB_BITS + 8));
    return _mm512_castsi512_pd(_mm512_add_epi64(tab, _mm512_slli_epi64(tb, 48)));
}
EF512_INLINE __m512d ef512_exp_value(ef512_exp_st st) {
    return _mm512_mul_pd(ef512_exp_scale(st.t), st.p);
}
EF512_INLINE __m512i ef512_exp_finish(float *y, __mmask16 k, __m512 xf, ef512_exp_st c0,
                                      ef512_exp_st c1, __m512d d0, __m512d d1) {
    (void)xf, (void)c0, (void)c1;
    return ef512_store_halves(y, k, d0, d1);
}
#define EF512_EXP_OUT(kx) ef_abs_out(kx, EF_EXP_BOUND)
EF512_PIPE_FN(ef512_exp_scan, ef512_exp_st, ef512_exp_stage, ef512_exp_value, ef512_exp_finish,
              ef512_abs_key16, EF512_EXP_OUT)

/* ---- log: ef_log_value_f32, 16 lanes ------------------------------------------------------
 * The split x = 2^k z on the float lanes as there, s = (z - 1) / (z + 1) staged, the
 * polynomial and k ln2 (ef_log_reduced's operations, in its order) in VALUE; the two halves
 * are rounded and stored as 8 floats each. */
typedef struct {
    __m512d s, k;
} ef512_log_st;
EF512_INLINE ef512_log_st ef512_log_stage(__m256 h) {
    __m256i fb = _mm256_castps_si256(h);
    __m256i k = _mm256_srai_epi32(_mm256_sub_epi32(fb, _mm256_set1_epi32((int)EF_LOG_OFF32)), 23);
    __m256i zb = _mm256_sub_epi32(fb, _mm256_slli_epi32(k, 23));
    __m512d z = _mm512_cvtps_pd(_mm256_castsi256_ps(zb));
    const __m512d one = _mm512_set1_pd(1.0);
    ef512_log_st st = {_mm512_div_pd(_mm512_sub_pd(z, one), _mm512_add_pd(z, one)),
                       _mm512_cvtepi32_pd(k)};
    return st;
}
EF512_INLINE __m512d ef512_log_value(ef512_log_st st) {
    __m512d s2 = _mm512_add_pd(st.s, st.s), w = _mm512_mul_pd(st.s, st.s);
    __m512d p = _mm512_fmadd_pd(w, _mm512_set1_pd(EF_LOG_P4), _mm512_set1_pd(EF_LOG_P3));
    p = _mm512_fmadd_pd(w, p, _mm512_set1_pd(EF_LOG_P2));
    p = _mm512_fmadd_pd(w, p, _mm512_set1_pd(EF_LOG_P1));
    p = _mm512_fmadd_pd(w, p, _mm512_set1_pd(EF_LOG_P0));
    return _mm512_fmadd_pd(st.k, _mm512_set1_pd(EM_LN2),
                           _mm512_fmadd_pd(_mm512_mul_pd(s2, w), p, s2));
}
EF512_INLINE __m512i ef512_log_finish(float *y, __mmask16 k, __m512 xf, ef512_log_st c0,
                                      ef512_log_st c1, __m512d d0, __m512d d1) {
    (void)xf, (void)c0, (void)c1;
    return ef512_store_halves(y, k, d0, d1);
}
EF512_INLINE __m512i ef512_log_key16(__m512i xb) {
    return _mm512_sub_epi32(xb, _mm512_set1_epi32(0x00800000));
}
#define EF512_LOG_OUT(kx) ef_log_key_out(kx)
EF512_PIPE_FN(ef512_log_scan, ef512_log_st, ef512_log_stage, ef512_log_value, ef512_log_finish,
              ef512_log_key16, EF512_LOG_OUT)

/* ---- sin, cos: ef_sincos_value's reduction, 16 lanes ------------------------------------
 * x 2/pi + SHIFT by one fma here (n may differ from ef_sincos_value's where x 2/pi lies
 * within a rounding of a half-integer; either n keeps |r| within the polynomials' range),
 * r = fma(-n, PIO2_2, fma(-n, PIO2_1, x)) as there. Then one polynomial per lane: with
 * z = r^2, sin r = r + r z S(z) and cos r = 1 + z C(z), S's coefficients EF_SIN_S1..S5
 * and C's -1/2, EF_COS_C1..C4, both of degree 4, so each lane evaluates
 * a + a z P(z) with a = r or 1 and P's coefficients chosen by q = n + cos_'s parity
 * (ef_sincos_value computes both polynomials and chooses one; the same polynomials, so
 * the same bound, docs/numerics.md). */
typedef struct {
    __m512d r, z, t;
} ef512_trig_st;
EF512_INLINE ef512_trig_st ef512_trig_stage(__m256 h) {
    const __m512d shift = _mm512_set1_pd(EM_SHIFT);
    __m512d v = _mm512_cvtps_pd(h);
    __m512d t = _mm512_fmadd_pd(v, _mm512_set1_pd(EM_TWO_OVER_PI), shift);
    __m512d nd = _mm512_sub_pd(t, shift);
    __m512d r = _mm512_fnmadd_pd(nd, _mm512_set1_pd(EM_PIO2_2),
                                 _mm512_fnmadd_pd(nd, _mm512_set1_pd(EM_PIO2_1), v));
    ef512_trig_st st = {r, _mm512_mul_pd(r, r), t};
    return st;
}
/* The result without its sign. */
EF512_INLINE __m512d ef512_sincos_value(ef512_trig_st st, const int cos_) {
    __m512i tb = _mm512_castpd_si512(st.t);
    __mmask8 c = cos_ ? _mm512_testn_epi64_mask(tb, _mm512_set1_epi64(1))
                      : _mm512_test_epi64_mask(tb, _mm512_set1_epi64(1));
#define EF512_SEL(s_, c_) _mm512_mask_blend_pd(c, _mm512_set1_pd(s_), _mm512_set1_pd(c_))
    __m512d p = _mm512_fmadd_pd(st.z, EF512_SEL(EF_SIN_S5, EF_COS_C4),
                                EF512_SEL(EF_SIN_S4, EF_COS_C3));
    p = _mm512_fmadd_pd(st.z, p, EF512_SEL(EF_SIN_S3, EF_COS_C2));
    p = _mm512_fmadd_pd(st.z, p, EF512_SEL(EF_SIN_S2, EF_COS_C1));
    p = _mm512_fmadd_pd(st.z, p, EF512_SEL(EF_SIN_S1, -0.5));
#undef EF512_SEL
    __m512d a = _mm512_mask_blend_pd(c, st.r, _mm512_set1_pd(1.0));
    return _mm512_fmadd_pd(_mm512_mul_pd(a, st.z), p, a);
}
EF512_INLINE __m512d ef512_sin_value(ef512_trig_st st) { return ef512_sincos_value(st, 0); }
EF512_INLINE __m512d ef512_cos_value(ef512_trig_st st) { return ef512_sincos_value(st, 1); }

/* The sign (bit 1 of q, as in ef_sincos_value) is put on the floats, and sin's x for
 * |x| < EF_SIN_TINY, chosen after it as there. */
EF512_INLINE __m512i ef512_sincos_finish(float *y, __mmask16 k, __m512 xf, ef512_trig_st c0,
                                         ef512_trig_st c1, __m512d d0, __m512d d1,
                                         const int cos_) {
    __m512i q = ef512_low_dwords_pd(c0.t, c1.t); /* n mod 2^32 */
    if (cos_) q = _mm512_add_epi32(q, _mm512_set1_epi32(1));
    /* y ^ ((q << 30) & sign bit) */
    __m512i yb = _mm512_ternarylogic_epi32(_mm512_castps_si512(ef512_to_float(d0, d1)),
                                           _mm512_slli_epi32(q, 30),
                                           _mm512_set1_epi32((int)0x80000000u), 0x78);
    __m512 yf = _mm512_castsi512_ps(yb);
    if (!cos_) {
        __m512 ax = _mm512_castsi512_ps(ef512_abs_key16(_mm512_castps_si512(xf)));
        __mmask16 tiny = _mm512_cmp_ps_mask(ax, _mm512_set1_ps((float)EF_SIN_TINY), _CMP_LT_OQ);
        yf = _mm512_mask_blend_ps(tiny, yf, xf);
    }
    ef512_store16(y, k, yf);
    return ef512_low_dwords_pd(d0, d1);
}
EF512_INLINE __m512i ef512_sin_finish(float *y, __mmask16 k, __m512 xf, ef512_trig_st c0,
                                      ef512_trig_st c1, __m512d d0, __m512d d1) {
    return ef512_sincos_finish(y, k, xf, c0, c1, d0, d1, 0);
}
EF512_INLINE __m512i ef512_cos_finish(float *y, __mmask16 k, __m512 xf, ef512_trig_st c0,
                                      ef512_trig_st c1, __m512d d0, __m512d d1) {
    return ef512_sincos_finish(y, k, xf, c0, c1, d0, d1, 1);
}

/* ---- tanh: ef_tanh_value, 16 lanes ------------------------------------------------------
 * From a = |x| (y = 2a in ef_tanh_value): t = fma(a, 2 EF_EXP16_C, SHIFT) is ef_tanh_value's
 * t (2a C = y C exactly), r' = fma(-nd, EF_LN2_16 / 2, a) is r / 2 exactly, and the
 * polynomial's coefficients are EF_TANH_Ej 2^(j+2), so q' = 4 q(r) and u = r' fma(r', q',
 * 2) = r fma(r, q, 1): every operation is ef_tanh_value's scaled by a power of two, the same
 * u; s = 2^k EF_EXP_TAB[j] by ef512_exp_scale (N >= 0 here), as there. */
typedef struct {
    __m512d u, s;
} ef512_tanh_st;
EF512_INLINE ef512_tanh_st ef512_tanh_stage(__m256 h) {
    const __m512d shift = _mm512_set1_pd(EM_SHIFT);
    __m512d a = _mm512_cvtps_pd(ef512_abs8(h));
    __m512d t = _mm512_fmadd_pd(a, _mm512_set1_pd(2 * EF_EXP16_C), shift);
    __m512d nd = _mm512_sub_pd(t, shift);
    __m512d r = _mm512_fnmadd_pd(nd, _mm512_set1_pd(0.5 * EF_LN2_16), a);
    __m512d q = _mm512_fmadd_pd(r, _mm512_set1_pd(0x1p6 * EF_TANH_E4),
                                _mm512_set1_pd(0x1p5 * EF_TANH_E3));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(0x1p4 * EF_TANH_E2));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(0x1p3 * EF_TANH_E1));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(0x1p2 * EF_TANH_E0));
    ef512_tanh_st st = {_mm512_mul_pd(r, _mm512_fmadd_pd(r, q, _mm512_set1_pd(2.0))),
                        ef512_exp_scale(t)};
    return st;
}
/* e = fma(s, u, s - 1), e / (e + 2), without the sign */
EF512_INLINE __m512d ef512_tanh_value(ef512_tanh_st st) {
    __m512d e = _mm512_fmadd_pd(st.s, st.u, _mm512_sub_pd(st.s, _mm512_set1_pd(1.0)));
    return _mm512_div_pd(e, _mm512_add_pd(e, _mm512_set1_pd(2.0)));
}
/* x's sign put on the floats. */
EF512_INLINE __m512i ef512_tanh_finish(float *y, __mmask16 k, __m512 xf, ef512_tanh_st c0,
                                       ef512_tanh_st c1, __m512d d0, __m512d d1) {
    (void)c0, (void)c1;
    /* (x & sign bit) | d */
    ef512_store16(y, k, _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
                            _mm512_castps_si512(xf), _mm512_set1_epi32((int)0x80000000u),
                            _mm512_castps_si512(ef512_to_float(d0, d1)), 0xea)));
    return ef512_low_dwords_pd(d0, d1);
}

#define EF512_TANH_OUT(kx) ef_abs_out(kx, EF_TANH_BOUND)
EF512_PIPE_FN(ef512_tanh_scan, ef512_tanh_st, ef512_tanh_stage, ef512_tanh_value,
              ef512_tanh_finish, ef512_abs_key16, EF512_TANH_OUT)

#define EF512_TRIG_OUT(kx) ef_abs_out(kx, EF_TRIG_BOUND)
EF512_PIPE_FN(ef512_sin_scan, ef512_trig_st, ef512_trig_stage, ef512_sin_value, ef512_sin_finish,
              ef512_abs_key16, EF512_TRIG_OUT)
EF512_PIPE_FN(ef512_cos_scan, ef512_trig_st, ef512_trig_stage, ef512_cos_value, ef512_cos_finish,
              ef512_abs_key16, EF512_TRIG_OUT)

#endif
