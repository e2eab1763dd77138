/* linalg_impl.h - the factorisations for one float type T (suffix SFX); included by linalg.c.
 *
 * Every routine works on one matrix at a time, in place, in a C-contiguous buffer, and
 * performs for each output element a sequence of IEEE operations (+, -, *, /, sqrt, and the
 * FMAs of the canonical gemm that the blocked Cholesky and LU and the SVD call; no other
 * FMA: the build switches contraction off) that depends only on the matrix's size and
 * values, never on the batch, the thread count or the CPU (compiled for the baseline and
 * for AVX2, the same operations). docs/numerics.md ("Factorisations and the FFT") writes
 * each order down.
 */
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define F(name) CAT(name, SFX)

/* The canonical dot product of x and y (n terms): 8 running sums, term i into sum i % 8, in
 * ascending i, combined as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)). */
static T F(dot)(const T *x, const T *y, ptrdiff_t n) {
    T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) s[l] = s[l] + x[i + l] * y[i + l];
    for (int l = 0; i < n; i++, l++) s[l] = s[l] + x[i] * y[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* dot's eight running sums as one vector (GCC's vector extension: the same operation on
 * every lane, in AVX or SSE registers). */
typedef T F(v8) __attribute__((vector_size(8 * sizeof(T))));

/* out[r] = dot(x[r], y, n) for r < 4, each in dot's order (the same bits), computed together
 * so that the four sums' additions overlap. */
static void F(dot4)(const T *const x[4], const T *y, ptrdiff_t n, T *out) {
    F(v8) acc[4] = {{0}, {0}, {0}, {0}};
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        F(v8) v, u;
        memcpy(&v, y + i, sizeof v);
        for (int r = 0; r < 4; r++) {
            memcpy(&u, x[r] + i, sizeof u);
            acc[r] = acc[r] + u * v;
        }
    }
    for (int r = 0; r < 4; r++) {
        T s[8];
        memcpy(s, &acc[r], sizeof s);
        for (ptrdiff_t k = i, l = 0; k < n; k++, l++) s[l] = s[l] + x[r][k] * y[k];
        out[r] = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }
}

/* sum |x_i| in dot's order: 8 running sums, term i into sum i % 8, combined pairwise. */
static T F(asum)(const T *x, ptrdiff_t n) {
    T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) s[l] = s[l] + (T)fabs(x[i + l]);
    for (int l = 0; i < n; i++, l++) s[l] = s[l] + (T)fabs(x[i]);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* y[i] = y[i] - a * x[i]: one rounded product, one rounded difference per element. */
static void F(axpy_sub)(T *y, T a, const T *x, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) y[i] = y[i] - a * x[i];
}

static void F(fill_nan)(T *a, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) a[i] = (T)NAN;
}

#include "linalg_blocked.h"

/* Solve T X = B for the m x m triangular T (lower, or upper if `upper`; diagonal 1 if
 * `unit`) and the m x n B (X overwrites B). Lower: row i of X is (b_i - sum_{k<i} t_ik x_k,
 * subtracted in ascending k) / t_ii; upper: rows from the last, (b_i - sum_{k>i} t_ik x_k,
 * subtracted in descending k) / t_ii. */
static void F(trsm1)(const T *t, T *b, ptrdiff_t m, ptrdiff_t n, int unit, int upper) {
    if (n == 1) { /* one column: the same operations, without a call per term */
        for (ptrdiff_t r = 0; r < m; r++) {
            ptrdiff_t i = upper ? m - 1 - r : r;
            const T *ti = t + i * m;
            T x = b[i];
            if (upper)
                for (ptrdiff_t k = m - 1; k > i; k--) x = x - ti[k] * b[k];
            else
                for (ptrdiff_t k = 0; k < i; k++) x = x - ti[k] * b[k];
            b[i] = unit ? x : x / ti[i];
        }
        return;
    }
    for (ptrdiff_t r = 0; r < m; r++) {
        ptrdiff_t i = upper ? m - 1 - r : r;
        T *bi = b + i * n;
        if (upper)
            for (ptrdiff_t k = m - 1; k > i; k--) F(axpy_sub)(bi, t[i * m + k], b + k * n, n);
        else
            for (ptrdiff_t k = 0; k < i; k++) F(axpy_sub)(bi, t[i * m + k], b + k * n, n);
        if (!unit) {
            T d = t[i * m + i];
            for (ptrdiff_t j = 0; j < n; j++) bi[j] = bi[j] / d;
        }
    }
}

