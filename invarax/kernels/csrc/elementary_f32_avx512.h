/* elementary_f32_avx512.h - the AVX-512 scans of the float32 fast paths whose generic loops
 * (elementary_loops.h) GCC cannot vectorise well: exp's and tanh's 16-entry table lookup
 * becomes a register permute (vpermt2pd) here, where the generic loop loads element by
 * element (or gathers); sin and cos, which the generic loops only flag element by element,
 * get a scan (about 30 vector operations per 8 elements where GCC's flagging loop has 58).
 *
 * Each scan computes exactly the IEEE operations of its elementary_f32.h function, in the
 * same order (fma as fma, table entries from the same table), so every dispatch level gives
 * the same bits (tests/test_isa_invariance.py, tests/test_elementary.py compare them); and
 * it returns what EL_SCAN_FN's loop returns: whether an element of the block needs the
 * per-element pass. Included by elementary.c inside its AVX-512 target region only.
 */
#ifndef INVARAX_ELEMENTARY_F32_AVX512_H
#define INVARAX_ELEMENTARY_F32_AVX512_H

#include <immintrin.h>

#include "elementary_f32.h"

#define EF512_INLINE static inline __attribute__((always_inline))

/* A scan of m floats 8 at a time (the tail by masked loads and stores): VALUE maps the
 * inputs (as doubles) to the results, KEY the inputs' bits to the range key; the block
 * needs the per-element pass where the least midpoint key is below EF_MID_WIDTH or OUT of
 * the greatest range key holds (the masked-off lanes count in neither). */
#define EF512_SCAN_FN(NAME, VALUE, KEY, OUT)                                                \
    static int NAME(const float *restrict x, float *restrict y, ptrdiff_t m) {              \
        const __m512i low29 = _mm512_set1_epi64(0x1fffffffLL);                              \
        const __m512i base = _mm512_set1_epi64((long long)(0x10000000ULL - 0x4000ULL));     \
        __m512i mid = _mm512_set1_epi64(-1);                                                \
        __m256i key = _mm256_setzero_si256();                                               \
        for (ptrdiff_t i = 0; i < m; i += 8) {                                              \
            __mmask8 k = m - i >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (m - i)) - 1);     \
            __m256 xf = _mm256_maskz_loadu_ps(k, x + i);                                    \
            __m512d d = VALUE(_mm512_cvtps_pd(xf));                                         \
            _mm256_mask_storeu_ps(y + i, k, _mm512_cvtpd_ps(d));                            \
            __m512i mk = _mm512_sub_epi64(_mm512_and_si512(_mm512_castpd_si512(d), low29),  \
                                          base);                                            \
            mid = _mm512_mask_min_epu64(mid, k, mid, mk);                                   \
            key = _mm256_mask_max_epu32(key, k, key, KEY(_mm256_castps_si256(xf)));         \
        }                                                                                   \
        uint64_t least = _mm512_reduce_min_epu64(mid);                                      \
        uint32_t kx = (uint32_t)_mm512_reduce_max_epu32(_mm512_zextsi256_si512(key));       \
        return (least < EF_MID_WIDTH) | (OUT(kx));                                          \
    }

EF512_INLINE __m256i ef512_abs_key(__m256i xb) {
    return _mm256_and_si256(xb, _mm256_set1_epi32(0x7fffffff));
}

/* ef_exp_value, 8 lanes. Where the generic code adds k = floor(N / 16) to the exponent of
 * y = EF_EXP_TAB[j] p, this scales y by 2^floor(N / 16) with vscalefpd (nd / 16 is exact):
 * the same value wherever y 2^k is a normal double, i.e. for every x the scan does not send
 * to the per-element pass (|x| < 87.33), and one operation fewer. */
