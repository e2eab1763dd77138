/* elementary_more_fast.c - the vectorised float32 paths of elementary_more's log2, log10,
 * asinh, acosh, atanh, cbrt, atan, asin, acos, tan, erf, erfc and erf_inv, of
 * elementary_gamma's lgamma and digamma (elementary_f32_gamma.h), and of elementary2's atan2
 * and pow (docs/numerics.md, "float32 fast paths").
 *
 * elementary_f32_more.h (the log family, cbrt, pow) and elementary_f32_inv.h (inverse trig,
 * tan, the error functions) evaluate every element in double and flag the few they cannot
 * round with certainty; those are redone by the exact path (elementary_scalar_more.h: the
 * double-double algorithm rounded once, with the hard-case table), so the results are the
 * correctly rounded ones, bitwise those of the scalar path, only faster.
 *
 * The same loops (elementary_more_fast_loops.h) are compiled for every dispatch level.
 */
#include <string.h>

#include "native.h"
#include "elementary_f32_more.h"
#include "elementary_f32_inv.h"
#include "elementary_f32_gamma.h"

#define MF_BLOCK_LEN 1024
/* elementary2's functions in the block loops' switch (not ELEM_* codes) */
#define MF_ATAN2 (-1)
#define MF_POW (-2)

/* Whether the n floats at p and at y do not overlap. */
static int mf_apart(const float *p, const float *y, ptrdiff_t n) {
    uintptr_t pa = (uintptr_t)p, ya = (uintptr_t)y, nb = (uintptr_t)n * sizeof *p;
    return pa + nb <= ya || ya + nb <= pa;
}

/* The exact path for one element (elementary_more.c, elementary_scalar_more.h). */
static float mf_exact(int fn, float x, float x2) {
    if (fn == MF_ATAN2) return elementary2_exact_f32(ELEM2_ATAN2, x, x2);
    if (fn == MF_POW) return elementary2_exact_f32(ELEM2_POW, x, x2);
    return elementary_more_exact_f32(fn, x);
}

#define SFX scalar
#include "elementary_more_fast_loops.h"
#undef SFX

#ifdef INVARAX_X86
#define MF_HAVE_X86 1
TARGET_BEGIN("avx2,fma")
#define SFX avx2
#include "elementary_more_fast_loops.h"
#undef SFX
TARGET_END
TARGET_BEGIN("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")
#define SFX avx512
#include "elementary_more_fast_loops.h"
#undef SFX
TARGET_END
#endif

static void mf_run(int fn, const float *x, const float *x2, float *y, ptrdiff_t n) {
#ifdef MF_HAVE_X86
    int isa = isa_current();
    if (isa >= ISA_AVX512) {
        more_fast_avx512(fn, x, x2, y, n);
        return;
    }
    if (isa >= ISA_AVX2) {
        more_fast_avx2(fn, x, x2, y, n);
        return;
    }
#endif
    more_fast_scalar(fn, x, x2, y, n);
}

int elementary_more_fast(int fn, const float *x, float *y, ptrdiff_t n) {
    switch (fn) {
    case ELEM_LOG2:
    case ELEM_LOG10:
    case ELEM_ASINH:
    case ELEM_ACOSH:
    case ELEM_ATANH:
    case ELEM_CBRT:
    case ELEM_ATAN:
    case ELEM_ASIN:
    case ELEM_ACOS:
    case ELEM_TAN:
    case ELEM_ERF:
    case ELEM_ERFC:
    case ELEM_ERF_INV:
    case ELEM_LGAMMA:  /* called by elementary_gamma.c */
    case ELEM_DIGAMMA:
        mf_run(fn, x, NULL, y, n);
        return 1;
    }
    return 0;
}

int elementary2_fast(int fn, const float *a, const float *b, float *out, ptrdiff_t n) {
    if (fn != ELEM2_ATAN2 && fn != ELEM2_POW) return 0;
    mf_run(fn == ELEM2_ATAN2 ? MF_ATAN2 : MF_POW, a, b, out, n);
    return 1;
}
