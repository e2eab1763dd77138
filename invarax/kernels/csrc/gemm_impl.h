/* gemm_impl.h - the contraction kernel for one element type, included by gemm.c with
 * T (the element type), SFX (a name suffix) and FMA (the fused multiply-add of T) defined.
 *
 * The order of operations (docs/numerics.md): for every output element
 * C[i, j] = sum_p A[i, p] * B[p, j], the K terms are split into blocks of INVARAX_KB
 * (the last may be shorter); in each block s = 0, then s = FMA(A[i, p], B[p, j], s)
 * for p in increasing order; C = s0, then C = C + s1, C = C + s2, ... in block order.
 * The packing and the tiling below only decide which outputs are computed together.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SFX)

/* Store a finished tile: C = s for the first block, else C = C + s. */
static void F(merge)(const T *s, ptrdiff_t lds, T *c, ptrdiff_t ldc, int rows, int cols,
                     int first) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            c[i * ldc + j] = first ? s[i * lds + j] : c[i * ldc + j] + s[i * lds + j];
}

/* The portable microkernel: a SCALAR_MR x SCALAR_NR tile, one FMA chain per element.
 * Microkernels read a packed panel of A (a[p*MR + i]) and rows of B ldb apart (b[p*ldb + j]),
 * and store C = s (first) or C = C + s. */
static void F(ukr_scalar)(ptrdiff_t kb, const T *a, const T *b, ptrdiff_t ldb, T *c,
                          ptrdiff_t ldc, int first) {
    T s[SCALAR_MR][SCALAR_NR];
    for (int i = 0; i < SCALAR_MR; i++)
        for (int j = 0; j < SCALAR_NR; j++) s[i][j] = 0;
    for (ptrdiff_t p = 0; p < kb; p++)
        for (int i = 0; i < SCALAR_MR; i++)
            for (int j = 0; j < SCALAR_NR; j++)
                s[i][j] = FMA(a[p * SCALAR_MR + i], b[p * ldb + j], s[i][j]);
    F(merge)(&s[0][0], SCALAR_NR, c, ldc, SCALAR_MR, SCALAR_NR, first);
}

/* Pack rows [0, mc) x columns [0, kb) of A (strides sm, sk) into micro-panels of mr rows:
 * panel q holds dst[q*mr*kb + p*mr + i] = A[q*mr + i, p], zero past the last row. */
static void F(pack_a)(const T *a, ptrdiff_t sm, ptrdiff_t sk, ptrdiff_t mc, ptrdiff_t kb,
                      int mr, T *dst) {
    for (ptrdiff_t q = 0; q < mc; q += mr, dst += mr * kb) {
        int rows = mc - q < mr ? (int)(mc - q) : mr;
        const T *src = a + q * sm;
        if (sk == 1 && rows == 6 && mr == 6) { /* the AVX2 tile: six row streams in step */
            const T *r0 = src, *r1 = src + sm, *r2 = src + 2 * sm, *r3 = src + 3 * sm,
                    *r4 = src + 4 * sm, *r5 = src + 5 * sm;
            for (ptrdiff_t p = 0; p < kb; p++) {
                T *d = dst + p * 6;
                d[0] = r0[p]; d[1] = r1[p]; d[2] = r2[p]; d[3] = r3[p]; d[4] = r4[p]; d[5] = r5[p];
            }
            continue;
        }
        if (sk == 1 && rows == 12 && mr == 12) { /* the AVX-512 tile: twelve streams in step */
            for (ptrdiff_t p = 0; p < kb; p++)
                for (int i = 0; i < 12; i++) dst[p * 12 + i] = src[i * sm + p];
            continue;
        }
        if (sk == 1) {
            for (int i = 0; i < rows; i++)
                for (ptrdiff_t p = 0; p < kb; p++) dst[p * mr + i] = src[i * sm + p];
        } else {
            for (ptrdiff_t p = 0; p < kb; p++)
                for (int i = 0; i < rows; i++) dst[p * mr + i] = src[i * sm + p * sk];
        }
        for (int i = rows; i < mr; i++)
            for (ptrdiff_t p = 0; p < kb; p++) dst[p * mr + i] = 0;
    }
}

/* Pack an implicit A (a convolution's patches, never built whole) like pack_a: element
 * (i, p) of the block is x[rows[i] + cols[p]]; zero past the last row. The terms are
 * visited in the order perm[0], perm[1], ... (the block's terms by increasing offset), so
 * that the reads run through memory in order whatever the layout; only the order of the
 * copies changes, never where a value lands. */
