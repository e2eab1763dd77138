"""Helpers shared by the test modules."""

import numpy as np

import invarax


def assert_bitwise(a, b):
    """Exact equality of values, dtype and shape (NaNs equal when their bits are)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), f"bits differ:\n{a}\n{b}"


def eager_and_jit(f, *args):
    """``f(*args)`` eagerly, after asserting that ``jit(f)`` gives its bits, dtype and weak type.

    A tuple result is compared element by element.
    """
    eager = f(*args)
    jitted = invarax.jit(f)(*args)
    pairs = zip(jitted, eager, strict=True) if isinstance(eager, tuple) else [(jitted, eager)]
    for j, e in pairs:
        assert_bitwise(j, e)
        assert j.weak_type == e.weak_type, (j.weak_type, e.weak_type)
    return eager


def data(shape, dtype=np.float32, seed=0):
    """Random values of ``dtype``: standard normal floats, integers in [-50, 50), fair bools."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
