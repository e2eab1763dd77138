"""``lax.pcast(x, axis_name, to="varying")`` (and the older ``lax.pvary``): mark a value that
is the same on every device along a ``shard_map`` axis as one that may vary along it.

Inside ``shard_map`` (``vmap`` underneath) a value that is the same on every device along
an axis has no batch axis for it; ``pvary`` gives it one, each device holding the same
value, so that it can meet varying values where types must match (a ``scan`` carry, the
two branches of a ``cond``). The values are the operand's, bit for bit. Its transpose is
``psum`` over the axes (the cotangents of the copies added), as JAX's.
"""

from __future__ import annotations

from ..core.array import to_array
from ..core.lowering import register_lowering
from ..core.pytree import tree_map
from ..core.trace import Primitive
from ..interpreters.ad import Zero, deflinear
from ..interpreters.batching import batching_rules, not_mapped
from ..ops import shape as sh
from ..ops._device_axes import lookup
from ..ops.collectives import axis_size, psum_p

pvary_p = Primitive("pvary")


def _impl(x, *, axis_name):
    for name in axis_name:  # on pmap's devices each device holds its own value already
        if lookup(name) is None:
            axis_size("pvary", name)  # raises: no transformation binds the name
    return x


def _abstract_eval(x, *, axis_name):
    for name in axis_name:
        axis_size("pvary", name)
    return x


pvary_p.def_impl(_impl)
pvary_p.def_abstract_eval(_abstract_eval)
register_lowering(pvary_p)
deflinear(pvary_p, lambda ct, x, *, axis_name: [
    None if isinstance(ct, Zero) else psum_p.bind(ct, axis_name=axis_name)])


def _batch(vals, dims, *, trace, axis_name):
    (x,), (d,) = vals, dims
    rest = tuple(n for n in axis_name if n != trace.axis_name)
    if trace.axis_name in axis_name and d is not_mapped:
        x = sh.broadcast_in_dim(x, (trace.axis_size, *x.shape), tuple(range(1, x.ndim + 1)))
        d = 0
    return (pvary_p.bind(x, axis_name=rest) if rest else x), d


_batch.needs_trace = True
batching_rules[pvary_p] = _batch


def _axes(axis_name) -> tuple:
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a name or a tuple of names, not a set")
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def pvary(x, axis_name):
    """``x`` (a pytree of arrays) marked as varying along the ``shard_map`` axes
    ``axis_name`` (a name or a tuple of names): the same values, one copy per device.

    Example:
        >>> f = invarax.vmap(lambda v, c: v + lax.pvary(c, "i"), in_axes=(0, None),
        ...                  axis_name="i")
        >>> f(jnp.arange(3.0), jnp.float32(1.0))
        Array([1., 2., 3.], dtype=float32)
    """
    axes = _axes(axis_name)
    if not axes:
        return x
    return tree_map(lambda leaf: pvary_p.bind(to_array(leaf, "lax.pvary's operand"),
                                              axis_name=axes), x)


def pcast(x, axis_name, *, to: str):
    """``x`` cast along the ``shard_map`` axes ``axis_name`` (JAX's ``lax.pcast``):
    ``to="varying"`` is ``pvary``.

    Example:
        >>> from invarax.sharding import PartitionSpec as P
        >>> mesh = invarax.make_mesh((2,), ("i",))
        >>> f = invarax.shard_map(lambda c: lax.pcast(c, "i", to="varying") * 2, mesh=mesh,
        ...                       in_specs=P(), out_specs=P("i"))
        >>> f(jnp.arange(2.0))
        Array([0., 2., 0., 2.], dtype=float32)
    """
    if to not in ("varying", "reduced", "unreduced"):
        raise ValueError(f"lax.pcast: unexpected to={to!r}; the allowed values are "
                         "'varying', 'reduced' and 'unreduced'")
    if to != "varying":
        raise NotImplementedError(
            f"lax.pcast(..., to={to!r}): invarax has no reduced or unreduced values (every "
            "sum is computed whole, in its canonical order); use to='varying', or psum")
    return pvary(x, axis_name)
