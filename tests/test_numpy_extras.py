"""The functions of the jax.numpy pass (issue 19) against JAX, and their invariances:
jit is bitwise eager (N3), vmap's rows are bitwise the unbatched results (N1), and the
derivatives of the differentiable ones pass ``check_grads``."""

import numpy as np
import pytest
from helpers import jax_jit_call

import invarax
import invarax.numpy as jnp
from invarax.test_util import check_grads

R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(np.float32)
SQ = R.standard_normal((4, 4)).astype(np.float32)
V = R.standard_normal(5).astype(np.float32)
W = (R.random(5) + 0.5).astype(np.float32)
NANS = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan],
                 [0.5, 2.0, np.nan, 7.0]], np.float32)
INTS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.int32)
J = np.array([12, 7, 0, -8, 15], np.int32)
K = np.array([18, 5, 0, 12, -10], np.int32)
SPECIAL = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e-30, 3e38], np.float32)
SORTED = np.array([-1.0, 0.0, 0.5, 2.0, 3.0], np.float32)

# name, positional arguments, keyword arguments
CASES = [
    ("isclose", (X, X + 1e-6), {}), ("isclose", (SPECIAL, SPECIAL), {"equal_nan": True}),
    ("isclose", (SPECIAL, SPECIAL[::-1]), {}), ("allclose", (X, X * (1 + 1e-7)), {}),
    ("array_equal", (X, X), {}), ("array_equal", (X, X[:2]), {}),
    ("array_equal", (NANS, NANS), {"equal_nan": True}), ("array_equiv", (X[0], X), {}),
    ("isin", (INTS, np.array([1, 5], np.int32)), {}),
    ("isin", (INTS, np.array([1, 5], np.int32)), {"invert": True}),
    ("isneginf", (SPECIAL,), {}), ("isposinf", (SPECIAL,), {}), ("signbit", (SPECIAL[:6],), {}),
    ("nan_to_num", (SPECIAL,), {}), ("nan_to_num", (SPECIAL,), {"nan": 1.0, "posinf": 9.0}),
    ("copy", (X,), {}), ("isreal", (np.array([1 + 0j, 1j], np.complex64),), {}),
    ("deg2rad", (X,), {}), ("rad2deg", (X,), {}), ("fabs", (J,), {}),
    ("copysign", (X, -X[::-1]), {}), ("heaviside", (SPECIAL[:6], 0.5), {}),
    ("hypot", (X, X[::-1]), {}), ("hypot", (SPECIAL, SPECIAL[::-1]), {}),
    ("logaddexp2", (X, X[::-1]), {}), ("float_power", (np.abs(X), X), {}),
    ("fmax", (NANS, NANS[::-1]), {}), ("fmin", (NANS, NANS[::-1]), {}),
    ("sinc", (X,), {}), ("sinc", (np.array([0.0, 1.0, 0.5], np.float32),), {}),
    ("divmod", (J, np.array([5, 3, 7, 3, -4], np.int32)), {}), ("modf", (X * 3,), {}),
    ("ldexp", (X, np.array([3, -2, 0, 100], np.int32)), {}), ("gcd", (J, K), {}),
    ("lcm", (J, K), {}), ("left_shift", (J, 2), {}), ("right_shift", (J, 2), {}),
    ("spacing", (X,), {}), ("angle", (np.array([1j, -1.0, 1 + 1j], np.complex64),), {}),
    ("angle", (X,), {"deg": True}), ("frexp", (SPECIAL[:4],), {}), ("frexp", (X * 1000,), {}),
    ("bitwise_count", (J,), {}),
    ("tri", (3, 4), {"k": 1}), ("tril", (X,), {}), ("triu", (X,), {"k": -1}),
    ("tril", (np.stack([SQ, SQ * 2]),), {"k": 1}), ("diagonal", (X,), {"offset": 1}),
    ("diagonal", (np.stack([X, X]), -1, 1, 2), {}), ("diag", (V,), {"k": -1}), ("diag", (X,), {}),
    ("diagflat", (X[:2, :2],), {}), ("tril_indices", (3,), {}), ("triu_indices", (3, 1, 4), {}),
    ("diag_indices", (3,), {}), ("indices", ((2, 3),), {}), ("vander", (V,), {"N": 3}),
    ("vander", (V,), {"increasing": True}), ("logspace", (0, 2, 5), {}),
    ("geomspace", (1, 1000, 4), {}), ("empty_like", (X,), {}),
    ("nansum", (NANS,), {"axis": 1}), ("nanprod", (NANS,), {}), ("nanmax", (NANS,), {"axis": 1}),
    ("nanmin", (NANS,), {"axis": 0}), ("nanmean", (NANS,), {"axis": 1}),
    ("nanvar", (NANS,), {"axis": 1, "ddof": 1}), ("nanstd", (NANS,), {}),
    ("nanargmax", (NANS[0],), {}), ("nanargmin", (NANS[2],), {}), ("nancumsum", (NANS,), {}),
    ("nancumprod", (NANS,), {"axis": 1}), ("nanmedian", (NANS,), {"axis": 1}),
    ("nanquantile", (NANS[0], 0.3), {}), ("nanpercentile", (NANS[2], 80), {}),
    ("cumulative_sum", (X,), {"axis": 1, "include_initial": True}),
    ("cumulative_prod", (V,), {}),
    ("average", (X,), {"axis": 1}), ("average", (V,), {"weights": W}),
    ("average", (X,), {"axis": 1, "weights": X[0] ** 2, "returned": True}),
    ("ptp", (X,), {"axis": 0}), ("count_nonzero", (INTS - 1,), {}),
    ("quantile", (X, 0.3), {"axis": 1}), ("quantile", (V, np.array([0.1, 0.9], np.float32)), {}),
    ("quantile", (X, 0.5), {"axis": 0, "method": "nearest", "keepdims": True}),
    ("quantile", (V, 0.4), {"method": "lower"}), ("quantile", (V, 0.4), {"method": "higher"}),
    ("quantile", (V, 0.4), {"method": "midpoint"}), ("percentile", (X, 25), {}),
    ("median", (X,), {"axis": 1}), ("median", (V,), {}),
    ("cov", (X,), {}), ("cov", (X,), {"rowvar": False, "bias": True}),
    ("cov", (X[0], X[1]), {}), ("cov", (X,), {"aweights": W[:4], "ddof": 1}),
    ("corrcoef", (X,), {}), ("diff", (X,), {}), ("diff", (X,), {"n": 2, "axis": 0}),
    ("diff", (V,), {"prepend": 0.0, "append": V[:2]}), ("ediff1d", (X,), {"to_end": V[:2]}),
    ("gradient", (V,), {}), ("gradient", (X, 2.0), {}), ("trapezoid", (X,), {}),
    ("trapezoid", (V,), {"x": np.sort(W)}), ("unwrap", (np.cumsum(np.abs(V) * 3),), {}),
    ("searchsorted", (SORTED, V), {}), ("searchsorted", (SORTED, SORTED), {"side": "right"}),
    ("digitize", (V, SORTED), {}), ("digitize", (V, SORTED[::-1]), {"right": True}),
    ("interp", (V, SORTED, SORTED ** 2), {}), ("bincount", (INTS,), {}),
    ("bincount", (INTS,), {"weights": INTS * 0.5, "minlength": 12}),
    ("bincount", (np.array([-1, 1, 2, -3], np.int32),), {}),  # negatives count in bin 0
    ("histogram", (V,), {"bins": 3}), ("histogram", (X,), {"bins": SORTED, "density": True}),
    ("histogram_bin_edges", (X,), {"bins": 4, "range": (-1, 1)}),
    ("histogramdd", (R.standard_normal((30, 3)).astype(np.float32),), {"bins": 3}),
    ("histogramdd", (R.standard_normal((30, 2)).astype(np.float32),),
     {"bins": [2, 3], "weights": R.random(30).astype(np.float32), "density": True}),
    ("histogram2d", (X[0], X[1]), {"bins": 2, "range": [(-2, 2), None]}),
    ("append", (X, X[:1]), {"axis": 0}), ("append", (V, 1.0), {}),
    ("insert", (V, 2, 9.0), {}),
    ("insert", (V, np.array([0, 2, 2]), np.array([7.0, 8.0, 9.0])), {}),
    ("insert", (X, 1, V[:3]), {"axis": 1}), ("delete", (V, np.array([0, 3])), {}),
    ("delete", (X, 1), {"axis": 1}), ("fliplr", (X,), {}), ("flipud", (X,), {}),
    ("rot90", (X,), {}), ("rot90", (X, 3), {}), ("rot90", (X, 2, (1, 0)), {}),
    ("rollaxis", (np.zeros((2, 3, 4)), 2), {}), ("resize", (V, (3, 4)), {}),
    ("unstack", (X,), {"axis": 1}), ("permute_dims", (X, (1, 0)), {}),
    ("matrix_transpose", (np.stack([X, X]),), {}), ("concat", ([X, X],), {"axis": 1}),
    ("block", ([[SQ, SQ[:, :1]], [SQ[:1], SQ[:1, :1]]],), {}), ("astype", (X, np.int32), {}),
    ("select", ([X > 0, X < -0.5], [X, X * 2]), {"default": -1.0}),
    ("choose", (np.array([0, 1, 0, 1]), [X[0], X[1]]), {}),
    ("compress", (np.array([True, False, True]), X), {"axis": 0}),
    ("extract", (X > 0, X), {}), ("kron", (X[:2, :2], SQ[:2]), {}),
    ("cross", (X[:, :3], X[::-1, 1:]), {}), ("cross", (X[:, :2], X[::-1, 2:]), {}),
    ("vecdot", (X, X[::-1]), {}), ("matvec", (SQ, X[0]), {}), ("vecmat", (X[0], SQ), {}),
    ("unravel_index", (np.array([0, 5, 11]), (3, 4)), {}),
    ("ravel_multi_index", ((np.array([0, 2]), np.array([1, 3])), (3, 4)), {}),
    ("nonzero", (X > 0,), {}), ("argwhere", (X > 0,), {}), ("flatnonzero", (X > 0,), {}),
    ("argwhere", (np.array(1.0),), {}), ("argwhere", (np.array(0),), {}),
    ("nonzero", (X > 0,), {"size": 9, "fill_value": -1}),
    ("unique", (INTS,), {}), ("unique", (INTS,), {"return_index": True, "return_inverse": True,
                                            "return_counts": True}),
    ("unique", (INTS,), {"size": 9, "fill_value": 0}), ("union1d", (INTS, J), {}),
    ("intersect1d", (INTS, np.array([1, 9, 7], np.int32)), {}), ("setdiff1d", (INTS, J), {}),
    ("setxor1d", (INTS, np.array([1, 9, 7], np.int32)), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0], np.int32),), {}),
    ("lexsort", ((INTS, INTS % 3),), {}), ("sort_complex", (V,), {}),
    ("polyval", (V, X), {}), ("polyadd", (V, W[:3]), {}), ("polysub", (V[:2], W), {}),
    ("polymul", (V, W[:3]), {}), ("polydiv", (V, W[:3]), {}), ("polyder", (V,), {"m": 2}),
    ("polyint", (V,), {"m": 2, "k": 1.0}), ("poly", (V[:3],), {}),
    ("i0", (X * 5,), {}), ("kaiser", (7, 3.5), {}), ("bartlett", (6,), {}),
    ("blackman", (6,), {}), ("hamming", (5,), {}), ("hanning", (5,), {}),
    ("packbits", (np.array([[1, 0, 1], [0, 1, 1]], np.uint8),), {"axis": 1}),
    ("packbits", (INTS > 3,), {"bitorder": "little"}),
    ("unpackbits", (np.array([7, 200], np.uint8),), {"count": 12}),
    ("put_along_axis", (X, np.array([[1], [0], [3]]), 9.0, 1), {"inplace": False}),
    ("fill_diagonal", (X, 5.0), {"inplace": False}),
    ("place", (V, V > 0, np.array([1.0, 2.0], np.float32)), {"inplace": False}),
    ("put", (X, np.array([0, 5]), np.array([1.0, 2.0], np.float32)), {"inplace": False}),
    ("promote_types", (np.int8, np.float16), {}), ("isdtype", (np.float32, "real floating"), {}),
    ("meshgrid", (V[:2], V[:3], V[:4]), {}), ("meshgrid", (V[:2], V[:3]), {"indexing": "ij"}),
    ("ix_", (np.array([0, 1]), np.array([2, 0, 1])), {}), ("fromfunction", (
        lambda i, j: i * 10 + j, (2, 3)), {"dtype": np.int32}),
]


