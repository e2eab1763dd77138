/* reduce_impl.h - the reduction kernels for one element type, included by reduce.c with
 * T (the element type) and SFX (a name suffix) defined. docs/numerics.md states the orders.
 *
 * Every kernel reduces the rows of an (m, k) operand with strides (sm, sk) in elements.
 * When the outputs are closer in memory than the reduced elements (|sm| < |sk|: a
 * reduction over a leading axis) W outputs are computed at once, each with the very
 * operations it gets alone; otherwise rows are reduced one at a time.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SFX)

/* NumPy's pairwise summation of a[0], a[s], ..., a[(n-1)*s] (see docs/numerics.md). */
static T F(pairwise)(const T *a, ptrdiff_t n, ptrdiff_t s) {
    if (n < 8) {
        T res = 0;
        for (ptrdiff_t i = 0; i < n; i++) res += a[i * s];
        return res;
    }
    if (n <= PW_BLOCK) {
        T r[8];
        ptrdiff_t i, end = n - n % 8;
        for (int j = 0; j < 8; j++) r[j] = a[j * s];
        if (s == 1) {
            for (i = 8; i < end; i += 8)
                for (int j = 0; j < 8; j++) r[j] += a[i + j];
        } else {
            for (i = 8; i < end; i += 8)
                for (int j = 0; j < 8; j++) r[j] += a[(i + j) * s];
        }
        T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i * s];
        return res;
    }
    ptrdiff_t n2 = n / 2;
    n2 -= n2 % 8;
    return F(pairwise)(a, n2, s) + F(pairwise)(a + n2 * s, n - n2, s);
}

/* out[c] = pairwise(a[c*sm + p*sk] for p < n), c < w <= W: the same tree as F(pairwise),
 * with each node a vector of w outputs. buf holds (8 + depth) * W elements. */
static void F(pairwise_cols)(const T *a, ptrdiff_t n, ptrdiff_t sk, ptrdiff_t sm, int w, T *out,
                             T *buf) {
    if (n < 8) {
        for (int c = 0; c < w; c++) out[c] = 0;
        for (ptrdiff_t i = 0; i < n; i++)
            for (int c = 0; c < w; c++) out[c] += a[i * sk + c * sm];
        return;
    }
    if (n <= PW_BLOCK) {
        T(*r)[W] = (T(*)[W])buf;
        ptrdiff_t i, end = n - n % 8;
        for (int j = 0; j < 8; j++)
            for (int c = 0; c < w; c++) r[j][c] = a[j * sk + c * sm];
        for (i = 8; i < end; i += 8)
            for (int j = 0; j < 8; j++) {
                const T *row = a + (i + j) * sk;
                if (sm == 1)
                    for (int c = 0; c < w; c++) r[j][c] += row[c];
                else
                    for (int c = 0; c < w; c++) r[j][c] += row[c * sm];
            }
        for (int c = 0; c < w; c++)
            out[c] = ((r[0][c] + r[1][c]) + (r[2][c] + r[3][c])) +
                     ((r[4][c] + r[5][c]) + (r[6][c] + r[7][c]));
        for (; i < n; i++)
            for (int c = 0; c < w; c++) out[c] += a[i * sk + c * sm];
        return;
    }
    ptrdiff_t n2 = n / 2;
    n2 -= n2 % 8;
    F(pairwise_cols)(a, n2, sk, sm, w, out, buf + W);
    F(pairwise_cols)(a + n2 * sk, n - n2, sk, sm, w, buf, buf + W);
    for (int c = 0; c < w; c++) out[c] += buf[c];
}

/* Is `v` a better extremum than `m` (a NaN beats everything, the first of equals stays)? */
#define BETTER(v, m, GT) ((v)GT(m) || ((v) != (v) && (m) == (m)))

/* The extremum of a row (sk == 1) in two passes: a vectorisable max/min of 8 lanes and a
 * NaN test; then, if the row holds a NaN or the extremum is a zero, the first index of it.
 * Returns the index of the first extremum (the first NaN if any). */
