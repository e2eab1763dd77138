/* elementary_f32_gamma.h - the vectorised float32 paths of lgamma and digamma
 * (docs/numerics.md, "lgamma and digamma"), in the scheme of elementary_f32_more.h: every
 * element evaluated in double by a short algorithm with an absolute error below about 2^-46
 * where its terms cancel, so a relative error below 2^-41 wherever |value| >= 2^-5; flagged
 * where ef_near_midpoint, where |value| < 2^-5 (next to the zeros 1, 2 and 1.4616...), or
 * outside the fast range 2^-20 <= x (< 2^100 for lgamma), NaN and every negative x included;
 * elementary_more_fast.c redoes the flagged ones by the exact path (elementary_scalar_more.h's
 * elem_more_f32_exact), so every result is the correctly rounded one, bitwise the exact
 * path's.
 *
 * The shift: z = x + n >= 12 with n = 0 ... 12 steps, each a select, no branch (x + k is
 * exact for a float x); lgamma's product P = x (x + 1) ... (x + n - 1) (each factor's
 * rounding 2^-53: 12 of them) and digamma's sum of reciprocals as one fraction N / D
 * (N <- N (x + k) + D, D <- D (x + k); 2 x 12 roundings, all terms positive).
 * Only IEEE operations, fma and selects; compiled with contraction off (setup.py).
 */
#ifndef INVARAX_ELEMENTARY_F32_GAMMA_H
#define INVARAX_ELEMENTARY_F32_GAMMA_H

#include "elementary_f32_more.h"
#include "elementary_gamma_tables.h"

#define EF_GAMMA_FROM 0x1p-20 /* the fast range starts there */
#define EF_GAMMA_Z 12.0    /* the series are used at z >= EF_GAMMA_Z */
#define EF_LGAMMA_TO 0x1p100
#define EF_GAMMA_SMALL 0x1p-5 /* values below it (next to the zeros) take the exact path */

/* c[0] + c[1] v + ... + c[5] v^5 by fma, written out (constant indices: a loop over the table
 * keeps GCC from vectorising the element loop) */
#define EF_GAMMA_HORNER6(c, v)                                                               \
    fma(v, fma(v, fma(v, fma(v, fma(v, c[5], c[4]), c[3]), c[2]), c[1]), c[0])

/* Whether x is outside [EF_GAMMA_FROM, to) (NaN included). */
EM_INLINE int ef_gamma_out(double x, double to) {
    return !((x >= EF_GAMMA_FROM) & (x < to));
}

/* lgamma x for a float x in [2^-20, 2^100): Stirling's series at z, (z - 1/2) log z - z +
 * log(2 pi)/2 + sum_{k=1..6} S_k / z^(2k-1) (the next term below 2^-53.5 at z = 12), less
 * log P. log z and log P are ev_log_dd's double-doubles (relative 2^-55.7 for a float; P's
 * 1 + m may round, 2^-54 absolutely); (z - 1/2) lh - z is one fma (z - 1/2 exact), then five
 * additions of terms below 32 where the shift is taken: absolutely below about 2^-46 for x
 * below 12, relatively below 2^-49 above (the sum exceeds 0.55 (z - 1/2) log z there).
 * Measured over every 101st float of the range, unflagged: 2^-43.8 relative at most. */
EM_INLINE double ef_lgamma(double x, int *hard) {
    double xs = em_select(ef_gamma_out(x, EF_LGAMMA_TO), EF_GAMMA_Z, x);
    double p = 1.0, z = xs;
    for (int k = 0; k < 12; k++) {
        double t = xs + (double)k;
        int c = t < EF_GAMMA_Z;
        p = em_select(c, p * t, p);
        z = em_select(c, t + 1.0, z);
    }
    double ll, pl, w = 1.0 / z, w2 = w * w;
    double lh = ev_log_dd(z, &ll), ph = ev_log_dd(p, &pl);
    double s = EF_GAMMA_HORNER6(EG_STIRLING, w2);
    double a = fma(z - 0.5, lh, -z);
    double b = fma(z - 0.5, ll, EG_HALF_LOG_2PI_HI) + fma(w, s, -pl);
    double d = (a - ph) + b;
    *hard = ef_gamma_out(x, EF_LGAMMA_TO) | ef_near_midpoint(d) | em_abs_below(d, EF_GAMMA_SMALL);
    return d;
}

/* digamma x for a float x >= 2^-20: log z - 1/(2z) - sum_{k=1..6} P_k / z^(2k) (the next
 * term below 2^-53.8 at z = 12) - N / D. log z is ev_log_dd's (2^-55.7), N / D within
 * 2^-48.4 relatively; where they cancel (x below 3) both are below 2.6: absolutely below
 * about 2^-46.5; for small x the value is about -N / D itself. Measured over every 101st
 * float of the range, unflagged: 2^-44.3 relative at most. */
EM_INLINE double ef_digamma(double x, int *hard) {
    double xs = em_select(ef_gamma_out(x, INFINITY), EF_GAMMA_Z, x);
    double nn = 0.0, dd = 1.0, z = xs;
    for (int k = 0; k < 12; k++) {
        double t = xs + (double)k;
        int c = t < EF_GAMMA_Z;
        nn = em_select(c, fma(nn, t, dd), nn);
        dd = em_select(c, dd * t, dd);
        z = em_select(c, t + 1.0, z);
    }
    double ll, w = 1.0 / z, w2 = w * w;
    double lh = ev_log_dd(z, &ll);
    double s = EF_GAMMA_HORNER6(EG_PSI_SERIES, w2);
    double d = lh + ((ll - nn / dd) - fma(w2, s, 0.5 * w));
    *hard = ef_gamma_out(x, INFINITY) | ef_near_midpoint(d) | em_abs_below(d, EF_GAMMA_SMALL);
    return d;
}

#endif