def _ids():
    seen = {}
    out = []
    for name, _, _ in CASES:
        seen[name] = seen.get(name, -1) + 1
        out.append(f"{name}-{seen[name]}")
    return out


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


# JAX's functions that need concrete values (an output shape or an index that depends on
# them) or that return no array: called eagerly; the others under jax.jit (jax_jit_call).
JAX_EAGER = {"argwhere", "bincount", "choose", "compress", "delete", "extract", "flatnonzero",
             "intersect1d", "isdtype", "nonzero", "promote_types", "ravel_multi_index",
             "setdiff1d", "setxor1d", "trim_zeros", "union1d", "unique"}


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=_ids())
def test_matches_jax(name, args, kwargs):
    jax = pytest.importorskip("jax")
    ours = getattr(jnp, name)(*args, **kwargs)
    f = getattr(jax.numpy, name)
    theirs = f(*args, **kwargs) if name in JAX_EAGER else jax_jit_call(jax, f, args, kwargs)
    ours, theirs = _leaves(ours), _leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(b, np.dtype) or isinstance(b, (bool, np.bool_)) and not hasattr(b, "shape"):
            assert a == b
            continue
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


def test_float64_accuracy(x64):
    """A few against NumPy's float64, which JAX's tests use as the reference too."""
    x = R.standard_normal((4, 6))
    for name, args in [("hypot", (x, x[::-1])), ("logaddexp2", (x, x[::-1])),
                       ("sinc", (x,)), ("cov", (x,)), ("corrcoef", (x,)),
                       ("quantile", (x, 0.37)), ("nanvar", (x,)), ("trapezoid", (x,)),
                       ("gradient", (x[0],)), ("interp", (x[0], np.sort(x[1]), x[2])),
                       ("i0", (x * 6,))]:
        ours = np.asarray(getattr(jnp, name)(*args))
        np.testing.assert_allclose(ours, getattr(np, name)(*args), rtol=1e-13, atol=1e-14)


