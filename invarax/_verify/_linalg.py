"""The battery's linear algebra: each factorisation, solve and function built on them on a
300 x 300 matrix (several panels of the blocked factorisations), and a batch of small ones;
one workload per function and dtype; and the complex LU's functions and SVD, one
workload per dtype. ``eig``/``eigvals`` are left out: they are LAPACK's
``geev``, the one documented exception to N6."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .. import numpy as jnp
from ..scipy import linalg as scipy_linalg
from ..transforms import grad, vmap
from ._inputs import uniform

SIZE = 300


def _matrices(dtype) -> SimpleNamespace:
    """A general matrix ``a``, a symmetric positive definite one ``spd`` and its Cholesky
    factor ``chol``, and a right-hand side ``b`` of 5 columns."""
    a = jnp.asarray(uniform(300, (SIZE, SIZE), dtype))
    spd = a @ a.T / SIZE + jnp.eye(SIZE, dtype=dtype)
    return SimpleNamespace(a=a, spd=spd, chol=jnp.linalg.cholesky(spd),
                           b=jnp.asarray(uniform(301, (SIZE, 5), dtype)))


FUNCTIONS = {
    "cholesky": lambda m: m.chol,
    "solve": lambda m: jnp.linalg.solve(m.a, m.b),
    "inv": lambda m: jnp.linalg.inv(m.a),
    "det": lambda m: jnp.linalg.det(m.a[:64, :64]),  # finite in float32
    "slogdet": lambda m: jnp.linalg.slogdet(m.a),
    "qr": lambda m: jnp.linalg.qr(m.a),
    "eigh": lambda m: jnp.linalg.eigh(m.spd),
    "svd": lambda m: jnp.linalg.svd(m.a),
    "lu": lambda m: scipy_linalg.lu(m.a),
    "solve_triangular": lambda m: scipy_linalg.solve_triangular(m.chol, m.b, lower=True),
    "cho_solve": lambda m: scipy_linalg.cho_solve((m.chol, True), m.b),
    "lstsq": lambda m: jnp.linalg.lstsq(m.a[:, :200], m.b),
    "pinv": lambda m: jnp.linalg.pinv(m.a[:250]),
    "matrix_power": lambda m: jnp.linalg.matrix_power(m.a, 3),
    "expm": lambda m: scipy_linalg.expm(m.a / 30),
    "norm2": lambda m: jnp.linalg.norm(m.a, ord=2),
    "grad_solve": lambda m: grad(lambda a: jnp.sum(jnp.linalg.solve(a, m.b)))(m.a),
}


def _batched(dtype):
    """Small matrices as a batch, and the same under ``vmap`` (threads take whole ones)."""
    a = jnp.asarray(uniform(302, (6, 40, 40), dtype))
    spd = jnp.einsum("bij,bkj->bik", a, a) / 40 + jnp.eye(40, dtype=dtype)
    return [jnp.linalg.cholesky(spd), vmap(jnp.linalg.cholesky)(spd),
            jnp.linalg.eigh(spd), jnp.linalg.svd(a[:, :, :30]), jnp.linalg.solve(a, spd)]


def _complex(dtype):
    """Complex LU and what is built on it, and the complex SVD: a 120 x 120 matrix and a
    batch of small ones (not ``slogdet``: its ``abs`` of complex numbers is NumPy's, whose
    bits depend on NumPy's vector extensions)."""
    real = np.finfo(dtype).dtype
    a = jnp.asarray(uniform(303, (120, 120), real) + 1j * uniform(304, (120, 120), real), dtype)
    b = jnp.asarray(uniform(305, (120, 3), real) + 1j * uniform(306, (120, 3), real), dtype)
    small, rhs = a[:96].reshape(4, 24, 120)[:, :, :24], b[:96].reshape(4, 24, 3)
    return [scipy_linalg.lu_factor(a), jnp.linalg.solve(a, b), jnp.linalg.inv(a),
            jnp.linalg.det(small), vmap(jnp.linalg.solve)(small, rhs), jnp.linalg.svd(small),
            grad(lambda m: jnp.real(jnp.sum(jnp.linalg.solve(m, b))))(a)]


def workloads() -> list[tuple[str, bool, object]]:
    """``(name, needs float64, function)`` for each linear algebra workload."""
    out = []
    for dtype in (np.float32, np.float64):
        name = np.dtype(dtype).name
        for function, fn in FUNCTIONS.items():
            out.append((f"linalg/{function}/{name}", dtype == np.float64,
                        lambda fn=fn, dtype=dtype: fn(_matrices(dtype))))
        out.append((f"linalg/batched/{name}", dtype == np.float64,
                    lambda dtype=dtype: _batched(dtype)))
    for dtype in (np.complex64, np.complex128):
        out.append((f"linalg/complex/{np.dtype(dtype).name}", dtype == np.complex128,
                    lambda dtype=dtype: _complex(dtype)))
    return out
