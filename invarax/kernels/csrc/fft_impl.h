/* fft_impl.h - the FFT's loops for one float type T (suffix SFX); included by fft.c once per
 * type and dispatch level.
 *
 * A block of L transforms ("lanes") of length len is held split into real and imaginary
 * arrays, element e of lane l at index e*L + l. A Stockham stage of radix r reads element
 * q + s*(p + k*m) and writes q + s*(r*p + j) (p < m, q < s, n_cur = r*m, s*n_cur = len):
 * with the lanes folded in, both are S*(...) + u for S = s*L and u = q*L + l < S, so the
 * stage is the same code for one transform (L = 1) and for a block. The loops only choose
 * which elements are computed together; every element gets the same IEEE operations (+, -,
 * *, no FMA: the build switches contraction off), so neither L, nor the block a transform
 * sits in, nor the dispatch level changes a bit. docs/numerics.md ("Factorisations and the
 * FFT") writes the butterflies down. The stages are in fft_stages.h; here: the plans' runs,
 * Bluestein, the copies between the operand and the lanes, the real transforms, threads.
 */
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define F(name) CAT(name, SFX)

#include "fft_stages.h"

/* run_stages, the first stage reading the interleaved line `in` (unless NULL) and the last
 * writing the interleaved line `out` (unless NULL): only for L = 1, radices 4 and 2, at least
 * two stages and a last stride S >= 8 (fusable() says). */
static int F(run_stages_fused)(const fft_plan *pl, ptrdiff_t L, T *ar, T *ai, T *br, T *bi,
                               const T *in, T sg, T *out, T sr, T si) {
    const T *tw = (const T *)pl->tw;
    ptrdiff_t S = L;
    int at = 0;
    for (int st = 0; st < pl->nst; st++) {
        int r = pl->radix[st];
        ptrdiff_t m = pl->m[st];
        const T *twr = tw + pl->twoff[st], *twi = twr + (r - 1) * m;
        T *xr = at ? br : ar, *xi = at ? bi : ai, *yr = at ? ar : br, *yi = at ? ai : bi;
        if (st == 0 && in) F(stage_first)(r, m, in, sg, yr, yi, twr, twi);
        else if (st == pl->nst - 1 && out) F(stage_last)(r, m, S, xr, xi, out, sr, si, twr, twi);
        else if (r == 4) F(stage4)(m, S, xr, xi, yr, yi, twr, twi);
        else if (r == 2) F(stage2)(m, S, xr, xi, yr, yi, twr, twi);
        else {
            const T *cr = tw + pl->rootoff[st];
            if (r == 3) F(stage3)(m, S, xr, xi, yr, yi, twr, twi, cr, cr + r);
            else if (r == 5) F(stage5)(m, S, xr, xi, yr, yi, twr, twi, cr, cr + r);
            else F(stage_odd)(r, m, S, xr, xi, yr, yi, twr, twi, cr, cr + r);
        }
        S *= r;
        at ^= 1;
    }
    return at;
}

/* The forward transform of L lanes of length pl->n held in (ar, ai), (br, bi) as scratch;
 * returns which of the two holds the result (0: a, 1: b). */
static int F(run_stages)(const fft_plan *pl, ptrdiff_t L, T *ar, T *ai, T *br, T *bi) {
    return F(run_stages_fused)(pl, L, ar, ai, br, bi, NULL, 1, NULL, 1, 1);
}

/* Whether run_stages_fused may fuse the copies of a line of this plan. */
static int F(fusable)(const fft_plan *pl, ptrdiff_t L, ptrdiff_t C) {
    if (L != 1 || C != 1 || pl->bluestein || pl->nst < 2 || pl->n < 64) return 0;
    for (int st = 0; st < pl->nst; st++)
        if (pl->radix[st] != 4 && pl->radix[st] != 2) return 0;
    return 1;
}

/* The forward transform of the L lanes in (ar, ai) (pl->n elements each); the result is left
 * in (ar, ai). Scratch: (br, bi), and for Bluestein (cr_, ci_) and (dr, di), pl->bm*L each. */
