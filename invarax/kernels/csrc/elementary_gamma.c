/* elementary_gamma.c - invarax's lgamma and digamma in float32 and float64 (docs/numerics.md,
 * "lgamma and digamma"); elementary.c hands these functions here.
 *
 * float64: elementary_gamma.h's algorithms. float32: elementary_more_fast.c's vectorised path
 * (elementary_f32_gamma.h), which redoes the elements it flags by the exact path
 * (elementary_scalar_more.h: the same double algorithm with parts to about 2^-75, rounded
 * once, with the hard cases of elementary_hard.h).
 *
 * The float64 loops are compiled for the baseline and for AVX2+FMA; both perform the same
 * IEEE operations (fma is C99's, correctly rounded in hardware or software), so every
 * dispatch level gives the same bits.
 */
#include "native.h"
#include "elementary_gamma.h"

#define GAMMA_LOOPS(SFX)                                                                     \
    static void elementary_gamma_##SFX(int fn, const double *x, double *y, ptrdiff_t n) {    \
        if (fn == ELEM_LGAMMA) {                                                             \
            EM_LOOP_F64(eg_lgamma)                                                           \
        } else {                                                                             \
            EM_LOOP_F64(eg_digamma)                                                          \
        }                                                                                    \
    }

GAMMA_LOOPS(scalar)

#ifdef INVARAX_X86
#define GAMMA_HAVE_X86 1
TARGET_BEGIN("avx2,fma")
GAMMA_LOOPS(avx2)
TARGET_END
#endif

void elementary_gamma(int fn, int dbl, const void *x, void *y, ptrdiff_t n) {
    if (!dbl) { /* elementary_more_fast.c */
        elementary_more_fast(fn, x, y, n);
        return;
    }
#ifdef GAMMA_HAVE_X86
    if (isa_current() >= ISA_AVX2) {
        elementary_gamma_avx2(fn, x, y, n);
        return;
    }
#endif
    elementary_gamma_scalar(fn, x, y, n);
}
