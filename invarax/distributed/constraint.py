"""``with_sharding_constraint`` and ``reshard``: say where a value lives, eagerly or inside a
program.

One primitive, ``sharding_constraint``, whose value is its operand's, bit for bit. Eagerly
the array is placed with the sharding (no primitive is bound); inside ``jit`` an output
computed by it is placed with it (the lowering's ``placement``), and the compiled program
drops it (a no-op). It is linear (its tangent and cotangent are constrained alike) and, under
``vmap``, constrains each example (the batch dimension is not split).
"""

from __future__ import annotations

import functools

from ..core.array import to_array
from ..core.lowering import register_lowering
from ..core.pytree import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from ..core.trace import EVAL_TRACE, Primitive, current_trace
from ..interpreters.ad import Zero, deflinear
from ..interpreters.batching import batching_rules, not_mapped
from . import across
from .mesh import AxisType, axis_types_as, axis_types_here, get_mesh
from .shardings import NamedSharding, PartitionSpec, as_sharding, placed

sharding_constraint_p = Primitive("sharding_constraint")


def _impl(x, *, sharding):
    return x  # (eagerly, ``constrain`` places the array itself)


def _abstract_eval(x, *, sharding):
    if isinstance(sharding, NamedSharding):
        sharding.check(x.shape, f"an array of shape {x.shape}")
    return x


sharding_constraint_p.def_impl(_impl)
sharding_constraint_p.def_abstract_eval(_abstract_eval)
register_lowering(sharding_constraint_p, noop=lambda ndim, params: True,
                  placement=lambda params: params["sharding"])
deflinear(sharding_constraint_p, lambda ct, x, *, sharding: [
    None if isinstance(ct, Zero) else sharding_constraint_p.bind(ct, sharding=sharding)])


def _batch(vals, dims, *, sharding):
    (x,), (d,) = vals, dims
    if d is not_mapped:
        return sharding_constraint_p.bind(x, sharding=sharding), d
    if isinstance(sharding, NamedSharding):
        sharding = sharding._with_batch_dim(d)
    return sharding_constraint_p.bind(x, sharding=sharding), d


batching_rules[sharding_constraint_p] = _batch


def constrain(x, shardings, name: str):
    """The pytree ``x`` with each leaf constrained by its sharding in ``shardings`` (a
    sharding, a device, a ``PartitionSpec``, or a pytree prefix of ``x`` of those; None
    leaves a leaf as it is). Errors name the leaf (``name`` plus its path)."""
    pairs, tree = tree_flatten_with_path(x)
    targets = broadcast_shardings(shardings, x, name)
    out = []
    for (path, leaf), target in zip(pairs, targets, strict=True):
        what = f"{name}'s {'x' + keystr(path)}"
        sharding = as_sharding(target, f"the sharding of {what}")
        leaf = to_array(leaf, what)
        if sharding is None:
            out.append(leaf)
            continue
        if isinstance(sharding, NamedSharding):
            sharding.check(leaf.shape, what)
        if current_trace() is not EVAL_TRACE:
            out.append(sharding_constraint_p.bind(leaf, sharding=sharding))
            continue
        if across.spans_processes(sharding) and not across.spans_processes(leaf._sharding):
            across.check_same(leaf._value, sharding, what)  # a value of this process's
        out.append(placed(leaf, sharding))
    return tree_unflatten(tree, out)