static void F(transform)(const fft_plan *pl, ptrdiff_t L, T *ar, T *ai, T *br, T *bi, T *cr_,
                         T *ci_, T *dr, T *di) {
    if (!pl->bluestein) {
        if (F(run_stages)(pl, L, ar, ai, br, bi)) {
            memcpy(ar, br, sizeof(T) * (size_t)(pl->n * L));
            memcpy(ai, bi, sizeof(T) * (size_t)(pl->n * L));
        }
        return;
    }
    /* Bluestein: y_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_k = W_{2n}^{k^2}, the sum a
     * cyclic convolution of length M by FFT_M, filter = FFT_M(conj c, wrapped) / M. */
    ptrdiff_t n = pl->n, M = pl->bm;
    const T *chr = (const T *)pl->chirp, *chi = chr + n;
    const T *fr = chr + 2 * n, *fi = fr + M;
    for (ptrdiff_t e = 0; e < n; e++)
        for (ptrdiff_t l = 0; l < L; l++) {
            T xr = ar[e * L + l], xi = ai[e * L + l];
            cr_[e * L + l] = CMUL_RE(xr, xi, chr[e], chi[e]);
            ci_[e * L + l] = CMUL_IM(xr, xi, chr[e], chi[e]);
        }
    for (ptrdiff_t e = n * L; e < M * L; e++) cr_[e] = ci_[e] = 0;
    int at = F(run_stages)(pl->sub, L, cr_, ci_, dr, di);
    T *vr = at ? dr : cr_, *vi = at ? di : ci_, *wr = at ? cr_ : dr, *wi = at ? ci_ : di;
    /* times the filter, conjugated: the inverse FFT as conj(FFT(conj(.))) */
    for (ptrdiff_t e = 0; e < M; e++)
        for (ptrdiff_t l = 0; l < L; l++) {
            T xr = vr[e * L + l], xi = vi[e * L + l];
            vr[e * L + l] = CMUL_RE(xr, xi, fr[e], fi[e]);
            vi[e * L + l] = -CMUL_IM(xr, xi, fr[e], fi[e]);
        }
    at = F(run_stages)(pl->sub, L, vr, vi, wr, wi);
    T *gr = at ? wr : vr, *gi = at ? wi : vi;
    for (ptrdiff_t e = 0; e < n; e++)
        for (ptrdiff_t l = 0; l < L; l++) {
            T xr = gr[e * L + l], xi = -gi[e * L + l];
            ar[e * L + l] = CMUL_RE(xr, xi, chr[e], chi[e]);
            ai[e * L + l] = CMUL_IM(xr, xi, chr[e], chi[e]);
        }
}

/* ---- gather / scatter between the strided operand and the lanes --------------------------
 * Line g (g < lines) of the operand, viewed as (B, len, C), starts at element
 * (g / C) len C + g % C and steps by C. */

static inline ptrdiff_t F(line_base)(ptrdiff_t g, ptrdiff_t len, ptrdiff_t C) {
    return (g / C) * len * C + g % C;
}

/* Elements per tile of the transposing copies (a tile of the lanes stays in L1). */
#define FFT_TILE 64

/* Complex input lines g0..g0+nl-1 (nl <= L) into lanes; lanes nl..L-1 get zeros. conj:
 * negate the imaginary parts (exact). Only copies: the loop order is free. */
static void F(gather_c)(const T *x, ptrdiff_t g0, ptrdiff_t nl, ptrdiff_t L, ptrdiff_t len,
                        ptrdiff_t C, ptrdiff_t take, int conj, T *ar, T *ai) {
    T sg = conj ? (T)-1 : (T)1;
    if (nl < L)
        for (ptrdiff_t e = 0; e < take; e++)
            for (ptrdiff_t l = nl; l < L; l++) ar[e * L + l] = ai[e * L + l] = 0;
    if (L == 1 && C == 1) {
        const T *src = x + 2 * g0 * len;
        for (ptrdiff_t e = 0; e < take; e++) {
            ar[e] = src[2 * e];
            ai[e] = sg * src[2 * e + 1];
        }
        return;
    }
    if (C > 1 && g0 % C + nl <= C) { /* the lanes are adjacent: element e at base + e C + l */
        const T *src = x + 2 * F(line_base)(g0, len, C);
        for (ptrdiff_t e = 0; e < take; e++)
            for (ptrdiff_t l = 0; l < nl; l++) {
                ar[e * L + l] = src[2 * (e * C + l)];
                ai[e * L + l] = sg * src[2 * (e * C + l) + 1];
            }
        return;
    }
    for (ptrdiff_t e0 = 0; e0 < take; e0 += FFT_TILE) {
        ptrdiff_t e1 = e0 + FFT_TILE < take ? e0 + FFT_TILE : take;
        for (ptrdiff_t l = 0; l < nl; l++) {
            const T *src = x + 2 * F(line_base)(g0 + l, len, C);
            for (ptrdiff_t e = e0; e < e1; e++) {
                ar[e * L + l] = src[2 * e * C];
                ai[e * L + l] = sg * src[2 * e * C + 1];
            }
        }
    }
}

