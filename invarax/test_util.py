"""``invarax.test_util``: ``check_grads``, numerical checks of forward and reverse mode,
as ``jax.test_util``'s (``import invarax.test_util``).

For a function ``f`` of float64 pytrees at a point ``args``:

- **fwd**: ``jvp(f, args, t)`` against central finite differences
  ``(f(args + h t) - f(args - h t)) / 2h`` along a random direction ``t``;
- **rev**: ``vjp`` against ``jvp`` by the inner-product identity
  ``<ct, J t> == <J^T ct, t>`` for random ``t`` and ``ct``;
- **rev_fd**: the same identity with ``J t`` from central finite differences, for
  functions without forward mode (``custom_vjp``), as JAX's ``check_vjp`` does;
- both: the primal outputs of ``jvp`` and ``vjp`` are bitwise ``f(*args)`` (the
  numerics contract: a transformation never changes a value);
- ``order=2`` (or more): the same checks of the JVP function
  ``(primals, tangents) -> jvp(f, primals, tangents)`` and of the VJP function
  ``primals -> vjp(f, *primals)[1](f(*primals))``, as JAX does.

A failed check raises ``AssertionError`` naming the check and giving both numbers.

Default tolerances (explicit, float64):

- ``eps = 1e-6``: the finite-difference step is ``h = eps * max(1, max |args|)``;
- finite differences: ``|fd - jvp| <= atol + rtol * |jvp|`` elementwise, with
  ``rtol = 1e-6`` and ``atol = 1e-6 * max(1, max |f(args)|)`` (the rounding error of
  a difference quotient scales with the output, not with its derivative);
- rev_fd: ``|<ct, fd> - <J^T ct, t>| <= atol * sum |ct| + rtol * sum |ct| |fd|``;
- identity: ``|<ct, J t> - <J^T ct, t>| <= 1e-10 * s`` with the scale
  ``s = sum |ct| |J t| + sum |J^T ct| |t| + ||ct|| ||t||`` (the last term stands in
  for a Jacobian of norm 1 when the products cancel to about zero).
"""

from __future__ import annotations

import numpy as np

import invarax
import invarax.numpy as jnp
from invarax.tree_util import tree_flatten, tree_map, tree_unflatten

EPS = 1e-6
FD_RTOL = 1e-6
FD_ATOL = 1e-6
IDENTITY_RTOL = 1e-10


def check_grads(
    f,
    args,
    order=1,
    modes=("fwd", "rev"),
    atol=None,
    rtol=None,
    eps=None,
    *,
    identity_rtol=None,
    seed=0,
):
    """Check ``jvp``/``vjp`` of ``f`` at ``args`` numerically (raises ``AssertionError``).

    Arguments:
        f: a function of the positional arguments ``args`` (pytrees of float64 arrays)
            returning a pytree of arrays.
        args: a tuple of the arguments.
        order: 1 checks the first derivatives; 2 also checks the derivatives of the
            JVP and VJP functions, and so on.
        modes: ``"fwd"`` (finite differences), ``"rev"`` (inner-product identity),
            ``"rev_fd"`` (the identity against finite differences).
        atol, rtol, eps: the tolerances and the relative finite-difference step
            (defaults in the module docstring).
        identity_rtol: the relative tolerance of the inner-product identity.
        seed: the seed of the random tangents and cotangents.

    With ``jax_enable_x64`` off, the check runs with it switched on for its duration,
    floating-point arguments converted to float64 (finite differences in float32 check
    little); otherwise the arguments must be float64.

    Example:
        >>> check_grads(jnp.sin, (np.array([0.5, 1.0]),), order=2)
    """
    assert set(modes) <= {"fwd", "rev", "rev_fd"} and modes, modes
    tol = _Tolerances(
        EPS if eps is None else eps,
        FD_RTOL if rtol is None else rtol,
        FD_ATOL if atol is None else atol,
        IDENTITY_RTOL if identity_rtol is None else identity_rtol,
    )
    if not invarax.config.jax_enable_x64:  # finite differences need float64
        invarax.config.update("jax_enable_x64", True)
        try:
            return check_grads(f, tree_map(_to_float64, tuple(args)), order, modes, atol,
                               rtol, eps, identity_rtol=identity_rtol, seed=seed)
        finally:
            invarax.config.update("jax_enable_x64", False)
    args = tuple(tree_map(_as_float64, tuple(args)))
    _check(f, args, order, tuple(modes), tol, np.random.default_rng(seed), _name(f))


