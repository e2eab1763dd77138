/* reduce.c - the canonical reduction kernels (docs/numerics.md, "Reductions"):
 * pairwise sum, sequential product, max, min, argmax and argmin of float and double rows.
 *
 * reduce_impl.h is compiled once per type for the baseline CPU (16-byte vectors) and, on
 * x86-64, once more for AVX2 (32-byte vectors): the same operations on each output, only
 * more outputs or accumulators at once (GCC/clang vector extensions), so both give the
 * same bits.
 */
#include "native.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The leaf size of the pairwise sum (part of the order). The rest only tunes speed: sums
 * over leading axes keep their accumulators in registers for rows of up to NARROW bytes,
 * else in memory, W outputs at a time; argmax searches chunks of ARG_CHUNK elements. */
#define PW_BLOCK 128
#define NARROW 12288
#define W 4096
#define ARG_CHUNK 1024

/* Vectors of 16 bytes (the baseline of x86-64 and ARM) and of 32 bytes (AVX2). */
typedef float vf32x4 __attribute__((vector_size(16)));
typedef int32_t vi32x4 __attribute__((vector_size(16)));
typedef double vf64x2 __attribute__((vector_size(16)));
typedef int64_t vi64x2 __attribute__((vector_size(16)));
typedef float vf32x8 __attribute__((vector_size(32)));
typedef int32_t vi32x8 __attribute__((vector_size(32)));
typedef double vf64x4 __attribute__((vector_size(32)));
typedef int64_t vi64x4 __attribute__((vector_size(32)));

#ifdef INVARAX_X86
#define HAVE_AVX2 1
#include <immintrin.h>
#endif

/* float */
#define T float
#define IT int32_t
#define IT_MAX INT32_MAX

#define V vf32x4
#define VI vi32x4
#define VN 4
#define SFX f32
#include "reduce_impl.h"
#undef V
#undef VI
#undef VN
#undef SFX

#ifdef HAVE_AVX2
#define V vf32x8
#define VI vi32x8
#define VN 8
#define SFX avx2_f32
/* maxps(x, m) is exactly `x > m ? x : m`; minps(x, m) is `x < m ? x : m`. */
#define VANY(mask) (_mm256_movemask_ps((__m256)(mask)) != 0)
#define VMAX(x, m) _mm256_max_ps(x, m)
#define VMIN(x, m) _mm256_min_ps(x, m)
TARGET_BEGIN("avx2")
#include "reduce_impl.h"
TARGET_END
#undef V
#undef VI
#undef VN
#undef SFX
#undef VANY
#undef VMAX
#undef VMIN
#endif

#undef T
#undef IT
#undef IT_MAX

/* double */
#define T double
#define IT int64_t
#define IT_MAX INT64_MAX

#define V vf64x2
#define VI vi64x2
#define VN 2
#define SFX f64
#include "reduce_impl.h"
#undef V
#undef VI
#undef VN
#undef SFX

#ifdef HAVE_AVX2
#define V vf64x4
#define VI vi64x4
#define VN 4
#define SFX avx2_f64
#define VANY(mask) (_mm256_movemask_pd((__m256d)(mask)) != 0)
#define VMAX(x, m) _mm256_max_pd(x, m)
#define VMIN(x, m) _mm256_min_pd(x, m)
TARGET_BEGIN("avx2")
#include "reduce_impl.h"
TARGET_END
#undef V
#undef VI
#undef VN
#undef SFX
#undef VANY
#undef VMAX
#undef VMIN
#endif

int reduce(int dbl, int op, const void *p, ptrdiff_t m, ptrdiff_t k, ptrdiff_t sm, ptrdiff_t sk,
           void *out) {
#ifdef HAVE_AVX2
    if (isa_current() >= ISA_AVX2)
        return dbl ? reduce_avx2_f64(op, p, m, k, sm, sk, out)
                   : reduce_avx2_f32(op, p, m, k, sm, sk, out);
#endif
    return dbl ? reduce_f64(op, p, m, k, sm, sk, out) : reduce_f32(op, p, m, k, sm, sk, out);
}
