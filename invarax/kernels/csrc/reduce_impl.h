/* reduce_impl.h - the reduction kernels for one element type, included by reduce.c with
 * T (the element type) and SFX (a name suffix) defined, once per dispatch level.
 * docs/numerics.md states the orders; every level performs the same operations.
 *
 * Every kernel reduces the rows of an (m, k) operand with strides (sm, sk) in elements.
 * When the outputs are closer in memory than the reduced elements (|sm| < |sk|: a
 * reduction over a leading axis), many outputs are computed at once, element p of
 * every row in one sweep, each output getting the very operations it gets alone.
 * Loops are written so that the compiler can vectorise them across outputs (or
 * across the independent accumulators of one output) without reassociating.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SFX)

static inline __attribute__((always_inline)) V F(vload)(const T *p) {
    V v;
    memcpy(&v, p, sizeof v);
    return v;
}

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
        if (s == 1) {
            V acc[8 / VN];
            for (int q = 0; q < 8 / VN; q++) acc[q] = F(vload)(a + q * VN);
            for (i = 8; i < end; i += 8)
                for (int q = 0; q < 8 / VN; q++) acc[q] += F(vload)(a + i + q * VN);
            memcpy(r, acc, sizeof r);
        } else {
            for (int j = 0; j < 8; j++) r[j] = a[j * s];
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

/* acc[c] = a[c] (first) or acc[c] += a[c], for c < w. */
static inline __attribute__((always_inline)) void F(add_row)(T *acc, const T *a, ptrdiff_t w,
                                                            int first) {
    if (first)
        memcpy(acc, a, sizeof(T) * (size_t)w);
    else
        for (ptrdiff_t c = 0; c < w; c++) acc[c] += a[c];
}

/* A leaf of wide contiguous outputs (sm == 1, 8 <= n <= PW_BLOCK): the rows are read in
 * chunks of W, each of the eight accumulators a row of W in memory. buf: 8 * W. */
static void F(leaf_wide)(const T *a, ptrdiff_t n, ptrdiff_t sk, ptrdiff_t m, T *out, T *buf) {
    for (ptrdiff_t c0 = 0; c0 < m; c0 += W) {
        ptrdiff_t w = m - c0 < W ? m - c0 : W, i, end = n - n % 8;
        const T *blk = a + c0;
        for (i = 0; i < end; i += 8)
            for (int j = 0; j < 8; j++) F(add_row)(buf + j * W, blk + (i + j) * sk, w, i == 0);
        const T *r0 = buf, *r1 = r0 + W, *r2 = r1 + W, *r3 = r2 + W, *r4 = r3 + W;
        const T *r5 = r4 + W, *r6 = r5 + W, *r7 = r6 + W;
        T *o = out + c0;
        for (ptrdiff_t c = 0; c < w; c++)
            o[c] = ((r0[c] + r1[c]) + (r2[c] + r3[c])) + ((r4[c] + r5[c]) + (r6[c] + r7[c]));
        for (; i < n; i++)
            for (ptrdiff_t c = 0; c < w; c++) o[c] += blk[i * sk + c];
    }
}

/* out[c] = pairwise(a[c*sm + p*sk] for p < n) for c < m and n <= PW_BLOCK: the leaves of
 * the tree, VN contiguous outputs at a time with the accumulators in registers. */
static void F(leaf_cols)(const T *a, ptrdiff_t n, ptrdiff_t sk, ptrdiff_t sm, ptrdiff_t m,
                         T *out) {
    ptrdiff_t c = 0;
    if (sm == 1) {
        for (; c + VN <= m; c += VN) {
            const T *col = a + c;
            V s = {0};
            ptrdiff_t i = 0;
            if (n >= 8) {
                V r0 = F(vload)(col), r1 = F(vload)(col + sk), r2 = F(vload)(col + 2 * sk);
                V r3 = F(vload)(col + 3 * sk), r4 = F(vload)(col + 4 * sk);
                V r5 = F(vload)(col + 5 * sk), r6 = F(vload)(col + 6 * sk);
                V r7 = F(vload)(col + 7 * sk);
                for (i = 8; i < n - n % 8; i += 8) {
                    const T *p = col + i * sk;
                    r0 += F(vload)(p);
                    r1 += F(vload)(p + sk);
                    r2 += F(vload)(p + 2 * sk);
                    r3 += F(vload)(p + 3 * sk);
                    r4 += F(vload)(p + 4 * sk);
                    r5 += F(vload)(p + 5 * sk);
                    r6 += F(vload)(p + 6 * sk);
                    r7 += F(vload)(p + 7 * sk);
                }
                s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
            }
            for (; i < n; i++) s += F(vload)(col + i * sk);
            memcpy(out + c, &s, sizeof s);
        }
    }
    for (; c < m; c++) out[c] = F(pairwise)(a + c * sm, n, sk);
}

