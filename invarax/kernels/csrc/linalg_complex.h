/* linalg_complex.h - LU with partial pivoting (blocked, as lu1), the triangular solve and the
 * SVD (one-sided Jacobi) of complex matrices, for one float type T (suffix SFX); included by
 * linalg_impl.h, once per type and instruction set. docs/numerics.md ("Factorisations")
 * writes the orders down.
 *
 * A complex element is two T, (re, im), interleaved as NumPy stores complex64 and
 * complex128. Every complex operation is spelled out in real ones, each rounded, in one
 * order (no C99 complex arithmetic, whose multiply and divide handle infinities and
 * scaling as each compiler likes; no FMA besides the canonical gemm's: the build switches
 * contraction off):
 *   x y     = (xr yr - xi yi, xr yi + xi yr)   (the same bits as y x)
 *   x - y z = (xr - (yr zr - yi zi), xi - (yr zi + yi zr))
 *   x / y   by Smith's algorithm (cdiv below).
 */

/* |re| + |im|: LAPACK's cabs1, by which izamax (so getrf, and JAX) picks a complex pivot. */
static T F(cabs1)(const T *z) { return (T)fabs(z[0]) + (T)fabs(z[1]); }

/* (ar + i ai) / (br + i bi) by Smith's algorithm: if |br| >= |bi|, r = bi / br,
 * d = br + bi r, q = ((ar + ai r) / d, (ai - ar r) / d); else r = br / bi, d = br r + bi,
 * q = ((ar r + ai) / d, (ai r - ar) / d). A zero divisor gives NaN. */
static void F(cdiv)(T ar, T ai, T br, T bi, T *qr, T *qi) {
    if (fabs(br) >= fabs(bi)) {
        T r = bi / br, d = br + bi * r;
        *qr = (ar + ai * r) / d;
        *qi = (ai - ar * r) / d;
    } else {
        T r = br / bi, d = br * r + bi;
        *qr = (ar * r + ai) / d;
        *qi = (ai * r - ar) / d;
    }
}

/* y[j] = y[j] - a x[j] for n complex elements (the second line of the header's table). */
static void F(caxpy_sub)(T *y, T ar, T ai, const T *x, ptrdiff_t n) {
    for (ptrdiff_t j = 0; j < n; j++) {
        T xr = x[2 * j], xi = x[2 * j + 1];
        y[2 * j] = y[2 * j] - (ar * xr - ai * xi);
        y[2 * j + 1] = y[2 * j + 1] - (ar * xi + ai * xr);
    }
}

/* getf2 on the complex m x n matrix a in place, rows whole (matrices of one panel): step k
 * takes as pivot the first row i >= k of largest cabs1(a_ik) (a number preferred to a
 * NaN), swaps rows k and p whole, then for each row i > k in turn l_ik = a_ik / a_kk
 * (cdiv; skipped for a zero pivot) and a_ij = a_ij - l_ik u_kj for j > k: clu1's
 * operations, in another layout. */
static void F(clu_small)(T *a, int32_t *piv, int32_t *perm, ptrdiff_t m, ptrdiff_t n) {
    ptrdiff_t kmax = m < n ? m : n;
    for (ptrdiff_t i = 0; i < m; i++) perm[i] = (int32_t)i;
    for (ptrdiff_t k = 0; k < kmax; k++) {
        ptrdiff_t p = k;
        T best = F(cabs1)(a + 2 * (k * n + k));
        for (ptrdiff_t i = k + 1; i < m; i++) {
            T v = F(cabs1)(a + 2 * (i * n + k));
            if (v > best || (best != best && v == v)) best = v, p = i;
        }
        piv[k] = (int32_t)p;
        if (p != k) {
            F(swap_rows)(a, 2 * n, k, p, 0, 2 * n);
            int32_t t = perm[k];
            perm[k] = perm[p];
            perm[p] = t;
        }
        const T *rk = a + 2 * k * n;
        T pr = rk[2 * k], pi = rk[2 * k + 1];
        for (ptrdiff_t i = k + 1; i < m; i++) {
            T *ri = a + 2 * i * n;
            if (pr != 0 || pi != 0) F(cdiv)(ri[2 * k], ri[2 * k + 1], pr, pi, &ri[2 * k], &ri[2 * k + 1]);
            F(caxpy_sub)(ri + 2 * (k + 1), ri[2 * k], ri[2 * k + 1], rk + 2 * (k + 1), n - k - 1);
        }
    }
}

