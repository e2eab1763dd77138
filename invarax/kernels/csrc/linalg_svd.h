/* linalg_svd.h - the SVD for one float type T (suffix SFX); included by linalg_impl.h, once
 * per type and instruction set. docs/numerics.md ("Factorisations") writes the order down.
 */

/* x = e_i with its components along the valid columns of u removed by two Gram-Schmidt
 * passes; returns its norm. */
static T F(complete_candidate)(T *x, const T *u, const unsigned char *valid, ptrdiff_t m,
                               ptrdiff_t uc, ptrdiff_t i) {
    memset(x, 0, sizeof(T) * (size_t)m);
    x[i] = 1;
    for (int pass = 0; pass < 2; pass++)
        for (ptrdiff_t c = 0; c < uc; c++)
            if (valid[c]) F(axpy_sub)(x, F(dot)(u + c * m, x, m), u + c * m, m);
    return sqrt(F(dot)(x, x, m));
}

/* Columns valid[j] == 0 of the m-row column-major u (columns j < uc; complex columns if
 * cplx) become unit vectors orthogonal to all valid columns: the first e_i, i ascending
 * (each tried once), whose remainder after two Gram-Schmidt passes has norm > 1/2,
 * normalised; once every i has been tried, the e_i whose remainder has the largest norm
 * (the first such i; the norms' squares sum to the number of columns left, so it is at
 * least 1/sqrt(m)). */
static void F(complete1)(T *u, unsigned char *valid, ptrdiff_t m, ptrdiff_t uc, int cplx) {
#define CANDIDATE(i)                                                                        \
    (cplx ? F(ccomplete_candidate)(x, u, valid, m, uc, i)                                   \
          : F(complete_candidate)(x, u, valid, m, uc, i))
    ptrdiff_t next = 0, w = cplx ? 2 : 1;
    for (ptrdiff_t j = 0; j < uc; j++) {
        if (valid[j]) continue;
        T *x = u + j * m * w, norm = 0;
        int found = 0;
        for (; next < m && !found; next++) found = (norm = CANDIDATE(next)) > (T)0.5;
        if (!found) {
            ptrdiff_t best = 0;
            T largest = -1;
            for (ptrdiff_t i = 0; i < m; i++) {
                T candidate = CANDIDATE(i);
                if (candidate > largest) {
                    largest = candidate;
                    best = i;
                }
            }
            norm = CANDIDATE(best);
        }
        for (ptrdiff_t i = 0; i < m * w; i++) x[i] = x[i] / norm;
        valid[j] = 1;
    }
#undef CANDIDATE
}

#ifndef SVD_PRECONDITION
#define SVD_PRECONDITION 16
#endif

/* The eigensolver in double of this instruction set (defined by its own instance). */
static void CAT(eigh1, SFX_F64)(double *a, double *vt, double *w, ptrdiff_t n, void *work);

/* Jacobi's starting point for the n x n matrix a (stored by columns), n >= SVD_PRECONDITION:
 * the Gram matrix G = A^T A in double (A's elements converted, then the canonical gemm),
 * its eigenvectors V0 by eigh (in double), rounded to T, in descending order of their
 * eigenvalues: vt's row j = V0's column j; then a = A V0 by the canonical gemm in T. A V0
 * has nearly orthogonal columns, so the sweeps that follow rotate little (they, not V0,
 * make the result accurate). Returns 0, or -1 when out of memory. */
