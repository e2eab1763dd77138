/* elementary_f32_avx512.h - the AVX-512 scans of the float32 fast paths whose generic loops
 * (elementary_loops.h) GCC cannot vectorise well: a 16-entry table lookup becomes a
 * register permute (vpermt2pd) here, where the generic loop loads element by element.
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

#endif