/* The reflector I - tau v v^T applied to `count` columns c_j = c + j * stride (len elements):
 * c_j = c_j - (tau * dot(v, c_j)) v; for long columns four columns' dots at a time (dot4,
 * the same bits). */
static void F(reflect)(const T *v, T tau, T *c, ptrdiff_t stride, ptrdiff_t count,
                       ptrdiff_t len) {
    ptrdiff_t j = 0;
    for (; j + 4 <= count && len >= 64; j += 4) { /* shorter: dot4 does not pay */
        const T *cols[4] = {c + j * stride, c + (j + 1) * stride, c + (j + 2) * stride,
                            c + (j + 3) * stride};
        T g[4];
        F(dot4)(cols, v, len, g);
        for (int r = 0; r < 4; r++) F(axpy_sub)(c + (j + r) * stride, tau * g[r], v, len);
    }
    for (; j < count; j++) F(axpy_sub)(c + j * stride, tau * F(dot)(v, c + j * stride, len), v, len);
}

/* Householder QR (LAPACK geqr2's reflectors) of the m x n matrix stored by columns: a[j*m + i]
 * is A[i][j]. R ends in the upper triangle, the reflectors' vectors below it (v_k has an
 * implicit 1 at row k), tau[k] their scales: H_k = I - tau_k v_k v_k^T. */
static void F(qr1)(T *a, T *tau, ptrdiff_t m, ptrdiff_t n) {
    ptrdiff_t kmax = m < n ? m : n;
    for (ptrdiff_t k = 0; k < kmax; k++) {
        T *x = a + k * m + k;
        ptrdiff_t len = m - k;
        T alpha = x[0];
        T xnorm2 = F(dot)(x + 1, x + 1, len - 1);
        if (xnorm2 == 0) {
            tau[k] = 0;
            continue;
        }
        T beta = sqrt(alpha * alpha + xnorm2);
        if (alpha >= 0) beta = -beta;
        tau[k] = (beta - alpha) / beta;
        T scale = alpha - beta;
        for (ptrdiff_t i = 1; i < len; i++) x[i] = x[i] / scale;
        x[0] = 1;
        F(reflect)(x, tau[k], a + (k + 1) * m + k, m, n - k - 1, len);
        x[0] = beta;
    }
}

/* Q's first qc columns (stored by columns, q[j*m + i]) from qr1's reflectors:
 * Q = H_0 H_1 ... H_{kmax-1} applied to the identity's columns, last reflector first. */
static void F(qr_q1)(T *a, const T *tau, T *q, ptrdiff_t m, ptrdiff_t n, ptrdiff_t qc) {
    ptrdiff_t kmax = m < n ? m : n;
    memset(q, 0, sizeof(T) * (size_t)(qc * m));
    for (ptrdiff_t j = 0; j < qc; j++) q[j * m + j] = 1;
    for (ptrdiff_t k = kmax - 1; k >= 0; k--) {
        T *v = a + k * m + k;
        ptrdiff_t len = m - k;
        T saved = v[0];
        v[0] = 1;
        F(reflect)(v, tau[k], q + k, m, qc, len);
        v[0] = saved;
    }
}

/* The Jacobi rotation (c, s) that zeroes the off-diagonal g of [[p, g], [g, q]]
 * (Rutishauser's formulas); t = s / c. */
static void F(rotation)(T p, T q, T g, T *c, T *s, T *t) {
    T theta = (q - p) / (2 * g);
    T tt;
    if (fabs(theta) > (T)1e15) tt = 1 / (2 * theta);
    else {
        tt = 1 / (fabs(theta) + sqrt(theta * theta + 1));
        if (theta < 0) tt = -tt;
    }
    *t = tt;
    *c = 1 / sqrt(tt * tt + 1);
    *s = tt * *c;
}