/* The number of m-wide partial sums that pairwise_cols keeps for a length n. */
static int F(pairwise_depth)(ptrdiff_t n) {
    int depth = 0;
    for (; n > PW_BLOCK; depth++) n -= (n / 2) - (n / 2) % 8; /* the right half is the larger */
    return depth;
}

/* out[c] = pairwise(a[c*sm + p*sk] for p < n), c < m: the tree of F(pairwise), each node a
 * vector of m outputs. tmp holds pairwise_depth(n) * m + 8 * W elements. */
static void F(pairwise_cols)(const T *a, ptrdiff_t n, ptrdiff_t sk, ptrdiff_t sm, ptrdiff_t m,
                             T *out, T *tmp) {
    if (n <= PW_BLOCK) {
        if (sm == 1 && n >= 8 && m * sizeof(T) > NARROW)
            F(leaf_wide)(a, n, sk, m, out, tmp);
        else
            F(leaf_cols)(a, n, sk, sm, m, out);
        return;
    }
    ptrdiff_t n2 = n / 2;
    n2 -= n2 % 8;
    F(pairwise_cols)(a, n2, sk, sm, m, out, tmp + m);
    F(pairwise_cols)(a + n2 * sk, n - n2, sk, sm, m, tmp, tmp + m);
    for (ptrdiff_t c = 0; c < m; c++) out[c] += tmp[c];
}

/* Lanes of `x` where `take` is set, else lanes of `y`. */
static inline __attribute__((always_inline)) V F(blend)(VI take, V x, V y) {
    return (V)((take & (VI)x) | (~take & (VI)y)); /* casts of vectors keep the bits */
}

#ifndef VANY
static inline __attribute__((always_inline)) int F(any)(VI mask) {
    IT acc = 0;
    for (int j = 0; j < VN; j++) acc |= mask[j];
    return acc != 0;
}
#define VANY(mask) F(any)(mask)
#define VMAX(x, m) F(blend)((x) > (m), x, m)
#define VMIN(x, m) F(blend)((x) < (m), x, m)
#define UNDEF_HOOKS
#endif

/* The extremum of a contiguous row (n >= 1) by `v > m ? v : m` (`<` for min) over four
 * interleaved vector lanes, ignoring NaNs; *nan tells whether the row holds one. */
static T F(row_best)(const T *a, ptrdiff_t n, int is_max, int *nan) {
    V m0 = a[0] + (V){0}, m1 = m0, m2 = m0, m3 = m0;
    VI isnan = {0};
    ptrdiff_t i = 0;
#define ROW_BEST_LOOP(OP)                                                                     \
    for (; i + 4 * VN <= n; i += 4 * VN) {                                                    \
        V x0 = F(vload)(a + i), x1 = F(vload)(a + i + VN);                                    \
        V x2 = F(vload)(a + i + 2 * VN), x3 = F(vload)(a + i + 3 * VN);                       \
        m0 = OP(x0, m0);                                                                      \
        m1 = OP(x1, m1);                                                                      \
        m2 = OP(x2, m2);                                                                      \
        m3 = OP(x3, m3);                                                                      \
        isnan |= ((x0 != x0) | (x1 != x1)) | ((x2 != x2) | (x3 != x3));                       \
    }
    if (is_max) {
        ROW_BEST_LOOP(VMAX)
    } else {
        ROW_BEST_LOOP(VMIN)
    }
#undef ROW_BEST_LOOP
    T lanes[4 * VN], best = a[0];
    V ms[4] = {m0, m1, m2, m3};
    memcpy(lanes, ms, sizeof lanes);
    *nan = VANY(isnan) || best != best;
    for (int j = 0; j < 4 * VN; j++)
        best = (is_max ? lanes[j] > best : lanes[j] < best) ? lanes[j] : best;
    for (; i < n; i++) {
        best = (is_max ? a[i] > best : a[i] < best) ? a[i] : best;
        *nan |= a[i] != a[i];
    }
    return best;
}

