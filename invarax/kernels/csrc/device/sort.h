/* sort.h - sorting a row (docs/numerics.md, "Reductions": sort), written once as portable C
 * for the GPU's kernels (NVRTC: sort.cu) and the host (gcc: the tests compare it with the
 * CPU's sort bit for bit).
 *
 * A sort's result is a permutation, so it has the CPU's bits when its order relation and
 * its rule for equal keys are the CPU's: every sort here is stable (equal keys keep their
 * input order), and the relation is one of
 *   ORD_SORT_ASCENDING   NumPy's and lax.sort's: a < b, a NaN (of either sign) after every
 *                        number, -0.0 and 0.0 equal (integers: a < b);
 *   ORD_SORT_DESCENDING  the same relation reversed (b before a), NaNs first: jnp.argsort
 *                        with descending=True;
 *   ORD_SORT_TOTAL_DESC  lax.top_k's: IEEE's total order, largest first: +NaN, +inf, ...,
 *                        +0.0, -0.0, ..., -inf, -NaN (integers: a > b).
 *
 * The algorithm (stability fixes the result; the algorithm only fixes the speed): runs of
 * ORD_SORT_RUN keys sorted by insertion, then merge passes doubling the run length, each
 * output position of a pass found by a binary search along its merge path, so nt threads
 * split every pass evenly. It sorts indices p of the row, comparing key[p * sk]. The work is
 * cut into phases (ord_sort_phases); within a phase the nt threads write disjoint outputs
 * and read only what earlier phases wrote, so a GPU block runs each phase on all its
 * threads with a barrier between phases, and the host runs the threads one after the
 * other. */
#ifndef INVARAX_SORT_H
#define INVARAX_SORT_H

#include "order.h"

enum { ORD_SORT_ASCENDING = 0, ORD_SORT_DESCENDING = 1, ORD_SORT_TOTAL_DESC = 2 };

/* Keys sorted by insertion before the first merge pass. */
#define ORD_SORT_RUN 16

/* NumPy's sort relation (npysort's FLOAT_LT): a before b. For integers the NaN tests are
 * false and this is a < b. */
#define ORD_SORT_LT(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))

/* The signed integer whose order is IEEE's total order of the float with these bits:
 * negative floats have their magnitude bits flipped (so -0.0 is -1, below +0.0's 0). */
ORD_FN int32_t ord_total_f32(float v) {
    union { float f; int32_t i; } u;
    u.f = v;
    return u.i ^ (int32_t)((uint32_t)(u.i >> 31) >> 1);
}
ORD_FN int64_t ord_total_f64(double v) {
    union { double f; int64_t i; } u;
    u.f = v;
    return u.i ^ (int64_t)((uint64_t)(u.i >> 63) >> 1);
}
#define ORD_TOTAL_SELF(v) (v) /* integers: their order is total */

/* The merge passes of a row of n keys, and its phases: the runs, one per merge pass, and a
 * copy when the passes leave the result in the scratch buffer. */
ORD_FN int ord_sort_passes(int64_t n) {
    int passes = 0;
    for (int64_t w = ORD_SORT_RUN; w < n; w *= 2) passes++;
    return passes;
}
ORD_FN int ord_sort_phases(int64_t n) { return 1 + ord_sort_passes(n) + ord_sort_passes(n) % 2; }

/* ORD_SORT_DEFINE(T, SFX, TOTAL) defines, for key type T (TOTAL(v): the integer of v's
 * total order):
 *   ord_sort_before_SFX(a, b, mode): whether key a goes before key b (not equal) by mode;
 *   ord_sort_phase_SFX(q, key, sk, perm, scratch, n, mode, init, t, nt): thread t of nt's
 *     part of phase q: sorting the row's indices perm[0..n) stably by key[perm[i] * sk]
 *     (init: perm starts as 0, 1, ..., n - 1; else it holds any permutation, whose order
 *     decides between equal keys). When every phase has run for every thread, perm holds
 *     the sorted indices; scratch (n values) is overwritten. */
