"""``lax.reduce_window`` (sum, max, min) and the pooling layers: the canonical order (N4
against the reduction of the explicit patches), N1/N2, jit, gradients, and differential
tests against JAX and Equinox."""

import itertools

import numpy as np
import pytest
from ad_check import check_grads
from helpers import assert_bitwise, data, eager_and_jit, jax_output_and_grads

import invarax
import invarax.numpy as jnp
from invarax import lax, nn

OPS = {"sum": (0.0, lax.add, lax.reduce_sum), "max": (-np.inf, lax.max, lax.reduce_max),
       "min": (np.inf, lax.min, lax.reduce_min)}

# (shape, window, strides, padding, base_dilation, window_dilation)
FORMS = [
    ((2, 6, 7), (1, 2, 2), (1, 2, 2), "VALID", None, None),
    ((2, 6, 7), (1, 3, 3), (1, 1, 2), ((0, 0), (1, 1), (2, 0)), None, None),
    ((2, 6, 7), (1, 2, 3), (1, 2, 1), ((0, 0), (1, 0), (0, 1)), (1, 2, 1), (1, 1, 2)),
    ((3, 10), (1, 3), (1, 2), "SAME", None, None),
    ((3, 10), (2, 4), (1, 3), ((1, -1), (-2, 1)), None, None),
    ((2, 40), (1, 20), (1, 1), "VALID", None, None),  # 20 terms: eight accumulators
    ((1, 300), (1, 150), (1, 50), "VALID", None, None),  # 150 terms: pairwise halves
    ((4, 5, 6, 3), (1, 2, 2, 2), (1, 1, 2, 1), "SAME_LOWER", None, None),
]