def _to_float64(x):
    x = np.asarray(x)
    return x.astype(np.float64) if x.dtype.kind == "f" else x


class _Tolerances:
    def __init__(self, eps, rtol, atol, identity_rtol):
        self.eps, self.rtol, self.atol, self.identity_rtol = eps, rtol, atol, identity_rtol


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def _as_float64(x):
    x = jnp.asarray(x)
    assert x.dtype == np.float64, f"check_grads needs float64 inputs, got {x.dtype}"
    return x


def _check(f, args, order, modes, tol, rng, what):
    if "fwd" in modes:
        check_jvp(f, args, tol, rng, what)
        if order > 1:
            tangents = _random_like(rng, args)

            def f_jvp(primals, tangents):
                return invarax.jvp(f, primals, tangents)

            _check(f_jvp, (args, tangents), order - 1, modes, tol, rng, f"JVP of {what}")
    if "rev" in modes:
        check_vjp(f, args, tol, rng, what)
    if "rev_fd" in modes:
        check_vjp_numerically(f, args, tol, rng, what)
    if {"rev", "rev_fd"} & set(modes):
        if order > 1:

            def f_vjp(*primals):
                out, vjp_fun = invarax.vjp(f, *primals)
                return vjp_fun(out)

            _check(f_vjp, args, order - 1, modes, tol, rng, f"VJP of {what}")


def check_jvp(f, args, tol, rng, what="f"):
    """``jvp(f)`` along a random direction against central finite differences."""
    tangents = _random_like(rng, args)
    out = f(*args)
    out_jvp, tan = invarax.jvp(f, args, tangents)
    _assert_same_outputs(out, out_jvp, f"jvp of {what}")

    fds, h, atol = _finite_differences(f, args, tangents, out, tol)
    _, out_tree = tree_flatten(out)
    for i, (fd, t) in enumerate(zip(fds, _leaves(tan), strict=True)):
        if fd is None:
            continue
        err = np.abs(fd - t)
        bound = atol + tol.rtol * np.abs(t)
        if not np.all(err <= bound):  # also fails on NaN
            k = np.unravel_index(np.argmax(np.where(np.isnan(err), np.inf, err - bound)), err.shape)
            raise AssertionError(
                f"JVP check of {what}, output leaf {i} of {out_tree}, at index {k}: "
                f"finite differences give {fd[k]!r} but jvp gives {t[k]!r} "
                f"(|difference| {err[k]!r} > tolerance {bound[k]!r}; step h={h!r})"
            )


def numerical_jvp(f, args, tangents, eps=EPS):
    """Central differences of ``f`` at ``args`` along ``tangents``: ``(leaves, h)``.

    ``leaves`` has one NumPy array per output leaf (``None`` for non-float leaves); the
    step is ``h = eps * max(1, max |args|)``.
    """
    scale = max([1.0] + [float(np.max(np.abs(a))) for a in _leaves(args) if a.size])
    h = eps * scale
    plus = _leaves(f(*_axpy(h, tangents, args)))
    minus = _leaves(f(*_axpy(-h, tangents, args)))
    fd = [(p - m) / (2 * h) if _is_float(p) else None for p, m in zip(plus, minus, strict=True)]
    return fd, h


def _finite_differences(f, args, tangents, out, tol):
    """``(fd, h, atol)``: ``numerical_jvp`` and the absolute tolerance for ``out``."""
    fd, h = numerical_jvp(f, args, tangents, tol.eps)
    return fd, h, fd_atol(out, tol.atol)


def fd_atol(out, atol=FD_ATOL):
    """The absolute tolerance of finite differences of an output ``out``."""
    outs = [o for o in _leaves(out) if o.size and _is_float(o)]
    return atol * max([1.0] + [float(np.max(np.abs(o))) for o in outs])