/* The first index in a contiguous row of a NaN (nan) or else of a value equal to `best`. */
static ptrdiff_t F(row_find)(const T *a, ptrdiff_t n, T best, int nan) {
    ptrdiff_t i = 0;
    for (; i + 4 * VN <= n; i += 4 * VN) {
        V x0 = F(vload)(a + i), x1 = F(vload)(a + i + VN);
        V x2 = F(vload)(a + i + 2 * VN), x3 = F(vload)(a + i + 3 * VN);
        VI hit = nan ? ((x0 != x0) | (x1 != x1)) | ((x2 != x2) | (x3 != x3))
                     : ((x0 == best) | (x1 == best)) | ((x2 == best) | (x3 == best));
        if (VANY(hit)) break;
    }
    for (; i < n; i++)
        if (nan ? a[i] != a[i] : a[i] == best) return i;
    return 0;
}

/* The first index of the extremum of a contiguous row (n >= 1): the best value of each
 * chunk of ARG_CHUNK, then a search in the first chunk that holds the extremum (or a NaN). */
static ptrdiff_t F(row_arg)(const T *a, ptrdiff_t n, int is_max) {
    ptrdiff_t at = 0;
    T best = a[0];
    for (ptrdiff_t c0 = 0; c0 < n; c0 += ARG_CHUNK) {
        ptrdiff_t len = n - c0 < ARG_CHUNK ? n - c0 : ARG_CHUNK;
        int nan;
        T b = F(row_best)(a + c0, len, is_max, &nan);
        if (nan) return c0 + F(row_find)(a + c0, len, b, 1);
        if (is_max ? b > best : b < best) best = b, at = c0;
    }
    return at + F(row_find)(a + at, n - at < ARG_CHUNK ? n - at : ARG_CHUNK, best, 0);
}

/* The first extremum of a row with any stride: `better` in sequence (a NaN beats all). */
static ptrdiff_t F(strided_extremum)(const T *a, ptrdiff_t n, ptrdiff_t s, int is_max) {
    ptrdiff_t best = 0;
    for (ptrdiff_t p = 1; p < n; p++) {
        T v = a[p * s], b = a[best * s];
        if ((is_max ? v > b : v < b) || (v != v && b == b)) best = p;
    }
    return best;
}

/* Contiguous columns (sm == 1): best[c] by `v > b ? v : b` (`<` for min) over p in order,
 * ignoring NaNs; returns whether a NaN was seen (then the caller takes the exact path). */
static int F(cols_best)(const T *a, ptrdiff_t k, ptrdiff_t sk, ptrdiff_t w, int is_max,
                        T *best) {
    VI isnan = {0};
    int nan = 0;
    memcpy(best, a, sizeof(T) * (size_t)w);
    for (ptrdiff_t c = 0; c < w; c++) nan |= a[c] != a[c];
    for (ptrdiff_t p = 1; p < k; p++) {
        const T *row = a + p * sk;
        ptrdiff_t c = 0;
        if (is_max)
            for (; c + VN <= w; c += VN) {
                V v = F(vload)(row + c), b = VMAX(v, F(vload)(best + c));
                memcpy(best + c, &b, sizeof b);
                isnan |= v != v;
            }
        else
            for (; c + VN <= w; c += VN) {
                V v = F(vload)(row + c), b = VMIN(v, F(vload)(best + c));
                memcpy(best + c, &b, sizeof b);
                isnan |= v != v;
            }
        for (; c < w; c++) {
            T v = row[c];
            best[c] = (is_max ? v > best[c] : v < best[c]) ? v : best[c];
            nan |= v != v;
        }
    }
    return nan || VANY(isnan);
}

/* Contiguous columns (sm == 1): best[c] (and at[c], if given) over p in order, by the
 * rule of strided_extremum. Needs k <= the largest IT. */
static void F(cols_extremum)(const T *a, ptrdiff_t k, ptrdiff_t sk, ptrdiff_t w, int is_max,
                             T *best, IT *at) {
    memcpy(best, a, sizeof(T) * (size_t)w);
    if (at) memset(at, 0, sizeof(IT) * (size_t)w);
    for (ptrdiff_t p = 1; p < k; p++) {
        const T *row = a + p * sk;
        ptrdiff_t c = 0;
        for (; c + VN <= w; c += VN) {
            V v = F(vload)(row + c), b = F(vload)(best + c);
            VI take = (is_max ? v > b : v < b) | ((v != v) & (b == b));
            b = F(blend)(take, v, b);
            memcpy(best + c, &b, sizeof b);
            if (at) {
                VI i;
                memcpy(&i, at + c, sizeof i);
                i = (take & (IT)p) | (~take & i);
                memcpy(at + c, &i, sizeof i);
            }
        }
        for (; c < w; c++) {
            T v = row[c], b = best[c];
            if ((is_max ? v > b : v < b) || (v != v && b == b)) {
                best[c] = v;
                if (at) at[c] = (IT)p;
            }
        }
    }
}

