"""``lax.conv_general_dilated`` and friends: the canonical order (N4 against the explicit
patches), batch and row invariance (N1/N2), threads (N5), jit (N3), accuracy against a
float64 reference, gradients, and differential tests against JAX."""

import doctest
import math

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, data, eager_and_jit, jax_output_and_grads

import invarax
import invarax.numpy as jnp
from invarax import lax, nn
from invarax.kernels import _native


def _dilate_pad(x, pads, lhs_dilation):
    """NumPy: ``x`` (N, C, *S) with interior zeros and (low, high) padding (negative crops)."""
    for axis, ((lo, hi), d) in enumerate(zip(pads, lhs_dilation, strict=True), start=2):
        size = x.shape[axis]
        shape = list(x.shape)
        shape[axis] = (size - 1) * d + 1 if size else 0
        dilated = np.zeros(shape, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, d)
        dilated[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(dilated, widths)
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


def _patches(x, window, strides, pads, lhs_dilation, rhs_dilation):
    """NumPy: the explicit patches ``(N, *out, C, *window)`` of the padded, dilated input."""
    xp = _dilate_pad(x, pads, lhs_dilation)
    spatial = xp.shape[2:]
    out = [max(0, (s - ((w - 1) * d + 1)) // st + 1) for s, w, d, st in
           zip(spatial, window, rhs_dilation, strides, strict=True)]
    p = np.zeros((xp.shape[0], *out, xp.shape[1], *window), x.dtype)
    for offsets in np.ndindex(*window):
        index = tuple(slice(o * d, o * d + (n - 1) * st + 1, st) for o, d, n, st in
                      zip(offsets, rhs_dilation, out, strides, strict=True))
        block = xp[(slice(None), slice(None), *index)]  # (N, C, *out)
        p[(slice(None),) + (slice(None),) * len(out) + (slice(None),) + offsets] = \
            np.moveaxis(block, 1, -1)
    return p


def _as_products(x, w, strides, pads, lhs_dilation, rhs_dilation, fg, bg):
    """The convolution as ``G`` explicit products ``(G, M, K) x (G, Og, K)``, and a function
    putting their ``(G, M, Og)`` result back in ``(N, O, *out)`` layout."""
    n_, c = x.shape[:2]
    o, window = w.shape[0], w.shape[2:]
    groups = fg * bg
    p = _patches(x, window, strides, pads, lhs_dilation, rhs_dilation)
    out = p.shape[1:-1 - len(window)]
    k = c // fg * math.prod(window)
    if fg > 1:
        p = p.reshape(n_, *out, fg, c // fg, *window)
        a = np.moveaxis(p, 1 + len(out), 0).reshape(groups, -1, k)
    else:
        a = p.reshape(bg, n_ // bg, *out, c, *window).reshape(groups, -1, k)
    b = w.reshape(groups, o // groups, k)

    def back(y):
        y = np.asarray(y).reshape(groups, n_ // bg, *out, o // groups)
        return np.moveaxis(y, (0, y.ndim - 1), (1, 2)).reshape(n_ // bg, o, *out)

    return a, b, back


def _pads(padding, x_shape, w_shape, strides, rhs_dilation, lhs_dilation=None):
    if not isinstance(padding, str):
        return padding
    window = [(k - 1) * d + 1 for k, d in zip(w_shape[2:], rhs_dilation, strict=True)]
    return lax.padtype_to_pads(x_shape[2:], window, strides, padding)


# (x shape, w shape, strides, padding, lhs_dilation, rhs_dilation, fg, bg)
FORMS = [
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), "VALID", (1, 1), (1, 1), 1, 1),
    ((2, 3, 7, 6), (5, 3, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1, 1),
    ((2, 3, 7, 6), (5, 3, 2, 2), (2, 1), "SAME_LOWER", (1, 1), (1, 1), 1, 1),
    ((2, 3, 8, 7), (4, 3, 3, 3), (2, 3), ((1, 2), (0, 1)), (1, 1), (1, 1), 1, 1),
    ((2, 3, 8, 7), (4, 3, 3, 3), (1, 1), ((-1, 2), (2, -2)), (1, 1), (1, 1), 1, 1),
    ((2, 2, 5, 6), (3, 2, 3, 3), (1, 1), ((2, 2), (2, 1)), (2, 3), (1, 1), 1, 1),
    ((2, 2, 9, 9), (3, 2, 3, 2), (1, 2), "VALID", (1, 1), (2, 3), 1, 1),
    ((2, 6, 7, 6), (9, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 3, 1),
    ((2, 4, 7, 6), (4, 1, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 4, 1),  # depthwise
    ((6, 3, 5, 5), (6, 3, 2, 2), (1, 1), "VALID", (1, 1), (1, 1), 1, 3),
    ((2, 32, 6, 6), (20, 32, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1, 1),  # K = 288
    ((3, 2, 17), (1, 2, 5), (2,), ((3, 1),), (1,), (2,), 1, 1),  # 1-d, one output feature
    ((2, 2, 4, 5, 3), (3, 2, 2, 3, 2), (1, 2, 1), "SAME", (1, 1, 1), (1, 1, 1), 1, 1),  # 3-d
    ((1, 1, 3, 3), (2, 1, 5, 5), (1, 1), "VALID", (1, 1), (1, 1), 1, 1),  # empty output
]


def _conv(x, w, form):
    _, _, strides, padding, lhs_dilation, rhs_dilation, fg, bg = form
    return lax.conv_general_dilated(x, w, strides, padding, lhs_dilation, rhs_dilation,
                                    feature_group_count=fg, batch_group_count=bg)


@pytest.mark.parametrize("form", FORMS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_is_the_contraction_of_its_explicit_patches(form, dtype, x64):
    """N4: the convolution is bitwise dot_general (and einsum) of the explicit patches."""
    x_shape, w_shape, strides, padding, lhs_dilation, rhs_dilation, fg, bg = form
    x, w = data(x_shape, dtype, seed=1), data(w_shape, dtype, seed=2)
    pads = _pads(padding, x_shape, w_shape, strides, rhs_dilation)
    a, b, back = _as_products(x, w, strides, pads, lhs_dilation, rhs_dilation, fg, bg)
    got = eager_and_jit(lambda x, w: _conv(x, w, form), x, w)
    products = lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))))
    assert_bitwise(got, back(products))
    assert_bitwise(got, back(jnp.einsum("gmk,gok->gmo", a, b)))
    # accuracy against float64, bounded as docs/numerics.md bounds the canonical order
    ref = back(np.einsum("gmk,gok->gmo", a.astype(np.float64), b.astype(np.float64)))
    scale = back(np.einsum("gmk,gok->gmo", np.abs(a).astype(np.float64),
                           np.abs(b).astype(np.float64)))
    k = a.shape[2]
    assert np.all(np.abs(np.asarray(got) - ref) <= (256 + k / 256) * np.finfo(dtype).eps * scale)


@pytest.mark.parametrize("form", [FORMS[1], FORMS[3], FORMS[7], FORMS[10], FORMS[11]], ids=str)
def test_every_dispatch_level_gives_the_same_bits(form):
    x, w = data(form[0], seed=3), data(form[1], seed=4)
    expected = np.asarray(_conv(x, w, form))
    for isa in _native.isas():
        previous = _native.set_isa(isa)
        try:
            assert_bitwise(_conv(x, w, form), expected)
        finally:
            _native.set_isa(previous)


# Forms with more output features than a narrow product's (so that they run in the blocked
# microkernels: 32 and 16 columns at AVX-512) and outputs cutting their 6- and 12-row tiles.
WIDE_FORMS = [
    ((2, 64, 12, 12), (64, 64, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1, 1),
    ((3, 8, 17, 13), (40, 8, 5, 5), (2, 1), ((2, 2), (0, 3)), (1, 1), (1, 1), 1, 1),
    ((2, 6, 15, 15), (36, 2, 3, 3), (1, 2), ((0, 0), (1, 1)), (1, 1), (2, 2), 3, 1),
    ((2, 16, 7, 7), (33, 16, 2, 2), (1, 1), ((1, 1), (1, 1)), (2, 2), (1, 1), 1, 1),
    ((2, 300, 13), (17, 300, 1), (1,), "VALID", (1,), (1,), 1, 1),  # K = 300
    ((1, 4, 6, 6, 6), (20, 4, 3, 3, 3), (1, 1, 1), "SAME", (1, 1, 1), (1, 1, 1), 1, 1),
]


@pytest.mark.parametrize("form", WIDE_FORMS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wide_convolutions_agree_across_levels_and_threads(form, dtype, monkeypatch):
    """N5/N6 for the implicit product's blocked microkernels: one and two threads, every
    dispatch level, the same bits."""
    x, w = data(form[0], dtype, seed=7), data(form[1], dtype, seed=8)
    invarax.config.update("jax_enable_x64", dtype == np.float64)
    expected = None
    for threads in ("1", "2"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        for isa in _native.isas():
            previous = _native.set_isa(isa)
            try:
                got = np.asarray(_conv(x, w, form))
            finally:
                _native.set_isa(previous)
            if expected is None:
                expected = got
            assert_bitwise(got, expected)


@pytest.mark.parametrize("form", [f for f in FORMS if f[7] == 1], ids=str)
def test_an_image_has_the_same_bits_alone_or_in_any_batch(form):
    """N1/N2: batch sizes 1..17 and 64, rows of one batch and vmap of one image."""
    x_shape, w_shape = form[0], form[1]
    xs = data((64, *x_shape[1:]), seed=5)
    w = data(w_shape, seed=6)
    full = np.asarray(_conv(xs, w, form))
    alone = [np.asarray(_conv(xs[i:i + 1], w, form)) for i in range(17)]
    for size in [*range(1, 18), 64]:
        part = np.asarray(_conv(xs[:size], w, form))
        assert_bitwise(part, full[:size])
        for i in range(min(size, 17)):
            assert_bitwise(part[i:i + 1], alone[i])
    one = lambda x: _conv(x[None], w, form)[0]  # noqa: E731
    for size in (1, 2, 7, 17, 64):
        assert_bitwise(invarax.vmap(one)(xs[:size]), full[:size])
        assert_bitwise(invarax.jit(invarax.vmap(one))(xs[:size]), full[:size])


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_vmap_of_the_kernel_and_of_both_operands(form):
    """N1 when the kernel is batched (its axis folds into the output features) or both are
    (folded into the feature groups)."""
    x, w = data((3, *form[0]), seed=7), data((3, *form[1]), seed=8)
    f = lambda x, w: _conv(x, w, form)  # noqa: E731
    for in_axes in ((None, 0), (0, 0), (1, 0)):
        xx = np.moveaxis(x, 0, 1) if in_axes[0] == 1 else x[0] if in_axes[0] is None else x
        batched = invarax.vmap(f, in_axes=in_axes)(xx, w)
        for i in range(3):
            assert_bitwise(batched[i], f(x[0] if in_axes[0] is None else x[i], w[i]))


# Forms large enough (millions of multiply-adds) for the kernel to split them between threads.
THREADED = [
    ((64, 16, 16, 16), (32, 16, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1, 1),
    ((64, 16, 17, 16), (32, 16, 3, 3), (2, 2), ((1, 2), (0, 1)), (1, 1), (1, 1), 1, 1),
    ((64, 16, 16, 16), (32, 16, 3, 3), (1, 1), "SAME", (1, 1), (2, 2), 1, 1),
    ((64, 16, 16, 16), (32, 8, 3, 3), (1, 1), "VALID", (1, 1), (1, 1), 2, 1),
    ((32, 16, 9, 9), (32, 16, 3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), (1, 1), 1, 1),
    ((64, 8, 16, 16), (32, 8, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), 1, 2),
]


@pytest.mark.parametrize("form", THREADED, ids=str)
def test_thread_count_changes_no_bit(form, monkeypatch):
    """N5: 1, 2 and 3 threads give the same bits, for the value and both gradients."""
    x, w = data(form[0], seed=9), data(form[1], seed=10)
    f = lambda x, w: _conv(x, w, form)  # noqa: E731
    grads = invarax.grad(lambda x, w: jnp.sum(jnp.sin(f(x, w))), argnums=(0, 1))
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("INVARAX_NUM_THREADS", threads)
        results.append([np.asarray(f(x, w)), *map(np.asarray, grads(x, w))])
    for other in results[1:]:
        for a, b in zip(other, results[0], strict=True):
            assert_bitwise(a, b)


DIMENSION_NUMBERS = [
    None,
    ("NCHW", "OIHW", "NCHW"),
    ("NHWC", "HWIO", "NHWC"),
    ("NHWC", "OIHW", "NCHW"),
    ("CNHW", "IOHW", "NHWC"),
    ("NWHC", "OHWI", "CNWH"),
    ("HNWC", "WHOI", "WCNH"),
]


@pytest.mark.parametrize("dn", DIMENSION_NUMBERS, ids=str)
@pytest.mark.parametrize("groups", [1, 2])
def test_matches_jax_for_dimension_numbers(dn, groups):
    jax = pytest.importorskip("jax")
    spec = dn or ("NCHW", "OIHW", "NCHW")
    sizes = {"N": 2, "C": 4, "H": 7, "W": 6}
    x = data(tuple(sizes[c] for c in spec[0]), seed=11)
    wsizes = {"O": 6, "I": 4 // groups, "H": 3, "W": 2}
    w = data(tuple(wsizes[c] for c in spec[1]), seed=12)
    args = ((2, 1), ((1, 0), (2, 1)))
    kw = dict(rhs_dilation=(1, 2), dimension_numbers=dn, feature_group_count=groups)
    got = lax.conv_general_dilated(x, w, *args, **kw)
    ct, want, want_grads = jax_output_and_grads(
        jax, lambda x, w: jax.lax.conv_general_dilated(x, w, *args, precision="highest", **kw),
        (x, w), seed=13, argnums=(0, 1))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    grads = invarax.grad(lambda x, w: jnp.sum(lax.conv_general_dilated(x, w, *args, **kw) * ct),
                         argnums=(0, 1))(x, w)
    for g, h in zip(grads, want_grads, strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_matches_jax_with_gradients(form):
    jax = pytest.importorskip("jax")
    x, w = data(form[0], seed=14), data(form[1], seed=15)
    _, _, strides, padding, lhs_dilation, rhs_dilation, fg, bg = form
    kw = dict(lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, feature_group_count=fg,
              batch_group_count=bg)
    ct, want, want_grads = jax_output_and_grads(
        jax, lambda x, w: jax.lax.conv_general_dilated(x, w, strides, padding,
                                                       precision="highest", **kw),
        (x, w), seed=16, argnums=(0, 1))
    np.testing.assert_allclose(_conv(x, w, form), want, rtol=1e-5, atol=1e-5)
    grads = invarax.grad(lambda x, w: jnp.sum(_conv(x, w, form) * ct), argnums=(0, 1))(x, w)
    for g, h in zip(grads, want_grads, strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form", [FORMS[i] for i in (1, 3, 4, 5, 6, 7, 9, 11, 12)], ids=str)
def test_check_grads(form, x64):
    x, w = data(form[0], np.float64, seed=17), data(form[1], np.float64, seed=18)
    check_grads(lambda x, w: _conv(x, w, form), (x, w), order=2)


def test_gradients_under_jit_and_vmap_are_bitwise():
    form = FORMS[3]
    xs, w = data((5, *form[0][1:]), seed=19), data(form[1], seed=20)
    loss = lambda w, x: jnp.sum(jnp.tanh(_conv(x[None], w, form)))  # noqa: E731
    per_example = invarax.vmap(invarax.grad(loss), in_axes=(None, 0))(w, xs)
    for i in range(5):
        assert_bitwise(per_example[i], invarax.grad(loss)(w, xs[i]))
    assert_bitwise(invarax.jit(invarax.grad(loss))(w, xs[0]), invarax.grad(loss)(w, xs[0]))


def test_dtypes_and_preferred_element_type():
    x, w = data((1, 2, 6), np.int32, seed=21), data((3, 2, 3), np.int32, seed=22)
    a, b, back = _as_products(x, w, (1,), [(1, 1)], (1,), (1,), 1, 1)
    got = lax.conv_general_dilated(x, w, (1,), "SAME")
    assert got.dtype == np.int32
    assert_bitwise(got, back(np.einsum("gmk,gok->gmo", a, b)))
    xf, wf = data((1, 2, 6), np.float16, seed=23), data((3, 2, 3), np.float16, seed=24)
    half = lax.conv_general_dilated(xf, wf, (1,), "SAME")
    assert half.dtype == np.float16
    single = lax.conv_general_dilated(xf.astype(np.float32), wf.astype(np.float32), (1,), "SAME")
    assert_bitwise(half, np.asarray(single).astype(np.float16))
    wide = lax.conv_general_dilated(xf, wf, (1,), "SAME", preferred_element_type=np.float32)
    assert_bitwise(wide, single)


def test_wrappers_match_jax():
    jax = pytest.importorskip("jax")
    x, w = data((2, 3, 8, 8), seed=25), data((4, 3, 3, 3), seed=26)
    np.testing.assert_allclose(lax.conv(x, w, (2, 2), "SAME"),
                               jax.lax.conv(x, w, (2, 2), "SAME", precision="highest"),
                               rtol=1e-5, atol=1e-5)
    args = ((1, 1), ((1, 0), (0, 2)), (2, 1), (1, 2))
    np.testing.assert_allclose(lax.conv_with_general_padding(x, w, *args),
                               jax.lax.conv_with_general_padding(x, w, *args,
                                                                 precision="highest"),
                               rtol=1e-5, atol=1e-5)
    xt, wt = data((2, 5, 5, 3), seed=27), data((3, 3, 3, 4), seed=28)
    for padding in ("SAME", "VALID", ((1, 2), (0, 1))):
        for strides in ((1, 1), (2, 2), (3, 1)):
            for flip in (False, True):
                wk = wt if not flip else data((3, 3, 4, 3), seed=29)
                got = lax.conv_transpose(xt, wk, strides, padding, transpose_kernel=flip)
                want = jax.lax.conv_transpose(xt, wk, strides, padding, transpose_kernel=flip,
                                              precision="highest")
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got = lax.conv_transpose(xt, wt, (2, 2), ((1, 1), (0, 1)), use_consistent_padding=True)
    want = jax.lax.conv_transpose(xt, wt, (2, 2), ((1, 1), (0, 1)), precision="highest",
                                  use_consistent_padding=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for dn in DIMENSION_NUMBERS[1:]:
        shape = tuple(range(2, 6))
        assert lax.conv_dimension_numbers(shape, shape, dn) == tuple(
            jax.lax.conv_dimension_numbers(shape, shape, dn))


def test_errors_name_both_shapes():
    x, w = jnp.ones((1, 3, 5, 5)), jnp.ones((4, 2, 3, 3))
    with pytest.raises(ValueError, match=r"3 feature channels.*\(1, 3, 5, 5\).*\(4, 2, 3, 3\)"):
        lax.conv(x, w, (1, 1), "SAME")
    with pytest.raises(ValueError, match="padding must be 'SAME', 'SAME_LOWER' or 'VALID'"):
        lax.conv(x, jnp.ones((4, 3, 3, 3)), (1, 1), "FULL")
    with pytest.raises(ValueError, match=r"\(low, high\) int pairs.*\(1, 3, 5, 5\).*\(4, 3, 3"):
        lax.conv_general_dilated(x, jnp.ones((4, 3, 3, 3)), (1, 1), [1, 1])
    with pytest.raises(TypeError, match=r"one entry per spatial axis.*\(1, 3, 5, 5\)"):
        lax.conv_general_dilated(x, jnp.ones((4, 3, 3, 3)), (1,), "VALID")
    with pytest.raises(ValueError, match="negative padding"):
        lax.conv_general_dilated(x, jnp.ones((4, 3, 3, 3)), (1, 1), ((-6, 0), (0, 0)))
    with pytest.raises(TypeError, match="same rank"):
        lax.conv(x, jnp.ones((4, 3, 3)), (1, 1), "SAME")
    with pytest.raises(TypeError, match="'N' and 'C' once each"):
        lax.conv_general_dilated(x, jnp.ones((4, 3, 3, 3)), (1, 1), "SAME",
                                 dimension_numbers=("NHWN", "OIHW", "NCHW"))
    with pytest.raises(TypeError, match="same dtype"):
        lax.conv(x, jnp.ones((4, 3, 3, 3), jnp.int32), (1, 1), "SAME")


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(7, 3), (3, 7), (5, 5), (6, 1)])
def test_convolve_and_correlate_match_jax(mode, lengths):
    jax = pytest.importorskip("jax")
    a, v = data(lengths[:1], seed=30), data(lengths[1:], seed=31)
    for name in ("convolve", "correlate"):
        got = getattr(jnp, name)(a, v, mode)
        want = getattr(jax.numpy, name)(a, v, mode, precision="highest")
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, getattr(np, name)(a, v, mode), rtol=1e-5, atol=1e-5)
    z = (data((6,), seed=32) + 1j * data((6,), seed=33)).astype(np.complex64)
    np.testing.assert_allclose(jnp.correlate(z, z[:3], mode), np.correlate(z, z[:3], mode),
                               rtol=1e-5, atol=1e-5)
    assert jnp.convolve(np.arange(3), np.arange(2)).dtype == np.float32
    with pytest.raises(ValueError, match=r"1-d arrays, got shapes \(2, 2\) and \(3,\)"):
        jnp.convolve(np.ones((2, 2)), np.ones(3))


CONV_TRANSPOSE = [
    (nn.ConvTranspose1d, (3, 4, 3), {"stride": 2, "padding": 1, "output_padding": 1}, (3, 9)),
    (nn.ConvTranspose2d, (4, 6, (3, 2)), {"padding": "SAME", "dilation": (1, 2),
                                          "groups": 2}, (4, 7, 6)),
    (nn.ConvTranspose2d, (2, 3, 3), {"stride": 2, "padding": "SAME_LOWER"}, (2, 5, 4)),
    (nn.ConvTranspose2d, (2, 2, 3), {"padding": ((1, 0), (2, 1)), "stride": (2, 1),
                                     "use_bias": False}, (2, 6, 6)),
    (nn.ConvTranspose2d, (2, 2, 3), {"stride": 2, "padding": "SAME",
                                     "padding_mode": "CIRCULAR"}, (2, 5, 5)),
    (nn.ConvTranspose3d, (2, 3, 2), {"padding": "VALID", "stride": 2}, (2, 3, 4, 3)),
]


@pytest.mark.parametrize("case", CONV_TRANSPOSE, ids=str)
def test_conv_transpose_layers_match_equinox(case):
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    cls, args, options, shape = case
    ours = cls(*args, **options, key=invarax.random.key(4))
    theirs = getattr(eqx.nn, cls.__name__)(*args, **options, key=jax.random.key(4))
    assert_bitwise(ours.weight, np.asarray(theirs.weight))
    if theirs.bias is not None:
        assert_bitwise(ours.bias, np.asarray(theirs.bias))
    x = data(shape, seed=34)
    want = theirs(x)
    got = ours(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    xs = data((3, *shape), seed=35)
    assert_bitwise(ours(xs), invarax.vmap(ours)(xs))
    assert_bitwise(ours(xs)[1], ours(xs[1]))


def test_conv_layers_call_the_primitive():
    conv = nn.Conv2d(3, 4, 3, padding=1, key=invarax.random.key(0))
    jaxpr = str(invarax.make_jaxpr(conv)(jnp.ones((3, 8, 8))))
    assert "conv_general_dilated" in jaxpr and "gather" not in jaxpr


def test_docstring_examples():
    from invarax.kernels import convolution as kernel
    from invarax.nn import _conv
    from invarax.numpy import _convolve
    from invarax.ops import convolution

    globs = {"invarax": invarax, "jnp": jnp, "nn": nn, "lax": lax, "np": np}
    for module in (_conv, _convolve, convolution, kernel):
        result = doctest.testmod(module, extraglobs=globs,
                                 optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__


@pytest.mark.parametrize("dn", [d for d in DIMENSION_NUMBERS[2:]
                                if d[1].index("H") < d[1].index("W")], ids=str)
def test_layout_changes_no_bit(dn):
    """N4: any dimension_numbers (and any strides of the operands) give the bits of NCHW."""
    x, w = data((3, 4, 7, 6), seed=36), data((5, 4, 3, 2), seed=37)
    args = ((2, 1), ((1, 0), (2, 1)))
    expected = np.asarray(lax.conv_general_dilated(x, w, *args, rhs_dilation=(1, 2)))
    lhs, rhs, out = dn
    xt = np.transpose(x, ["NCHW".index(ch) for ch in lhs])
    wt = np.transpose(w, ["OIHW".index(ch) for ch in rhs])
    got = lax.conv_general_dilated(xt, wt, *args, rhs_dilation=(1, 2), dimension_numbers=dn)
    assert_bitwise(np.transpose(got, [out.index(ch) for ch in "NCHW"]), expected)
    strided = np.asfortranarray(x)  # the same values in another memory order
    assert_bitwise(lax.conv_general_dilated(strided, w, *args, rhs_dilation=(1, 2)), expected)