EF512_INLINE __m512d ef512_exp_value(__m512d v) {
    const __m512d shift = _mm512_set1_pd(EM_SHIFT), one = _mm512_set1_pd(1.0);
    __m512d t = _mm512_fmadd_pd(v, _mm512_set1_pd(EF_EXP16_C), shift);
    __m512d nd = _mm512_sub_pd(t, shift);
    __m512d r = _mm512_fnmadd_pd(nd, _mm512_set1_pd(EF_LN2_16), v); /* fma(-nd, LN2_16, v) */
    __m512d q = _mm512_fmadd_pd(r, _mm512_set1_pd(EF_EXP16_Q3), _mm512_set1_pd(EF_EXP16_Q2));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_EXP16_Q1));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_EXP16_Q0));
    __m512d p = _mm512_fmadd_pd(r, _mm512_fmadd_pd(r, q, one), one);
    /* EF_EXP_TAB[N & 15]: vpermt2pd reads the low 4 bits of each index, and t's bits are
     * SHIFT's (low bits zero) + N */
    __m512d tab = _mm512_permutex2var_pd(_mm512_loadu_pd(EF_EXP_TAB), _mm512_castpd_si512(t),
                                         _mm512_loadu_pd(EF_EXP_TAB + 8));
    return _mm512_scalef_pd(_mm512_mul_pd(tab, p), _mm512_mul_pd(nd, _mm512_set1_pd(0.0625)));
}

#define EF512_EXP_OUT(kx) ef_abs_out(kx, EF_EXP_BOUND)
EF512_SCAN_FN(ef512_exp_scan, ef512_exp_value, ef512_abs_key, EF512_EXP_OUT)

/* ---- scans of 16 floats at a time --------------------------------------------------------
 * VALUE16 maps 16 floats to their 16 results (as floats) and the low 32 bits of each
 * element's double result (before its rounding to float; a sign applied after the rounding
 * changes neither the float's magnitude nor these bits), which hold the whole midpoint key
 * (ef_mid_key's 29 low bits, minus the same constant in 32-bit arithmetic: below
 * EF_MID_WIDTH exactly where the 64-bit key is). The key of the inputs' bits and OUT are
 * EF512_SCAN_FN's. Eight-lane double arithmetic on the two halves, the keys, signs and
 * stores on 16 lanes; 32 floats per iteration, so that four vectors' chains are in flight
 * (on the Zen 4, 16 per iteration was slower than GCC's four-times unrolled generic loop). */
#define EF512_SCAN16_FN(NAME, VALUE16, KEY, OUT)                                            \
    static int NAME(const float *restrict x, float *restrict y, ptrdiff_t m) {              \
        const __m512i low29 = _mm512_set1_epi32(0x1fffffff);                                \
        const __m512i base = _mm512_set1_epi32(0x10000000 - 0x4000);                        \
        __m512i mid = _mm512_set1_epi32(-1), key = _mm512_setzero_si512();                  \
        ptrdiff_t i = 0;                                                                    \
        for (; i + 32 <= m; i += 32) {                                                      \
            __m512 xf[2] = {_mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + 16)}, yf[2];    \
            __m512i lo[2];                                                                  \
            for (int j = 0; j < 2; j++) yf[j] = VALUE16(xf[j], &lo[j]);                     \
            for (int j = 0; j < 2; j++) {                                                   \
                _mm512_storeu_ps(y + i + 16 * j, yf[j]);                                    \
                __m512i mk = _mm512_sub_epi32(_mm512_and_si512(lo[j], low29), base);        \
                mid = _mm512_min_epu32(mid, mk);                                            \
                key = _mm512_max_epu32(key, KEY(_mm512_castps_si512(xf[j])));               \
            }                                                                               \
        }                                                                                   \
        for (; i < m; i += 16) { /* the tail, by masked loads and stores */                 \
            __mmask16 k = m - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (m - i)) - 1); \
            __m512 xf = _mm512_maskz_loadu_ps(k, x + i);                                    \
            __m512i lo;                                                                     \
            _mm512_mask_storeu_ps(y + i, k, VALUE16(xf, &lo));                              \
            __m512i mk = _mm512_sub_epi32(_mm512_and_si512(lo, low29), base);               \
            mid = _mm512_mask_min_epu32(mid, k, mid, mk);                                   \
            key = _mm512_mask_max_epu32(key, k, key, KEY(_mm512_castps_si512(xf)));         \
        }                                                                                   \
        uint32_t least = _mm512_reduce_min_epu32(mid);                                      \
        uint32_t kx = _mm512_reduce_max_epu32(key);                                         \
        return (least < EF_MID_WIDTH) | (OUT(kx));                                          \
    }