static void F(pack_a_gather)(const T *x, const ptrdiff_t *rows, const ptrdiff_t *cols,
                             const ptrdiff_t *perm, ptrdiff_t mc, ptrdiff_t kb, int mr,
                             T *dst) {
    for (ptrdiff_t q = 0; q < mc; q += mr, dst += mr * kb) {
        int n = mc - q < mr ? (int)(mc - q) : mr;
        const ptrdiff_t *r = rows + q;
        int evenly = 1; /* rows evenly spaced (a run of one output row of the image) */
        for (int i = 2; i < n; i++) evenly &= r[i] - r[i - 1] == r[1] - r[0];
        if (evenly && n == mr && mr > 1) {
            ptrdiff_t step = r[1] - r[0];
            const T *base = x + r[0];
            if (step == 1 && mr == 6) { /* the AVX2 tile: a copy of a constant size */
                for (ptrdiff_t j = 0; j < kb; j++) {
                    ptrdiff_t p = perm[j];
                    memcpy(dst + p * 6, base + cols[p], sizeof(T) * 6);
                }
                continue;
            }
            if (step == 1 && mr == 12) { /* the AVX-512 tile, likewise */
                for (ptrdiff_t j = 0; j < kb; j++) {
                    ptrdiff_t p = perm[j];
                    memcpy(dst + p * 12, base + cols[p], sizeof(T) * 12);
                }
                continue;
            }
            if (step == 1) { /* consecutive outputs of one image row: a contiguous run */
                for (ptrdiff_t j = 0; j < kb; j++) {
                    ptrdiff_t p = perm[j];
                    memcpy(dst + p * mr, base + cols[p], sizeof(T) * (size_t)mr);
                }
                continue;
            }
            for (ptrdiff_t j = 0; j < kb; j++) {
                ptrdiff_t p = perm[j];
                const T *xp = base + cols[p];
                for (int i = 0; i < mr; i++) dst[p * mr + i] = xp[i * step];
            }
            continue;
        }
        if (n == 6 && mr == 6) { /* the AVX2 tile: six rows anywhere, offsets in registers */
            const ptrdiff_t r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3], r4 = r[4], r5 = r[5];
            for (ptrdiff_t j = 0; j < kb; j++) {
                ptrdiff_t p = perm[j];
                const T *xp = x + cols[p];
                T *dp = dst + p * 6;
                dp[0] = xp[r0]; dp[1] = xp[r1]; dp[2] = xp[r2];
                dp[3] = xp[r3]; dp[4] = xp[r4]; dp[5] = xp[r5];
            }
            continue;
        }
        if (n == 12 && mr == 12) { /* the AVX-512 tile: twelve rows anywhere */
            ptrdiff_t o[12];
            memcpy(o, r, sizeof o);
            for (ptrdiff_t j = 0; j < kb; j++) {
                ptrdiff_t p = perm[j];
                const T *xp = x + cols[p];
                for (int i = 0; i < 12; i++) dst[p * 12 + i] = xp[o[i]];
            }
            continue;
        }
        for (ptrdiff_t j = 0; j < kb; j++) {
            ptrdiff_t p = perm[j];
            const T *xp = x + cols[p];
            for (int i = 0; i < n; i++) dst[p * mr + i] = xp[r[i]];
            for (int i = n; i < mr; i++) dst[p * mr + i] = 0;
        }
    }
}

/* Pack rows [0, kb) x columns [0, nc) of B (strides sk, sn) into micro-panels of nr columns:
 * dst[q*nr*kb + p*nr + j] = B[p, q*nr + j], zero past the last column. */
