/* linalg_complex.h - LU with partial pivoting and the triangular solve of complex matrices,
 * for one float type T (suffix SFX); included by linalg_impl.h, once per type and
 * instruction set. docs/numerics.md ("Factorisations") writes the orders down.
 *
 * A complex element is two T, (re, im), interleaved as NumPy stores complex64 and
 * complex128. Every complex operation is spelled out in real ones, each rounded, in one
 * order (no C99 complex arithmetic, whose multiply and divide handle infinities and
 * scaling as each compiler likes; no FMA: the build switches contraction off):
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

/* getf2 on the complex m x n matrix a in place (rows whole), for every size: step k takes
 * as pivot the first row i >= k of largest cabs1(a_ik) (a number preferred to a NaN),
 * swaps rows k and p whole, then for each row i > k in turn l_ik = a_ik / a_kk (cdiv;
 * skipped for a zero pivot) and a_ij = a_ij - l_ik u_kj for j > k in ascending j. So every
 * element is a_ij minus l_ic u_cj for c ascending (one complex product and one
 * subtraction each), then (below the diagonal) / u_jj. */
static void F(clu1)(T *a, int32_t *piv, int32_t *perm, ptrdiff_t m, ptrdiff_t n) {
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
