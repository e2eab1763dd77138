"""Identities that refuse a transformation: ``nontraceable`` (any), ``nonbatchable``
(``vmap``), ``nondifferentiable`` (any derivative) and ``nondifferentiable_backward``
(reverse mode), as Equinox's.

Each maps over the arrays of a pytree (other leaves pass through) and returns them
unchanged; the refusal is an error naming the operation, raised when the transformation
reaches it.
"""

from __future__ import annotations

from ...core.lowering import register_lowering
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import Primitive
from ...interpreters import ad, batching
from .._errors import error_if
from .._filters import combine, is_array, partition
from .._nondiff import nondifferentiable  # noqa: F401  (equinox.internal re-exports it)


def _map_arrays(x, bind):
    dynamic, static = partition(x, is_array)
    leaves, treedef = tree_flatten(dynamic)
    return combine(tree_unflatten(treedef, [bind(leaf) for leaf in leaves]), static)


def _identity_primitive(name: str) -> Primitive:
    prim = Primitive(name)
    prim.def_impl(lambda x, **params: x)
    prim.def_abstract_eval(lambda x, **params: x)
    register_lowering(prim)
    return prim


# ---------------------------------------------------------------------------------------
# nontraceable

nontraceable_p = _identity_primitive("nontraceable")


def _refuse(what):
    def rule(*args, name, **params):
        raise RuntimeError(f"Detected {what} of {name}")

    return rule


ad.jvp_rules[nontraceable_p] = _refuse("differentiation")
batching.batching_rules[nontraceable_p] = _refuse("batching")


def nontraceable(x, *, name: str = "nontraceable operation"):
    """``x``, unchanged; ``RuntimeError`` if it is differentiated or batched.

    Used at the end of a primitive's impl rule, to check that nothing the rule closes over
    is a tracer of an enclosing transformation.

    Example:
        >>> nontraceable(jnp.ones(2), name="my solve")
        Array([1., 1.], dtype=float32)
        >>> vmap(lambda x: nontraceable(x, name="my solve"))(jnp.ones(2))
        Traceback (most recent call last):
        ...
        RuntimeError: Detected batching of my solve
    """
    return _map_arrays(x, lambda leaf: nontraceable_p.bind(leaf, name=name))


# ---------------------------------------------------------------------------------------
# nonbatchable

nonbatchable_p = _identity_primitive("nonbatchable")


def _nonbatchable_batch(vals, dims, *, msg, allow_constant_across_batch):
    from ... import numpy as jnp

    (x,), (d,) = vals, dims
    if not allow_constant_across_batch:
        raise ValueError(msg)
    x = error_if(x, jnp.min(x, axis=d) != jnp.max(x, axis=d), msg)
    return jnp.take(x, 0, axis=d), batching.not_mapped


def _nonbatchable_jvp(primals, tangents, *, msg, allow_constant_across_batch):
    raise NotImplementedError(
        "Differentiation rule for 'nonbatchable' is not implemented (as in Equinox): it marks "
        "integer or boolean bookkeeping, such as a loop's step counter")


batching.batching_rules[nonbatchable_p] = _nonbatchable_batch
ad.jvp_rules[nonbatchable_p] = _nonbatchable_jvp


def nonbatchable(x, *, name: str | None = None, msg: str | None = None,
                 allow_constant_across_batch: bool = False):
    """``x``, unchanged; an error at trace time if it is batched by ``vmap``.

    With ``allow_constant_across_batch=True`` a batched value is accepted if every example
    holds the same value (checked when the program runs, with ``error_if``), and the
    result is unbatched.

    Example:
        >>> vmap(lambda x: nonbatchable(x), axis_size=2, in_axes=None)(jnp.int32(3))
        Array([3, 3], dtype=int32)
        >>> vmap(lambda x: nonbatchable(x, name="the step"))(jnp.arange(2))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Unexpected batch tracer. the step cannot be vmap'd. ...
    """
    if msg is None:
        name = "This operation" if name is None else name
        if allow_constant_across_batch:
            msg = (f"Nonconstant batch. {name} has received a batch of values that were "
                   "expected to be constant. This is probably an internal error in the library "
                   "you are using.")
        else:
            msg = (f"Unexpected batch tracer. {name} cannot be vmap'd. This is probably an "
                   "internal error in the library you are using.")
    return _map_arrays(x, lambda leaf: nonbatchable_p.bind(
        leaf, msg=msg, allow_constant_across_batch=allow_constant_across_batch))


# ---------------------------------------------------------------------------------------
# nondifferentiable_backward

nondifferentiable_backward_p = _identity_primitive("nondifferentiable_backward")


def _nondiff_backward_jvp(primals, tangents, *, msg, symbolic):
    out = nondifferentiable_backward_p.bind(primals[0], msg=msg, symbolic=symbolic)
    t = tangents[0]
    return out, nondifferentiable_backward_p.bind(ad.instantiate(t), msg=msg, symbolic=symbolic)


def _nondiff_backward_transpose(ct, x, *, msg, symbolic):
    if isinstance(ct, ad.Zero):
        return [None]
    if symbolic:
        raise RuntimeError(msg)
    # A cotangent that is zero as an array (not symbolically) is accepted: it arises
    # legitimately, e.g. from the branch of a cond that does not use the value.
    return [error_if(ct, (ct != 0).any(), msg)]


def _nondiff_backward_batch(vals, dims, *, msg, symbolic):
    return nondifferentiable_backward_p.bind(vals[0], msg=msg, symbolic=symbolic), dims[0]


ad.jvp_rules[nondifferentiable_backward_p] = _nondiff_backward_jvp
ad.transpose_rules[nondifferentiable_backward_p] = _nondiff_backward_transpose
batching.batching_rules[nondifferentiable_backward_p] = _nondiff_backward_batch


def nondifferentiable_backward(x, name: str | None = None, msg: str | None = None,
                               symbolic: bool = True):
    """``x``, unchanged; an error if a cotangent reaches it in reverse mode.

    Forward mode passes tangents through. With ``symbolic=True`` (the default) any
    cotangent that is not a symbolic zero raises ``RuntimeError`` when the backward pass
    is built; with ``symbolic=False`` the check is ``error_if`` on a nonzero cotangent.

    Example:
        >>> f = lambda x: nondifferentiable_backward(x, name="stats").sum()
        >>> jvp(f, (jnp.ones(2),), (jnp.ones(2),))[1]
        Array(2., dtype=float32)
        >>> grad(f)(jnp.ones(2))
        Traceback (most recent call last):
        ...
        RuntimeError: Unexpected cotangent. stats cannot be reverse-mode autodifferentiated.
    """
    if msg is None:
        name = "This operation" if name is None else name
        msg = f"Unexpected cotangent. {name} cannot be reverse-mode autodifferentiated."
    return _map_arrays(x, lambda leaf: nondifferentiable_backward_p.bind(
        leaf, msg=msg, symbolic=symbolic))
