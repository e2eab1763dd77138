/* linalg_blocked.h - blocked Cholesky and LU for one float type T (suffix SFX); included by
 * linalg_impl.h, once per type and instruction set.
 *
 * Both are right-looking: a panel of BLK columns is factorised (its columns copied to a
 * contiguous buffer, so that every loop runs over contiguous memory and vectorises), then
 * the trailing matrix gets one update A22 = A22 - W, where W = L21 @ U12 is the canonical
 * gemm's product (docs/numerics.md, "Contractions": one FMA chain per element over the
 * panel's columns). Every element's operations depend on the matrix's shape and BLK alone:
 * not on the batch, the thread count (threads only split gemm's output tiles) or the
 * instruction set (the panel code uses + - * / sqrt, the same on every ISA; gemm's FMA
 * gives the same bits on every ISA). docs/numerics.md writes the orders down.
 */

/* The trailing update of Cholesky goes by column blocks of this width (lower part only). */
#ifndef CHOL_UPDATE_W
#define CHOL_UPDATE_W 256
#endif

/* c[i][j] = c[i][j] - (A @ B)[i][j] for i < m, j < n: A is m x k (rows lda apart), B is k x n
 * (rows ldb apart), both with contiguous rows; the product goes through tmp (m x n) by the
 * canonical gemm on up to nthreads threads. Returns 0, or -1 when out of memory. */
static int F(gemm_sub)(const T *a, ptrdiff_t lda, const T *b, ptrdiff_t ldb, T *c,
                       ptrdiff_t ldc, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, T *tmp,
                       int nthreads) {
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    operand3 oa = {a, 0, lda, 1}, ob = {b, 0, ldb, 1};
    if (gemm(sizeof(T) == sizeof(double), oa, ob, tmp, 1, m, n, k, nthreads) < 0) return -1;
    for (ptrdiff_t i = 0; i < m; i++) {
        T *ci = c + i * ldc;
        const T *ti = tmp + i * n;
        for (ptrdiff_t j = 0; j < n; j++) ci[j] = ci[j] - ti[j];
    }
    return 0;
}

/* a_ij = (a_ij + a_ji) / 2 for i >= j (the lower triangle of (A + A^T) / 2, as two rounded
 * operations), by tiles of 32 x 32, so that the transposed reads stay in cache. */
static void F(symmetrize_lower)(T *a, ptrdiff_t n) {
    for (ptrdiff_t i0 = 0; i0 < n; i0 += 32)
        for (ptrdiff_t j0 = 0; j0 <= i0; j0 += 32)
            for (ptrdiff_t i = i0; i < n && i < i0 + 32; i++)
                for (ptrdiff_t j = j0; j <= i && j < j0 + 32; j++)
                    a[i * n + j] = (a[i * n + j] + a[j * n + i]) / 2;
}

/* Both triangles of a become its lower one (a_ji = a_ij, i > j) or, with `symmetrize`, the
 * lower one of (A + A^T) / 2 (symmetrize_lower first), by tiles of 32 x 32. */
static void F(symmetric_from_lower)(T *a, ptrdiff_t n, int symmetrize) {
    if (symmetrize) F(symmetrize_lower)(a, n);
    for (ptrdiff_t i0 = 0; i0 < n; i0 += 32)
        for (ptrdiff_t j0 = 0; j0 <= i0; j0 += 32)
            for (ptrdiff_t i = i0; i < n && i < i0 + 32; i++)
                for (ptrdiff_t j = j0; j < i && j < j0 + 32; j++) a[j * n + i] = a[i * n + j];
}

/* Cholesky of the n x n matrix a (its lower triangle is read): a becomes L (upper part zero)
 * with A = L L^T, or all NaN if A is not positive definite; with `symmetrize`, A's lower
 * triangle is first replaced by that of (A + A^T) / 2 (symmetrize_lower). By panels of BLK
 * columns k0..k1: (1) the panel's columns of the rows below, A[k0:, k0:k1], are copied transposed
 * into p (row c = column k0 + c); (2) column c in turn: d = p[c][c], NaN result unless
 * d > 0; p[c][c] = sqrt(d); p[c][r] = p[c][r] / p[c][c] (r > c); then for each c' > c,
 * p[c'][r] = p[c'][r] - p[c'][c] * p[c][r] (r >= c'); (3) the columns go back into a; (4)
 * the trailing lower part A[k1:, k1:] = A[k1:, k1:] - L21 L21^T, computed by gemm in column
 * blocks of CHOL_UPDATE_W (each block's rows from its diagonal down). So every element is
 * a_ij, minus one gemm product per earlier panel, minus l_ic * l_jc for the columns c of
 * its own panel in ascending c (one rounded product, one rounded difference each), then
 * sqrt or / l_jj. Returns 0, or -1 when out of memory. */