/* c = c - A @ B for complex A (m x k, rows lda elements apart), B (k x n, rows ldb apart)
 * and c (rows ldc apart): W = A @ B as complex contractions are (docs/numerics.md,
 * "Contractions"): re = Ar @ Br - Ai @ Bi, im = Ar @ Bi + Ai @ Br, each @ the canonical
 * gemm (reading every other element), then c = c - W part by part. tmp holds 2 m n T.
 * Returns 0, or -1 when out of memory. */
static int F(cgemm_sub)(const T *a, ptrdiff_t lda, const T *b, ptrdiff_t ldb, T *c,
                        ptrdiff_t ldc, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, T *tmp,
                        int nthreads) {
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    int dbl = sizeof(T) == sizeof(double);
    operand3 ar = {a, 0, 2 * lda, 2}, ai = {a + 1, 0, 2 * lda, 2};
    operand3 br = {b, 0, 2 * ldb, 2}, bi = {b + 1, 0, 2 * ldb, 2};
    T *t1 = tmp, *t2 = tmp + m * n;
    for (int part = 0; part < 2; part++) {
        if (gemm(dbl, ar, part ? bi : br, t1, 1, m, n, k, nthreads) < 0) return -1;
        if (gemm(dbl, ai, part ? br : bi, t2, 1, m, n, k, nthreads) < 0) return -1;
        for (ptrdiff_t i = 0; i < m; i++) {
            T *ci = c + 2 * i * ldc + part;
            const T *x = t1 + i * n, *y = t2 + i * n;
            if (part)
                for (ptrdiff_t j = 0; j < n; j++) ci[2 * j] = ci[2 * j] - (x[j] + y[j]);
            else
                for (ptrdiff_t j = 0; j < n; j++) ci[2 * j] = ci[2 * j] - (x[j] - y[j]);
        }
    }
    return 0;
}

/* LU with partial pivoting of the complex m x n matrix a: lu1's blocked order (panels of
 * BLK columns, each factorised by getf2's steps on a transposed copy, then U12 and the
 * trailing update A22 = A22 - L21 @ U12 by cgemm_sub) with the complex operations above
 * and the pivot of largest cabs1. So every element is a_ij, minus one complex gemm product
 * per earlier panel, minus l_ic u_cj for its own panel's c ascending, then (below the
 * diagonal) / u_jj. work holds 2 BLK max(m, n) T, then 2 m n T for cgemm_sub. */
static int F(clu1)(T *a, int32_t *piv, int32_t *perm, ptrdiff_t m, ptrdiff_t n, T *work,
                   int nthreads) {
    ptrdiff_t kmax = m < n ? m : n;
    if (m <= LINALG_BLK && n <= LINALG_BLK) {
        F(clu_small)(a, piv, perm, m, n);
        return 0;
    }
    T *p = work, *tmp = work + 2 * LINALG_BLK * (m > n ? m : n);
    for (ptrdiff_t i = 0; i < m; i++) perm[i] = (int32_t)i;
    for (ptrdiff_t k0 = 0; k0 < kmax; k0 += LINALG_BLK) {
        ptrdiff_t kb = kmax - k0 < LINALG_BLK ? kmax - k0 : LINALG_BLK, k1 = k0 + kb;
        ptrdiff_t len = m - k0;
        for (ptrdiff_t r = 0; r < len; r++) {
            const T *ar = a + 2 * ((k0 + r) * n + k0);
            for (ptrdiff_t c = 0; c < kb; c++) {
                p[2 * (c * len + r)] = ar[2 * c];
                p[2 * (c * len + r) + 1] = ar[2 * c + 1];
            }
        }
        for (ptrdiff_t c = 0; c < kb; c++) {
            T *pc = p + 2 * c * len;
            ptrdiff_t best_r = c;
            T best = F(cabs1)(pc + 2 * c);
            for (ptrdiff_t r = c + 1; r < len; r++) {
                T v = F(cabs1)(pc + 2 * r);
                if (v > best || (best != best && v == v)) best = v, best_r = r;
            }
            piv[k0 + c] = (int32_t)(k0 + best_r);
            if (best_r != c) {
                for (ptrdiff_t c2 = 0; c2 < kb; c2++)
                    F(swap_rows)(p + 2 * c2 * len, 2, c, best_r, 0, 2);
                int32_t t = perm[k0 + c];
                perm[k0 + c] = perm[k0 + best_r];
                perm[k0 + best_r] = t;
            }
            T pr = pc[2 * c], pi = pc[2 * c + 1];
            if (pr != 0 || pi != 0)
                for (ptrdiff_t r = c + 1; r < len; r++)
                    F(cdiv)(pc[2 * r], pc[2 * r + 1], pr, pi, &pc[2 * r], &pc[2 * r + 1]);
            for (ptrdiff_t c2 = c + 1; c2 < kb; c2++) {
                T *q = p + 2 * c2 * len;
                F(caxpy_sub)(q + 2 * (c + 1), q[2 * c], q[2 * c + 1], pc + 2 * (c + 1),
                             len - c - 1);
            }
        }
        for (ptrdiff_t r = 0; r < len; r++) {
            T *ar = a + 2 * ((k0 + r) * n + k0);
            for (ptrdiff_t c = 0; c < kb; c++) {
                ar[2 * c] = p[2 * (c * len + r)];
                ar[2 * c + 1] = p[2 * (c * len + r) + 1];
            }
        }
        for (ptrdiff_t c = 0; c < kb; c++) {
            ptrdiff_t s = piv[k0 + c];
            if (s != k0 + c) {
                F(swap_rows)(a, 2 * n, k0 + c, s, 0, 2 * k0);
                F(swap_rows)(a, 2 * n, k0 + c, s, 2 * k1, 2 * n);
            }
        }
        if (k1 >= n) continue;
        for (ptrdiff_t c2 = 1; c2 < kb; c2++) {
            T *u = a + 2 * (k0 + c2) * n;
            for (ptrdiff_t c = 0; c < c2; c++)
                F(caxpy_sub)(u + 2 * k1, u[2 * (k0 + c)], u[2 * (k0 + c) + 1],
                             a + 2 * ((k0 + c) * n + k1), n - k1);
        }
        if (F(cgemm_sub)(a + 2 * (k1 * n + k0), n, a + 2 * (k0 * n + k1), n,
                         a + 2 * (k1 * n + k1), n, m - k1, n - k1, kb, tmp, nthreads) < 0)
            return -1;
    }
    return 0;
}

