/* elementary_fast.c - the vectorised float32 paths of log2, log10, asinh, acosh, atanh and
 * cbrt (elementary_more.c hands them here) and of pow (elementary2) (docs/numerics.md,
 * "float32 fast paths").
 *
 * Each block of EV_BLOCK elements is computed by elementary_f32_more.h's fast path, compiled
 * for every dispatch level (elementary_fast_loops.h); the elements it flags are redone one by
 * one by the exact scalar path (ev_fix, ev_fix_pow: the double-double algorithms of
 * elementary_inverse.h and elementary_pow.h, rounded once, with the hard-case table), so the
 * results are the correctly rounded ones, bitwise those of the scalar path, on every level.
 */
#include "native.h"
#include "elementary_f32_more.h"
#include "elementary_pow.h"
#include "elementary_hard.h"

#define EV_BLOCK 1024

typedef int (*ev_block1)(const float *restrict, float *restrict, int *restrict,
                         ptrdiff_t);
typedef int (*ev_block2)(const float *restrict, const float *restrict, float *restrict,
                         int *restrict, ptrdiff_t);

static const elem_hard_table HARD_FAST[ELEM_COUNT] = ELEM_HARD_TABLES;

/* The correctly rounded float result of unary fn at x: elementary_more.c's scalar path. */
static float ev_fix(int fn, float x) {
    double v = x, d;
    switch (fn) {
    case ELEM_LOG2: d = ei_log2(v); break;
    case ELEM_LOG10: d = ei_log10(v); break;
    case ELEM_ASINH: d = ei_asinh(v); break;
    case ELEM_ACOSH: d = ei_acosh(v); break;
    case ELEM_ATANH: d = ei_atanh(v); break;
    default: d = ei_cbrt(v); break;
    }
    return em_f32_is_hard(d) ? elem_hard_lookup(&HARD_FAST[fn], x, (float)d) : (float)d;
}

/* ---- the block functions, once per dispatch level ------------------------------------ */

#define SFX scalar
#include "elementary_fast_loops.h"
#undef SFX

#ifdef INVARAX_X86
#define EV_HAVE_X86 1
TARGET_BEGIN("avx2,fma")
#define SFX avx2
#include "elementary_fast_loops.h"
#undef SFX
TARGET_END
TARGET_BEGIN("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")
#define SFX avx512
#include "elementary_fast_loops.h"
#undef SFX
TARGET_END
#endif

/* Whether [p, p + n) and [q, q + n) (floats) are disjoint. */
static int ev_apart(const float *p, const float *q, ptrdiff_t n) {
    uintptr_t pa = (uintptr_t)p, qa = (uintptr_t)q, nb = (uintptr_t)n * sizeof *p;
    return pa + nb <= qa || qa + nb <= pa;
}

int elementary_more_fast(int fn, const float *x, float *y, ptrdiff_t n) {
    ev_block1 block = unary_block_scalar(fn);
#ifdef EV_HAVE_X86
    int isa = isa_current();
    if (isa >= ISA_AVX512) block = unary_block_avx512(fn);
    else if (isa >= ISA_AVX2) block = unary_block_avx2(fn);
#endif
    if (block == NULL) return 0;
    /* written into y directly unless x and y overlap (then into yb first, keeping x) */
    int apart = ev_apart(x, y, n);
    for (ptrdiff_t b = 0; b < n; b += EV_BLOCK) {
        ptrdiff_t m = n - b < EV_BLOCK ? n - b : EV_BLOCK;
        float yb[EV_BLOCK];
        float *yw = apart ? y + b : yb;
        int fl[EV_BLOCK];
        if (block(x + b, yw, fl, m))
            for (ptrdiff_t i = 0; i < m; i++)
                if (fl[i]) yw[i] = ev_fix(fn, x[b + i]);
        if (!apart) memcpy(y + b, yb, (size_t)m * sizeof *yb);
    }
    return 1;
}

int elementary2_fast(int fn, const float *a, const float *b, float *out, ptrdiff_t n) {
    if (fn != 1) return 0; /* pow only */
    ev_block2 block = pow_fast_scalar;
#ifdef EV_HAVE_X86
    int isa = isa_current();
    if (isa >= ISA_AVX512) block = pow_fast_avx512;
    else if (isa >= ISA_AVX2) block = pow_fast_avx2;
#endif
    int apart = ev_apart(a, out, n) && ev_apart(b, out, n);
    for (ptrdiff_t s = 0; s < n; s += EV_BLOCK) {
        ptrdiff_t m = n - s < EV_BLOCK ? n - s : EV_BLOCK;
        float yb[EV_BLOCK];
        float *yw = apart ? out + s : yb;
        int fl[EV_BLOCK];
        if (block(a + s, b + s, yw, fl, m))
            for (ptrdiff_t i = 0; i < m; i++)
                if (fl[i]) yw[i] = ep_pow_f32(a[s + i], b[s + i]);
        if (!apart) memcpy(out + s, yb, (size_t)m * sizeof *yb);
    }
    return 1;
}