static int F(cholesky1)(T *a, ptrdiff_t n, int symmetrize, T *work, int nthreads) {
    T *p = work, *tmp = work + LINALG_BLK * n + LINALG_BLK * LINALG_BLK;
    if (symmetrize) F(symmetrize_lower)(a, n);
    for (ptrdiff_t k0 = 0; k0 < n; k0 += LINALG_BLK) {
        ptrdiff_t kb = n - k0 < LINALG_BLK ? n - k0 : LINALG_BLK, k1 = k0 + kb, len = n - k0;
        for (ptrdiff_t r = 0; r < len; r++) {
            const T *ar = a + (k0 + r) * n + k0;
            for (ptrdiff_t c = 0; c < kb && c <= r; c++) p[c * len + r] = ar[c];
        }
        for (ptrdiff_t c = 0; c < kb; c++) {
            T *pc = p + c * len;
            T d = pc[c];
            if (!(d > 0)) {
                F(fill_nan)(a, n * n);
                return 0;
            }
            T diag = sqrt(d);
            pc[c] = diag;
            for (ptrdiff_t r = c + 1; r < len; r++) pc[r] = pc[r] / diag;
            for (ptrdiff_t c2 = c + 1; c2 < kb; c2++) {
                T *q = p + c2 * len, f = pc[c2];
                for (ptrdiff_t r = c2; r < len; r++) q[r] = q[r] - f * pc[r];
            }
        }
        for (ptrdiff_t r = 0; r < len; r++) {
            T *ar = a + (k0 + r) * n + k0;
            for (ptrdiff_t c = 0; c < kb && c <= r; c++) ar[c] = p[c * len + r];
        }
        /* L21 is a[k1:, k0:k1] (rows n apart); L21^T's column j is p[:, j - k0]. */
        for (ptrdiff_t j0 = k1; j0 < n; j0 += CHOL_UPDATE_W) {
            ptrdiff_t w = n - j0 < CHOL_UPDATE_W ? n - j0 : CHOL_UPDATE_W;
            if (F(gemm_sub)(a + j0 * n + k0, n, p + (j0 - k0), len, a + j0 * n + j0, n, n - j0,
                            w, kb, tmp, nthreads) < 0)
                return -1;
        }
    }
    for (ptrdiff_t i = 0; i < n; i++)
        for (ptrdiff_t j = i + 1; j < n; j++) a[i * n + j] = 0;
    return 0;
}

/* Swap rows r and s of the m x n a in columns [j0, j1). */
static void F(swap_rows)(T *a, ptrdiff_t n, ptrdiff_t r, ptrdiff_t s, ptrdiff_t j0,
                         ptrdiff_t j1) {
    T *x = a + r * n, *y = a + s * n;
    for (ptrdiff_t j = j0; j < j1; j++) {
        T t = x[j];
        x[j] = y[j];
        y[j] = t;
    }
}

/* getf2 on the m x n matrix a in place, rows whole (for matrices of one panel, where copying
 * the panel costs more than it saves): step k takes the pivot as lu1's panel does (the same
 * values, so the same choice), swaps rows k and p whole, then l_ik = a_ik / a_kk (skipped
 * for a zero pivot) and a_ij = a_ij - l_ik * u_kj: lu1's operations, in another layout. */
static void F(lu_small)(T *a, int32_t *piv, int32_t *perm, ptrdiff_t m, ptrdiff_t n) {
    ptrdiff_t kmax = m < n ? m : n;
    for (ptrdiff_t i = 0; i < m; i++) perm[i] = (int32_t)i;
    for (ptrdiff_t k = 0; k < kmax; k++) {
        ptrdiff_t p = k;
        T best = fabs(a[k * n + k]);
        for (ptrdiff_t i = k + 1; i < m; i++) {
            T v = fabs(a[i * n + k]);
            if (v > best || (best != best && v == v)) best = v, p = i;
        }
        piv[k] = (int32_t)p;
        if (p != k) {
            F(swap_rows)(a, n, k, p, 0, n);
            int32_t t = perm[k];
            perm[k] = perm[p];
            perm[p] = t;
        }
        const T *rk = a + k * n;
        T pivot = rk[k];
        for (ptrdiff_t i = k + 1; i < m; i++) {
            T *ri = a + i * n;
            if (pivot != 0) ri[k] = ri[k] / pivot;
            F(axpy_sub)(ri + k + 1, ri[k], rk + k + 1, n - k - 1);
        }
    }
}

