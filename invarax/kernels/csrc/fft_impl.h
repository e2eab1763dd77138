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
 * sits in, nor the dispatch level changes a bit. docs/numerics.md ("The FFT") writes the
 * butterflies down.
 */
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define F(name) CAT(name, SFX)

/* The loops below never write what they read in the same pass. */
#ifndef IVDEP
#if defined(__clang__)
#define IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define IVDEP _Pragma("GCC ivdep")
#else
#define IVDEP
#endif
#endif

/* y = b * w for the complex b = (br, bi), w = (wr, wi): (br wr - bi wi, br wi + bi wr). */
#define CMUL_RE(br, bi, wr, wi) ((br) * (wr) - (bi) * (wi))
#define CMUL_IM(br, bi, wr, wi) ((br) * (wi) + (bi) * (wr))

/* Where a butterfly loads its inputs and stores its outputs: the split arrays, unless a
 * fused first or last stage (below) redefines them. */
#define LD_R(i) xr[i]
#define LD_I(i) xi[i]
#define ST_R(i, v) yr[i] = (v)
#define ST_I(i, v) yi[i] = (v)

/* Radix 4: t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3, t3 = a1 - a3; b0 = t0 + t2,
 * b1 = t1 - i t3, b2 = t0 - t2, b3 = t1 + i t3; y_j = b_j w_j (w_0 = 1 is not multiplied). */
#define RADIX4_BODY(IX, OX, W1R, W1I, W2R, W2I, W3R, W3I)                                    \
    {                                                                                        \
        T a0r = LD_R(IX(0)), a0i = LD_I(IX(0)), a1r = LD_R(IX(1)), a1i = LD_I(IX(1));         \
        T a2r = LD_R(IX(2)), a2i = LD_I(IX(2)), a3r = LD_R(IX(3)), a3i = LD_I(IX(3));         \
        T t0r = a0r + a2r, t0i = a0i + a2i, t1r = a0r - a2r, t1i = a0i - a2i;                 \
        T t2r = a1r + a3r, t2i = a1i + a3i, t3r = a1r - a3r, t3i = a1i - a3i;                 \
        T b1r = t1r + t3i, b1i = t1i - t3r, b2r = t0r - t2r, b2i = t0i - t2i;                 \
        T b3r = t1r - t3i, b3i = t1i + t3r;                                                   \
        ST_R(OX(0), t0r + t2r);                                                              \
        ST_I(OX(0), t0i + t2i);                                                              \
        ST_R(OX(1), CMUL_RE(b1r, b1i, W1R, W1I));                                            \
        ST_I(OX(1), CMUL_IM(b1r, b1i, W1R, W1I));                                            \
        ST_R(OX(2), CMUL_RE(b2r, b2i, W2R, W2I));                                            \
        ST_I(OX(2), CMUL_IM(b2r, b2i, W2R, W2I));                                            \
        ST_R(OX(3), CMUL_RE(b3r, b3i, W3R, W3I));                                            \
        ST_I(OX(3), CMUL_IM(b3r, b3i, W3R, W3I));                                            \
    }

/* Radix 2: y_0 = a0 + a1, y_1 = (a0 - a1) w_1. */
#define RADIX2_BODY(IX, OX, W1R, W1I)                                                         \
    {                                                                                        \
        T a0r = LD_R(IX(0)), a0i = LD_I(IX(0)), a1r = LD_R(IX(1)), a1i = LD_I(IX(1));         \
        T b1r = a0r - a1r, b1i = a0i - a1i;                                                   \
        ST_R(OX(0), a0r + a1r);                                                              \
        ST_I(OX(0), a0i + a1i);                                                              \
        ST_R(OX(1), CMUL_RE(b1r, b1i, W1R, W1I));                                            \
        ST_I(OX(1), CMUL_IM(b1r, b1i, W1R, W1I));                                            \
    }