static void F(pack_b)(const T *b, ptrdiff_t sk, ptrdiff_t sn, ptrdiff_t kb, ptrdiff_t nc,
                      int nr, T *dst) {
    if (sn == 1 && (nr == 2 * TL || nr == 4 * TL) && nc >= nr) {
        /* rows of B in order; panels of 2 AVX2 vectors or 2 AVX-512 vectors, copies of a
         * constant size */
        ptrdiff_t full = nc - nc % nr;
        for (ptrdiff_t p = 0; p < kb; p++) {
            const T *src = b + p * sk;
            T *d = dst + p * nr;
            if (nr == 2 * TL)
                for (ptrdiff_t q = 0; q < full; q += nr, d += nr * kb)
                    memcpy(d, src + q, sizeof(T) * 2 * TL);
            else
                for (ptrdiff_t q = 0; q < full; q += nr, d += nr * kb)
                    memcpy(d, src + q, sizeof(T) * 4 * TL);
        }
        b += full;
        nc -= full;
        dst += full * kb;
    }
    for (ptrdiff_t q = 0; q < nc; q += nr, dst += nr * kb) {
        int cols = nc - q < nr ? (int)(nc - q) : nr;
        const T *src = b + q * sn;
        if (sn == 1) {
            for (ptrdiff_t p = 0; p < kb; p++) {
                for (int j = 0; j < cols; j++) dst[p * nr + j] = src[p * sk + j];
                for (int j = cols; j < nr; j++) dst[p * nr + j] = 0;
            }
        } else {
            int j0 = 0;
#ifdef HAVE_AVX2
            if (sk == 1 && isa_current() >= ISA_AVX2) { /* B.T row-major: TL x TL transposes */
                for (; j0 + TL <= cols; j0 += TL) {
                    ptrdiff_t p = 0;
                    for (; p + TL <= kb; p += TL)
                        F(transpose_avx2)(src + j0 * sn + p, sn, dst + p * nr + j0, nr);
                    for (; p < kb; p++)
                        for (int j = j0; j < j0 + TL; j++) dst[p * nr + j] = src[j * sn + p];
                }
            }
#endif
            for (int j = j0; j < cols; j++)
                for (ptrdiff_t p = 0; p < kb; p++) dst[p * nr + j] = src[j * sn + p * sk];
            for (int j = cols; j < nr; j++)
                for (ptrdiff_t p = 0; p < kb; p++) dst[p * nr + j] = 0;
        }
    }
}

/* B's rows [0, k) x columns [0, n) packed for every column block of NC and K block of
 * INVARAX_KB, in that order: block (jc, pc) at dst + jc * k + pc * round_up(nc, nr). */
static void F(pack_b_all)(const T *b, ptrdiff_t sbk, ptrdiff_t sbn, ptrdiff_t k, ptrdiff_t n,
                          int nr, T *dst) {
    for (ptrdiff_t jc = 0; jc < n; jc += NC) {
        ptrdiff_t nc = n - jc < NC ? n - jc : NC, ncpad = (nc + nr - 1) / nr * nr;
        for (ptrdiff_t pc = 0; pc < k; pc += INVARAX_KB) {
            ptrdiff_t kb = k - pc < INVARAX_KB ? k - pc : INVARAX_KB;
            F(pack_b)(b + pc * sbk + jc * sbn, sbk, sbn, kb, nc, nr, dst + jc * k + pc * ncpad);
        }
    }
}

/* One matrix product C[:m, :n] = A[:m, :] @ B[:, :n] with the blocked loops of BLIS:
 * columns in blocks of NC, K in blocks of INVARAX_KB (the blocks of the order), rows in
 * blocks of MC; abuf and bbuf hold the packed blocks. B is either packed here, block by
 * block, or already packed for every block (bpack, see pack_b_all), or read in place
 * (`direct`, for products of few rows with B's rows contiguous: each element of B is used
 * by few tiles, so packing it would cost more than it saves; only a last, partial panel
 * is packed). */
