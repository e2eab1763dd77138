/* elementary_gamma.c - invarax's lgamma and digamma in float32 and float64 (docs/numerics.md,
 * "lgamma and digamma"); elementary.c hands these functions here.
 *
 * float64: elementary_gamma.h's algorithms. float32: the same double algorithm rounded once,
 * the correctly rounded result wherever em_f32_is_hard is false; where it is true,
 * elementary_hard.h (made by tools/exhaustive_f32.py over all 2^32 inputs) holds the inputs
 * whose double result rounds the wrong way, with their correctly rounded results.
 *
 * The loops are compiled for the baseline and for AVX2+FMA; both perform the same IEEE
 * operations (fma is C99's, correctly rounded in hardware or software), so every dispatch
 * level gives the same bits.
 */
#include "native.h"
#include "elementary_gamma.h"
#include "elementary_hard.h"
#include "elementary_f32_gamma.h"

static const elem_hard_table HARD_GAMMA[ELEM_COUNT] = ELEM_HARD_TABLES;

/* y[i] = F(x[i]) in double, or F##_f32(x[i]) (the same algorithm with components to
 * about 2^-75, ample for float32) rounded to float with the hard cases of table fn looked up. */
#define GAMMA_LOOP(F) EM_ROUNDED_LOOP(F, F##_f32, HARD_GAMMA)

#define GAMMA_LOOPS(SFX)                                                                     \
    static void elementary_gamma_##SFX(int fn, int dbl, const void *x, void *y,              \
                                       ptrdiff_t n) {                                        \
        if (fn == ELEM_LGAMMA) {                                                             \
            GAMMA_LOOP(eg_lgamma)                                                            \
        } else {                                                                             \
            GAMMA_LOOP(eg_digamma)                                                           \
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
    /* float32: the vectorised path of elementary_more_fast.c (elementary_f32_gamma.h), which
     * redoes the elements it flags by elementary_gamma_exact_f32 */
    if (!dbl && elementary_more_fast(fn, x, y, n)) return;
#ifdef GAMMA_HAVE_X86
    if (isa_current() >= ISA_AVX2) {
        elementary_gamma_avx2(fn, dbl, x, y, n);
        return;
    }
#endif
    elementary_gamma_scalar(fn, dbl, x, y, n);
}

/* The exact float32 path for one element (the fast path's fix-up). */
float elementary_gamma_exact_f32(int fn, float x) {
    float y;
    elementary_gamma_scalar(fn, 0, &x, &y, 1);
    return y;
}