/* One radix-4 stage. tw: w_j(p) = W_{4m}^{jp}, j = 1..3, as twr[(j-1)m + p], twi[...]. */
static void F(stage4)(ptrdiff_t m, ptrdiff_t S, const T *restrict xr, const T *restrict xi,
                      T *restrict yr, T *restrict yi, const T *restrict twr,
                      const T *restrict twi) {
    if (S >= 8) {
        for (ptrdiff_t p = 0; p < m; p++) {
            T w1r = twr[p], w1i = twi[p], w2r = twr[m + p], w2i = twi[m + p];
            T w3r = twr[2 * m + p], w3i = twi[2 * m + p];
            const ptrdiff_t in0 = S * p, out0 = S * 4 * p;
#define IX(k) (in0 + S * (k) * m + u)
#define OX(j) (out0 + S * (j) + u)
            IVDEP for (ptrdiff_t u = 0; u < S; u++) RADIX4_BODY(IX, OX, w1r, w1i, w2r, w2i, w3r, w3i)
#undef IX
#undef OX
        }
    } else {
        /* few elements per p: vectorised over p, S a constant where it can be */
#define IX(k) (SCv * (p + (k) * m) + u)
#define OX(j) (SCv * (4 * p + (j)) + u)
#define SMALL(SC)                                                                            \
    {                                                                                        \
        const ptrdiff_t SCv = (SC);                                                          \
        IVDEP for (ptrdiff_t p = 0; p < m; p++) for (ptrdiff_t u = 0; u < SCv; u++)          \
        RADIX4_BODY(IX, OX, twr[p], twi[p], twr[m + p], twi[m + p], twr[2 * m + p],          \
                    twi[2 * m + p]);                                                  \
    }
        if (S == 1) SMALL(1)
        else if (S == 2) SMALL(2)
        else if (S == 4) SMALL(4)
        else SMALL(S)
#undef SMALL
#undef IX
#undef OX
    }
}

static void F(stage2)(ptrdiff_t m, ptrdiff_t S, const T *restrict xr, const T *restrict xi,
                      T *restrict yr, T *restrict yi, const T *restrict twr,
                      const T *restrict twi) {
    if (S >= 8) {
        for (ptrdiff_t p = 0; p < m; p++) {
            T w1r = twr[p], w1i = twi[p];
            const ptrdiff_t in0 = S * p, out0 = S * 2 * p;
#define IX(k) (in0 + S * (k) * m + u)
#define OX(j) (out0 + S * (j) + u)
            IVDEP for (ptrdiff_t u = 0; u < S; u++) RADIX2_BODY(IX, OX, w1r, w1i)
#undef IX
#undef OX
        }
    } else {
#define IX(k) (SCv * (p + (k) * m) + u)
#define OX(j) (SCv * (2 * p + (j)) + u)
#define SMALL(SC)                                                                            \
    {                                                                                        \
        const ptrdiff_t SCv = (SC);                                                          \
        IVDEP for (ptrdiff_t p = 0; p < m; p++) for (ptrdiff_t u = 0; u < SCv; u++)          \
        RADIX2_BODY(IX, OX, twr[p], twi[p]);                                                  \
    }
        if (S == 1) SMALL(1)
        else if (S == 2) SMALL(2)
        else if (S == 4) SMALL(4)
        else SMALL(S)
#undef SMALL
#undef IX
#undef OX
    }
}

/* The first stage (S = 1, radix 4 or 2) fused with the copy in: it reads the interleaved
 * complex line src, imaginary parts times sg (+-1, exact), as the copy would. */
static void F(stage_first)(int r, ptrdiff_t m, const T *restrict src, T sg, T *restrict yr,
                           T *restrict yi, const T *restrict twr, const T *restrict twi) {
#undef LD_R
#undef LD_I
#define LD_R(i) src[2 * (i)]
#define LD_I(i) (sg * src[2 * (i) + 1])
#define IX(k) (p + (k) * m)
    if (r == 4) {
#define OX(j) (4 * p + (j))
        IVDEP for (ptrdiff_t p = 0; p < m; p++)
            RADIX4_BODY(IX, OX, twr[p], twi[p], twr[m + p], twi[m + p], twr[2 * m + p],
                        twi[2 * m + p])
#undef OX
    } else {
#define OX(j) (2 * p + (j))
        IVDEP for (ptrdiff_t p = 0; p < m; p++) RADIX2_BODY(IX, OX, twr[p], twi[p])
#undef OX
    }
#undef IX
#undef LD_R
#undef LD_I
#define LD_R(i) xr[i]
#define LD_I(i) xi[i]
}

