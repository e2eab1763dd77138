/* gemm_avx512.h - the AVX-512 microkernels of the contraction kernel, included by gemm.c:
 * 12 x 32 floats and 12 x 16 doubles (two 512-bit vectors of columns per row).
 *
 * 24 accumulators, two vectors of B and one broadcast of A fill 27 of the 32 zmm registers.
 * Twelve rows keep the row block MC (144) a whole number of tiles, as the AVX2 kernel's six
 * do. Like every microkernel, each element of the tile is one FMA chain in increasing p: the
 * lanes of a vector are different outputs, so the width changes no output's operations.
 */

#define AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))
#define AVX512_MR 12

/* s = fma(a[i], b[j], s) for p in increasing order; C = s (first) or C = C + s. The loops
 * over the twelve rows have constant bounds: the compiler unrolls them and keeps s[][] in
 * registers. */
#define UKR_AVX512(NAME, T, V, ZERO, LOADU, STOREU, ADD, SET1, FMADD, W)                   \
    static AVX512 void NAME(ptrdiff_t kb, const T *a, const T *b, ptrdiff_t ldb, T *c,     \
                            ptrdiff_t ldc, int first) {                                    \
        V s[AVX512_MR][2];                                                                 \
        for (int i = 0; i < AVX512_MR; i++) s[i][0] = s[i][1] = ZERO();                    \
        for (ptrdiff_t p = 0; p < kb; p++, a += AVX512_MR, b += ldb) {                     \
            V b0 = LOADU(b), b1 = LOADU(b + W);                                            \
            for (int i = 0; i < AVX512_MR; i++) {                                          \
                V x = SET1(a[i]);                                                          \
                s[i][0] = FMADD(x, b0, s[i][0]);                                           \
                s[i][1] = FMADD(x, b1, s[i][1]);                                           \
            }                                                                              \
        }                                                                                  \
        _Pragma("GCC unroll 12") for (int i = 0; i < AVX512_MR; i++) {                     \
            T *ci = c + i * ldc;                                                           \
            STOREU(ci, first ? s[i][0] : ADD(LOADU(ci), s[i][0]));                         \
            STOREU(ci + W, first ? s[i][1] : ADD(LOADU(ci + W), s[i][1]));                 \
        }                                                                                  \
    }

UKR_AVX512(ukr_avx512_f32, float, __m512, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps,
           _mm512_add_ps, _mm512_set1_ps, _mm512_fmadd_ps, 16)
UKR_AVX512(ukr_avx512_f64, double, __m512d, _mm512_setzero_pd, _mm512_loadu_pd,
           _mm512_storeu_pd, _mm512_add_pd, _mm512_set1_pd, _mm512_fmadd_pd, 8)