/* Solve T X = B for the complex m x m triangular T (lower, or upper if `upper`; diagonal 1
 * if `unit`) and the complex m x n B (X overwrites B): trsm1's order with complex
 * operations. Lower: row i of X is (b_i - t_ik x_k for k < i ascending) / t_ii (cdiv);
 * upper: rows from the last, k > i descending. */
static void F(ctrsm1)(const T *t, T *b, ptrdiff_t m, ptrdiff_t n, int unit, int upper) {
    for (ptrdiff_t r = 0; r < m; r++) {
        ptrdiff_t i = upper ? m - 1 - r : r;
        T *bi = b + 2 * i * n;
        const T *ti = t + 2 * i * m;
        if (upper)
            for (ptrdiff_t k = m - 1; k > i; k--)
                F(caxpy_sub)(bi, ti[2 * k], ti[2 * k + 1], b + 2 * k * n, n);
        else
            for (ptrdiff_t k = 0; k < i; k++)
                F(caxpy_sub)(bi, ti[2 * k], ti[2 * k + 1], b + 2 * k * n, n);
        if (!unit) {
            T dr = ti[2 * i], di = ti[2 * i + 1];
            for (ptrdiff_t j = 0; j < n; j++)
                F(cdiv)(bi[2 * j], bi[2 * j + 1], dr, di, &bi[2 * j], &bi[2 * j + 1]);
        }
    }
}

/* x^H y for n complex elements: term k, (xr yr + xi yi, xr yi - xi yr), into running sum
 * k % 8 (one pair of sums each for re and im), in ascending k, combined as dot's are:
 * ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)). */