/* The last stage (S >= 8, radix 4 or 2) fused with the copy out: it writes the interleaved
 * complex line dst, real parts times sr, imaginary parts times si, as the copy would. */
static void F(stage_last)(int r, ptrdiff_t m, ptrdiff_t S, const T *restrict xr,
                          const T *restrict xi, T *restrict dst, T sr, T si,
                          const T *restrict twr, const T *restrict twi) {
#undef ST_R
#undef ST_I
#define ST_R(i, v) dst[2 * (i)] = (v) * sr
#define ST_I(i, v) dst[2 * (i) + 1] = (v) * si
#define IX(k) (in0 + S * (k) * m + u)
#define OX(j) (out0 + S * (j) + u)
    for (ptrdiff_t p = 0; p < m; p++) {
        const ptrdiff_t in0 = S * p, out0 = S * r * p;
        if (r == 4) {
            T w1r = twr[p], w1i = twi[p], w2r = twr[m + p], w2i = twi[m + p];
            T w3r = twr[2 * m + p], w3i = twi[2 * m + p];
            IVDEP for (ptrdiff_t u = 0; u < S; u++)
                RADIX4_BODY(IX, OX, w1r, w1i, w2r, w2i, w3r, w3i)
        } else {
            T w1r = twr[p], w1i = twi[p];
            IVDEP for (ptrdiff_t u = 0; u < S; u++) RADIX2_BODY(IX, OX, w1r, w1i)
        }
    }
#undef IX
#undef OX
#undef ST_R
#undef ST_I
#define ST_R(i, v) yr[i] = (v)
#define ST_I(i, v) yi[i] = (v)
}

/* An odd radix r (3, 5, 7, ...): with c_t + i s_t = W_r^t (roots cr, ci), for k = 1..h,
 * h = (r-1)/2, P_k = a_k + a_{r-k}, M_k = a_k - a_{r-k}; b_0 = a_0 + P_1 + ... + P_h and,
 * for j = 1..h, R_j = a_0 + c_{jk} P_k summed over k = 1..h in turn and
 * I_j = s_{j1} M_1 + s_{j2} M_2 + ... likewise (complex times real), b_j = R_j + i I_j,
 * b_{r-j} = R_j - i I_j; then y_j = b_j w_j for j >= 1. Computed for a chunk of u at a
 * time (the same operations per element). */