/* Reduce the rows of the (m, k) operand with op; see native.h. */
static int F(reduce)(int op, const T *a, ptrdiff_t m, ptrdiff_t k, ptrdiff_t sm, ptrdiff_t sk,
                     void *out) {
    T *o = out;
    int64_t *idx = out;
    int arg = op == RED_ARGMAX || op == RED_ARGMIN;
    int is_max = op == RED_MAX || op == RED_ARGMAX;
    if ((sm < 0 ? -sm : sm) >= (sk < 0 ? -sk : sk) || m == 1) {
        for (ptrdiff_t i = 0; i < m; i++) {
            const T *row = a + i * sm;
            if (op == RED_SUM) {
                o[i] = (T)0 + F(pairwise)(row, k, sk);
            } else if (op == RED_PROD) {
                T acc = k > 0 ? row[0] : (T)1;
                for (ptrdiff_t p = 1; p < k; p++) acc *= row[p * sk];
                o[i] = acc;
            } else if (k == 0) {
                o[i] = is_max ? -INFINITY : INFINITY;
            } else {
                if (sk != 1) {
                    ptrdiff_t p = F(strided_extremum)(row, k, sk, is_max);
                    if (arg)
                        idx[i] = p;
                    else
                        o[i] = row[p * sk];
                    continue;
                }
                if (arg) {
                    idx[i] = F(row_arg)(row, k, is_max);
                    continue;
                }
                int nan;
                T best = F(row_best)(row, k, is_max, &nan);
                /* A NaN's payload and a zero's sign are those of the first one. */
                o[i] = nan || best == 0 ? row[F(row_find)(row, k, best, nan)] : best;
            }
        }
        return 0;
    }
    /* Outputs side by side: sweep the reduced elements in order over all the outputs. */
    if (op == RED_PROD) {
        for (ptrdiff_t c = 0; c < m; c++) o[c] = k > 0 ? a[c * sm] : (T)1;
        for (ptrdiff_t p = 1; p < k; p++) {
            const T *row = a + p * sk;
            if (sm == 1)
                for (ptrdiff_t c = 0; c < m; c++) o[c] *= row[c];
            else
                for (ptrdiff_t c = 0; c < m; c++) o[c] *= row[c * sm];
        }
        return 0;
    }
    if (op != RED_SUM) {
        if (k == 0) {
            for (ptrdiff_t c = 0; c < m; c++) o[c] = is_max ? -INFINITY : INFINITY;
            return 0;
        }
        if (sm != 1 || k > IT_MAX) {
            for (ptrdiff_t c = 0; c < m; c++) {
                ptrdiff_t p = F(strided_extremum)(a + c * sm, k, sk, is_max);
                if (arg)
                    idx[c] = p;
                else
                    o[c] = a[c * sm + p * sk];
            }
            return 0;
        }
        if (!arg && !F(cols_best)(a, k, sk, m, is_max, o)) return 0;
        T *best = arg ? malloc((sizeof(T) + sizeof(IT)) * (size_t)m) : o;
        if (!best) return -1;
        IT *at = arg ? (IT *)(best + m) : NULL;
        F(cols_extremum)(a, k, sk, m, is_max, best, at);
        if (arg) {
            for (ptrdiff_t c = 0; c < m; c++) idx[c] = at[c];
            free(best);
        }
        return 0;
    }
    T *buf = malloc(sizeof(T) * (size_t)(F(pairwise_depth)(k) * m + 8 * W));
    if (!buf) return -1;
    F(pairwise_cols)(a, k, sk, sm, m, o, buf);
    for (ptrdiff_t c = 0; c < m; c++) o[c] = (T)0 + o[c];
    free(buf);
    return 0;
}

#ifdef UNDEF_HOOKS
#undef VANY
#undef VMAX
#undef VMIN
#undef UNDEF_HOOKS
#endif
#undef F
#undef CAT
#undef CAT_