def _explicit(op, x, window, strides, padding, base_dilation, window_dilation):
    """NumPy: the patches ``(*out, K)`` of the padded operand, window positions in order."""
    n = x.ndim
    base_dilation = base_dilation or (1,) * n
    window_dilation = window_dilation or (1,) * n
    if isinstance(padding, str):
        dilated = [(w - 1) * d + 1 for w, d in zip(window, window_dilation, strict=True)]
        shape = [(s - 1) * d + 1 for s, d in zip(x.shape, base_dilation, strict=True)]
        padding = lax.padtype_to_pads(shape, dilated, strides, padding)
    fill = OPS[op][0]
    xp = np.full([lo + (s - 1) * d + 1 + hi for s, (lo, hi), d in
                  zip(x.shape, padding, base_dilation, strict=True)], fill, x.dtype)
    index = tuple(slice(max(lo, 0), None, d) for (lo, _), d in
                  zip(padding, base_dilation, strict=True))
    crop = tuple(slice(-(-max(-lo, 0) // d), None) for (lo, _), d in
                 zip(padding, base_dilation, strict=True))
    view = xp[index]
    part = x[crop][tuple(slice(0, s) for s in view.shape)]
    view[tuple(slice(0, s) for s in part.shape)] = part
    out = [(s - ((w - 1) * d + 1)) // st + 1 for s, w, d, st in
           zip(xp.shape, window, window_dilation, strides, strict=True)]
    views = []
    for offsets in itertools.product(*map(range, window)):
        views.append(xp[tuple(slice(o * d, o * d + (m - 1) * st + 1, st) for o, d, m, st in
                              zip(offsets, window_dilation, out, strides, strict=True))])
    return np.stack(views, axis=-1)


def _reduce_window(op, form):
    _, window, strides, padding, base_dilation, window_dilation = form
    init, computation, _ = OPS[op]
    return lambda x: lax.reduce_window(x, init, computation, window, strides, padding,
                                       base_dilation, window_dilation)


@pytest.mark.parametrize("form", FORMS, ids=str)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_window_reduction_is_the_reduction_of_its_patches(form, op, dtype, x64):
    x = data(form[0], dtype, seed=1)
    if op != "sum":  # ties of both signed zeros, and a NaN
        x.flat[::7] = 0.0
        x.flat[1::11] = -0.0
        x.flat[5] = np.nan
    got = eager_and_jit(_reduce_window(op, form), x)
    patches = _explicit(op, x, *form[1:])
    assert_bitwise(got, OPS[op][2](patches, (patches.ndim - 1,)))
    if op == "sum":
        ref = patches.astype(np.float64).sum(-1)
        bound = patches.shape[-1] * np.finfo(dtype).eps * np.abs(patches).sum(-1)
        assert np.all(np.abs(np.asarray(got) - ref) <= bound)


@pytest.mark.parametrize("form", FORMS, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_matches_jax(form, op):
    jax = pytest.importorskip("jax")
    x = data(form[0], seed=2)
    _, window, strides, padding, base_dilation, window_dilation = form
    init, _, _ = OPS[op]
    jop = {"sum": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[op]

    def theirs(x):
        return jax.lax.reduce_window(x, init, jop, window, strides, padding, base_dilation,
                                     window_dilation)

    negative = not isinstance(padding, str) and min(min(p) for p in padding) < 0
    # JAX has no max VJP with window dilation or negative padding
    with_grad = op == "sum" or (window_dilation is None and not negative)
    if with_grad:
        ct, want, want_grad = jax_output_and_grads(jax, theirs, (x,), seed=3)
    else:
        want = jax.jit(theirs)(x)  # one program, not one per operation
    got = _reduce_window(op, form)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if with_grad:
        grad = invarax.grad(lambda x: jnp.sum(_reduce_window(op, form)(x) * ct))(x)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("form", FORMS[:5], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_check_grads(form, op, x64):
    x = np.random.default_rng(4).permutation(np.prod(form[0])).reshape(form[0]) / 7.0
    check_grads(_reduce_window(op, form), (x,), order=2)


@pytest.mark.parametrize("form", FORMS, ids=str)
@pytest.mark.parametrize("op", OPS)
def test_batch_invariance(form, op):
    """N1/N2: each example alone, in a batch of any size, and its per-example gradient."""
    xs = data((17, *form[0]), seed=5)
    f = _reduce_window(op, form)
    batched = invarax.vmap(f)(xs)
    for size in (1, 2, 7, 17):
        assert_bitwise(invarax.vmap(f)(xs[:size]), batched[:size])
    loss = lambda x: jnp.sum(jnp.sin(f(x)))  # noqa: E731
    grads = invarax.jit(invarax.vmap(invarax.grad(loss)))(xs)
    for i in (0, 5, 16):
        assert_bitwise(batched[i], f(xs[i]))
        assert_bitwise(grads[i], invarax.grad(loss)(xs[i]))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_zero_dimensional_operand(op, dtype):
    """A 0-d operand has one window of one element: the reduction and its derivatives are
    the identity's (JAX's forward and JVP agree; JAX 0.10.2's XLA aborts on its max VJP)."""
    jax = pytest.importorskip("jax")
    x = np.asarray(2.5 if dtype == np.float32 else 3, dtype)
    info = np.iinfo(np.int32)
    init = np.asarray(OPS[op][0] if dtype == np.float32 else
                      {"sum": 0, "max": info.min, "min": info.max}[op], dtype)
    theirs = {"sum": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[op]

    def f(x):
        return lax.reduce_window(x, init, OPS[op][1], (), (), "VALID")

    want = np.asarray(jax.lax.reduce_window(x, init, theirs, (), (), "VALID"))
    assert_bitwise(eager_and_jit(f, x), want)
    assert_bitwise(want, x)
    if dtype == np.float32:
        _, tangent = invarax.jvp(f, (x,), (np.float32(3.0),))
        _, their_tangent = jax.jvp(lambda x: jax.lax.reduce_window(x, init, theirs, (), (),
                                                                   "VALID"),
                                   (x,), (np.float32(3.0),))
        assert_bitwise(tangent, np.asarray(their_tangent))
        assert_bitwise(eager_and_jit(invarax.grad(f), x), np.float32(1.0))


def test_integer_and_errors():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert_bitwise(lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "VALID"),
                   np.array([[10, 14, 18], [26, 30, 34]], np.int32))
    low = np.iinfo(np.int32).min
    assert_bitwise(lax.reduce_window(x, low, lax.max, (1, 2), (1, 2), ((0, 0), (1, 0))),
                   np.array([[0, 2], [4, 6], [8, 10]], np.int32))
    with pytest.raises(NotImplementedError, match="lax.add with init 0"):
        lax.reduce_window(x, 1, lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match=r"one entry per axis.*\(3, 4\)"):
        lax.reduce_window(x, 0, lax.add, (2,), (1,), "VALID")
    with pytest.raises(ValueError, match="padding must be"):
        lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "FULL")


POOLS = [
    ("MaxPool1d", (2,), {}, (3, 9)),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "use_ceil": True}, (3, 10)),
    ("MaxPool2d", (2, 2), {}, (3, 8, 8)),
    ("MaxPool2d", (3,), {"stride": (2, 1), "padding": ((1, 0), (1, 1))}, (2, 7, 6)),
    ("MaxPool3d", (2,), {"stride": 2}, (2, 4, 5, 6)),
    ("AvgPool1d", (3,), {"stride": 2}, (3, 11)),
    ("AvgPool2d", (2,), {"stride": 2, "padding": 1}, (3, 7, 8)),
    ("AvgPool3d", ((2, 1, 2),), {"use_ceil": True, "stride": (2, 1, 2)}, (2, 5, 4, 5)),
]


@pytest.mark.parametrize("case", POOLS, ids=str)
def test_pools_match_equinox(case):
    eqx = pytest.importorskip("equinox")
    name, args, kwargs, shape = case
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(eqx.nn, name)(*args, **kwargs)
    x = data(shape, seed=6)
    np.testing.assert_allclose(ours(x), eqx.filter_jit(theirs)(x), rtol=1e-6, atol=1e-6)
    xs = data((5, *shape), seed=7)
    native = ours(xs)
    assert_bitwise(native, invarax.vmap(ours)(xs))
    assert_bitwise(native[2], ours(xs[2]))


@pytest.mark.parametrize("name", ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
                                  "AdaptiveAvgPool3d", "AdaptiveMaxPool2d"])
def test_adaptive_pools_match_equinox(name):
    eqx = pytest.importorskip("equinox")
    rank = int(name[-2])
    shape = (3, 7, 10, 5)[:rank + 1]
    target = (3, 4, 2)[:rank]
    ours, theirs = getattr(nn, name)(target), getattr(eqx.nn, name)(target)
    x = data(shape, seed=8)
    np.testing.assert_allclose(ours(x), eqx.filter_jit(theirs)(x), rtol=1e-6, atol=1e-6)
    xs = data((4, *shape), seed=9)
    assert_bitwise(ours(xs), invarax.vmap(ours)(xs))


def test_maxpool_fwd_and_bwd_are_row_invariant():
    pool = nn.MaxPool2d(2, 2)
    xs = data((9, 4, 8, 8), seed=10)
    loss = lambda x: jnp.sum(pool(x) ** 2)  # noqa: E731
    full = invarax.grad(loss)(xs)
    for size in (1, 4):
        assert_bitwise(invarax.grad(loss)(xs[:size]), full[:size])
