"""JAX's ahead-of-time stages of ``jit``: ``jit(f).trace(*args)`` gives a ``Traced``,
``.lower()`` a ``Lowered``, ``.compile()`` a ``Compiled`` (called with the dynamic
arguments only, as JAX's).

invarax traces, optimises and compiles in one step (``_Entry``), so the stages are views
of one cached entry: ``Traced`` shows the jaxpr as traced, ``Lowered`` the program after
the optimisation passes, and ``Compiled`` runs it, for arguments of the signature it was
traced for only (another shape or dtype is a ``TypeError`` naming the argument).
"""

from __future__ import annotations

from ..core.api_util import flatten_args
from ..core.array import ArrayImpl
from ..core.aval import ShapeDtypeStruct
from ..core.ir import ClosedJaxpr
from ..core.pytree import tree_unflatten
from ..core.trace import EVAL_TRACE, current_trace


def _shape_structs(out_tree, avals):
    return tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                     for a in avals])


class _Stage:
    def __init__(self, entry, jitted, args, kwargs):
        self._entry, self._jitted = entry, jitted
        dyn_args, dyn_kwargs, self._static = jitted.static.split(args, kwargs)
        leaves, self.in_tree = flatten_args(dyn_args, dyn_kwargs, jitted.static.name)
        self._in_avals = tuple(x.aval for x in leaves)

    @property
    def fun_name(self) -> str:
        """The name of the jitted function."""
        return self._jitted.static.name

    @property
    def out_tree(self):
        """The structure of the output."""
        return self._entry.out_tree

    @property
    def out_info(self):
        """The output pytree with a ``ShapeDtypeStruct`` for each array."""
        return _shape_structs(self._entry.out_tree, self._entry.closed.out_avals)

    @property
    def in_avals(self):
        """The abstract values of the (flattened, dynamic) arguments."""
        return self._in_avals


class Traced(_Stage):
    """``jit(f).trace(*args)``: the jaxpr ``jit`` traced for these arguments' signature."""

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The jaxpr as traced (before optimisation)."""
        return self._entry.closed

    def lower(self) -> Lowered:
        """The next stage: the optimised program."""
        lowered = Lowered.__new__(Lowered)
        lowered.__dict__.update(self.__dict__)
        return lowered


class Lowered(_Stage):
    """``jit(f).lower(*args)``: the program ``jit`` runs for one signature, optimised."""

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The optimised program."""
        return self._entry.optimized

    def as_text(self) -> str:
        """The optimised program, in jaxpr format."""
        return str(self._entry.optimized)

    def compile(self) -> Compiled:
        """The compiled program (compiled when it was traced), callable for this signature."""
        compiled = Compiled.__new__(Compiled)
        compiled.__dict__.update(self.__dict__)
        return compiled

    def cost_analysis(self):
        """None: invarax has no cost model (JAX returns XLA's estimates)."""
        return None


class Compiled(Lowered):
    """``jit(f).lower(*args).compile()``: call it with arguments of the lowered signature.

    Example:
        >>> import invarax
        >>> compiled = invarax.jit(lambda x: x * 2).lower(jnp.ones(3)).compile()
        >>> compiled(jnp.arange(3.0))
        Array([0., 2., 4.], dtype=float32)
    """

    def __call__(self, *args, **kwargs):
        """Run on the dynamic arguments (static ones were fixed by ``lower``, as in JAX)."""
        jitted = self._jitted
        leaves, in_tree = flatten_args(args, kwargs, jitted.static.name)
        if in_tree != self.in_tree:
            raise TypeError(
                f"Compiled {self.fun_name} was lowered for dynamic arguments of structure "
                f"{self.in_tree}, called with {in_tree} (pass the arguments that are not "
                "static only: static ones are fixed when lowering)")
        for i, (x, want) in enumerate(zip(leaves, self._in_avals, strict=True)):
            if (x.aval.shape, x.aval.dtype) != (want.shape, want.dtype):
                raise TypeError(
                    f"Argument types differ from the types for which this computation was "
                    f"compiled: argument leaf {i} of {self.fun_name} is "
                    f"{x.aval.str_short()}, compiled for {want.str_short()}. Call the jitted "
                    "function itself (it traces again), or lower it for this signature")
        if current_trace() is EVAL_TRACE and all(type(x) is ArrayImpl for x in leaves):
            return self._entry.call(leaves)
        full_args, full_kwargs = jitted.static.merge(args, kwargs, self._static)
        return jitted(*full_args, **full_kwargs)