def check_vjp_numerically(f, args, tol, rng, what="f"):
    """``vjp(f)`` against central finite differences by ``<ct, J t> == <J^T ct, t>``."""
    tangents = _random_like(rng, args)
    out, vjp_fun = invarax.vjp(f, *args)
    _assert_same_outputs(f(*args), out, f"vjp of {what}")
    ct_leaves = [_random(rng, o.shape) if _is_float(o) else None for o in _leaves(out)]
    fd, _, atol = _finite_differences(f, args, tangents, out, tol)
    lhs = lhs_abs = ct_abs = 0.0
    for c, d in zip(ct_leaves, fd, strict=True):
        if c is not None:
            c = np.asarray(c)
            lhs += float(np.sum(c * d))
            lhs_abs += float(np.sum(np.abs(c * d)))
            ct_abs += float(np.sum(np.abs(c)))
    _, out_tree = tree_flatten(out)
    cts = tree_unflatten(
        out_tree,
        [
            jnp.zeros_like(o) if c is None else c
            for c, o in zip(ct_leaves, _leaves(out), strict=True)
        ],
    )
    rhs, _ = _inner(vjp_fun(cts), tangents, f"the VJP and the tangent of {what}")
    bound = atol * ct_abs + tol.rtol * lhs_abs
    if not abs(lhs - rhs) <= bound:
        raise AssertionError(
            f"VJP check of {what} against finite differences: <ct, fd> = {lhs!r} but "
            f"<J^T ct, t> = {rhs!r} (|difference| {abs(lhs - rhs)!r} > tolerance {bound!r})"
        )


def check_vjp(f, args, tol, rng, what="f"):
    """``vjp(f)`` against ``jvp(f)`` by the identity ``<ct, J t> == <J^T ct, t>``."""
    tangents = _random_like(rng, args)
    out = f(*args)
    out_vjp, vjp_fun = invarax.vjp(f, *args)
    _assert_same_outputs(out, out_vjp, f"vjp of {what}")
    cts = tree_map(lambda o: _random(rng, o.shape) if _is_float(o) else jnp.zeros_like(o), out_vjp)
    _, jt = invarax.jvp(f, args, tangents)
    jct = vjp_fun(cts)
    assert isinstance(jct, tuple) and len(jct) == len(args), (
        f"vjp of {what} returned {type(jct).__name__} for {len(args)} arguments"
    )
    lhs, lhs_abs = _inner(cts, jt, f"the cotangent and the JVP of {what}")
    rhs, rhs_abs = _inner(jct, tangents, f"the VJP and the tangent of {what}")
    norms = _norm(cts) * _norm(tangents)  # a floor for a Jacobian that cancels to ~0
    bound = tol.identity_rtol * (lhs_abs + rhs_abs + norms)
    if not abs(lhs - rhs) <= bound:
        raise AssertionError(
            f"VJP check of {what}: <ct, J t> = {lhs!r} but <J^T ct, t> = {rhs!r} "
            f"(|difference| {abs(lhs - rhs)!r} > tolerance {bound!r})"
        )


def _inner(xs, ys, what):
    x_leaves, x_tree = tree_flatten(xs)
    y_leaves, y_tree = tree_flatten(ys)
    assert x_tree == y_tree, f"{what} differ in structure: {x_tree} vs {y_tree}"
    total = total_abs = 0.0
    for x, y in zip(x_leaves, y_leaves, strict=True):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, f"{what} differ in shape: {x.shape} vs {y.shape}"
        if not (_is_float(x) and _is_float(y)):
            continue
        assert x.dtype == y.dtype == np.float64, f"{what} have dtypes {x.dtype}, {y.dtype}"
        total += float(np.sum(x * y))
        total_abs += float(np.sum(np.abs(x * y)))
    return total, total_abs


def _norm(tree):
    return float(np.sqrt(sum(np.sum(np.abs(x) ** 2) for x in _leaves(tree) if _is_float(x))))


def _assert_same_outputs(expected, got, what):
    e_leaves, e_tree = tree_flatten(expected)
    g_leaves, g_tree = tree_flatten(got)
    assert e_tree == g_tree, f"{what}: output structure {g_tree}, expected {e_tree}"
    for e, g in zip(e_leaves, g_leaves, strict=True):
        e, g = np.asarray(e), np.asarray(g)
        assert (e.dtype, e.shape) == (g.dtype, g.shape), (
            f"{what}: primal output {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
        )
        assert e.tobytes() == g.tobytes(), (
            f"{what}: primal output differs from f's bits:\n{g!r}\n{e!r}"
        )


def _is_float(x):
    return np.asarray(x).dtype.kind in "fc"


def _leaves(tree):
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def _random(rng, shape):
    return jnp.asarray(rng.standard_normal(shape))


def _random_like(rng, tree):
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [_random(rng, np.shape(x)) for x in leaves])


def _axpy(a, xs, ys):
    """``a * xs + ys`` leafwise, in NumPy float64."""
    return tree_map(lambda x, y: jnp.asarray(a * np.asarray(x) + np.asarray(y)), xs, ys)