#define ODD_CHUNK 32
static void F(stage_odd)(int r, ptrdiff_t m, ptrdiff_t S, const T *restrict xr,
                         const T *restrict xi, T *restrict yr, T *restrict yi,
                         const T *restrict twr, const T *restrict twi, const T *restrict cr,
                         const T *restrict ci) {
    int h = (r - 1) / 2;
    T pr[16][ODD_CHUNK], pi[16][ODD_CHUNK], mr[16][ODD_CHUNK], mi[16][ODD_CHUNK];
    T rr[ODD_CHUNK], ri[ODD_CHUNK], ir[ODD_CHUNK], ii[ODD_CHUNK];
    for (ptrdiff_t p = 0; p < m; p++) {
        const ptrdiff_t in0 = S * p, out0 = S * r * p;
        for (ptrdiff_t u0 = 0; u0 < S; u0 += ODD_CHUNK) {
            ptrdiff_t nu = S - u0 < ODD_CHUNK ? S - u0 : ODD_CHUNK;
            const T *a0r = xr + in0 + u0, *a0i = xi + in0 + u0;
            for (int k = 1; k <= h; k++) {
                const T *akr = a0r + S * k * m, *aki = a0i + S * k * m;
                const T *bkr = a0r + S * (r - k) * m, *bki = a0i + S * (r - k) * m;
                for (ptrdiff_t u = 0; u < nu; u++) {
                    pr[k - 1][u] = akr[u] + bkr[u];
                    pi[k - 1][u] = aki[u] + bki[u];
                    mr[k - 1][u] = akr[u] - bkr[u];
                    mi[k - 1][u] = aki[u] - bki[u];
                }
            }
            T *y0r = yr + out0 + u0, *y0i = yi + out0 + u0;
            for (ptrdiff_t u = 0; u < nu; u++) {
                rr[u] = a0r[u];
                ri[u] = a0i[u];
            }
            for (int k = 0; k < h; k++)
                for (ptrdiff_t u = 0; u < nu; u++) {
                    rr[u] = rr[u] + pr[k][u];
                    ri[u] = ri[u] + pi[k][u];
                }
            for (ptrdiff_t u = 0; u < nu; u++) {
                y0r[u] = rr[u];
                y0i[u] = ri[u];
            }
            for (int j = 1; j <= h; j++) {
                T c1 = cr[j % r], s1 = ci[j % r];
                for (ptrdiff_t u = 0; u < nu; u++) {
                    rr[u] = a0r[u] + c1 * pr[0][u];
                    ri[u] = a0i[u] + c1 * pi[0][u];
                    ir[u] = s1 * mr[0][u];
                    ii[u] = s1 * mi[0][u];
                }
                for (int k = 2; k <= h; k++) {
                    int t = (j * k) % r;
                    T c = cr[t], s = ci[t];
                    for (ptrdiff_t u = 0; u < nu; u++) {
                        rr[u] = rr[u] + c * pr[k - 1][u];
                        ri[u] = ri[u] + c * pi[k - 1][u];
                        ir[u] = ir[u] + s * mr[k - 1][u];
                        ii[u] = ii[u] + s * mi[k - 1][u];
                    }
                }
                T wr = twr[(j - 1) * m + p], wi = twi[(j - 1) * m + p];
                T vr = twr[(r - j - 1) * m + p], vi = twi[(r - j - 1) * m + p];
                T *yjr = y0r + S * j, *yji = y0i + S * j;
                T *ykr = y0r + S * (r - j), *yki = y0i + S * (r - j);
                for (ptrdiff_t u = 0; u < nu; u++) {
                    /* b_j = R + i I = (rr - ii, ri + ir); b_{r-j} = (rr + ii, ri - ir) */
                    T bjr = rr[u] - ii[u], bji = ri[u] + ir[u];
                    T bkr = rr[u] + ii[u], bki = ri[u] - ir[u];
                    yjr[u] = CMUL_RE(bjr, bji, wr, wi);
                    yji[u] = CMUL_IM(bjr, bji, wr, wi);
                    ykr[u] = CMUL_RE(bkr, bki, vr, vi);
                    yki[u] = CMUL_IM(bkr, bki, vr, vi);
                }
            }
        }
    }
}

/* Radices 3 and 5 with S >= 8: stage_odd's operations, element by element (no chunks). */
#define ODD_OUT(j, k, BR, BI, WJ, WK)                                                        \
    {                                                                                        \
        T bjr = BR - II, bji = BI + IR, bkr = BR + II, bki = BI - IR;                        \
        yr[OX(j)] = CMUL_RE(bjr, bji, twr[WJ], twi[WJ]);                                     \
        yi[OX(j)] = CMUL_IM(bjr, bji, twr[WJ], twi[WJ]);                                     \
        yr[OX(k)] = CMUL_RE(bkr, bki, twr[WK], twi[WK]);                                     \
        yi[OX(k)] = CMUL_IM(bkr, bki, twr[WK], twi[WK]);                                     \
    }