static ptrdiff_t F(row_extremum)(const T *a, ptrdiff_t n, int is_max) {
    T m[8];
    int nan = 0;
    ptrdiff_t i, end = n - n % 8;
    for (int j = 0; j < 8; j++) m[j] = a[0];
    if (is_max) {
        for (i = 0; i < end; i += 8)
            for (int j = 0; j < 8; j++) m[j] = a[i + j] > m[j] ? a[i + j] : m[j];
    } else {
        for (i = 0; i < end; i += 8)
            for (int j = 0; j < 8; j++) m[j] = a[i + j] < m[j] ? a[i + j] : m[j];
    }
    for (i = 0; i < end; i += 8)
        for (int j = 0; j < 8; j++) nan |= a[i + j] != a[i + j];
    T best = m[0];
    for (int j = 1; j < 8; j++) best = (is_max ? m[j] > best : m[j] < best) ? m[j] : best;
    for (i = end; i < n; i++) {
        nan |= a[i] != a[i];
        best = (is_max ? a[i] > best : a[i] < best) ? a[i] : best;
    }
    for (i = 0; i < n; i++)
        if (nan ? a[i] != a[i] : a[i] == best) return i;
    return 0;
}

/* Reduce the rows of the (m, k) operand with op; see native.h. */
static int F(reduce)(int op, const T *a, ptrdiff_t m, ptrdiff_t k, ptrdiff_t sm, ptrdiff_t sk,
                     void *out) {
    T *o = out;
    int64_t *idx = out;
    int cols = (sm < 0 ? -sm : sm) < (sk < 0 ? -sk : sk) && m > 1;
    int is_max = op == RED_MAX || op == RED_ARGMAX;
    if (!cols) {
        for (ptrdiff_t i = 0; i < m; i++) {
            const T *row = a + i * sm;
            if (op == RED_SUM) {
                o[i] = (T)0 + F(pairwise)(row, k, sk);
            } else if (op == RED_PROD) {
                T acc = 1;
                if (k > 0) acc = row[0];
                for (ptrdiff_t p = 1; p < k; p++) acc *= row[p * sk];
                o[i] = acc;
            } else if (k == 0) {
                o[i] = is_max ? -INFINITY : INFINITY;
            } else {
                ptrdiff_t best = 0;
                if (sk == 1) {
                    best = F(row_extremum)(row, k, is_max);
                } else {
                    for (ptrdiff_t p = 1; p < k; p++)
                        if (is_max ? BETTER(row[p * sk], row[best * sk], >)
                                   : BETTER(row[p * sk], row[best * sk], <))
                            best = p;
                }
                if (op == RED_ARGMAX || op == RED_ARGMIN)
                    idx[i] = best;
                else
                    o[i] = row[best * sk];
            }
        }
        return 0;
    }
    T *buf = malloc(sizeof(T) * W * (8 + 64));
    if (!buf) return -1;
    for (ptrdiff_t i0 = 0; i0 < m; i0 += W) {
        int w = m - i0 < W ? (int)(m - i0) : W;
        const T *blk = a + i0 * sm;
        if (op == RED_SUM) {
            F(pairwise_cols)(blk, k, sk, sm, w, o + i0, buf);
            for (int c = 0; c < w; c++) o[i0 + c] = (T)0 + o[i0 + c];
        } else if (op == RED_PROD) {
            for (int c = 0; c < w; c++) o[i0 + c] = k > 0 ? blk[c * sm] : (T)1;
            for (ptrdiff_t p = 1; p < k; p++)
                for (int c = 0; c < w; c++) o[i0 + c] *= blk[p * sk + c * sm];
        } else if (k == 0) {
            for (int c = 0; c < w; c++) o[i0 + c] = is_max ? -INFINITY : INFINITY;
        } else {
            T *best = buf;
            int64_t *at = (int64_t *)(buf + W);
            for (int c = 0; c < w; c++) best[c] = blk[c * sm], at[c] = 0;
            for (ptrdiff_t p = 1; p < k; p++) {
                const T *row = blk + p * sk;
                for (int c = 0; c < w; c++) {
                    T v = row[c * sm];
                    int take = is_max ? BETTER(v, best[c], >) : BETTER(v, best[c], <);
                    best[c] = take ? v : best[c];
                    at[c] = take ? p : at[c];
                }
            }
            for (int c = 0; c < w; c++) {
                if (op == RED_ARGMAX || op == RED_ARGMIN)
                    idx[i0 + c] = at[c];
                else
                    o[i0 + c] = best[c];
            }
        }
    }
    free(buf);
    return 0;
}

#undef F
#undef CAT
#undef CAT_
