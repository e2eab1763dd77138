/* module.c - the Python module invarax.kernels._native: the canonical kernels' entry points.
 *
 * Operands arrive as objects with the buffer protocol (NumPy arrays), with any strides;
 * outputs are C-contiguous and writable. The GIL is released while a kernel runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "native.h"

static const char *ISA_NAMES[ISA_COUNT] = {"scalar", "avx2", "avx512"};

/* 1 for double, 0 for float, -1 (with an exception set) otherwise. */
static int float_kind(const Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    if (f[0] == '=' || f[0] == '@' || f[0] == '<') f++;
    if (strcmp(f, "d") == 0 && v->itemsize == 8) return 1;
    if (strcmp(f, "f") == 0 && v->itemsize == 4) return 0;
    PyErr_Format(PyExc_TypeError, "kernel operands must be float32 or float64, got format %s",
                 v->format ? v->format : "B");
    return -1;
}

int float_buffers(const char *name, PyObject **objs, int n, Py_buffer *v) {
    int got = 0, kind = -1, same = 1;
    for (; got < n; got++) {
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (got == n - 1 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[got], &v[got], flags) < 0) goto release;
        const char *f = v[got].format ? v[got].format : "B";
        if (f[0] == '=' || f[0] == '<' || f[0] == '@') f++;
        int k = (strcmp(f, "d") == 0 && v[got].itemsize == 8) ? 1
                : (strcmp(f, "f") == 0 && v[got].itemsize == 4) ? 0 : -1;
        same &= k >= 0 && (got == 0 || (k == kind && v[got].len == v[0].len));
        kind = got ? kind : k;
    }
    if (same) return kind;
    PyErr_Format(PyExc_ValueError,
                 "%s: operands must be C-contiguous float32 or float64 of one dtype and size",
                 name);
release:
    while (got > 0) PyBuffer_Release(&v[--got]);
    return -1;
}

/* The strides of `v` in elements; -1 (with an exception set) if one is not a multiple. */
static int element_strides(const Py_buffer *v, ptrdiff_t *out) {
    for (int d = 0; d < v->ndim; d++) {
        if (v->strides[d] % v->itemsize) {
            PyErr_SetString(PyExc_ValueError, "kernel operand strides must be whole elements");
            return -1;
        }
        out[d] = v->strides[d] / v->itemsize;
    }
    return 0;
}

/* 0 if `v` is empty or its data pointer is a multiple of its element size; else -1 with an
 * exception set (the kernels load whole elements). */
static int check_aligned(const Py_buffer *v) {
    if (v->len > 0 && v->itemsize > 0 && (uintptr_t)v->buf % (uintptr_t)v->itemsize) {
        PyErr_SetString(PyExc_ValueError,
                        "kernel operand is not aligned to its element size (pass a copy)");
        return -1;
    }
    return 0;
}

/* A buffer of `ndim` dimensions (any number for -1: the caller checks it). */
static int get_buffer(PyObject *obj, Py_buffer *v, int ndim, int writable) {
    int flags = PyBUF_FORMAT | (writable ? PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE : PyBUF_STRIDES);
    if (PyObject_GetBuffer(obj, v, flags) < 0) return -1;
    if (ndim >= 0 && v->ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "kernel operand must have %d dimensions, got %d", ndim,
                     v->ndim);
        PyBuffer_Release(v);
        return -1;
    }
    if (check_aligned(v) < 0) {
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* Whether `v` holds int64 elements (the output of argmax and argmin). */
static int is_int64(const Py_buffer *v) {
    const char *f = v->format ? v->format : "B";
    if (f[0] == '=' || f[0] == '@' || f[0] == '<') f++;
    return v->itemsize == 8 && (strcmp(f, "q") == 0 || strcmp(f, "l") == 0);
}

PyDoc_STRVAR(gemm_doc,
             "gemm(a, b, c, nthreads, bias=None, bias_first=False)\n\n"
             "c[i] = a[i] @ b[i] in the canonical order, for a (B, M, K) and b (B, K, N) of one\n"
             "float dtype (any strides) into the C-contiguous (B, M, N) array c; or for a batch\n"
             "of two axes, a (B1, B2, M, K), b (B1, B2, K, N) and c (B1, B2, M, N). A bias (N,\n"
             "C-contiguous, c's dtype) is then added to each row of c (bias + c if bias_first).");

/* The optional bias of a product of n columns and dtype dbl: NULL for None (0 returned,
 * nothing to release); else 1 with the buffer in *v; -1 with an exception set. */
static int get_bias(PyObject *obj, Py_buffer *v, int dbl, ptrdiff_t n) {
    if (obj == NULL || obj == Py_None) return 0;
    if (get_buffer(obj, v, 1, 0) < 0) return -1;
    if (float_kind(v) != dbl || v->shape[0] != n || (n > 1 && v->strides[0] != v->itemsize)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError,
                            "gemm: the bias must be a contiguous (N,) array of the product's dtype");
        PyBuffer_Release(v);
        return -1;
    }
    return 1;
}

