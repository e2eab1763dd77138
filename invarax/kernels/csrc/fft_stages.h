/* fft_stages.h - the FFT's Stockham stages for one float type T; included by fft_impl.h (so
 * once per type and dispatch level), which defines F() and T.
 *
 * Stage of radix r, sub-length r*m, stride S (lanes folded in): a_k = x[S*(p + k*m) + u],
 * y[S*(r*p + j) + u] = b_j w_j, w_j = W_{rm}^{jp} from the plan's table (twr, twi), for
 * p < m, u < S. Each butterfly below is written once (a macro) and used by every loop order,
 * so every loop order gives every element the same operations.
 */

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
 * b1 = t1 - i t3, b2 = t0 - t2, b3 = t1 + i t3; y_0 = b_0, y_j = b_j w_j for j >= 1
 * (multiplied even where w_j = 1). */
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
#define ODD_OUT(OX, j, k, BR, BI, WJ, WK)                                                    \
    {                                                                                        \
        T bjr = BR - II, bji = BI + IR, bkr = BR + II, bki = BI - IR;                        \
        yr[OX(j)] = CMUL_RE(bjr, bji, twr[WJ], twi[WJ]);                                     \
        yi[OX(j)] = CMUL_IM(bjr, bji, twr[WJ], twi[WJ]);                                     \
        yr[OX(k)] = CMUL_RE(bkr, bki, twr[WK], twi[WK]);                                     \
        yi[OX(k)] = CMUL_IM(bkr, bki, twr[WK], twi[WK]);                                     \
    }
#define RADIX3_BODY(IX, OX, P)                                                               \
    {                                                                                        \
        T a0r = xr[IX(0)], a0i = xi[IX(0)];                                                  \
        T p1r = xr[IX(1)] + xr[IX(2)], p1i = xi[IX(1)] + xi[IX(2)];                          \
        T m1r = xr[IX(1)] - xr[IX(2)], m1i = xi[IX(1)] - xi[IX(2)];                          \
        yr[OX(0)] = a0r + p1r;                                                               \
        yi[OX(0)] = a0i + p1i;                                                               \
        T r1r = a0r + c1 * p1r, r1i = a0i + c1 * p1i;                                        \
        T IR = s1 * m1r, II = s1 * m1i;                                                      \
        ODD_OUT(OX, 1, 2, r1r, r1i, P, m + (P))                                              \
    }

#define RADIX5_BODY(IX, OX, P)                                                               \
    {                                                                                        \
        T a0r = xr[IX(0)], a0i = xi[IX(0)];                                                  \
        T p1r = xr[IX(1)] + xr[IX(4)], p1i = xi[IX(1)] + xi[IX(4)];                          \
        T m1r = xr[IX(1)] - xr[IX(4)], m1i = xi[IX(1)] - xi[IX(4)];                          \
        T p2r = xr[IX(2)] + xr[IX(3)], p2i = xi[IX(2)] + xi[IX(3)];                          \
        T m2r = xr[IX(2)] - xr[IX(3)], m2i = xi[IX(2)] - xi[IX(3)];                          \
        yr[OX(0)] = (a0r + p1r) + p2r;                                                       \
        yi[OX(0)] = (a0i + p1i) + p2i;                                                       \
        T r1r = (a0r + c1 * p1r) + c2 * p2r, r1i = (a0i + c1 * p1i) + c2 * p2i;              \
        T r2r = (a0r + c2 * p1r) + c4 * p2r, r2i = (a0i + c2 * p1i) + c4 * p2i;              \
        {                                                                                    \
            T IR = s1 * m1r + s2 * m2r, II = s1 * m1i + s2 * m2i;                            \
            ODD_OUT(OX, 1, 4, r1r, r1i, P, 3 * m + (P))                                      \
        }                                                                                    \
        {                                                                                    \
            T IR = s2 * m1r + s4 * m2r, II = s2 * m1i + s4 * m2i;                            \
            ODD_OUT(OX, 2, 3, r2r, r2i, m + (P), 2 * m + (P))                                \
        }                                                                                    \
    }

/* Radix 3 or 5 (R): for S >= 8 vectorised over u, else over p with S a constant where it
 * can be (as the radix-4 stage). */
#define ODD_STAGE(R, BODY)                                                                   \
    if (S >= 8) {                                                                            \
        for (ptrdiff_t p = 0; p < m; p++) {                                                  \
            const ptrdiff_t in0 = S * p, out0 = S * (R) * p;                                 \
            IVDEP for (ptrdiff_t u = 0; u < S; u++) BODY(IXB, OXB, p)                        \
        }                                                                                    \
    } else if (S == 1) {                                                                     \
        IVDEP for (ptrdiff_t p = 0; p < m; p++) BODY(IX1, OX1##R, p)                         \
    } else {                                                                                 \
        for (ptrdiff_t u = 0; u < S; u++)                                                    \
            IVDEP for (ptrdiff_t p = 0; p < m; p++) BODY(IXS, OXS##R, p)                     \
    }
#define IXB(k) (in0 + S * (k) * m + u)
#define OXB(j) (out0 + S * (j) + u)
#define IX1(k) (p + (k) * m)
#define OX13(j) (3 * p + (j))
#define OX15(j) (5 * p + (j))
#define IXS(k) (S * (p + (k) * m) + u)
#define OXS3(j) (S * (3 * p + (j)) + u)
#define OXS5(j) (S * (5 * p + (j)) + u)

static void F(stage3)(ptrdiff_t m, ptrdiff_t S, const T *restrict xr, const T *restrict xi,
                      T *restrict yr, T *restrict yi, const T *restrict twr,
                      const T *restrict twi, const T *restrict cr, const T *restrict ci) {
    T c1 = cr[1], s1 = ci[1];
    ODD_STAGE(3, RADIX3_BODY)
}

static void F(stage5)(ptrdiff_t m, ptrdiff_t S, const T *restrict xr, const T *restrict xi,
                      T *restrict yr, T *restrict yi, const T *restrict twr,
                      const T *restrict twi, const T *restrict cr, const T *restrict ci) {
    T c1 = cr[1], s1 = ci[1], c2 = cr[2], s2 = ci[2], c4 = cr[4], s4 = ci[4];
    ODD_STAGE(5, RADIX5_BODY)
}
#undef ODD_STAGE
#undef IXB
#undef OXB
#undef IX1
#undef OX13
#undef OX15
#undef IXS
#undef OXS3
#undef OXS5
#undef ODD_OUT