/* LU with partial pivoting of the m x n matrix a: a becomes L\U, piv[k] the row swapped with
 * row k at step k, perm the resulting row permutation. By panels of BLK columns k0..k1:
 * (1) A[k0:, k0:k1] is copied transposed into p; (2) column c in turn: the pivot is the
 * first row r >= c of largest |p[c][r]| (a number preferred to a NaN), rows c and r are
 * swapped in the panel; p[c][r] = p[c][r] / pivot (r > c; skipped when the pivot is 0); for
 * each c' > c, p[c'][r] = p[c'][r] - p[c][r] * p[c'][c] (r > c); (3) the panel goes back,
 * and its swaps are applied to the other columns of the rows (in order); (4)
 * U12 = A[k0:k1, k1:]: row c' = row c' - l_c'c * row c for c < c' ascending; (5)
 * A[k1:, k1:] = A[k1:, k1:] - L21 @ U12 by gemm. So every element is a_ij, minus one gemm
 * product per earlier panel, minus l_ic * u_cj for the columns c of its own panel in
 * ascending c, then (below the diagonal) / u_jj: getf2's order within a panel. */
static int F(lu1)(T *a, int32_t *piv, int32_t *perm, ptrdiff_t m, ptrdiff_t n, T *work,
                  int nthreads) {
    ptrdiff_t kmax = m < n ? m : n;
    if (m <= LINALG_BLK && n <= LINALG_BLK) { /* one panel: getf2 in place, the same operations */
        F(lu_small)(a, piv, perm, m, n);
        return 0;
    }
    T *p = work, *tmp = work + LINALG_BLK * (m > n ? m : n) + LINALG_BLK * LINALG_BLK;
    for (ptrdiff_t i = 0; i < m; i++) perm[i] = (int32_t)i;
    for (ptrdiff_t k0 = 0; k0 < kmax; k0 += LINALG_BLK) {
        ptrdiff_t kb = kmax - k0 < LINALG_BLK ? kmax - k0 : LINALG_BLK, k1 = k0 + kb;
        ptrdiff_t len = m - k0;
        for (ptrdiff_t r = 0; r < len; r++) {
            const T *ar = a + (k0 + r) * n + k0;
            for (ptrdiff_t c = 0; c < kb; c++) p[c * len + r] = ar[c];
        }
        for (ptrdiff_t c = 0; c < kb; c++) {
            T *pc = p + c * len;
            ptrdiff_t best_r = c;
            T best = fabs(pc[c]);
            for (ptrdiff_t r = c + 1; r < len; r++) {
                T v = fabs(pc[r]);
                if (v > best || (best != best && v == v)) best = v, best_r = r;
            }
            piv[k0 + c] = (int32_t)(k0 + best_r);
            if (best_r != c) {
                for (ptrdiff_t c2 = 0; c2 < kb; c2++) {
                    T *q = p + c2 * len, t = q[c];
                    q[c] = q[best_r];
                    q[best_r] = t;
                }
                int32_t t = perm[k0 + c];
                perm[k0 + c] = perm[k0 + best_r];
                perm[k0 + best_r] = t;
            }
            T pivot = pc[c];
            if (pivot != 0)
                for (ptrdiff_t r = c + 1; r < len; r++) pc[r] = pc[r] / pivot;
            for (ptrdiff_t c2 = c + 1; c2 < kb; c2++) {
                T *q = p + c2 * len, f = q[c];
                for (ptrdiff_t r = c + 1; r < len; r++) q[r] = q[r] - pc[r] * f;
            }
        }
        for (ptrdiff_t r = 0; r < len; r++) {
            T *ar = a + (k0 + r) * n + k0;
            for (ptrdiff_t c = 0; c < kb; c++) ar[c] = p[c * len + r];
        }
        for (ptrdiff_t c = 0; c < kb; c++) {
            ptrdiff_t s = piv[k0 + c];
            if (s != k0 + c) {
                F(swap_rows)(a, n, k0 + c, s, 0, k0);
                F(swap_rows)(a, n, k0 + c, s, k1, n);
            }
        }
        if (k1 >= n) continue;
        for (ptrdiff_t c2 = 1; c2 < kb; c2++) {
            T *u = a + (k0 + c2) * n;
            for (ptrdiff_t c = 0; c < c2; c++) F(axpy_sub)(u + k1, u[k0 + c], a + (k0 + c) * n + k1,
                                                          n - k1);
        }
        if (F(gemm_sub)(a + k1 * n + k0, n, a + k0 * n + k1, n, a + k1 * n + k1, n, m - k1,
                        n - k1, kb, tmp, nthreads) < 0)
            return -1;
    }
    return 0;
}