def broadcast_shardings(prefix, tree, name: str) -> list:
    """One entry of the pytree ``prefix`` (a prefix of ``tree``'s structure, None a leaf)
    per leaf of ``tree``."""
    leaves, treedef = tree_flatten(prefix, is_leaf=lambda v: v is None)
    try:
        subtrees = treedef.flatten_up_to(tree)
    except ValueError as error:
        raise ValueError(f"{name}: the shardings must be one sharding or a pytree prefix of "
                         f"the value's structure. {error}") from None
    return [leaf for leaf, sub in zip(leaves, subtrees, strict=True)
            for _ in range(tree_structure(sub).num_leaves)]


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree of arrays) with the same values, placed with ``shardings`` (JAX's
    ``lax.with_sharding_constraint``).

    Arguments:
        x: a pytree of arrays (or tracers: inside ``jit``, an output computed by this
            call is placed with the sharding).
        shardings: a sharding, a ``PartitionSpec`` (with a mesh in context), or a pytree
            prefix of ``x`` of those.

    Returns:
        ``x``, bit for bit, placed.

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P
        >>> s = NamedSharding(invarax.make_mesh((2,), ("x",)), P("x"))
        >>> f = invarax.jit(lambda v: lax.with_sharding_constraint(v * 2, s))
        >>> f(jnp.arange(4.0)).sharding.spec
        P('x',)
    """
    return constrain(x, shardings, "with_sharding_constraint")


def reshard(xs, out_shardings):
    """``xs`` placed with ``out_shardings`` (JAX's ``jax.sharding.reshard``): the same
    values, bit for bit; local devices share memory, so nothing moves.

    Example:
        >>> from invarax.sharding import NamedSharding, PartitionSpec as P, reshard
        >>> mesh = invarax.make_mesh((2,), ("x",))
        >>> reshard(jnp.ones((2, 3)), NamedSharding(mesh, P(None, None))).sharding.spec
        P(None, None)
    """
    return spelled_out(constrain(xs, out_shardings, "reshard"))


def spelled_out(tree):
    """``tree`` with each array placed on a mesh with ``Explicit`` axes given one spec entry
    per dimension (``P('x')`` for a matrix becomes ``P('x', None)``, as JAX's ``reshard``
    and ``out_sharding`` place it)."""
    def one(x):
        s = getattr(x, "_sharding", None)
        if (not isinstance(s, NamedSharding) or len(s.spec) >= x.ndim
                or AxisType.Explicit not in axis_types_here(s.mesh)):
            return x
        return placed(x, NamedSharding(s.mesh, PartitionSpec(*s.spec,
                                                             *[None] * (x.ndim - len(s.spec)))))

    return tree_map(one, tree)


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """``f`` run with the mesh axes ``axes`` (default: all) in ``Auto`` mode, its outputs
    placed with ``out_sharding`` (JAX's ``jax.sharding.auto_axes``; given here or as the
    ``out_sharding=`` keyword of each call). Inside, those axes are ``Auto``: operations
    may split an array over them as they like, and types do not show them; the program
    computed is the same, unsharded, one in every mode.

    Example:
        >>> from invarax.sharding import auto_axes, PartitionSpec as P
        >>> with invarax.set_mesh(invarax.make_mesh((2,), ("x",))):
        ...     add = auto_axes(lambda a, b: a + b)
        ...     add(jnp.ones(4), jnp.ones(4), out_sharding=P("x")).sharding.spec
        P('x',)
    """
    if f is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def run(*args, **kwargs):
        target = _sharding_keyword(kwargs, "out_sharding", out_sharding, "auto_axes", f)
        with axis_types_as(_typed(axes, AxisType.Auto)):
            out = f(*args, **kwargs)
        return constrain(out, target, "auto_axes's out_sharding")

    return run


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """``f`` run with the mesh axes ``axes`` (default: all) in ``Explicit`` mode, its
    arguments placed with ``in_sharding`` first (JAX's ``jax.sharding.explicit_axes``;
    given here or as the ``in_sharding=`` keyword of each call).

    Example:
        >>> from invarax.sharding import explicit_axes, PartitionSpec as P
        >>> with invarax.set_mesh(invarax.make_mesh((2,), ("x",))):
        ...     double = explicit_axes(lambda a: a * 2)
        ...     double(jnp.ones(4), in_sharding=P("x")).tolist()
        [2.0, 2.0, 2.0, 2.0]
    """
    if f is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def run(*args, **kwargs):
        target = _sharding_keyword(kwargs, "in_sharding", in_sharding, "explicit_axes", f)
        with axis_types_as(_typed(axes, AxisType.Explicit)):
            return f(*constrain(args, target, "explicit_axes's in_sharding"), **kwargs)

    return run


def _typed(axes, kind) -> dict:
    """``{name: kind}`` for the mesh axes ``axes`` (a name or names; None: every axis of
    the mesh in context)."""
    if axes is None:
        mesh = get_mesh()
        axes = () if mesh is None else mesh.axis_names
    return dict.fromkeys((axes,) if isinstance(axes, str) else axes, kind)


def _sharding_keyword(kwargs: dict, key: str, default, wrapper: str, f):
    """The sharding given as the call's keyword ``key`` (taken out of ``kwargs``), else
    ``default``; an error naming the fix if neither is given."""
    target = kwargs.pop(key, default)
    if target is None:
        raise TypeError(f"{wrapper} of {getattr(f, '__name__', f)} needs {key}: pass "
                        f"{key}=... to {wrapper} or to the call")
    return target


def takes_out_sharding(f):
    """``f`` with JAX's ``out_sharding=`` keyword (``jnp.zeros``, ``jnp.dot``, ...): its
    result placed with that sharding (a ``PartitionSpec`` means one over the mesh in
    context). Operations whose operands' shardings leave the result's ambiguous (a split
    contracted axis on an ``Explicit`` mesh) take it from there instead of raising.

    Example:
        >>> from invarax.sharding import PartitionSpec as P
        >>> with invarax.set_mesh(invarax.make_mesh((2,), ("x",))):
        ...     jnp.zeros((4, 2), out_sharding=P("x")).sharding.spec
        P('x', None)
    """

    @functools.wraps(f)
    def run(*args, out_sharding=None, **kwargs):
        if out_sharding is None:
            return f(*args, **kwargs)
        name = f"{getattr(f, '__name__', 'the function')}'s out_sharding"
        target = as_sharding(out_sharding, name)
        mesh = getattr(target, "mesh", None)
        with axis_types_as({} if mesh is None else dict.fromkeys(mesh.axis_names,
                                                                 AxisType.Auto)):
            out = f(*args, **kwargs)
        return spelled_out(constrain(out, target, name))

    return run
