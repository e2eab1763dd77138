"""JAX's ahead-of-time stages of ``jit``: ``jit(f).trace(*args)`` gives a ``Traced``,
``.lower()`` a ``Lowered``, ``.compile()`` a ``Compiled`` (called with the dynamic
arguments only, as JAX's).

invarax traces, optimises and compiles in one step (``_Entry``), so the stages are views
of one cached entry: ``Traced`` shows the jaxpr as traced, ``Lowered`` the program after
the optimisation passes, and ``Compiled`` runs it, for arguments of the signature it was
traced for only (another shape or dtype is a ``TypeError`` naming the argument).

``compile(compiler_options=...)`` takes XLA's options, as JAX's, and checks their names
(``check_compiler_options``); they change nothing, as invarax's programs are not XLA's.
"""

from __future__ import annotations

from ..core.api_util import flatten_args
from ..core.array import ArrayImpl
from ..core.aval import ShapeDtypeStruct
from ..core.errors import JaxRuntimeError
from ..core.ir import ClosedJaxpr
from ..core.pytree import tree_unflatten
from ..core.trace import EVAL_TRACE, current_trace

#: The compile options JAX sets on XLA's build options; the others are XLA's debug options,
#: all named ``xla_...`` (``xla_cpu_enable_fast_math``, ``xla_dump_to``, ...).
BUILD_OPTIONS = ("exec_time_optimization_effort", "memory_fitting_effort",
                 "memory_fitting_level", "optimization_level")


class CompileOptionError(JaxRuntimeError, ValueError):
    """A ``compiler_options`` name that is not an XLA option: JAX's ``JaxRuntimeError``
    (its INVALID_ARGUMENT), and a ``ValueError``."""


def check_compiler_options(options) -> None:
    """Check ``compiler_options`` as JAX's ``compile`` and ``jit`` take them: a dict from an
    XLA option's name to a bool, number or string. invarax accepts them and they change
    nothing (its programs are not XLA's: no option changes its numbers).

    Arguments:
        options: None or the dict.

    Raises:
        CompileOptionError: for a name that is not an XLA option (as JAX's ``JaxRuntimeError``
            "No such compile option"; also a ``ValueError``).
        TypeError: for options that are not such a dict.

    Example:
        >>> check_compiler_options({"xla_cpu_enable_fast_math": False})
        >>> check_compiler_options({"fast": True})
        Traceback (most recent call last):
        ...
        invarax.compiler.stages.CompileOptionError: No such compile option: 'fast'. invarax
        accepts XLA's options (the names starting with 'xla_', and
        exec_time_optimization_effort, memory_fitting_effort, memory_fitting_level,
        optimization_level) and ignores them: they do not change its programs or its numbers
    """
    if options is None:
        return
    if not isinstance(options, dict):
        raise TypeError(f"compiler_options must be a dict of option name to value, got "
                        f"{type(options).__name__}")
    for name, value in options.items():
        if not isinstance(name, str) or not (name.startswith("xla_") or name in BUILD_OPTIONS):
            raise CompileOptionError(
                f"No such compile option: {name!r}. invarax accepts XLA's options (the names "
                f"starting with 'xla_', and {', '.join(BUILD_OPTIONS)}) and ignores them: they "
                "do not change its programs or its numbers")
        if not isinstance(value, (bool, int, float, str)):
            raise TypeError(f"compiler_options[{name!r}] must be a bool, number or string, "
                            f"got {type(value).__name__}")


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

    def compile(self, compiler_options=None) -> Compiled:
        """The compiled program (compiled when it was traced), callable for this signature;
        ``compiler_options`` are XLA's, checked and ignored (``check_compiler_options``)."""
        check_compiler_options(compiler_options)
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