static PyObject *py_gemm(PyObject *self, PyObject *args) {
    PyObject *oa, *ob, *oc, *obias = NULL;
    int nthreads, bias_first = 0, status = -1, has_bias = 0;
    Py_buffer a, b, c, bias;
    ptrdiff_t sa[4], sb[4];
    if (!PyArg_ParseTuple(args, "OOOi|Op", &oa, &ob, &oc, &nthreads, &obias, &bias_first))
        return NULL;
    if (get_buffer(oa, &a, -1, 0) < 0) return NULL;
    int nd = a.ndim, d = nd - 3; /* d: 1 for a batch of two axes */
    if (nd != 3 && nd != 4) {
        PyErr_Format(PyExc_ValueError, "kernel operand must have 3 or 4 dimensions, got %d", nd);
        goto release_a;
    }
    if (get_buffer(ob, &b, nd, 0) < 0) goto release_a;
    if (get_buffer(oc, &c, nd, 1) < 0) goto release_b;
    int dbl = float_kind(&a);
    if (dbl < 0 || element_strides(&a, sa) < 0 || element_strides(&b, sb) < 0) goto release_c;
    if (float_kind(&b) != dbl || float_kind(&c) != dbl) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "gemm operands differ in dtype");
        goto release_c;
    }
    ptrdiff_t nbo = a.shape[0], nbi = d ? a.shape[1] : 1;
    ptrdiff_t m = a.shape[d + 1], k = a.shape[d + 2], n = b.shape[d + 2];
    int same = 1;
    for (int i = 0; i <= d; i++) same &= b.shape[i] == a.shape[i] && c.shape[i] == a.shape[i];
    if (!same || b.shape[d + 1] != k || c.shape[d + 1] != m || c.shape[d + 2] != n) {
        PyErr_SetString(PyExc_ValueError, d ? "gemm: shapes must be (B1, B2, M, K), "
                        "(B1, B2, K, N), (B1, B2, M, N)" : "gemm: shapes must be (B, M, K), "
                        "(B, K, N), (B, M, N)");
        goto release_c;
    }
    operand3 pa = {a.buf, sa[0], sa[d + 1], sa[d + 2], d ? sa[1] : 0};
    operand3 pb = {b.buf, sb[0], sb[d + 1], sb[d + 2], d ? sb[1] : 0};
    has_bias = get_bias(obias, &bias, dbl, n);
    if (has_bias < 0) goto release_c;
    Py_BEGIN_ALLOW_THREADS
    status = gemm_split(dbl, pa, pb, c.buf, nbo, nbi, m, n, k, nthreads,
                        has_bias ? bias.buf : NULL, bias_first);
    Py_END_ALLOW_THREADS
    if (has_bias) PyBuffer_Release(&bias);
    if (status < 0) PyErr_NoMemory();
release_c:
    PyBuffer_Release(&c);
release_b:
    PyBuffer_Release(&b);
release_a:
    PyBuffer_Release(&a);
    if (status < 0) return NULL;
    Py_RETURN_NONE;
}

/* A kept packing (gemm_pack): this header, then the packed elements. */
typedef struct {
    int64_t magic, dbl, m1, k, n, isa, bytes, pad;
} pack_header;
#define PACK_MAGIC 0x6b63617062LL