# Functions of one float32 array of shape (5,) or (4, 5), batched over a leading axis.
ROWWISE = {
    "isclose": lambda x: jnp.isclose(x, x * 1.0000001), "nan_to_num": jnp.nan_to_num,
    "signbit": jnp.signbit, "copysign": lambda x: jnp.copysign(1.0, x),
    "hypot": lambda x: jnp.hypot(x, x[::-1]), "logaddexp2": lambda x: jnp.logaddexp2(x, 1.0),
    "sinc": jnp.sinc, "i0": lambda x: jnp.i0(x * 5), "modf": lambda x: jnp.modf(x)[0],
    "frexp": lambda x: jnp.frexp(x)[0],
    "spacing": jnp.spacing, "tril": lambda x: jnp.tril(jnp.outer(x, x)),
    "diag": jnp.diag, "vander": jnp.vander, "nanmean": jnp.nanmean, "nanvar": jnp.nanvar,
    "nanmax": jnp.nanmax, "average": lambda x: jnp.average(x, weights=x ** 2),
    "ptp": jnp.ptp, "quantile": lambda x: jnp.quantile(x, 0.3), "median": jnp.median,
    "cov": lambda x: jnp.cov(jnp.stack([x, x ** 2])), "diff": jnp.diff,
    "gradient": jnp.gradient, "trapezoid": jnp.trapezoid, "unwrap": jnp.unwrap,
    "searchsorted": lambda x: jnp.searchsorted(jnp.sort(x), 0.1),
    "interp": lambda x: jnp.interp(x, jnp.array([-1.0, 0.0, 2.0]), jnp.array([1.0, 0.0, 4.0])),
    "histogram": lambda x: jnp.histogram(x, bins=jnp.array([-1.0, 0.0, 1.0]))[0],
    "cumulative_sum": jnp.cumulative_sum, "kron": lambda x: jnp.kron(x, x[:2]),
    "cross": lambda x: jnp.cross(x[:3], x[2:]), "polyval": lambda x: jnp.polyval(x, 0.7),
    "polymul": lambda x: jnp.polymul(x, x[:3]), "insert": lambda x: jnp.insert(x, 2, 1.5),
    "rot90": lambda x: jnp.rot90(jnp.outer(x, x[:2])), "select": lambda x: jnp.select(
        [x > 0], [x * 2], -x), "nonzero": lambda x: jnp.nonzero(x > 0, size=5)[0],
    "unique": lambda x: jnp.unique(jnp.round(x), size=5, fill_value=0.0),
    "vectorize": jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()"),
}