static int F(svd_precondition)(T *a, T *vt, ptrdiff_t n, int nthreads) {
    size_t nn = (size_t)(n * n);
    char *buf = malloc(sizeof(double) * (3 * nn + 2 * (size_t)n) + sizeof(ptrdiff_t) * (size_t)n
                       + sizeof(T) * nn);
    if (!buf) return -1;
    double *g = (double *)buf, *v0t = g + nn, *ad = v0t + nn, *w = ad + nn, *ework = w + n;
    T *prod = (T *)((char *)(ework + n) + sizeof(ptrdiff_t) * (size_t)n);
    const double *src = (const double *)a;
    if (sizeof(T) != sizeof(double)) {
        for (size_t i = 0; i < nn; i++) ad[i] = a[i];
        src = ad;
    }
    operand3 at = {src, 0, n, 1}, an = {src, 0, 1, n};
    int status = gemm(1, at, an, g, 1, n, n, n, nthreads);
    if (status == 0) {
        CAT(eigh1, SFX_F64)(g, v0t, w, n, ework);
        for (ptrdiff_t j = 0; j < n; j++)
            for (ptrdiff_t k = 0; k < n; k++) vt[j * n + k] = (T)v0t[(n - 1 - j) * n + k];
        operand3 v = {vt, 0, n, 1}, s = {a, 0, n, 1};
        status = gemm(sizeof(T) == sizeof(double), v, s, prod, 1, n, n, n, nthreads);
        if (status == 0) memcpy(a, prod, sizeof(T) * nn);
    }
    free(buf);
    return status;
}

static void F(svd_finish)(T *a, T *s, T *vt, T *u, ptrdiff_t m, ptrdiff_t n, ptrdiff_t uc,
                          void *work, int cplx);

/* The SVD of the m x n matrix (m >= n) stored by columns in a, by one-sided Jacobi
 * (Hestenes): sweeps over column pairs (p, q), p < q, rotating both when
 * |a_p . a_q| > eps sqrt(|a_p|^2 |a_q|^2), until a sweep rotates nothing (at most 60). The
 * squared norms are computed at each sweep's start and updated by each rotation
 * (|a_p|^2 - t g, |a_q|^2 + t g) within it.
 * s (descending), vt (n x n, row j = column j of V), u (uc columns of m, column-major;
 * columns beyond n, and those of zero singular values, complete an orthonormal set).
 * work holds n ptrdiff_t, n T and uc bytes. */
static int F(svd_jacobi)(T *a, T *s, T *vt, T *u, ptrdiff_t m, ptrdiff_t n, ptrdiff_t uc,
                         void *work, T eps, int nthreads) {
    T *norms = (T *)((ptrdiff_t *)work + n);
    T *vbuf = vt;
    if (m == n && n >= SVD_PRECONDITION) {
        if (F(svd_precondition)(a, vbuf, n, nthreads) < 0) return -1;
    } else {
        memset(vbuf, 0, sizeof(T) * (size_t)(n * n));
        for (ptrdiff_t i = 0; i < n; i++) vbuf[i * n + i] = 1;
    }
    for (int sweep = 0; sweep < 60; sweep++) {
        int rotated = 0;
        for (ptrdiff_t j = 0; j < n; j++) norms[j] = F(dot)(a + j * m, a + j * m, m);
        for (ptrdiff_t p = 0; p < n; p++)
            for (ptrdiff_t q = p + 1; q < n; q++) {
                T *xp = a + p * m, *xq = a + q * m;
                T alpha = norms[p], beta = norms[q];
                T g = F(dot)(xp, xq, m);
                if (g == 0 || fabs(g) <= eps * sqrt(alpha) * sqrt(beta)) continue;
                if (g != g) {
                    F(fill_nan)(s, n);
                    F(fill_nan)(vt, n * n);
                    F(fill_nan)(u, uc * m);
                    return 0;
                }
                rotated = 1;
                T c, sn, t;
                F(rotation)(alpha, beta, g, &c, &sn, &t);
                norms[p] = alpha - t * g;
                norms[q] = beta + t * g;
                for (ptrdiff_t k = 0; k < m; k++) {
                    T x = xp[k], y = xq[k];
                    xp[k] = c * x - sn * y;
                    xq[k] = sn * x + c * y;
                }
                T *vp = vbuf + p * n, *vq = vbuf + q * n;
                for (ptrdiff_t k = 0; k < n; k++) {
                    T x = vp[k], y = vq[k];
                    vp[k] = c * x - sn * y;
                    vq[k] = sn * x + c * y;
                }
            }
        if (!rotated) break;
    }
    for (ptrdiff_t j = 0; j < n; j++) norms[j] = sqrt(F(dot)(a + j * m, a + j * m, m));
    F(svd_finish)(a, s, vt, u, m, n, uc, work, 0);
    return 0;
}