PyDoc_STRVAR(gemm_pack_doc,
             "gemm_pack(b, m)\n\n"
             "b (1, K, N, any strides) packed for gemm_packed's products of m rows, as a\n"
             "bytearray; None where such products do not use a kept packing.");

static PyObject *py_gemm_pack(PyObject *self, PyObject *args) {
    PyObject *ob, *out = NULL;
    Py_ssize_t m;
    Py_buffer b;
    ptrdiff_t sb[3];
    if (!PyArg_ParseTuple(args, "On", &ob, &m)) return NULL;
    if (get_buffer(ob, &b, 3, 0) < 0) return NULL;
    int dbl = float_kind(&b);
    if (dbl < 0 || element_strides(&b, sb) < 0) goto done;
    if (b.shape[0] != 1) {
        PyErr_SetString(PyExc_ValueError, "gemm_pack: b must have shape (1, K, N)");
        goto done;
    }
    ptrdiff_t k = b.shape[1], n = b.shape[2];
    size_t bytes = gemm_packed_size(dbl, m, n, k);
    if (!bytes) {
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(sizeof(pack_header) + bytes));
    if (!out) goto done;
    char *dst = PyByteArray_AS_STRING(out);
    pack_header h = {PACK_MAGIC, dbl, m == 1, k, n, isa_current(), (int64_t)bytes, 0};
    memcpy(dst, &h, sizeof h);
    operand3 pb = {b.buf, sb[0], sb[1], sb[2]};
    Py_BEGIN_ALLOW_THREADS
    gemm_pack(dbl, pb, m, n, k, dst + sizeof h);
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&b);
    return out;
}

PyDoc_STRVAR(gemm_packed_doc,
             "gemm_packed(a, packed, c, nthreads, bias=None, bias_first=False)\n\n"
             "c[0] = a[0] @ B in the canonical order (as gemm), B kept packed by gemm_pack, for a\n"
             "(1, M, K) of B's dtype (any strides) into the C-contiguous (1, M, N) array c.");

static PyObject *py_gemm_packed(PyObject *self, PyObject *args) {
    PyObject *oa, *op, *oc, *obias = NULL;
    int nthreads, bias_first = 0, status = -1, has_bias = 0;
    Py_buffer a, p, c, bias;
    ptrdiff_t sa[3];
    if (!PyArg_ParseTuple(args, "OOOi|Op", &oa, &op, &oc, &nthreads, &obias, &bias_first))
        return NULL;
    if (get_buffer(oa, &a, 3, 0) < 0) return NULL;
    if (PyObject_GetBuffer(op, &p, PyBUF_SIMPLE) < 0) goto release_a;
    if (get_buffer(oc, &c, 3, 1) < 0) goto release_p;
    int dbl = float_kind(&a);
    if (dbl < 0 || element_strides(&a, sa) < 0) goto release_c;
    if (float_kind(&c) != dbl) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "gemm_packed operands differ in dtype");
        goto release_c;
    }
    ptrdiff_t m = a.shape[1], k = a.shape[2], n = c.shape[2];
    pack_header h;
    if ((size_t)p.len < sizeof h) goto mismatch;
    memcpy(&h, p.buf, sizeof h);
    if (h.magic != PACK_MAGIC || h.dbl != dbl || h.k != k || h.n != n || h.m1 != (m == 1) ||
        h.isa != isa_current() ||
        a.shape[0] != 1 || c.shape[0] != 1 || c.shape[1] != m ||
        h.bytes != (int64_t)gemm_packed_size(dbl, m, n, k) ||
        (size_t)p.len != sizeof h + (size_t)h.bytes)
        goto mismatch;
    operand3 pa = {a.buf, sa[0], sa[1], sa[2]};
    const char *packed = (const char *)p.buf + sizeof h;
    has_bias = get_bias(obias, &bias, dbl, n);
    if (has_bias < 0) goto release_c;
    Py_BEGIN_ALLOW_THREADS
    status = gemm_packed(dbl, pa, packed, c.buf, m, n, k, nthreads, has_bias ? bias.buf : NULL,
                         bias_first);
    Py_END_ALLOW_THREADS
    if (has_bias) PyBuffer_Release(&bias);
    if (status == -3) goto mismatch;
    if (status < 0) PyErr_NoMemory();
    goto release_c;