@pytest.mark.parametrize("name", sorted(ROWWISE))
def test_jit_is_eager_and_vmap_rows_are_unbatched_bitwise(name):
    f = ROWWISE[name]
    xs = jnp.asarray(R.standard_normal((7, 5)).astype(np.float32))
    for n in (1, 3, 7):
        batched = invarax.vmap(f)(xs[:n]) if name != "vectorize" else invarax.vmap(
            lambda x: f(x, x))(xs[:n])
        for i in range(n):
            row = f(xs[i]) if name != "vectorize" else f(xs[i], xs[i])
            assert np.array_equal(np.asarray(batched[i]), np.asarray(row), equal_nan=True)
    g = f if name != "vectorize" else (lambda x: f(x, x))
    assert np.array_equal(np.asarray(invarax.jit(g)(xs[2])), np.asarray(g(xs[2])), equal_nan=True)


DIFFERENTIABLE = {
    "hypot": lambda x: jnp.hypot(x, x[::-1] + 2.0), "logaddexp2": lambda x: jnp.logaddexp2(x, -x),
    "sinc": lambda x: jnp.sinc(x + 0.1), "copysign": lambda x: jnp.copysign(x, 1.0),
    "deg2rad": jnp.deg2rad, "nanmean": jnp.nanmean, "nanvar": jnp.nanvar,
    "average": lambda x: jnp.average(x, weights=jnp.abs(x) + 1.0),
    "quantile": lambda x: jnp.quantile(x, 0.3), "median": jnp.median,
    "cov": lambda x: jnp.cov(jnp.stack([x, jnp.sin(x)])), "corrcoef": lambda x: jnp.corrcoef(
        jnp.stack([x, jnp.sin(x)])), "trapezoid": jnp.trapezoid, "gradient": jnp.gradient,
    "interp": lambda x: jnp.interp(jnp.array([0.3, 1.7]), jnp.array([0.0, 1.0, 2.0]), x[:3]),
    "polyval": lambda x: jnp.polyval(x, 0.7), "kron": lambda x: jnp.kron(x[:2], x),
    "cross": lambda x: jnp.cross(x[:3], x[2:]), "tril": lambda x: jnp.tril(jnp.outer(x, x)),
    "diag": jnp.diag, "diagonal": lambda x: jnp.diagonal(jnp.outer(x, x), 1),
    "unwrap": jnp.unwrap, "insert": lambda x: jnp.insert(x, 2, x[0]),
    "i0": lambda x: jnp.i0(x * 4.0),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives(name):
    x = np.array([0.3, -1.2, 0.8, 2.1, -0.4])
    check_grads(DIFFERENTIABLE[name], (x,), order=1)


def test_data_dependent_sizes_need_size_under_jit():
    for f in (jnp.nonzero, jnp.unique, jnp.flatnonzero, jnp.argwhere):
        with pytest.raises(invarax.ConcretizationTypeError, match="size="):
            invarax.jit(f)(jnp.array([0, 1, 2]))
    out = invarax.jit(lambda x: jnp.unique(x, size=4, fill_value=-1))(jnp.array([3, 1, 3]))
    assert np.array_equal(out, [1, 3, -1, -1])


def test_clear_errors():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        jnp.tril(jnp.ones(3))
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.fill_diagonal(jnp.ones((2, 2)), 1.0)
    with pytest.raises(ValueError, match="one choice per condition"):
        jnp.select([jnp.ones(2) > 0], [])
    with pytest.raises(TypeError, match="integer"):
        jnp.gcd(jnp.ones(2), 2)
    with pytest.raises(ValueError, match="weights of shape"):
        jnp.average(jnp.ones((2, 3)), weights=jnp.ones(2))


def test_array_methods_match_jax():
    jax_numpy = pytest.importorskip("jax.numpy")
    ours, theirs = jnp.asarray(SQ), jax_numpy.asarray(SQ)
    for name, args in [("diagonal", (1,)), ("nonzero", ()), ("ptp", (0,)), ("copy", ()),
                       ("conjugate", ()), ("choose", ([SQ[0], SQ[1]],))]:
        a = getattr(ours if name != "choose" else jnp.asarray(INTS[:4] % 2), name)(*args)
        b = getattr(theirs if name != "choose" else jax_numpy.asarray(INTS[:4] % 2), name)(*args)
        for x, y in zip(_leaves(a), _leaves(b), strict=True):
            np.testing.assert_array_equal(x, y)
    sorted_v = jnp.asarray(SORTED)
    np.testing.assert_array_equal(sorted_v.searchsorted(V), jax_numpy.asarray(SORTED)
                                  .searchsorted(V))
    mask = np.array([True, False, True, True])
    np.testing.assert_array_equal(ours.compress(mask, axis=1), theirs.compress(mask, axis=1))
    assert (ours.nbytes, ours.itemsize) == (theirs.nbytes, theirs.itemsize)


def test_ufunc_and_frompyfunc_match_jax():
    jax_numpy = pytest.importorskip("jax.numpy")
    x = np.array([3.0, 4.0, 2.0, 0.5], np.float32)
    m = x.reshape(2, 2)
    for identity in (None, 0.0):
        ours = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=identity)
        theirs = jax_numpy.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=identity)
        pairs = [
            (ours(x, 2.0), theirs(x, 2.0)), (ours.reduce(x), theirs.reduce(x)),
            (ours.reduce(m, axis=1), theirs.reduce(m, axis=1)),
            (ours.reduce(m, axis=0, keepdims=True), theirs.reduce(m, axis=0, keepdims=True)),
            (ours.reduce(x, initial=2.0), theirs.reduce(x, initial=2.0)),
            (ours.accumulate(m, axis=1), theirs.accumulate(m, axis=1)),
            (ours.outer(x[:2], m), theirs.outer(x[:2], m)),
            (ours.at(x, np.array([0, 0, 2]), 3.0, inplace=False),
             theirs.at(x, np.array([0, 0, 2]), 3.0, inplace=False)),
            (ours.reduceat(x, np.array([0, 2])), theirs.reduceat(x, np.array([0, 2]))),
        ]
        for a, b in pairs:
            np.testing.assert_allclose(a, b, rtol=1e-6)
    assert repr(jnp.frompyfunc(np.add, 2, 1)) == "<jnp.ufunc 'add'>"
    neg = jnp.frompyfunc(lambda a: -a, 1, 1)
    np.testing.assert_array_equal(neg.at(x, np.array([1]), inplace=False), [3.0, -4.0, 2.0, 0.5])
    with pytest.raises(ValueError, match="inplace=False"):
        neg.at(x, np.array([1]))
    with pytest.raises(ValueError, match="2 arguments"):
        neg.reduce(x)
    f = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1)
    assert np.array_equal(invarax.jit(f.reduce)(jnp.asarray(x)), f.reduce(x))  # N3