static void F(gemm_block)(const kernel_desc *d, const T *a, ptrdiff_t sam, ptrdiff_t sak,
                          const T *b, ptrdiff_t sbk, ptrdiff_t sbn, const T *bpack,
                          ptrdiff_t bld, ptrdiff_t bcol, int direct,
                          T *c, ptrdiff_t ldc, ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, T *abuf,
                          T *bbuf, const ptrdiff_t *rowoff, const ptrdiff_t *coloff) {
    const int mr = d->mr, nr = d->nr;
    void (*ukr)(ptrdiff_t, const T *, const T *, ptrdiff_t, T *, ptrdiff_t, int) =
        (void (*)(ptrdiff_t, const T *, const T *, ptrdiff_t, T *, ptrdiff_t, int))d->ukr;
    T tile[MAX_MR * MAX_NR];
    for (ptrdiff_t jc = 0; jc < n; jc += NC) {
        ptrdiff_t nc = n - jc < NC ? n - jc : NC, full = nc - nc % nr;
        for (ptrdiff_t pc = 0; pc < k; pc += INVARAX_KB) {
            ptrdiff_t kb = k - pc < INVARAX_KB ? k - pc : INVARAX_KB;
            int first = pc == 0;
            const T *bblk = b + pc * sbk + jc * sbn, *bpk = bbuf;
            if (bpack && bld) /* a kept packing of all of B (n <= NC): from column bcol */
                bpk = bpack + pc * bld + bcol * kb;
            else if (bpack)
                bpk = bpack + jc * k + pc * ((nc + nr - 1) / nr * nr);
            else if (direct)
                F(pack_b)(bblk + full, sbk, sbn, kb, nc - full, nr, bbuf + full * kb);
            else
                F(pack_b)(bblk, sbk, sbn, kb, nc, nr, bbuf);
            for (ptrdiff_t ic = 0; ic < m; ic += MC) {
                ptrdiff_t mc = m - ic < MC ? m - ic : MC;
                if (rowoff)
                    F(pack_a_gather)(a, rowoff + ic, coloff + pc, coloff + k + pc, mc, kb, mr, abuf);
                else
                    F(pack_a)(a + ic * sam + pc * sak, sam, sak, mc, kb, mr, abuf);
                for (ptrdiff_t jr = 0; jr < nc; jr += nr) {
                    int cols = nc - jr < nr ? (int)(nc - jr) : nr;
                    const T *bp = direct && jr < full ? bblk + jr : bpk + jr * kb;
                    ptrdiff_t ldb = direct && jr < full ? sbk : nr;
                    for (ptrdiff_t ir = 0; ir < mc; ir += mr) {
                        int rows = mc - ir < mr ? (int)(mc - ir) : mr;
                        T *ct = c + (ic + ir) * ldc + jc + jr;
                        if (rows == mr && cols == nr) {
                            ukr(kb, abuf + ir * kb, bp, ldb, ct, ldc, first);
                        } else {
                            ukr(kb, abuf + ir * kb, bp, ldb, tile, nr, 1);
                            F(merge)(tile, nr, ct, ldc, rows, cols, first);
                        }
                    }
                }
            }
        }
    }
}

#ifdef HAVE_AVX2
/* A narrow product (n <= nr = 1 or 2 vectors): K block by K block, B's block packed into a
 * zero-padded panel, then every NARROW_MR rows from A in place (see ukr_narrow_avx2). */
static AVX2 void F(narrow_block)(const kernel_desc *d, const T *a, ptrdiff_t sam, ptrdiff_t sak,
                            const T *b, ptrdiff_t sbk, ptrdiff_t sbn, T *c, ptrdiff_t ldc,
                                 ptrdiff_t m, ptrdiff_t n, ptrdiff_t k, T *bbuf, T *abuf,
                                 const ptrdiff_t *rowoff, const ptrdiff_t *coloff) {
    const int nv = d->nr / TL;
    for (ptrdiff_t pc = 0; pc < k; pc += INVARAX_KB) {
        ptrdiff_t kb = k - pc < INVARAX_KB ? k - pc : INVARAX_KB;
        F(pack_b)(b + pc * sbk, sbk, sbn, kb, n, d->nr, bbuf);
        for (ptrdiff_t i = 0; i < m; i += NARROW_MR) {
            int rows = m - i < NARROW_MR ? (int)(m - i) : NARROW_MR;
            if (rowoff) { /* an implicit A: pack these rows, then read the panel in place */
                F(pack_a_gather)(a, rowoff + i, coloff + pc, coloff + k + pc, rows, kb, NARROW_MR,
                                 abuf);
                F(ukr_narrow_avx2)(kb, abuf, 1, NARROW_MR, bbuf, nv, c + i * ldc, ldc, rows,
                                   (int)n, pc == 0);
                continue;
            }
            F(ukr_narrow_avx2)(kb, a + i * sam + pc * sak, sam, sak, bbuf, nv, c + i * ldc, ldc,
                               rows, (int)n, pc == 0);
        }
    }
}
#endif

/* Piece u of pack_b_all's packing (pack_unit_count's pieces, in order: column blocks,
 * then K blocks, then PACK_COLS columns): the same elements at the same places. */