/* The low 32 bits of each 64-bit lane of a (elements 0-7) and b (8-15). */
EF512_INLINE __m512i ef512_low_dwords(__m512i a, __m512i b) {
    const __m512i pick =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_epi32(a, pick, b);
}
EF512_INLINE __m512i ef512_low_dwords_pd(__m512d a, __m512d b) {
    return ef512_low_dwords(_mm512_castpd_si512(a), _mm512_castpd_si512(b));
}
/* Elements 0-7 and 8-15 of 16 floats, as doubles (exact). */
EF512_INLINE __m512d ef512_lo8(__m512 xf) { return _mm512_cvtps_pd(_mm512_castps512_ps256(xf)); }
EF512_INLINE __m512d ef512_hi8(__m512 xf) {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(xf), 1)));
}
/* Two vectors of 8 doubles rounded to 16 floats. */
EF512_INLINE __m512 ef512_to_float(__m512d a, __m512d b) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(a)), _mm512_cvtpd_ps(b), 1);
}

EF512_INLINE __m512i ef512_abs_key16(__m512i xb) {
    return _mm512_and_si512(xb, _mm512_set1_epi32(0x7fffffff));
}

/* ---- sin, cos: ef_sincos_value, 16 lanes ------------------------------------------------ */

/* ef_sincos_value's operations up to the quadrant's choice of polynomial, 8 lanes: the result
 * without its sign; *t gets x 2/pi + SHIFT, whose low bits are n's. */
EF512_INLINE __m512d ef512_sincos_abs(__m512d v, __m512d *t, const int cos_) {
    const __m512d shift = _mm512_set1_pd(EM_SHIFT);
    *t = _mm512_add_pd(_mm512_mul_pd(v, _mm512_set1_pd(EM_TWO_OVER_PI)), shift);
    __m512d nd = _mm512_sub_pd(*t, shift);
    __m512d r = _mm512_fnmadd_pd(nd, _mm512_set1_pd(EM_PIO2_2),
                                 _mm512_fnmadd_pd(nd, _mm512_set1_pd(EM_PIO2_1), v));
    __m512d z = _mm512_mul_pd(r, r);
    __m512d sp = _mm512_fmadd_pd(z, _mm512_set1_pd(EF_SIN_S5), _mm512_set1_pd(EF_SIN_S4));
    sp = _mm512_fmadd_pd(z, sp, _mm512_set1_pd(EF_SIN_S3));
    sp = _mm512_fmadd_pd(z, sp, _mm512_set1_pd(EF_SIN_S2));
    sp = _mm512_fmadd_pd(z, sp, _mm512_set1_pd(EF_SIN_S1));
    __m512d s = _mm512_fmadd_pd(_mm512_mul_pd(r, z), sp, r);
    __m512d cp = _mm512_fmadd_pd(z, _mm512_set1_pd(EF_COS_C4), _mm512_set1_pd(EF_COS_C3));
    cp = _mm512_fmadd_pd(z, cp, _mm512_set1_pd(EF_COS_C2));
    cp = _mm512_fmadd_pd(z, cp, _mm512_set1_pd(EF_COS_C1));
    __m512d c = _mm512_fmadd_pd(_mm512_mul_pd(z, z), cp,
                                _mm512_sub_pd(_mm512_set1_pd(1.0),
                                              _mm512_mul_pd(_mm512_set1_pd(0.5), z)));
    /* q = n + cos_: the cosine polynomial where q is odd */
    __mmask8 odd = cos_ ? _mm512_testn_epi64_mask(_mm512_castpd_si512(*t), _mm512_set1_epi64(1))
                        : _mm512_test_epi64_mask(_mm512_castpd_si512(*t), _mm512_set1_epi64(1));
    return _mm512_mask_blend_pd(odd, s, c);
}

/* The sign (bit 1 of q, as in ef_sincos_value) is put on the floats, and sin's x for
 * |x| < EF_SIN_TINY, chosen after it as there. */
