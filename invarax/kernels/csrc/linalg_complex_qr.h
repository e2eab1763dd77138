/* linalg_complex_qr.h - Householder QR and the Hermitian eigensolver of complex matrices, for
 * one float type T (suffix SFX); included by linalg_impl.h (after linalg_complex.h, whose
 * arithmetic it uses), once per type and instruction set. docs/numerics.md
 * ("Factorisations") writes the orders down.
 *
 * As in linalg_complex.h, a complex element is two T (re, im), and every complex operation
 * is spelled out in real ones, each rounded, in one order (no FMA):
 *   x y       = (xr yr - xi yi, xr yi + xi yr)
 *   conj(x) y = (xr yr + xi yi, xr yi - xi yr)    (cdotc's terms)
 *   x / y     by Smith's algorithm (cdiv).
 */

/* x^T y (no conjugate) for n complex elements: term k, (xr yr - xi yi, xr yi + xi yr), into
 * running sum k % 8, combined as dot's. */
static void F(cdotu)(const T *x, const T *y, ptrdiff_t n, T *re, T *im) {
    T r[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    ptrdiff_t k = 0;
    for (; k + 8 <= n; k += 8) /* by blocks of 8, as cdotc */
        for (int l = 0; l < 8; l++) {
            T xr = x[2 * (k + l)], xi = x[2 * (k + l) + 1];
            T yr = y[2 * (k + l)], yi = y[2 * (k + l) + 1];
            r[l] = r[l] + (xr * yr - xi * yi);
            s[l] = s[l] + (xr * yi + xi * yr);
        }
    for (int l = 0; k < n; k++, l++) {
        T xr = x[2 * k], xi = x[2 * k + 1], yr = y[2 * k], yi = y[2 * k + 1];
        r[l] = r[l] + (xr * yr - xi * yi);
        s[l] = s[l] + (xr * yi + xi * yr);
    }
    *re = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    *im = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* The reflector (I - t v v^H) applied to `count` complex columns c_j = c + 2 j stride of len
 * elements (v[0] is taken as given): c_j = c_j - (t g) v with g = v^H c_j (cdotc) and t g a
 * complex product. */
static void F(creflect)(const T *v, T tr, T ti, T *c, ptrdiff_t stride, ptrdiff_t count,
                        ptrdiff_t len) {
    for (ptrdiff_t j = 0; j < count; j++) {
        T *cj = c + 2 * j * stride, gr, gi;
        F(cdotc)(v, cj, len, &gr, &gi);
        F(caxpy_sub)(cj, tr * gr - ti * gi, tr * gi + ti * gr, v, len);
    }
}

/* Householder QR of the complex m x n matrix stored by columns (a[2 (j m + i)] is re
 * A[i][j]), with LAPACK zgeqr2's reflectors: column k, alpha = a_kk, xnorm2 = re(x^H x) of
 * the entries below it; tau = 0 when xnorm2 == 0 and im(alpha) == 0; else
 * beta = -sign(re alpha) sqrt((ar^2 + ai^2) + xnorm2) (real), tau = ((beta - ar) / beta,
 * -ai / beta), v = x[1:] / (alpha - beta) (cdiv, element by element), and the later
 * columns get H^H = I - conj(tau) v v^H (creflect); a_kk = beta. R ends in the upper
 * triangle (real diagonal), v below it (implicit 1 at row k), H_k = I - tau_k v_k v_k^H. */
static void F(cqr1)(T *a, T *tau, ptrdiff_t m, ptrdiff_t n) {
    ptrdiff_t kmax = m < n ? m : n;
    for (ptrdiff_t k = 0; k < kmax; k++) {
        T *x = a + 2 * (k * m + k), xnorm2, unused;
        ptrdiff_t len = m - k;
        T ar = x[0], ai = x[1];
        F(cdotc)(x + 2, x + 2, len - 1, &xnorm2, &unused);
        if (xnorm2 == 0 && ai == 0) {
            tau[2 * k] = tau[2 * k + 1] = 0;
            continue;
        }
        T beta = sqrt((ar * ar + ai * ai) + xnorm2);
        if (ar >= 0) beta = -beta;
        T tr = (beta - ar) / beta, ti = -ai / beta;
        tau[2 * k] = tr;
        tau[2 * k + 1] = ti;
        T sr = ar - beta;
        for (ptrdiff_t i = 1; i < len; i++)
            F(cdiv)(x[2 * i], x[2 * i + 1], sr, ai, &x[2 * i], &x[2 * i + 1]);
        x[0] = 1;
        x[1] = 0;
        F(creflect)(x, tr, -ti, a + 2 * ((k + 1) * m + k), m, n - k - 1, len);
        x[0] = beta;
    }
}

/* Q's first qc columns (stored by columns) from cqr1's reflectors (LAPACK zung2r's Q):
 * H_0 H_1 ... H_{kmax-1} applied to the identity's columns, the last reflector first,
 * H_k = I - tau_k v_k v_k^H (creflect). */
static void F(cqr_q1)(T *a, const T *tau, T *q, ptrdiff_t m, ptrdiff_t n, ptrdiff_t qc) {
    ptrdiff_t kmax = m < n ? m : n;
    memset(q, 0, sizeof(T) * (size_t)(2 * qc * m));
    for (ptrdiff_t j = 0; j < qc; j++) q[2 * (j * m + j)] = 1;
    for (ptrdiff_t k = kmax - 1; k >= 0; k--) {
        T *v = a + 2 * (k * m + k);
        T saved_r = v[0], saved_i = v[1];
        v[0] = 1;
        v[1] = 0;
        F(creflect)(v, tau[2 * k], tau[2 * k + 1], q + 2 * k, m, qc, m - k);
        v[0] = saved_r;
        v[1] = saved_i;
    }
}

/* The complex n x n a becomes Hermitian, both triangles from its lower one: a_ji = conj(a_ij)
 * (i > j), the diagonal's imaginary parts 0 (LAPACK's zheevd ignores them); with
 * `symmetrize`, from the lower triangle of (A + A^H) / 2 first: a_ij = ((re a_ij + re a_ji)
 * / 2, (im a_ij - im a_ji) / 2) for i >= j. */
static void F(hermitian_from_lower)(T *a, ptrdiff_t n, int symmetrize) {
    for (ptrdiff_t i = 0; i < n; i++)
        for (ptrdiff_t j = 0; j <= i; j++) {
            T *x = a + 2 * (i * n + j), *y = a + 2 * (j * n + i);
            if (symmetrize) {
                x[0] = (x[0] + y[0]) / 2;
                x[1] = (x[1] - y[1]) / 2;
            }
            y[0] = x[0];
            y[1] = -x[1];
        }
    for (ptrdiff_t i = 0; i < n; i++) a[2 * (i * n + i) + 1] = 0;
}

/* Householder reduction of the Hermitian n x n a (both triangles) to real symmetric
 * tridiagonal form (EISPACK htridi's steps, on whole rows): d the diagonal, e[1..n) the
 * sub-diagonal (e[0] = 0), tau (n complex) the phases. Rows i = n-1 .. 1, l = i - 1, with
 * x = a[i][0:i]: scale = asum of x's 2i parts; scale == 0 gives tau_l = 1, e_i = 0, h = 0;
 * else x = x / scale, h = dot(x, x) (over the parts), g = sqrt(h), e_i = scale g,
 * f = pythag(x_l); if f != 0: tau_l = ((xi_l ti - xr_l tr) / f, -((xr_l ti + xi_l tr) / f))
 * with (tr, ti) = tau_i, h = h + f g, x_l = (1 + g / f) x_l; else tau_l = -tau_i, x_l = (g, xi_l).
 * For i >= 2 then p_j = (x^H a[j][0:i]) / h (cdotc, j < i), f = re(x^T p) (cdotu),
 * hh = f / (h + h), q_j = p_j - hh conj(x_j), and rows j < i (columns k < i)
 * a_jk = a_jk - (conj(x_j) conj(q_k) + q_j x_k). Then x = x scale (kept in row i with
 * a[i][i]'s real part = scale sqrt(h), for htribk), d_i = re a_ii as it was. work holds 2n T. */
static void F(htridi)(T *a, ptrdiff_t n, T *d, T *e, T *tau, T *p) {
    tau[2 * (n - 1)] = 1;
    tau[2 * (n - 1) + 1] = 0;
    for (ptrdiff_t i = n - 1; i > 0; i--) {
        ptrdiff_t l = i - 1;
        T *x = a + 2 * i * n, h = 0, scale = F(asum)(x, 2 * i);
        T tr = tau[2 * i], ti = tau[2 * i + 1];
        if (scale == 0) {
            tau[2 * l] = 1;
            tau[2 * l + 1] = 0;
            e[i] = 0;
        } else {
            for (ptrdiff_t k = 0; k < 2 * i; k++) x[k] = x[k] / scale;
            h = F(dot)(x, x, 2 * i);
            T g = sqrt(h), xr = x[2 * l], xi = x[2 * l + 1];
            e[i] = scale * g;
            T f = F(pythag)(xr, xi);
            if (f != 0) {
                tau[2 * l] = (xi * ti - xr * tr) / f;
                tau[2 * l + 1] = -((xr * ti + xi * tr) / f);
                h = h + f * g;
                g = 1 + g / f;
                x[2 * l] = g * xr;
                x[2 * l + 1] = g * xi;
            } else {
                tau[2 * l] = -tr;
                tau[2 * l + 1] = -ti;
                x[2 * l] = g;
            }
            if (l > 0) {
                for (ptrdiff_t j = 0; j < i; j++) {
                    F(cdotc)(x, a + 2 * j * n, i, &p[2 * j], &p[2 * j + 1]);
                    p[2 * j] = p[2 * j] / h;
                    p[2 * j + 1] = p[2 * j + 1] / h;
                }
                T fr, fi;
                F(cdotu)(x, p, i, &fr, &fi);
                T hh = fr / (h + h);
                for (ptrdiff_t j = 0; j < i; j++) {
                    p[2 * j] = p[2 * j] - hh * x[2 * j];
                    p[2 * j + 1] = p[2 * j + 1] - hh * -x[2 * j + 1];
                }
                for (ptrdiff_t j = 0; j < i; j++) {
                    T *rj = a + 2 * j * n;
                    T vr = x[2 * j], vi = -x[2 * j + 1], qr = p[2 * j], qi = p[2 * j + 1];
                    for (ptrdiff_t k = 0; k < i; k++) {
                        T ur = x[2 * k], ui = x[2 * k + 1], wr = p[2 * k], wi = -p[2 * k + 1];
                        T t1r = vr * wr - vi * wi, t1i = vr * wi + vi * wr;
                        T t2r = qr * ur - qi * ui, t2i = qr * ui + qi * ur;
                        rj[2 * k] = rj[2 * k] - (t1r + t2r);
                        rj[2 * k + 1] = rj[2 * k + 1] - (t1i + t2i);
                    }
                }
            }
            for (ptrdiff_t k = 0; k < 2 * i; k++) x[k] = scale * x[k];
        }
        d[i] = a[2 * (i * n + i)];
        a[2 * (i * n + i)] = scale * (T)sqrt(h);
    }
    d[0] = a[0];
    e[0] = 0;
}

/* EISPACK htribk on one eigenvector z (n complex) of the tridiagonal, given as the real zt:
 * z_k = (zt_k tr_k, -(zt_k ti_k)) (tau_k = (tr_k, ti_k)), then for i ascending with
 * h = re a_ii != 0 and x = a[i][0:i]: s = x^T z[0:i] (cdotu), s = ((sr / h) / h,
 * (si / h) / h), z_k = z_k - s conj(x_k) = (zr - (sr xr + si xi), zi - (si xr - sr xi)). */
static void F(htribk)(const T *a, const T *tau, const T *zt, T *z, ptrdiff_t n) {
    for (ptrdiff_t k = 0; k < n; k++) {
        z[2 * k] = zt[k] * tau[2 * k];
        z[2 * k + 1] = -(zt[k] * tau[2 * k + 1]);
    }
    for (ptrdiff_t i = 1; i < n; i++) {
        const T *x = a + 2 * i * n;
        T h = x[2 * i], sr, si;
        if (h == 0) continue;
        F(cdotu)(x, z, i, &sr, &si);
        sr = (sr / h) / h;
        si = (si / h) / h;
        for (ptrdiff_t k = 0; k < i; k++) {
            T xr = x[2 * k], xi = x[2 * k + 1];
            z[2 * k] = z[2 * k] - (sr * xr + si * xi);
            z[2 * k + 1] = z[2 * k + 1] - (si * xr - sr * xi);
        }
    }
}

/* The eigenvalues w (real, ascending, stably; NaN last) and eigenvectors (rows of the complex
 * vt) of the Hermitian n x n a (both triangles): htridi, tql2 on the real tridiagonal with
 * the identity's rows, then htribk on each eigenvector, in w's order. Each eigenvector's last
 * component is real (htridi's reflectors leave it, its phase is 1). a is destroyed; work
 * holds n ptrdiff_t, 5n T and n^2 T. Non-convergence (NaN or inf input) gives NaN. */
static void F(ceigh1)(T *a, T *vt, T *w, ptrdiff_t n, void *work) {
    ptrdiff_t *order = work;
    T *e = (T *)(order + n), *tau = e + n, *p = tau + 2 * n, *zt = p + 2 * n;
    if (n == 0) return;
    F(htridi)(a, n, w, e, tau, p);
    memset(zt, 0, sizeof(T) * (size_t)(n * n));
    for (ptrdiff_t i = 0; i < n; i++) zt[i * n + i] = 1;
    if (F(tql2)(w, e, zt, n) < 0) {
        F(fill_nan)(w, n);
        F(fill_nan)(vt, 2 * n * n);
        return;
    }
    F(sort_order)(w, order, n, 0);
    for (ptrdiff_t i = 0; i < n; i++) {
        e[i] = w[order[i]];
        F(htribk)(a, tau, zt + order[i] * n, vt + 2 * i * n, n);
    }
    memcpy(w, e, sizeof(T) * (size_t)n);
}
