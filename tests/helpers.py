"""Helpers shared by the test modules."""

import numpy as np

import invarax


def assert_bitwise(a, b):
    """Exact equality of values, dtype and shape (NaNs equal when their bits are)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), f"bits differ:\n{a}\n{b}"


def assert_bitwise_any_nan(a, b):
    """``assert_bitwise``, but a NaN's sign and payload are free (outside the numerics
    contract): NaNs where ``b`` has them, and every other element's bits equal."""
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(b)
    assert np.array_equal(np.isnan(a), nan), f"NaNs differ:\n{a}\n{b}"
    assert_bitwise(a[~nan], b[~nan])


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


def jax_output_and_grads(jax, f, args, seed, argnums=0):
    """``(ct, out, grads)``: a cotangent ``ct`` of the shape of JAX's ``f(*args)``
    (``data(shape, seed=seed)``), then ``out = f(*args)`` and the gradients of
    ``sum(f(*args) * ct)`` in ``argnums``, from one ``jax.jit`` with ``args`` and ``ct`` as
    arguments (eagerly JAX compiles each operation of the forward and backward pass apart)."""
    ct = data(jax.eval_shape(f, *args).shape, seed=seed)

    def run(args, ct):
        return f(*args), jax.grad(lambda *a: (f(*a) * ct).sum(), argnums=argnums)(*args)

    return (ct, *jax.jit(run)(args, ct))


def jax_jit_call(jax, f, args, kwargs=None):
    """JAX's ``f(*args, **kwargs)`` under ``jax.jit``, the NumPy arrays among ``args`` its
    arguments (traced: nothing constant-folded), the rest fixed: one compiled program, where
    eagerly JAX compiles each operation apart."""
    kwargs = kwargs or {}
    where = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def call(*arrays):
        full = list(args)
        for i, a in zip(where, arrays, strict=True):
            full[i] = a
        return f(*full, **kwargs)

    return jax.jit(call)(*[args[i] for i in where])


def assert_same_at_every_isa(compute):
    """``compute()`` (a list of arrays) at every dispatch level of the kernels
    (``INVARAX_MAX_ISA``'s levels), each bitwise the scalar level's (N6)."""
    from invarax.kernels import _native

    level = _native.set_isa("scalar")  # returns the level in use
    _native.set_isa(level)
    results = {}
    try:
        for isa in _native.isas():
            _native.set_isa(isa)
            results[isa] = compute()
    finally:
        _native.set_isa(level)
    reference = results.pop("scalar")
    for got in results.values():
        for g, r in zip(got, reference, strict=True):
            assert_bitwise(g, r)