EF512_INLINE __m512 ef512_sincos16(__m512 xf, __m512i *lo, const int cos_) {
    __m512d t0, t1;
    __m512d d0 = ef512_sincos_abs(ef512_lo8(xf), &t0, cos_);
    __m512d d1 = ef512_sincos_abs(ef512_hi8(xf), &t1, cos_);
    *lo = ef512_low_dwords_pd(d0, d1);
    __m512i q = ef512_low_dwords_pd(t0, t1); /* n mod 2^32 */
    if (cos_) q = _mm512_add_epi32(q, _mm512_set1_epi32(1));
    /* y ^ ((q << 30) & sign bit) */
    __m512i y = _mm512_ternarylogic_epi32(_mm512_castps_si512(ef512_to_float(d0, d1)),
                                          _mm512_slli_epi32(q, 30),
                                          _mm512_set1_epi32((int)0x80000000u), 0x78);
    __m512 yf = _mm512_castsi512_ps(y);
    if (!cos_) {
        __m512 ax = _mm512_castsi512_ps(ef512_abs_key16(_mm512_castps_si512(xf)));
        __mmask16 tiny = _mm512_cmp_ps_mask(ax, _mm512_set1_ps((float)EF_SIN_TINY), _CMP_LT_OQ);
        yf = _mm512_mask_blend_ps(tiny, yf, xf);
    }
    return yf;
}
EF512_INLINE __m512 ef512_sin16(__m512 xf, __m512i *lo) { return ef512_sincos16(xf, lo, 0); }
EF512_INLINE __m512 ef512_cos16(__m512 xf, __m512i *lo) { return ef512_sincos16(xf, lo, 1); }

/* ---- tanh: ef_tanh_value, 16 lanes ------------------------------------------------------ */

/* ef_tanh_value without the sign, 8 lanes, from y = 2|x|: the same operations, EF_EXP_TAB[N &
 * 15] by a register permute (as ef512_exp_value) and 2^k put in its exponent as there. */
EF512_INLINE __m512d ef512_tanh_abs(__m512d y) {
    const __m512d shift = _mm512_set1_pd(EM_SHIFT), one = _mm512_set1_pd(1.0);
    __m512d t = _mm512_fmadd_pd(y, _mm512_set1_pd(EF_EXP16_C), shift);
    __m512d nd = _mm512_sub_pd(t, shift);
    __m512d r = _mm512_fnmadd_pd(nd, _mm512_set1_pd(EF_LN2_16), y);
    __m512d q = _mm512_fmadd_pd(r, _mm512_set1_pd(EF_TANH_E4), _mm512_set1_pd(EF_TANH_E3));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_TANH_E2));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_TANH_E1));
    q = _mm512_fmadd_pd(r, q, _mm512_set1_pd(EF_TANH_E0));
    __m512d u = _mm512_mul_pd(r, _mm512_fmadd_pd(r, q, one));
    __m512i tb = _mm512_castpd_si512(t);
    __m512d tab = _mm512_permutex2var_pd(_mm512_loadu_pd(EF_EXP_TAB), tb,
                                         _mm512_loadu_pd(EF_EXP_TAB + 8));
    /* t's bits are SHIFT's (low 51 bits zero but bit 51) + N, N >= 0: (N >> 4) << 52 is
     * ((t's bits) >> 4) << 52 */
    __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(
        _mm512_castpd_si512(tab), _mm512_slli_epi64(_mm512_srli_epi64(tb, 4), 52)));
    __m512d e = _mm512_fmadd_pd(s, u, _mm512_sub_pd(s, one));
    return _mm512_div_pd(e, _mm512_add_pd(e, _mm512_set1_pd(2.0)));
}

/* 2|x| on the float lanes (exact for every x the scan keeps), x's sign put on the floats. */
EF512_INLINE __m512 ef512_tanh16(__m512 xf, __m512i *lo) {
    __m512 af = _mm512_castsi512_ps(ef512_abs_key16(_mm512_castps_si512(xf)));
    __m512 yf = _mm512_add_ps(af, af);
    __m512d d0 = ef512_tanh_abs(ef512_lo8(yf)), d1 = ef512_tanh_abs(ef512_hi8(yf));
    *lo = ef512_low_dwords_pd(d0, d1);
    /* (x & sign bit) | d */
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(xf), _mm512_set1_epi32((int)0x80000000u),
        _mm512_castps_si512(ef512_to_float(d0, d1)), 0xea));
}

#define EF512_TANH_OUT(kx) ef_abs_out(kx, EF_TANH_BOUND)
EF512_SCAN16_FN(ef512_tanh_scan, ef512_tanh16, ef512_abs_key16, EF512_TANH_OUT)

#define EF512_TRIG_OUT(kx) ef_abs_out(kx, EF_TRIG_BOUND)
EF512_SCAN16_FN(ef512_sin_scan, ef512_sin16, ef512_abs_key16, EF512_TRIG_OUT)
EF512_SCAN16_FN(ef512_cos_scan, ef512_cos16, ef512_abs_key16, EF512_TRIG_OUT)

#endif
