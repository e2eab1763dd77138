"""lax.linalg.tridiagonal_solve: accurate against a float64 dense solve, JAX's values within
float tolerance (pivoting included), and differentiable and batchable as JAX's."""

import numpy as np
import pytest

import invarax
from invarax.lax.linalg import tridiagonal_solve


def _system(rng, batch, m, n, dtype, dominant):
    dl, d, du = (rng.standard_normal((*batch, m)) for _ in range(3))
    if dominant:
        d = d + 4.0 * np.sign(d)
    dl[..., 0] = 0.0
    du[..., -1] = 0.0
    b = rng.standard_normal((*batch, m, n))
    if np.dtype(dtype).kind == "c":
        dl, d, du, b = (v + 1j * rng.standard_normal(v.shape) for v in (dl, d, du, b))
    return [v.astype(dtype) for v in (dl, d, du, b)]


def _dense(dl, d, du):
    m = d.shape[-1]
    a = np.zeros((*d.shape, m), np.result_type(d, np.complex128 if d.dtype.kind == "c"
                                               else np.float64))
    idx = np.arange(m)
    a[..., idx, idx] = d
    a[..., idx[1:], idx[:-1]] = dl[..., 1:]
    a[..., idx[:-1], idx[1:]] = du[..., :-1]
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("dominant", [True, False])
def test_accurate_against_a_float64_dense_solve(dtype, dominant, request):
    if np.dtype(dtype).itemsize * (2 if np.dtype(dtype).kind == "f" else 1) == 16:
        request.getfixturevalue("x64")  # float64 and complex128
    rng = np.random.default_rng(0)
    for batch, m, n in [((), 1, 1), ((2,), 1, 3), ((), 2, 3), ((), 17, 2), ((3,), 40, 1),
                        ((2, 2), 9, 4)]:
        dl, d, du, b = _system(rng, batch, m, n, dtype, dominant)
        x = np.asarray(tridiagonal_solve(dl, d, du, b))
        a = _dense(dl, d, du)
        residual = np.abs(a @ x.astype(a.dtype) - b).max()
        eps = np.finfo(dtype).eps
        scale = np.abs(a).max() * np.abs(x).max() * m
        assert residual <= 20 * eps * scale, (batch, m, n, residual / (eps * scale))


def test_values_gradients_and_vmap_as_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(1)
    dl, d, du, b = _system(rng, (4,), 12, 2, np.float32, dominant=False)
    ours = np.asarray(tridiagonal_solve(dl, d, du, b))
    theirs = np.asarray(jax.lax.linalg.tridiagonal_solve(dl, d, du, b))
    assert np.abs(ours - theirs).max() <= 1e-4 * max(1.0, np.abs(theirs).max())

    def loss(lib, solve):
        return lambda d, b: lib.numpy.sum(solve(dl[0], d, du[0], b) ** 2)

    for arg in (0, 1):
        g = invarax.grad(loss(invarax, tridiagonal_solve), argnums=arg)(d[0], b[0])
        jg = jax.grad(loss(jax, jax.lax.linalg.tridiagonal_solve), argnums=arg)(d[0], b[0])
        assert np.abs(np.asarray(g) - np.asarray(jg)).max() <= 1e-3 * np.abs(jg).max()
    batched = invarax.jit(invarax.vmap(tridiagonal_solve))(dl, d, du, b)
    assert np.array_equal(np.asarray(batched), ours)  # vmap and jit: the same bits


def test_bad_shapes_name_them():
    with pytest.raises(ValueError, match=r"dl \(3,\), d \(3,\), du \(4,\), b \(3, 1\)"):
        tridiagonal_solve(np.ones(3), np.ones(3), np.ones(4), np.ones((3, 1)))