#define ORD_SORT_DEFINE(T, SFX, TOTAL)                                                      \
    ORD_FN int ord_sort_before_##SFX(T a, T b, int mode) {                                  \
        return mode == ORD_SORT_ASCENDING    ? ORD_SORT_LT(a, b)                             \
               : mode == ORD_SORT_DESCENDING ? ORD_SORT_LT(b, a)                             \
                                             : TOTAL(a) > TOTAL(b);                         \
    }                                                                                       \
    /* the runs t, t + nt, ...: insertion keeps equal keys in order */                      \
    ORD_FN void ord_sort_runs_##SFX(const T *key, int64_t sk, int64_t *perm, int64_t n,      \
                                    int mode, int init, int64_t t, int64_t nt) {            \
        for (int64_t lo = t * ORD_SORT_RUN; lo < n; lo += nt * ORD_SORT_RUN) {              \
            const int64_t hi = n - lo < ORD_SORT_RUN ? n : lo + ORD_SORT_RUN;               \
            if (init)                                                                       \
                for (int64_t i = lo; i < hi; i++) perm[i] = i;                              \
            for (int64_t i = lo + 1; i < hi; i++) {                                         \
                const int64_t p = perm[i];                                                  \
                const T v = key[p * sk];                                                    \
                int64_t j = i;                                                              \
                for (; j > lo && ord_sort_before_##SFX(v, key[perm[j - 1] * sk], mode); j--) \
                    perm[j] = perm[j - 1];                                                  \
                perm[j] = p;                                                                \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    /* outputs [t c, (t + 1) c) of the pass merging the runs of width w of src into dst:   \
     * in each pair (A, B) of runs, A's key goes first unless B's is strictly before it */   \
    ORD_FN void ord_sort_merge_##SFX(const T *key, int64_t sk, const int64_t *src,          \
                                     int64_t *dst, int64_t n, int64_t w, int mode,          \
                                     int64_t t, int64_t nt) {                               \
        const int64_t c = (n + nt - 1) / nt, end = n - t * c < c ? n : t * c + c;           \
        for (int64_t p = t * c; p < end;) {                                                 \
            const int64_t a0 = p - p % (2 * w), a1 = n - a0 < w ? n : a0 + w;               \
            const int64_t b1 = n - a0 < 2 * w ? n : a0 + 2 * w, diag = p - a0;             \
            /* i: how many of A's keys are among the pair's first diag outputs */           \
            int64_t lo = diag > b1 - a1 ? diag - (b1 - a1) : 0;                             \
            int64_t hi = diag < a1 - a0 ? diag : a1 - a0;                                   \
            while (lo < hi) {                                                               \
                const int64_t mid = lo + (hi - lo) / 2;                                     \
                if (ord_sort_before_##SFX(key[src[a1 + diag - 1 - mid] * sk],               \
                                          key[src[a0 + mid] * sk], mode))                   \
                    hi = mid;                                                               \
                else                                                                        \
                    lo = mid + 1;                                                           \
            }                                                                               \
            int64_t i = a0 + lo, j = a1 + diag - lo;                                        \
            for (const int64_t stop = end < b1 ? end : b1; p < stop; p++)                   \
                dst[p] = j < b1 && (i == a1 || ord_sort_before_##SFX(key[src[j] * sk],      \
                                                                     key[src[i] * sk], mode)) \
                             ? src[j++] : src[i++];                                         \
        }                                                                                   \
    }                                                                                       \
    ORD_FN void ord_sort_phase_##SFX(int q, const T *key, int64_t sk, int64_t *perm,        \
                                     int64_t *scratch, int64_t n, int mode, int init,       \
                                     int64_t t, int64_t nt) {                               \
        const int passes = ord_sort_passes(n);                                              \
        if (q == 0) {                                                                       \
            ord_sort_runs_##SFX(key, sk, perm, n, mode, init, t, nt);                       \
        } else if (q <= passes) { /* pass q: perm -> scratch when q is odd, else back */    \
            const int64_t w = (int64_t)ORD_SORT_RUN << (q - 1);                             \
            ord_sort_merge_##SFX(key, sk, q % 2 ? perm : scratch, q % 2 ? scratch : perm,   \
                                 n, w, mode, t, nt);                                        \
        } else { /* an odd number of passes: the result back into perm */                  \
            const int64_t c = (n + nt - 1) / nt;                                            \
            for (int64_t p = t * c; p < n && p < t * c + c; p++) perm[p] = scratch[p];      \
        }                                                                                   \
    }

ORD_SORT_DEFINE(float, f32, ord_total_f32)
ORD_SORT_DEFINE(double, f64, ord_total_f64)
ORD_SORT_DEFINE(int8_t, i8, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(uint8_t, u8, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(int16_t, i16, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(uint16_t, u16, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(int32_t, i32, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(uint32_t, u32, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(int64_t, i64, ORD_TOTAL_SELF)
ORD_SORT_DEFINE(uint64_t, u64, ORD_TOTAL_SELF)

#endif