/* Stable sort of the indices order[0..n) by key ascending (descending if desc), NaNs last. */
static void F(sort_order)(const T *key, ptrdiff_t *order, ptrdiff_t n, int desc) {
    for (ptrdiff_t i = 0; i < n; i++) order[i] = i;
    for (ptrdiff_t i = 1; i < n; i++) {
        ptrdiff_t o = order[i], j = i;
        T v = key[o];
        while (j > 0) {
            T u = key[order[j - 1]];
            int after = v == v && (u != u || (desc ? u < v : u > v));
            if (!after) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = o;
    }
}

#define ABS(x) ((T)fabs(x))

/* sqrt(a^2 + b^2) without overflow (EISPACK's pythag). */
static T F(pythag)(T a, T b) {
    T aa = ABS(a), ab = ABS(b);
    if (aa > ab) {
        T r = ab / aa;
        return aa * (T)sqrt(1 + r * r);
    }
    if (ab == 0) return 0;
    T r = aa / ab;
    return ab * (T)sqrt(1 + r * r);
}

/* sqrt(a^2 + b^2): directly when TMIN / EPS < a^2 + b^2 < TMAX * EPS (so that neither square
 * overflowed and any square that underflowed is negligible), else pythag. */
static T F(hypot)(T a, T b) {
    T q = a * a + b * b;
    if (q < TMAX * EPS && q > TMIN / EPS) return sqrt(q);
    return F(pythag)(a, b);
}

/* Householder reduction of the symmetric n x n a (both triangles, equal) to tridiagonal form
 * (EISPACK tred2's steps, as in Numerical Recipes): d the diagonal, e[1..n) the
 * sub-diagonal (e[0] = 0), and qt the transpose of the orthogonal Q with Q^T A Q
 * tridiagonal (a is destroyed). Every sum is the canonical 8-lane order of dot (asum for
 * the scale), so that every loop vectorises: rows i = n-1 .. 1 in turn, with u = a[i][0:i],
 * scale = asum(u); u = u / scale, h = dot(u, u); g = -sign(f) sqrt(h) (f = u[i-1]),
 * e[i] = scale g, h = h - f g, u[i-1] = f - g; p_j = dot(a[j][0:i], u) / h (j < i),
 * f = dot(p, u), hh = f / (h + h), q_j = p_j - hh u_j; then the rank-2 update
 * a[j][k] = a[j][k] - (u_j q_k + q_j u_k) of whole rows j < i (columns k < i). */
static void F(tred2)(T *a, T *qt, ptrdiff_t n, T *d, T *e) {
#define A_(i, j) a[(i) * n + (j)]
    for (ptrdiff_t i = n - 1; i > 0; i--) {
        ptrdiff_t l = i - 1;
        T h = 0, scale = 0;
        T *ui = a + i * n;
        if (l > 0) {
            scale = F(asum)(ui, i);
            if (scale == 0) {
                e[i] = A_(i, l);
            } else {
                for (ptrdiff_t k = 0; k < i; k++) ui[k] = ui[k] / scale;
                h = F(dot)(ui, ui, i);
                T f = ui[l];
                T g = f >= 0 ? -(T)sqrt(h) : (T)sqrt(h);
                e[i] = scale * g;
                h = h - f * g;
                ui[l] = f - g;
                ptrdiff_t j = 0;
                for (; j + 4 <= i; j += 4) {
                    const T *rows[4] = {a + j * n, a + (j + 1) * n, a + (j + 2) * n,
                                        a + (j + 3) * n};
                    F(dot4)(rows, ui, i, e + j);
                }
                for (; j < i; j++) e[j] = F(dot)(a + j * n, ui, i);
                for (j = 0; j < i; j++) {
                    A_(j, i) = ui[j] / h;
                    e[j] = e[j] / h;
                }
                f = F(dot)(e, ui, i);
                T hh = f / (h + h);
                for (ptrdiff_t j = 0; j < i; j++) e[j] = e[j] - hh * ui[j];
                /* Whole rows: the k > j entries keep the mirror (the same sum of the same two
                 * products as their transposed twins, so the same bits). */
                for (ptrdiff_t j = 0; j < i; j++) {
                    T *rj = a + j * n;
                    f = ui[j];
                    g = e[j];
                    for (ptrdiff_t k = 0; k < i; k++) rj[k] = rj[k] - (f * e[k] + g * ui[k]);
                }
            }
        } else {
            e[i] = A_(i, l);
        }
        d[i] = h;
    }
    d[0] = 0;
    e[0] = 0;
    /* Accumulate Q^T in qt (EISPACK's loop on the transpose, so that every loop is
     * contiguous): for i ascending with d[i] != 0, every row j < i of qt gets
     * qt[j] = qt[j] - dot(a[i][0:i], qt[j][0:i]) qt[i] (columns < i). Row i of a (its
     * Householder vector) is not changed by the iterations before i, so it is read from a. */
#define B_(i, j) qt[(i) * n + (j)]
    for (ptrdiff_t i = 0; i < n; i++)
        for (ptrdiff_t k = 0; k < n; k++) B_(i, k) = A_(k, i);
    for (ptrdiff_t i = 0; i < n; i++) {
        if (d[i] != 0) {
            const T *ai = a + i * n, *bi = qt + i * n;
            ptrdiff_t j = 0;
            for (; j + 4 <= i; j += 4) {
                const T *rows[4] = {qt + j * n, qt + (j + 1) * n, qt + (j + 2) * n,
                                    qt + (j + 3) * n};
                T g[4];
                F(dot4)(rows, ai, i, g);
                for (int r = 0; r < 4; r++) F(axpy_sub)(qt + (j + r) * n, g[r], bi, i);
            }
            for (; j < i; j++) {
                T *bj = qt + j * n;
                F(axpy_sub)(bj, F(dot)(ai, bj, i), bi, i);
            }
        }
        d[i] = B_(i, i);
        B_(i, i) = 1;
        for (ptrdiff_t j = 0; j < i; j++) B_(j, i) = B_(i, j) = 0;
    }
#undef B_
#undef A_
}

/* Implicit QL with Wilkinson-type shifts on the tridiagonal (d, e) (EISPACK tql2's order, as
 * Numerical Recipes' tqli): d becomes the eigenvalues, and the rotations are applied to the
 * rows of zt (zt[i] = eigenvector i). Returns -1 if an eigenvalue takes over 60 iterations. */
static int F(tql2)(T *d, T *e, T *zt, ptrdiff_t n) {
    for (ptrdiff_t i = 1; i < n; i++) e[i - 1] = e[i];
    e[n - 1] = 0;
    for (ptrdiff_t l = 0; l < n; l++) {
        int iter = 0;
        ptrdiff_t m;
        do {
            for (m = l; m < n - 1; m++) {
                T dd = ABS(d[m]) + ABS(d[m + 1]);
                T sum = ABS(e[m]) + dd;
                if (sum == dd) break;
            }
            if (m != l) {
                if (iter++ == 60) return -1;
                T g = (d[l + 1] - d[l]) / (2 * e[l]);
                T r = F(pythag)(g, 1);
                g = d[m] - d[l] + e[l] / (g + (g >= 0 ? ABS(r) : -ABS(r)));
                T s = 1, c = 1, p = 0;
                ptrdiff_t i;
                for (i = m - 1; i >= l; i--) {
                    T f = s * e[i], b = c * e[i];
                    e[i + 1] = (r = F(hypot)(f, g));
                    if (r == 0) {
                        d[i + 1] = d[i + 1] - p;
                        e[m] = 0;
                        break;
                    }
                    s = f / r;
                    c = g / r;
                    g = d[i + 1] - p;
                    r = (d[i] - g) * s + 2 * c * b;
                    p = s * r;
                    d[i + 1] = g + p;
                    g = c * r - b;
                    T *zi = zt + i * n, *zj = zt + (i + 1) * n;
                    for (ptrdiff_t k = 0; k < n; k++) {
                        T x = zi[k], y = zj[k];
                        zj[k] = s * x + c * y;
                        zi[k] = c * x - s * y;
                    }
                }
                if (r == 0 && i >= l) continue;
                d[l] = d[l] - p;
                e[l] = g;
                e[m] = 0;
            }
        } while (m != l);
    }
    return 0;
}

/* The eigenvalues w (ascending, stably; NaN last) and eigenvectors (rows of vt) of the
 * symmetric n x n a (both triangles, equal): tred2, then tql2 on the rows of Q^T. a is
 * destroyed; work holds n ptrdiff_t and n T. Non-convergence (NaN or inf input) gives NaN. */
static void F(eigh1)(T *a, T *vt, T *w, ptrdiff_t n, void *work) {
    ptrdiff_t *order = work;
    T *e = (T *)(order + n);
    if (n == 0) return;
    F(tred2)(a, vt, n, w, e);
    if (F(tql2)(w, e, vt, n) < 0) {
        F(fill_nan)(w, n);
        F(fill_nan)(vt, n * n);
        return;
    }
    F(sort_order)(w, order, n, 0);
    for (ptrdiff_t i = 0; i < n; i++) {
        e[i] = w[order[i]];
        memcpy(a + i * n, vt + order[i] * n, sizeof(T) * (size_t)n);
    }
    memcpy(w, e, sizeof(T) * (size_t)n);
    memcpy(vt, a, sizeof(T) * (size_t)(n * n));
}

#include "linalg_complex.h"
#include "linalg_complex_qr.h"
#include "linalg_svd.h"

/* Matrix b of job j (linalg.c), in this type and instruction set. */
static void F(run_one)(job *j, ptrdiff_t b, void *work) {
    size_t e = sizeof(T) * (j->cplx ? 2 : 1);
    ptrdiff_t m = j->m, n = j->n, k = j->k, mn = m < n ? m : n;
    void **p = j->p;
    if (j->cplx) { /* no Cholesky (py_linalg checks) */
        if (j->op == OP_LU) {
            if (F(clu1)((T *)AT(p[0], m * n, b, e), (int32_t *)AT(p[1], mn, b, 4),
                        (int32_t *)AT(p[2], m, b, 4), m, n, work, j->inner) < 0)
                j->failed = 1;
        }
        else if (j->op == OP_SVD) /* s is real */
            F(csvd1)((T *)AT(p[0], m * n, b, e), (T *)AT(p[1], n, b, sizeof(T)),
                     (T *)AT(p[2], n * n, b, e), (T *)AT(p[3], k * m, b, e), m, n, k, work, EPS);
        else if (j->op == OP_QR)
            F(cqr1)((T *)AT(p[0], m * n, b, e), (T *)AT(p[1], mn, b, e), m, n);
        else if (j->op == OP_QR_Q)
            F(cqr_q1)((T *)AT(p[0], m * n, b, e), (T *)AT(p[1], mn, b, e),
                      (T *)AT(p[2], k * m, b, e), m, n, k);
        else if (j->op == OP_EIGH) { /* w is real */
            F(hermitian_from_lower)((T *)AT(p[0], n * n, b, e), n, j->unit & 1);
            F(ceigh1)((T *)AT(p[0], n * n, b, e), (T *)AT(p[1], n * n, b, e),
                      (T *)AT(p[2], n, b, sizeof(T)), n, work);
        } else
            F(ctrsm1)((T *)AT(p[0], m * m, b, e), (T *)AT(p[1], m * n, b, e), m, n,
                      j->unit & 1, j->unit >> 1);
        return;
    }
    switch (j->op) {
    case OP_CHOLESKY:
        if (F(cholesky1)((T *)AT(p[0], n * n, b, e), n, j->unit & 1, work, j->inner) < 0)
            j->failed = 1;
        break;
    case OP_LU:
        if (F(lu1)((T *)AT(p[0], m * n, b, e), (int32_t *)AT(p[1], mn, b, 4),
                   (int32_t *)AT(p[2], m, b, 4), m, n, work, j->inner) < 0)
            j->failed = 1;
        break;
    case OP_TRSM:
        F(trsm1)((T *)AT(p[0], m * m, b, e), (T *)AT(p[1], m * n, b, e), m, n, j->unit & 1,
                 j->unit >> 1);
        break;
    case OP_QR:
        F(qr1)((T *)AT(p[0], m * n, b, e), (T *)AT(p[1], mn, b, e), m, n);
        break;
    case OP_QR_Q:
        F(qr_q1)((T *)AT(p[0], m * n, b, e), (T *)AT(p[1], mn, b, e), (T *)AT(p[2], k * m, b, e),
                 m, n, k);
        break;
    case OP_EIGH:
        F(symmetric_from_lower)((T *)AT(p[0], n * n, b, e), n, j->unit & 1);
        F(eigh1)((T *)AT(p[0], n * n, b, e), (T *)AT(p[1], n * n, b, e), (T *)AT(p[2], n, b, e),
                 n, work);
        break;
    case OP_SVD:
        if (F(svd1)((T *)AT(p[0], m * n, b, e), (T *)AT(p[1], n, b, e),
                    (T *)AT(p[2], n * n, b, e), (T *)AT(p[3], k * m, b, e), m, n, k, work,
                    EPS, j->inner) < 0)
            j->failed = 1;
        break;
    }
}

#undef F
#undef CAT
#undef CAT2