/* Jacobi's last steps, given the columns' norms in work (after n ptrdiff_t; complex columns
 * if cplx): s_j = the norms sorted descending (stably), u_j = a_j / s_j (every part) for
 * s_j > 0 and j < uc, vt's rows (V's columns) in the same order, then complete1. a (m >= n)
 * is scratch. */
static void F(svd_finish)(T *a, T *s, T *vt, T *u, ptrdiff_t m, ptrdiff_t n, ptrdiff_t uc,
                          void *work, int cplx) {
    ptrdiff_t *order = work, w = cplx ? 2 : 1;
    T *norms = (T *)(order + n);
    unsigned char *valid = (unsigned char *)(norms + n);
    F(sort_order)(norms, order, n, 1);
    memset(valid, 0, (size_t)uc);
    for (ptrdiff_t j = 0; j < n; j++) {
        ptrdiff_t o = order[j];
        T sj = norms[o];
        s[j] = sj;
        if (j < uc && sj > 0) {
            for (ptrdiff_t i = 0; i < m * w; i++) u[j * m * w + i] = a[o * m * w + i] / sj;
            valid[j] = 1;
        }
    }
    memcpy(a, vt, sizeof(T) * (size_t)(n * n * w));
    for (ptrdiff_t j = 0; j < n; j++)
        memcpy(vt + j * n * w, a + order[j] * n * w, sizeof(T) * (size_t)(n * w));
    F(complete1)(u, valid, m, uc, cplx);
}

/* The SVD of the m x n matrix (m >= n) stored by columns in a. A square matrix goes to
 * svd_jacobi directly; a tall one is first factorised a = Q R (qr1), R's SVD
 * R = U_R S V^T taken by svd_jacobi (columns of n instead of m: less work, and Jacobi
 * converges in fewer sweeps on R), and U = Q U_R by the canonical gemm; the columns beyond
 * n, if uc > n, are completed as in svd_jacobi. Returns -1 when out of memory. */
static int F(svd1)(T *a, T *s, T *vt, T *u, ptrdiff_t m, ptrdiff_t n, ptrdiff_t uc,
                   void *work, T eps, int nthreads) {
    if (m == n || n == 0) return F(svd_jacobi)(a, s, vt, u, m, n, uc, work, eps, nthreads);
    ptrdiff_t ur_cols = uc ? n : 0;
    T *buf = malloc(sizeof(T) * (size_t)(n + n * n + n * m + ur_cols * n));
    if (!buf) return -1;
    T *tau = buf, *r = tau + n, *q = r + n * n, *ur = q + n * m;
    F(qr1)(a, tau, m, n);
    for (ptrdiff_t j = 0; j < n; j++)
        for (ptrdiff_t i = 0; i < n; i++) r[j * n + i] = i <= j ? a[j * m + i] : 0;
    if (uc) F(qr_q1)(a, tau, q, m, n, n);
    if (F(svd_jacobi)(r, s, vt, ur, n, n, ur_cols, work, eps, nthreads) < 0) {
        free(buf);
        return -1;
    }
    if (uc) {
        unsigned char *valid = (unsigned char *)work;
        /* u[j][i] = sum_k ur[j][k] q[k][i] (columns of U, of U_R, of Q): U^T = U_R^T Q^T. */
        operand3 urt = {ur, 0, n, 1}, qt = {q, 0, m, 1};
        if (gemm(sizeof(T) == sizeof(double), urt, qt, u, 1, n, m, n, nthreads) < 0) {
            free(buf);
            return -1;
        }
        for (ptrdiff_t j = 0; j < uc; j++) valid[j] = j < n;
        F(complete1)(u, valid, m, uc, 0);
    }
    free(buf);
    return 0;
}