def test_from_dlpack():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = jnp.from_dlpack(x)
    assert isinstance(out, invarax.Array) and np.array_equal(out, x)
    torch = pytest.importorskip("torch")
    assert np.array_equal(jnp.from_dlpack(torch.arange(4)), np.arange(4))
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_methods_agree(side):
    a = np.sort(np.round(R.standard_normal(300) * 4)).astype(np.float32)  # with repeats
    v = np.round(R.standard_normal((7, 11)) * 5).astype(np.float32)
    want = np.searchsorted(a, v, side=side)
    for method in ("scan", "sort", "compare_all", "scan_unrolled"):
        got = jnp.searchsorted(a, v, side=side, method=method)
        assert np.array_equal(got, want), method
    big = np.sort(R.standard_normal(4096)).astype(np.float32)  # above the compare-all size
    q = R.standard_normal(1000).astype(np.float32)
    assert np.array_equal(jnp.searchsorted(big, q, side=side), np.searchsorted(big, q, side))


BUILTIN_UFUNC_CASES = [
    ("add", "reduce", (SQ,), {"axis": 1}), ("add", "reduce", (SQ,), {"keepdims": True}),
    ("add", "accumulate", (SQ,), {"axis": 1}), ("multiply", "reduce", (V,), {}),
    ("multiply", "outer", (V[:2], V), {}), ("maximum", "accumulate", (V,), {}),
    ("minimum", "reduce", (SQ,), {"axis": None}), ("subtract", "reduce", (V,), {}),
    ("logical_and", "reduce", (SQ > 0,), {"axis": 0}), ("logical_or", "reduce", (SQ > 1,), {}),
    ("logical_xor", "reduce", (SQ > 0,), {}), ("bitwise_or", "reduce", (J,), {}),
    ("bitwise_and", "accumulate", (J,), {}), ("logaddexp", "accumulate", (V,), {}),
    ("logaddexp", "reduce", (V,), {}), ("logaddexp2", "reduce", (V,), {}),
    ("add", "at", (V, np.array([0, 0, 3]), 1.0), {"inplace": False}),
    ("maximum", "at", (V, np.array([1, 1]), np.array([9.0, 5.0], np.float32)),
     {"inplace": False}),
    ("negative", "at", (V, np.array([2])), {"inplace": False}),
    ("add", "reduceat", (V, np.array([0, 2])), {}),
]


@pytest.mark.parametrize("name, method, args, kwargs", BUILTIN_UFUNC_CASES,
                         ids=[f"{n}.{m}-{i}" for i, (n, m, _, _) in
                              enumerate(BUILTIN_UFUNC_CASES)])
def test_builtin_ufunc_methods_match_jax(name, method, args, kwargs):
    jax_numpy = pytest.importorskip("jax.numpy")
    ours = getattr(getattr(jnp, name), method)(*args, **kwargs)
    theirs = getattr(getattr(jax_numpy, name), method)(*args, **kwargs)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_allclose(ours, theirs, rtol=2e-6)
    assert getattr(jnp, name).identity == getattr(jax_numpy, name).identity


def test_einsum_path_is_the_path_einsum_takes():
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    path, text = jnp.einsum_path("ij,jk,kl->il", *ops)
    assert path == ["einsum_path", (0, 1), (0, 1)] and "left to right" in text
    out = jnp.einsum("ij,jk,kl->il", *ops, optimize=path)  # accepted, as JAX's
    assert np.array_equal(out, jnp.einsum("ij,jk,kl->il", *ops))