/* Lanes into complex output lines: real parts times scale, imaginary parts times scale or,
 * if conj, -scale (scale is 1 for the forward transforms: the products are exact). */
static void F(scatter_c)(T *y, ptrdiff_t g0, ptrdiff_t nl, ptrdiff_t L, ptrdiff_t len,
                         ptrdiff_t C, ptrdiff_t take, int conj, T scale, const T *ar,
                         const T *ai) {
    T sr = scale, si = conj ? -scale : scale;
    if (L == 1 && C == 1) {
        T *dst = y + 2 * g0 * len;
        for (ptrdiff_t e = 0; e < take; e++) {
            dst[2 * e] = ar[e] * sr;
            dst[2 * e + 1] = ai[e] * si;
        }
        return;
    }
    if (C > 1 && g0 % C + nl <= C) {
        T *dst = y + 2 * F(line_base)(g0, len, C);
        for (ptrdiff_t e = 0; e < take; e++)
            for (ptrdiff_t l = 0; l < nl; l++) {
                dst[2 * (e * C + l)] = ar[e * L + l] * sr;
                dst[2 * (e * C + l) + 1] = ai[e * L + l] * si;
            }
        return;
    }
    for (ptrdiff_t e0 = 0; e0 < take; e0 += FFT_TILE) {
        ptrdiff_t e1 = e0 + FFT_TILE < take ? e0 + FFT_TILE : take;
        for (ptrdiff_t l = 0; l < nl; l++) {
            T *dst = y + 2 * F(line_base)(g0 + l, len, C);
            for (ptrdiff_t e = e0; e < e1; e++) {
                dst[2 * e * C] = ar[e * L + l] * sr;
                dst[2 * e * C + 1] = ai[e * L + l] * si;
            }
        }
    }
}