static void F(stage3)(ptrdiff_t m, ptrdiff_t S, const T *restrict xr, const T *restrict xi,
                      T *restrict yr, T *restrict yi, const T *restrict twr,
                      const T *restrict twi, const T *restrict cr, const T *restrict ci) {
    T c1 = cr[1], s1 = ci[1];
    for (ptrdiff_t p = 0; p < m; p++) {
        const ptrdiff_t in0 = S * p, out0 = S * 3 * p;
#define IX(k) (in0 + S * (k) * m + u)
#define OX(j) (out0 + S * (j) + u)
        IVDEP for (ptrdiff_t u = 0; u < S; u++) {
            T a0r = xr[IX(0)], a0i = xi[IX(0)];
            T p1r = xr[IX(1)] + xr[IX(2)], p1i = xi[IX(1)] + xi[IX(2)];
            T m1r = xr[IX(1)] - xr[IX(2)], m1i = xi[IX(1)] - xi[IX(2)];
            yr[OX(0)] = a0r + p1r;
            yi[OX(0)] = a0i + p1i;
            T r1r = a0r + c1 * p1r, r1i = a0i + c1 * p1i;
#define IR (s1 * m1r)
#define II (s1 * m1i)
            ODD_OUT(1, 2, r1r, r1i, p, m + p)
#undef IR
#undef II
        }
#undef IX
#undef OX
    }
}

static void F(stage5)(ptrdiff_t m, ptrdiff_t S, const T *restrict xr, const T *restrict xi,
                      T *restrict yr, T *restrict yi, const T *restrict twr,
                      const T *restrict twi, const T *restrict cr, const T *restrict ci) {
    T c1 = cr[1], s1 = ci[1], c2 = cr[2], s2 = ci[2], c4 = cr[4], s4 = ci[4];
    for (ptrdiff_t p = 0; p < m; p++) {
        const ptrdiff_t in0 = S * p, out0 = S * 5 * p;
#define IX(k) (in0 + S * (k) * m + u)
#define OX(j) (out0 + S * (j) + u)
        IVDEP for (ptrdiff_t u = 0; u < S; u++) {
            T a0r = xr[IX(0)], a0i = xi[IX(0)];
            T p1r = xr[IX(1)] + xr[IX(4)], p1i = xi[IX(1)] + xi[IX(4)];
            T m1r = xr[IX(1)] - xr[IX(4)], m1i = xi[IX(1)] - xi[IX(4)];
            T p2r = xr[IX(2)] + xr[IX(3)], p2i = xi[IX(2)] + xi[IX(3)];
            T m2r = xr[IX(2)] - xr[IX(3)], m2i = xi[IX(2)] - xi[IX(3)];
            yr[OX(0)] = (a0r + p1r) + p2r;
            yi[OX(0)] = (a0i + p1i) + p2i;
            T r1r = (a0r + c1 * p1r) + c2 * p2r, r1i = (a0i + c1 * p1i) + c2 * p2i;
            T q1r = s1 * m1r + s2 * m2r, q1i = s1 * m1i + s2 * m2i;
            T r2r = (a0r + c2 * p1r) + c4 * p2r, r2i = (a0i + c2 * p1i) + c4 * p2i;
            T q2r = s2 * m1r + s4 * m2r, q2i = s2 * m1i + s4 * m2i;
#define IR q1r
#define II q1i
            ODD_OUT(1, 4, r1r, r1i, p, 3 * m + p)
#undef IR
#undef II
#define IR q2r
#define II q2i
            ODD_OUT(2, 3, r2r, r2i, m + p, 2 * m + p)
#undef IR
#undef II
        }
#undef IX
#undef OX
    }
}
#undef ODD_OUT

/* The forward transform of L lanes of length pl->n held in (ar, ai), (br, bi) as scratch;
 * returns which of the two holds the result (0: a, 1: b). */
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
            if (r == 3 && S >= 8) F(stage3)(m, S, xr, xi, yr, yi, twr, twi, cr, cr + r);
            else if (r == 5 && S >= 8) F(stage5)(m, S, xr, xi, yr, yi, twr, twi, cr, cr + r);
            else F(stage_odd)(r, m, S, xr, xi, yr, yi, twr, twi, cr, cr + r);
        }
        S *= r;
        at ^= 1;
    }
    return at;
}

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