mismatch:
    PyErr_SetString(PyExc_ValueError,
                    "gemm_packed: the packing is not one of B for these shapes (gemm_pack)");
    status = -1;
release_c:
    PyBuffer_Release(&c);
release_p:
    PyBuffer_Release(&p);
release_a:
    PyBuffer_Release(&a);
    if (status < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(conv_gemm_doc,
             "conv_gemm(x, gstride, rowoff, coloff, b, c, nthreads)\n\n"
             "c[g] = A[g] @ b[g] in the canonical order (as gemm), where A[g, i, p] is\n"
             "x.flat[g*gstride + rowoff[i] + coloff[p]] for a C-contiguous float array x, int64\n"
             "offsets rowoff (M,) and coloff (2K,): the K offsets, then for each block of 256\n"
             "terms the order of its terms by increasing offset (local indices); b (G, K, N) of\n"
             "x's dtype, c (G, M, N).");

/* The smallest and largest of n offsets. */
static void offset_range(const long long *v, ptrdiff_t n, long long *lo, long long *hi) {
    *lo = n ? v[0] : 0;
    *hi = *lo;
    for (ptrdiff_t i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

static PyObject *py_conv_gemm(PyObject *self, PyObject *args) {
    PyObject *ox, *orow, *ocol, *ob, *oc;
    Py_ssize_t gstride;
    int nthreads, status = -1;
    Py_buffer x, r, q, b, c;
    ptrdiff_t sb[3];
    if (!PyArg_ParseTuple(args, "OnOOOOi", &ox, &gstride, &orow, &ocol, &ob, &oc, &nthreads))
        return NULL;
    if (PyObject_GetBuffer(ox, &x, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (get_buffer(orow, &r, 1, 0) < 0) goto release_x;
    if (get_buffer(ocol, &q, 1, 0) < 0) goto release_r;
    if (get_buffer(ob, &b, 3, 0) < 0) goto release_q;
    if (get_buffer(oc, &c, 3, 1) < 0) goto release_b;
    int dbl = float_kind(&x);
    if (dbl < 0 || element_strides(&b, sb) < 0) goto release_c;
    if (float_kind(&b) != dbl || float_kind(&c) != dbl) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "conv_gemm operands differ in dtype");
        goto release_c;
    }
    ptrdiff_t nb = b.shape[0], m = r.shape[0], k = q.shape[0] / 2, n = b.shape[2];
    if (r.itemsize != 8 || q.itemsize != 8 || r.strides[0] != 8 || q.strides[0] != 8 ||
        q.shape[0] % 2 ||
        b.shape[1] != k || c.shape[0] != nb || c.shape[1] != m || c.shape[2] != n) {
        PyErr_SetString(PyExc_ValueError,
                        "conv_gemm: offsets must be contiguous int64 (M,) and (K,); b (G, K, N); "
                        "c (G, M, N)");
        goto release_c;
    }
    long long rlo, rhi, qlo, qhi, size = (long long)(x.len / x.itemsize);
    offset_range(r.buf, m, &rlo, &rhi);
    offset_range(q.buf, k, &qlo, &qhi);
    const long long *perm = (const long long *)q.buf + k;
    for (ptrdiff_t p = 0; p < k; p++) /* a local index inside its block */
        if (perm[p] < 0 || perm[p] >= INVARAX_KB || p - p % INVARAX_KB + perm[p] >= k) {
            PyErr_SetString(PyExc_IndexError, "conv_gemm: bad term order");
            goto release_c;
        }
    if (m && k && nb && (rlo + qlo < 0 || gstride < 0 ||
                         rhi + qhi + (long long)(nb - 1) * gstride >= size)) {
        PyErr_SetString(PyExc_IndexError, "conv_gemm: an offset falls outside x");
        goto release_c;
    }
    operand3 pb = {b.buf, sb[0], sb[1], sb[2]};
    Py_BEGIN_ALLOW_THREADS
    status = conv_gemm(dbl, x.buf, gstride, r.buf, q.buf, pb, c.buf, nb, m, n, k, nthreads);
    Py_END_ALLOW_THREADS
    if (status < 0) PyErr_NoMemory();
release_c:
    PyBuffer_Release(&c);
release_b:
    PyBuffer_Release(&b);
release_q:
    PyBuffer_Release(&q);
release_r:
    PyBuffer_Release(&r);
release_x:
    PyBuffer_Release(&x);
    if (status < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(window_doc,
             "window(op, a, arg, out, outshape, step, woff)\n\n"
             "Window selection and its gradient (native.h): op 0 selects maxima, 1 minima of\n"
             "the padded a into out and arg (int32); 2 gathers a at arg into out; 3 adds a\n"
             "into the padded out at arg. Arrays are C-contiguous float32/float64 of one\n"
             "dtype; outshape, step, woff are contiguous int64.");

static PyObject *py_window(PyObject *self, PyObject *args) {
    PyObject *oa, *oarg, *oout, *oshape, *ostep, *owoff;
    int op, ok = 0, got = 0;
    Py_buffer v[6];
    if (!PyArg_ParseTuple(args, "iOOOOOO", &op, &oa, &oarg, &oout, &oshape, &ostep, &owoff))
        return NULL;
    PyObject *objs[6] = {oa, oarg, oout, oshape, ostep, owoff};
    for (; got < 6; got++) {
        int writable = got == 2 || (got == 1 && op < 2);
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[got], &v[got], flags) < 0) goto release;
    }
    int dbl = float_kind(&v[0]);
    if (dbl < 0) goto release;
    if (float_kind(&v[2]) != dbl || v[1].itemsize != 4 || v[3].itemsize != 8 ||
        v[4].itemsize != 8 || v[5].itemsize != 8 || op < 0 || op > 3 ||
        v[3].len != v[4].len || v[3].len / 8 > WINDOW_MAX_DIMS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "window: bad arguments");
        goto release;
    }
    int nd = (int)(v[3].len / 8);
    const ptrdiff_t *outshape = v[3].buf, *step = v[4].buf, *woff = v[5].buf;
    ptrdiff_t k = v[5].len / 8, total = 1, reach = 0, wmax = 0;
    for (int d = 0; d < nd; d++) {
        total *= outshape[d];
        if (outshape[d] > 0) reach += (outshape[d] - 1) * step[d];
    }
    for (ptrdiff_t j = 0; j < k; j++) wmax = woff[j] > wmax ? woff[j] : wmax;
    ptrdiff_t padded = (op == 3 ? v[2].len : v[0].len) / v[0].itemsize;
    ptrdiff_t small = (op == 3 ? v[0].len : v[2].len) / v[0].itemsize;
    int bad = small != total || v[1].len / 4 != total || (total && (k == 0 || reach + wmax >= padded));
    if (op >= 2)
        for (ptrdiff_t o = 0; !bad && o < total; o++) bad = ((int *)v[1].buf)[o] < 0 || ((int *)v[1].buf)[o] >= k;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "window: shapes or window positions out of range");
        goto release;
    }
    Py_BEGIN_ALLOW_THREADS
    if (op < 2) {
        if (dbl) window_select_f64(op == 0, v[0].buf, nd, outshape, step, woff, k, v[2].buf, v[1].buf);
        else window_select_f32(op == 0, v[0].buf, nd, outshape, step, woff, k, v[2].buf, v[1].buf);
    } else if (op == 2) {
        if (dbl) window_gather_f64(v[0].buf, v[1].buf, nd, outshape, step, woff, v[2].buf);
        else window_gather_f32(v[0].buf, v[1].buf, nd, outshape, step, woff, v[2].buf);
    } else {
        if (dbl) window_scatter_f64(v[0].buf, v[1].buf, nd, outshape, step, woff, v[2].buf);
        else window_scatter_f32(v[0].buf, v[1].buf, nd, outshape, step, woff, v[2].buf);
    }
    Py_END_ALLOW_THREADS
    ok = 1;
release:
    while (got > 0) PyBuffer_Release(&v[--got]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(reduce_doc,
             "reduce(op, x, out, nthreads=1)\n\n"
             "Reduce each row of the (M, K) float array x (any strides) into out[i]: op is\n"
             "0 sum, 1 prod, 2 max, 3 min (out of x's dtype), 4 argmax, 5 argmin (out int64);\n"
             "runs of whole rows taken by up to nthreads threads of the kernels' pool.");

/* run_ranges' work for reduce on several threads: rows [lo, hi) of
 * p = {dbl, op, x, sm, sk, k, out, out element size}. */
static int reduce_range(void **p, int64_t lo, int64_t hi, int64_t blk) {
    (void)blk;
    int dbl = (int)(intptr_t)p[0], op = (int)(intptr_t)p[1];
    ptrdiff_t sm = (intptr_t)p[3], sk = (intptr_t)p[4], k = (intptr_t)p[5];
    size_t es = dbl ? sizeof(double) : sizeof(float), oes = (size_t)(intptr_t)p[7];
    return reduce(dbl, op, (const char *)p[2] + lo * sm * (ptrdiff_t)es, hi - lo, k, sm, sk,
                  (char *)p[6] + (size_t)lo * oes) < 0;
}

static PyObject *py_reduce(PyObject *self, PyObject *args) {
    PyObject *ox, *oo;
    int op, status = -1, nthreads = 1;
    Py_buffer x, o;
    ptrdiff_t sx[2];
    if (!PyArg_ParseTuple(args, "iOO|i", &op, &ox, &oo, &nthreads)) return NULL;
    if (op < 0 || op >= RED_COUNT) {
        PyErr_Format(PyExc_ValueError, "reduce: unknown op %d", op);
        return NULL;
    }
    if (get_buffer(ox, &x, 2, 0) < 0) return NULL;
    if (get_buffer(oo, &o, 1, 1) < 0) goto release_x;
    int dbl = float_kind(&x);
    if (dbl < 0 || element_strides(&x, sx) < 0) goto release_o;
    int arg = op == RED_ARGMAX || op == RED_ARGMIN;
    if (o.shape[0] != x.shape[0] || (arg ? !is_int64(&o) : float_kind(&o) != dbl) ||
        (arg && x.shape[1] == 0)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "reduce: bad output, or argmax of an empty row");
        goto release_o;
    }
    Py_BEGIN_ALLOW_THREADS
    ptrdiff_t m = x.shape[0];
    if (nthreads > 1 && m > 1) { /* whole rows per thread: each row's order is its own */
        void *p[8] = {(void *)(intptr_t)dbl, (void *)(intptr_t)op, x.buf, (void *)(intptr_t)sx[0],
                      (void *)(intptr_t)sx[1], (void *)(intptr_t)x.shape[1], o.buf,
                      (void *)(intptr_t)o.itemsize};
        status = run_ranges(reduce_range, p, m, pool_run(m, nthreads, 1), 1, nthreads) ? -1 : 0;
    } else {
        status = reduce(dbl, op, x.buf, m, x.shape[1], sx[0], sx[1], o.buf);
    }
    Py_END_ALLOW_THREADS
    if (status < 0) PyErr_NoMemory();
release_o:
    PyBuffer_Release(&o);
release_x:
    PyBuffer_Release(&x);
    if (status < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(scan_doc,
             "scan(op, x, out, reverse)\n\n"
             "Inclusive scan along axis 1 of the (O, N, I) float array x (any strides) into the\n"
             "C-contiguous out of x's shape and dtype: op 0 sum, 1 prod; from the end if reverse.");

static PyObject *py_scan(PyObject *self, PyObject *args) {
    PyObject *ox, *oo;
    int op, reverse, ok = 0;
    Py_buffer x, o;
    ptrdiff_t sx[3];
    if (!PyArg_ParseTuple(args, "iOOp", &op, &ox, &oo, &reverse)) return NULL;
    if (op != SCAN_SUM && op != SCAN_PROD) {
        PyErr_Format(PyExc_ValueError, "scan: unknown op %d", op);
        return NULL;
    }
    if (get_buffer(ox, &x, 3, 0) < 0) return NULL;
    if (get_buffer(oo, &o, 3, 1) < 0) goto release_x;
    int dbl = float_kind(&x);
    if (dbl < 0 || element_strides(&x, sx) < 0) goto release_o;
    if (float_kind(&o) != dbl || o.shape[0] != x.shape[0] || o.shape[1] != x.shape[1] ||
        o.shape[2] != x.shape[2]) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "scan: out must have the operand's shape and dtype");
        goto release_o;
    }
    Py_BEGIN_ALLOW_THREADS
    scan(dbl, op, x.buf, x.shape[0], x.shape[1], x.shape[2], sx[0], sx[1], sx[2], o.buf, reverse);
    Py_END_ALLOW_THREADS
    ok = 1;
release_o:
    PyBuffer_Release(&o);
release_x:
    PyBuffer_Release(&x);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(run_ranges_doc,
             "run_ranges(work, items, size, run, block, nthreads)\n\n"
             "Call the C function at address work, int work(void **p, int64_t lo, int64_t hi,\n"
             "int64_t block), on the runs [lo, hi) of `run` items of [0, size), taken by up to\n"
             "nthreads threads of the kernels' pool. p[i] is items[i]: an int as it is (an\n"
             "address or a count), else the data pointer of the object's buffer (an array of\n"
             "any strides), held for the call. Returns whether a call returned nonzero.");

#define RUN_ITEMS_ON_STACK 64

static PyObject *py_run_ranges(PyObject *self, PyObject *args) {
    unsigned long long work;
    PyObject *items;
    Py_ssize_t size, run, blk;
    int nthreads, status = -1;
    if (!PyArg_ParseTuple(args, "KO!nnni", &work, &PyTuple_Type, &items, &size, &run, &blk,
                          &nthreads))
        return NULL;
    if (!work || size < 0 || blk < 1) {
        PyErr_SetString(PyExc_ValueError, "run_ranges: null function, or bad sizes");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(items), held = 0;
    void *stack_p[RUN_ITEMS_ON_STACK];
    Py_buffer stack_v[RUN_ITEMS_ON_STACK];
    void **p = stack_p;
    Py_buffer *views = stack_v;
    if (n > RUN_ITEMS_ON_STACK) {
        p = PyMem_Malloc((size_t)n * sizeof *p);
        views = PyMem_Malloc((size_t)n * sizeof *views);
        if (!p || !views) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (PyLong_Check(item)) {
            p[i] = PyLong_AsVoidPtr(item);
            if (PyErr_Occurred()) goto done;
        } else {
            if (PyObject_GetBuffer(item, &views[held], PyBUF_STRIDES) < 0) goto done;
            p[i] = views[held++].buf;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    status = run_ranges((int (*)(void **, int64_t, int64_t, int64_t))(uintptr_t)work, p, size,
                        run, blk, nthreads) != 0;
    Py_END_ALLOW_THREADS
done:
    while (held > 0) PyBuffer_Release(&views[--held]);
    if (p != stack_p) PyMem_Free(p);
    if (views != stack_v) PyMem_Free(views);
    return status < 0 ? NULL : PyBool_FromLong(status);
}

PyDoc_STRVAR(fma_doc,
             "fma(a, b, c, out)\n\n"
             "out = a * b + c rounded once, for C-contiguous 1-d arrays of one float dtype and\n"
             "one length (out writable).");

static PyObject *py_fma(PyObject *self, PyObject *args) {
    PyObject *objs[4];
    Py_buffer v[4];
    int got = 0, dbl = -1, ok = 0;
    if (!PyArg_ParseTuple(args, "OOOO", &objs[0], &objs[1], &objs[2], &objs[3])) return NULL;
    for (; got < 4; got++) {
        int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (got == 3 ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[got], &v[got], flags) < 0) goto release;
        int kind = float_kind(&v[got]);
        if (kind < 0 || check_aligned(&v[got]) < 0) { got++; goto release; }
        if (v[got].ndim != 1 || (got && (kind != dbl || v[got].shape[0] != v[0].shape[0]))) {
            PyErr_SetString(PyExc_ValueError, "fma: operands must be 1-d, of one dtype and length");
            got++;
            goto release;
        }
        dbl = kind;
    }
    ptrdiff_t n = v[0].shape[0];
    Py_BEGIN_ALLOW_THREADS
    if (dbl) fma_f64(v[0].buf, v[1].buf, v[2].buf, v[3].buf, n);
    else fma_f32(v[0].buf, v[1].buf, v[2].buf, v[3].buf, n);
    Py_END_ALLOW_THREADS
    ok = 1;
release:
    while (got > 0) PyBuffer_Release(&v[--got]);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(isas_doc, "isas()\n\nThe names of the dispatch levels this CPU runs, best last.");

static PyObject *py_isas(PyObject *self, PyObject *unused) {
    int best = isa_detect();
    PyObject *out = PyTuple_New(best + 1);
    for (int i = 0; out && i <= best; i++)
        PyTuple_SET_ITEM(out, i, PyUnicode_FromString(ISA_NAMES[i]));
    return out;
}

PyDoc_STRVAR(set_isa_doc,
             "set_isa(name)\n\nUse dispatch level `name` (one of isas()); returns the previous one.");

static PyObject *py_set_isa(PyObject *self, PyObject *args) {
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    int previous = isa_current();
    for (int i = 0; i < ISA_COUNT; i++)
        if (strcmp(name, ISA_NAMES[i]) == 0 && isa_set(i) == 0)
            return PyUnicode_FromString(ISA_NAMES[previous]);
    PyErr_Format(PyExc_ValueError, "unknown or unsupported dispatch level %s", name);
    return NULL;
}

/* linalg.c */
PyObject *py_linalg(PyObject *self, PyObject *args);
PyDoc_STRVAR(linalg_doc,
             "linalg(op, nthreads, unit, k, *operands)\n\n"
             "Factorise a batch of matrices in place (invarax/kernels/linalg.py calls it).");

/* elementary.c */
PyObject *py_elementary(PyObject *self, PyObject *args);
PyDoc_STRVAR(elementary_doc,
             "elementary(fn, x, out, nthreads=1)\n\n"
             "out = fn(x) elementwise for C-contiguous float32 or float64 buffers of one dtype and\n"
             "size (invarax/kernels/elementary.py numbers the functions), in runs taken by up to\n"
             "nthreads threads of the kernels' pool.");

/* fft.c */
PyObject *py_fft_plan(PyObject *self, PyObject *args);
PyDoc_STRVAR(fft_plan_doc,
             "fft_plan(n, dbl, real)\n\n"
             "The plan (a capsule) of a complex (real = False) or real transform of length n.");
PyObject *py_fft(PyObject *self, PyObject *args);
PyDoc_STRVAR(fft_doc,
             "fft(kind, plan, x, y, lines, inner, lanes, nthreads)\n\n"
             "Transform the lines of x into y (invarax/kernels/fft.py calls it).");
/* elementary_more.c */
PyObject *py_elementary2(PyObject *self, PyObject *args);
PyDoc_STRVAR(elementary2_doc,
             "elementary2(fn, a, b, out, nthreads=1)\n\n"
             "out = fn(a, b) elementwise (fn 0: atan2, 1: pow) for C-contiguous float32 or float64\n"
             "buffers of one dtype and size, in runs taken by up to nthreads threads of the\n"
             "kernels' pool.");

static PyMethodDef methods[] = {
    {"gemm", py_gemm, METH_VARARGS, gemm_doc},
    {"conv_gemm", py_conv_gemm, METH_VARARGS, conv_gemm_doc},
    {"gemm_pack", py_gemm_pack, METH_VARARGS, gemm_pack_doc},
    {"gemm_packed", py_gemm_packed, METH_VARARGS, gemm_packed_doc},
    {"window", py_window, METH_VARARGS, window_doc},
    {"reduce", py_reduce, METH_VARARGS, reduce_doc},
    {"scan", py_scan, METH_VARARGS, scan_doc},
    {"run_ranges", py_run_ranges, METH_VARARGS, run_ranges_doc},
    {"fma", py_fma, METH_VARARGS, fma_doc},
    {"isas", py_isas, METH_NOARGS, isas_doc},
    {"set_isa", py_set_isa, METH_VARARGS, set_isa_doc},
    {"linalg", py_linalg, METH_VARARGS, linalg_doc},
    {"elementary", py_elementary, METH_VARARGS, elementary_doc},
    {"fft_plan", py_fft_plan, METH_VARARGS, fft_plan_doc},
    {"fft", py_fft, METH_VARARGS, fft_doc},
    {"elementary2", py_elementary2, METH_VARARGS, elementary2_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "invarax's canonical compiled kernels (docs/numerics.md gives their order).", -1, methods,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
