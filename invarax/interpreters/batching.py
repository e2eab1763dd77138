"""vmap: batching by rules, one per primitive, never by a per-example loop.

A ``BatchTracer`` holds a value with one extra axis, ``bdim``, that indexes the
examples (``bdim`` is ``not_mapped`` for values that are the same for every
example). A primitive bound on batch tracers calls its batching rule, which
returns the batched output and where its batch axis is. Batch axes only ever add
independent outputs to an op; the canonical kernels make each output's order of
operations independent of how many there are, so ``vmap(f)(xs)[i]`` is bitwise
``f(xs[i])`` (N1).

Rule table (filled in by ``invarax.ops``):
``batching_rules[prim](args, dims, **params) -> (out, out_dim)``, run under the
parent trace; ``dims[i]`` is an int or ``not_mapped``; for multiple-result
primitives ``out`` and ``out_dim`` are lists.

Collectives (``psum`` and friends) carry ``axis_name`` params; the trace whose
``axis_name`` matches handles them, others pass them to their parent.
"""

from __future__ import annotations

from ..core.array import to_array
from ..core.trace import Trace, Tracer, current_trace, new_trace, set_current_trace
from . import emitted

batching_rules = {}
not_mapped = None


class BatchTracer(Tracer):
    """A value with a batch axis ``bdim`` (``not_mapped``: the same for every example)."""

    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        aval = self.val.aval
        if self.bdim is not_mapped:
            return aval
        shape = aval.shape[: self.bdim] + aval.shape[self.bdim + 1 :]
        return aval.update(shape=shape)


class BatchTrace(Trace):
    """Applies batching rules to the primitives bound on its tracers."""

    def __init__(self, parent, axis_size: int, axis_name=None, description="vmap"):
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.description = description

    def describe(self) -> str:
        return self.description

    def process_primitive(self, primitive, args, params):
        vals, dims = [], []
        for x in args:
            if self.owns(x):
                vals.append(x.val)
                dims.append(x.bdim)
            else:
                vals.append(x)
                dims.append(not_mapped)
        with set_current_trace(self.parent):
            if all(d is not_mapped for d in dims) and not self._handles(params):
                return primitive.bind(*vals, **params)
            rule = batching_rules.get(primitive)
            if rule is None:
                raise NotImplementedError(f"batching rule for '{primitive}' is not implemented")
            if getattr(rule, "needs_trace", False):
                out, out_dim = rule(vals, dims, trace=self, **params)
            else:
                out, out_dim = rule(vals, dims, **params)
        if primitive.multiple_results:
            return [self.pack(v, d) for v, d in zip(out, out_dim, strict=True)]
        return self.pack(out, out_dim)

    def _handles(self, params) -> bool:
        """Whether a collective over this trace's axis name is being bound."""
        names = params.get("axis_name")
        if names is None or self.axis_name is None:
            return False
        names = names if isinstance(names, tuple) else (names,)
        return self.axis_name in names

    def pack(self, val, bdim):
        return val if bdim is not_mapped else BatchTracer(self, val, bdim)

    def unpack(self, x):
        x = to_array(x, "a vmapped function's output")
        if self.owns(x):
            return x.val, x.bdim
        return x, not_mapped


def batch_flat(fun, args, in_dims, axis_size, axis_name=None, description="vmap", tag=None):
    """Run ``fun`` (flat list in, flat list out) on batched ``args``.

    ``tag``: that of an earlier ``BatchTrace`` over the same axis, whose tracers ``fun``
    closes over (a custom rule run after its call was batched); they count as this
    trace's own.

    Returns ``(outs, out_dims)``; an output that does not depend on the batch has
    ``out_dim`` ``not_mapped``.
    """
    trace = BatchTrace(current_trace(), axis_size, axis_name, description)
    if tag is not None:
        trace.tag = tag
    with new_trace(trace):
        ins = [trace.pack(a, d) for a, d in zip(args, in_dims, strict=True)]
        outs = [trace.unpack(x) for x in fun(ins)]
    return [v for v, _ in outs], [d for _, d in outs]


# ---------------------------------------------------------------------------------------
# Helpers for rules


def moveaxis(x, src, dst):
    """Move axis ``src`` of ``x`` to ``dst`` (lax ops only)."""
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return emitted.transpose(x, perm)


def move_batch_axis(x, bdim, target: int, size: int):
    """``x`` with its batch axis at ``target``; an unbatched ``x`` is broadcast to
    ``size`` examples there."""
    if bdim is not_mapped:
        shape = (*x.shape[:target], size, *x.shape[target:])
        return emitted.broadcast_in_dim(x, shape, [d for d in range(x.ndim + 1) if d != target])
    return moveaxis(x, bdim, target)


def axis_size_of(vals, dims):
    sizes = {v.shape[d] for v, d in zip(vals, dims, strict=True) if d is not not_mapped}
    (size,) = sizes
    return size