static void F(pack_b_piece)(const gemm_job *job, ptrdiff_t u, T *dst) {
    const ptrdiff_t n = job->n, k = job->k, nr = job->desc.nr;
    const ptrdiff_t kblocks = (k + INVARAX_KB - 1) / INVARAX_KB;
    for (ptrdiff_t jc = 0; jc < n; jc += NC) {
        ptrdiff_t nc = n - jc < NC ? n - jc : NC, ncpad = (nc + nr - 1) / nr * nr;
        ptrdiff_t pieces = (nc + PACK_COLS - 1) / PACK_COLS;
        if (u >= pieces * kblocks) {
            u -= pieces * kblocks;
            continue;
        }
        ptrdiff_t pc = u / pieces * INVARAX_KB, q = u % pieces * PACK_COLS;
        ptrdiff_t kb = k - pc < INVARAX_KB ? k - pc : INVARAX_KB;
        ptrdiff_t cols = nc - q < PACK_COLS ? nc - q : PACK_COLS;
        F(pack_b)((const T *)job->b.p + pc * job->b.s1 + (jc + q) * job->b.s2, job->b.s1,
                  job->b.s2, kb, cols, (int)nr, dst + jc * k + pc * ncpad + q * kb);
        return;
    }
}

/* Claim and run units of a gemm job on thread t until none is left: first the pieces of
 * B's packing, if any (then wait until every piece is packed), then the product's units. A
 * unit is a range of rows (split_m) or columns of one matrix of the batch; whoever runs it,
 * its elements get the same operations. */
static void F(gemm_units)(gemm_job *job, int t) {
    const kernel_desc *d = &job->desc;
    const T *a = job->a.p, *b = job->b.p;
    T *abuf = job->bufs[t], *bbuf = abuf + ABUF_ELEMS;
    if (job->pack_units) {
        for (;;) {
            ptrdiff_t u = __atomic_fetch_add(&job->pack_next, 1, __ATOMIC_RELAXED);
            if (u >= job->pack_units) break;
            F(pack_b_piece)(job, u, (T *)job->bpack);
            __atomic_add_fetch(&job->pack_done, 1, __ATOMIC_RELEASE);
        }
        while (__atomic_load_n(&job->pack_done, __ATOMIC_ACQUIRE) < job->pack_units) CPU_RELAX();
    }
    for (;;) {
        ptrdiff_t u = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (u >= job->units) break;
        ptrdiff_t bi = u / job->chunks, ch = u % job->chunks;
        ptrdiff_t m0 = 0, m1 = job->m, n0 = 0, n1 = job->n;
        if (job->split_m) {
            m0 = chunk_bound(job->m, d->mr, job->chunks, ch);
            m1 = chunk_bound(job->m, d->mr, job->chunks, ch + 1);
        } else {
            n0 = chunk_bound(job->n, d->nr, job->chunks, ch);
            n1 = chunk_bound(job->n, d->nr, job->chunks, ch + 1);
        }
        if (m1 <= m0 || n1 <= n0) continue;
        ptrdiff_t bo = bi / job->nbi, bn = bi % job->nbi; /* the two batch axes */
        const T *ai = a + bo * job->a.s0 + bn * job->a.si + (job->rowoff ? 0 : m0 * job->a.s1);
        const T *bi_ = b ? b + bo * job->b.s0 + bn * job->b.si + n0 * job->b.s2 : NULL;
        T *ci = (T *)job->c + (bi * job->m + m0) * job->n + n0;
#ifdef HAVE_AVX2
        if (d->narrow) {
            F(narrow_block)(d, ai, job->a.s1, job->a.s2, bi_, job->b.s1, job->b.s2, ci, job->n,
                            m1 - m0, n1 - n0, job->k, bbuf, abuf,
                            job->rowoff ? job->rowoff + m0 : NULL, job->coloff);
        } else
#endif
        F(gemm_block)(d, ai, job->a.s1, job->a.s2, bi_, job->b.s1, job->b.s2,
                      (const T *)job->bpack, job->bld, n0, job->direct, ci, job->n, m1 - m0,
                      n1 - n0, job->k,
                      abuf, bbuf, job->rowoff ? job->rowoff + m0 : NULL, job->coloff);
        if (job->bias) /* the unit's block of C is whole: its epilogue, while in the cache */
            gemm_bias_rows(job->dbl, job->bias, job->bias_step, job->bias_first, ci - n0,
                           m1 - m0, job->n, n0, n1);
    }
}

#undef F
#undef CAT
#undef CAT_
