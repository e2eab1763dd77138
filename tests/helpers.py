"""Helpers shared by the test modules."""

import numpy as np


def assert_bitwise(a, b):
    """Exact equality of values, dtype and shape (NaNs equal when their bits are)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), f"bits differ:\n{a}\n{b}"


def eager_and_jit(f, *args):
    """``f(*args)`` eagerly, after asserting that ``jit(f)`` gives its bits, dtype and weak type."""
    import invarax

    eager = f(*args)
    jitted = invarax.jit(f)(*args)
    assert_bitwise(jitted, eager)
    assert jitted.weak_type == eager.weak_type
    return eager