static void F(cdotc)(const T *x, const T *y, ptrdiff_t n, T *re, T *im) {
    T r[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    ptrdiff_t k = 0;
    for (; k + 8 <= n; k += 8) /* by blocks of 8 (the lanes' order), so that it vectorises */
        for (int l = 0; l < 8; l++) {
            T xr = x[2 * (k + l)], xi = x[2 * (k + l) + 1];
            T yr = y[2 * (k + l)], yi = y[2 * (k + l) + 1];
            r[l] = r[l] + (xr * yr + xi * yi);
            s[l] = s[l] + (xr * yi - xi * yr);
        }
    for (int l = 0; k < n; k++, l++) {
        T xr = x[2 * k], xi = x[2 * k + 1], yr = y[2 * k], yi = y[2 * k + 1];
        r[l] = r[l] + (xr * yr + xi * yi);
        s[l] = s[l] + (xr * yi - xi * yr);
    }
    *re = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    *im = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* x = e_i with its components along the valid columns of u (complex, m rows) removed by
 * two Gram-Schmidt passes (x = x - (u_c^H x) u_c); returns its norm. */
static T F(ccomplete_candidate)(T *x, const T *u, const unsigned char *valid, ptrdiff_t m,
                                ptrdiff_t uc, ptrdiff_t i) {
    T re, im;
    memset(x, 0, sizeof(T) * (size_t)(2 * m));
    x[2 * i] = 1;
    for (int pass = 0; pass < 2; pass++)
        for (ptrdiff_t c = 0; c < uc; c++)
            if (valid[c]) {
                F(cdotc)(u + 2 * c * m, x, m, &re, &im);
                F(caxpy_sub)(x, re, im, u + 2 * c * m, m);
            }
    F(cdotc)(x, x, m, &re, &im);
    return sqrt(re);
}

/* The SVD's last steps (linalg_svd.h, after this file). */
static void F(svd_finish)(T *a, T *s, T *vt, T *u, ptrdiff_t m, ptrdiff_t n, ptrdiff_t uc,
                          void *work, int cplx);

/* The rotation of a complex column pair: with e = (er, ei) = gamma / |gamma| and
 * y_k = conj(e) q_k = (er qr + ei qi, er qi - ei qr), p_k = c p_k - s y_k, q_k = s p_k + c y_k
 * (both parts alike), for len elements. */
static void F(crotate)(T *p, T *q, T c, T s, T er, T ei, ptrdiff_t len) {
    for (ptrdiff_t k = 0; k < len; k++) {
        T xr = p[2 * k], xi = p[2 * k + 1], qr = q[2 * k], qi = q[2 * k + 1];
        T yr = er * qr + ei * qi, yi = er * qi - ei * qr;
        p[2 * k] = c * xr - s * yr;
        p[2 * k + 1] = c * xi - s * yi;
        q[2 * k] = s * xr + c * yr;
        q[2 * k + 1] = s * xi + c * yi;
    }
}

/* The SVD of the complex m x n matrix (m >= n) stored by columns in a, by one-sided Jacobi
 * on its columns directly (no QR, no preconditioner): sweeps over pairs (p, q), p < q, in
 * row order; at each sweep's start the squared norms alpha_j = re(a_j^H a_j) (cdotc);
 * gamma = a_p^H a_q (cdotc), g = |gamma| (hypot); a pair is skipped when
 * g <= eps sqrt(alpha) sqrt(beta); else the real rotation (c, s, t) of (alpha, beta, g)
 * (rotation) is applied with the phase e = gamma / g (crotate) to the columns p, q of a and
 * of V, and alpha - t g, beta + t g become their squared norms. Sweeps stop when one rotates
 * nothing (at most 60). Then s_j = sqrt(re(a_j^H a_j)) sorted descending (stably),
 * u_j = a_j / s_j (both parts), and complete1 for the rest. s is real (n), vt's row j is
 * V's column j (n x n complex; the caller conjugates it into V^H), u has uc complex
 * columns of m. work holds n ptrdiff_t, n T and uc bytes. */
static void F(csvd1)(T *a, T *s, T *vt, T *u, ptrdiff_t m, ptrdiff_t n, ptrdiff_t uc,
                     void *work, T eps) {
    T *norms = (T *)((ptrdiff_t *)work + n), im;
    memset(vt, 0, sizeof(T) * (size_t)(2 * n * n));
    for (ptrdiff_t i = 0; i < n; i++) vt[2 * (i * n + i)] = 1;
    for (int sweep = 0; sweep < 60; sweep++) {
        int rotated = 0;
        for (ptrdiff_t j = 0; j < n; j++) F(cdotc)(a + 2 * j * m, a + 2 * j * m, m, &norms[j], &im);
        for (ptrdiff_t p = 0; p < n; p++)
            for (ptrdiff_t q = p + 1; q < n; q++) {
                T *xp = a + 2 * p * m, *xq = a + 2 * q * m;
                T alpha = norms[p], beta = norms[q], gr, gi;
                F(cdotc)(xp, xq, m, &gr, &gi);
                T g = F(hypot)(gr, gi);
                if (g == 0 || g <= eps * sqrt(alpha) * sqrt(beta)) continue;
                if (g != g) {
                    F(fill_nan)(s, n);
                    F(fill_nan)(vt, 2 * n * n);
                    F(fill_nan)(u, 2 * uc * m);
                    return;
                }
                rotated = 1;
                T c, sn, t, er = gr / g, ei = gi / g;
                F(rotation)(alpha, beta, g, &c, &sn, &t);
                norms[p] = alpha - t * g;
                norms[q] = beta + t * g;
                F(crotate)(xp, xq, c, sn, er, ei, m);
                F(crotate)(vt + 2 * p * n, vt + 2 * q * n, c, sn, er, ei, n);
            }
        if (!rotated) break;
    }
    for (ptrdiff_t j = 0; j < n; j++) {
        F(cdotc)(a + 2 * j * m, a + 2 * j * m, m, &norms[j], &im);
        norms[j] = sqrt(norms[j]);
    }
    F(svd_finish)(a, s, vt, u, m, n, uc, work, 1);
}