/* One block of nl <= L lines of the call j, starting at line g0. */
static void F(block)(const fft_job *j, ptrdiff_t g0, ptrdiff_t nl, ptrdiff_t L, T *ar, T *ai,
                     T *br, T *bi, T *cr_, T *ci_, T *dr, T *di) {
    const fft_plan *pl = j->plan;
    ptrdiff_t n = j->n, C = j->inner;
    const T *x = (const T *)j->x;
    T *y = (T *)j->y;
    T one = 1, scale = j->kind == FFT_IFFT || j->kind == FFT_IRFFT ? one / (T)n : one;
    if (j->kind == FFT_FFT || j->kind == FFT_IFFT) {
        int conj = j->kind == FFT_IFFT;
        if (F(fusable)(pl, L, C)) {
            F(run_stages_fused)(pl, 1, ar, ai, br, bi, x + 2 * g0 * n, conj ? -one : one,
                                y + 2 * g0 * n, scale, conj ? -scale : scale);
            return;
        }
        F(gather_c)(x, g0, nl, L, n, C, n, conj, ar, ai);
        F(transform)(pl, L, ar, ai, br, bi, cr_, ci_, dr, di);
        F(scatter_c)(y, g0, nl, L, n, C, n, conj, scale, ar, ai);
        return;
    }
    ptrdiff_t bins = n / 2 + 1;
    if (j->kind == FFT_RFFT && n % 2) { /* odd: the full complex transform, half kept */
        for (ptrdiff_t l = 0; l < L; l++) {
            const T *src = l < nl ? x + F(line_base)(g0 + l, n, C) : NULL;
            for (ptrdiff_t e = 0; e < n; e++) {
                ar[e * L + l] = src ? src[e * C] : 0;
                ai[e * L + l] = 0;
            }
        }
        F(transform)(pl, L, ar, ai, br, bi, cr_, ci_, dr, di);
        F(scatter_c)(y, g0, nl, L, bins, C, bins, 0, one, ar, ai);
        return;
    }
    if (j->kind == FFT_RFFT) {
        /* z_k = x_2k + i x_2k+1 (h = n/2 of them), Z = FFT_h(z); for k = 0..h, A = Z_{k mod h},
         * B = Z_{(h-k) mod h}: X_k = E + W_n^k O with E = (A + conj B)/2,
         * O = (A - conj B)/(2i): E = (0.5 (Ar + Br), 0.5 (Ai - Bi)),
         * O = (0.5 (Ai + Bi), 0.5 (Br - Ar)). */
        ptrdiff_t h = n / 2;
        if (F(fusable)(pl->sub, L, C)) {
            if (F(run_stages_fused)(pl->sub, 1, ar, ai, br, bi, x + g0 * n, one, NULL, one,
                                    one)) { /* the result is in b: swap the roles */
                T *t = ar;
                ar = br;
                br = t;
                t = ai;
                ai = bi;
                bi = t;
            }
        } else {
            if (L == 1 && C == 1) {
                const T *src = x + g0 * n;
                for (ptrdiff_t e = 0; e < h; e++) {
                    ar[e] = src[2 * e];
                    ai[e] = src[2 * e + 1];
                }
            } else
                for (ptrdiff_t l = 0; l < L; l++) {
                    const T *src = l < nl ? x + F(line_base)(g0 + l, n, C) : NULL;
                    for (ptrdiff_t e = 0; e < h; e++) {
                        ar[e * L + l] = src ? src[2 * e * C] : 0;
                        ai[e * L + l] = src ? src[(2 * e + 1) * C] : 0;
                    }
                }
            F(transform)(pl->sub, L, ar, ai, br, bi, cr_, ci_, dr, di);
        }
        const T *wr = (const T *)pl->rtw, *wi = wr + h + 1;
        T half = (T)0.5;
#define RPOST(k, ka, kb, l)                                                                  \
    {                                                                                        \
        T Ar = ar[(ka) * L + (l)], Ai = ai[(ka) * L + (l)];                                  \
        T Br = ar[(kb) * L + (l)], Bi = ai[(kb) * L + (l)];                                  \
        T er = half * (Ar + Br), ei = half * (Ai - Bi);                                      \
        T or_ = half * (Ai + Bi), oi = half * (Br - Ar);                                     \
        br[(k) * L + (l)] = er + CMUL_RE(or_, oi, wr[k], wi[k]);                             \
        bi[(k) * L + (l)] = ei + CMUL_IM(or_, oi, wr[k], wi[k]);                             \
    }
        for (ptrdiff_t l = 0; l < L; l++) {
            RPOST(0, 0, 0, l)
            RPOST(h, 0, 0, l)
        }
        if (L == 1)
            IVDEP for (ptrdiff_t k = 1; k < h; k++) RPOST(k, k, h - k, 0)
        else
            for (ptrdiff_t k = 1; k < h; k++)
                for (ptrdiff_t l = 0; l < L; l++) RPOST(k, k, h - k, l)
#undef RPOST
        F(scatter_c)(y, g0, nl, L, bins, C, bins, 0, one, br, bi);
        return;
    }
    /* IRFFT: the imaginary parts of X_0 and (n even) X_{n/2} are ignored, as NumPy's. */
    if (n % 2) { /* odd: the Hermitian spectrum in full, its complex inverse, real part */
        F(gather_c)(x, g0, nl, L, bins, C, bins, 1, ar, ai);
        for (ptrdiff_t l = 0; l < L; l++) ai[l] = 0;
        for (ptrdiff_t e = bins; e < n; e++)
            for (ptrdiff_t l = 0; l < L; l++) {
                ar[e * L + l] = ar[(n - e) * L + l];
                ai[e * L + l] = -ai[(n - e) * L + l];
            }
        F(transform)(pl, L, ar, ai, br, bi, cr_, ci_, dr, di);
        for (ptrdiff_t l = 0; l < nl; l++) {
            T *dst = y + F(line_base)(g0 + l, n, C);
            for (ptrdiff_t e = 0; e < n; e++) dst[e * C] = ar[e * L + l] * scale;
        }
        return;
    }
    /* even: for k < h, A = X_k, B = conj X_{h-k}: Z_k = (A + B) + i (A - B) conj(W_n^k);
     * z = conj(FFT_h(conj Z)), x_2k = Re z_k / n, x_2k+1 = Im z_k / n. */
    ptrdiff_t h = n / 2;
    F(gather_c)(x, g0, nl, L, bins, C, bins, 0, br, bi);
    for (ptrdiff_t l = 0; l < L; l++) bi[l] = bi[h * L + l] = 0;
    const T *wr = (const T *)pl->rtw, *wi = wr + h + 1;
#define IPRE(k, l)                                                                           \
    {                                                                                        \
        T Ar = br[(k) * L + (l)], Ai = bi[(k) * L + (l)];                                    \
        T Br = br[(h - (k)) * L + (l)], Bi = -bi[(h - (k)) * L + (l)];                       \
        T er = Ar + Br, ei = Ai + Bi, dr_ = Ar - Br, di_ = Ai - Bi;                          \
        T or_ = CMUL_RE(dr_, di_, wr[k], -wi[k]), oi = CMUL_IM(dr_, di_, wr[k], -wi[k]);     \
        ar[(k) * L + (l)] = er - oi;     /* E + i O */                                       \
        ai[(k) * L + (l)] = -(ei + or_); /* conjugated for the forward transform */          \
    }
    if (L == 1)
        IVDEP for (ptrdiff_t k = 0; k < h; k++) IPRE(k, 0)
    else
        for (ptrdiff_t k = 0; k < h; k++)
            for (ptrdiff_t l = 0; l < L; l++) IPRE(k, l)
#undef IPRE
    if (F(fusable)(pl->sub, L, C)) {
        F(run_stages_fused)(pl->sub, 1, ar, ai, br, bi, NULL, one, y + g0 * n, scale, -scale);
        return;
    }
    F(transform)(pl->sub, L, ar, ai, br, bi, cr_, ci_, dr, di);
    T nscale = -scale;
    if (L == 1 && C == 1) {
        T *dst = y + g0 * n;
        for (ptrdiff_t k = 0; k < h; k++) {
            dst[2 * k] = ar[k] * scale;
            dst[2 * k + 1] = ai[k] * nscale;
        }
        return;
    }
    for (ptrdiff_t l = 0; l < nl; l++) {
        T *dst = y + F(line_base)(g0 + l, n, C);
        for (ptrdiff_t k = 0; k < h; k++) {
            dst[2 * k * C] = ar[k * L + l] * scale;
            dst[(2 * k + 1) * C] = ai[k * L + l] * nscale;
        }
    }
}

/* Blocks tid, tid + nthreads, ... of the call's lines. */
static int F(run_share)(const fft_job *j, int tid, int nthreads) {
    ptrdiff_t L = j->lanes, words = j->scratch * L;
    /* four arrays of `words`, and four more for Bluestein's convolution */
    T *buf = malloc(sizeof(T) * (size_t)words * (j->bluestein ? 8 : 4) + 64);
    if (!buf) return -1;
    T *ar = buf, *ai = ar + words, *br = ai + words, *bi = br + words;
    T *cr_ = NULL, *ci_ = NULL, *dr = NULL, *di = NULL;
    if (j->bluestein) {
        cr_ = bi + words;
        ci_ = cr_ + words;
        dr = ci_ + words;
        di = dr + words;
    }
    ptrdiff_t nblocks = (j->lines + L - 1) / L;
    for (ptrdiff_t b = tid; b < nblocks; b += nthreads) {
        ptrdiff_t g0 = b * L, nl = j->lines - g0 < L ? j->lines - g0 : L;
        F(block)(j, g0, nl, L, ar, ai, br, bi, cr_, ci_, dr, di);
    }
    free(buf);
    return 0;
}

#undef CAT2
#undef CAT
#undef F
