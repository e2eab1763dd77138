"""``filter_jit``: ``jit`` with array leaves traced and every other leaf static."""

from __future__ import annotations

import functools

from ..compiler.jit import Jitted
from ..core.config import config
from ..core.pytree import tree_flatten, tree_unflatten
from ..ops.checks import EquinoxRuntimeError
from ._filters import is_array
from ._module import Module
from ._static import Static


class _Owner:
    """Stands for the wrapped function in cache keys, so that they do not keep it alive."""

    __slots__ = ()

    def __repr__(self):
        return "<the function filter_jit wraps>"


_OWNER = _Owner()


def _innermost(fun):
    """The user's function under filtered transforms and bound methods, whose lifetime the
    compiled programs of ``filter_jit(fun)`` follow: for a Module called as a function, its
    class's ``__call__`` (the module's static fields are in the cache key and its arrays
    are traced, so every instance of one structure shares the programs, as in Equinox)."""
    if isinstance(fun, Module):
        return type(fun).__call__
    seen = set()
    while id(fun) not in seen:
        seen.add(id(fun))
        inner = getattr(fun, "__func__", None) or getattr(fun, "__wrapped__", None)
        if inner is None or isinstance(inner, functools.partial):
            break
        fun = inner
    return fun


# An ``error_if`` failure inside ``filter_jit``, reported as Equinox's (its stack inside the
# program is not kept).
_ON_ERROR_MSG = """Above is the stack outside of JIT. The check that failed inside it was an
error_if (or branched_error_if) with the message:

equinox.EquinoxRuntimeError: {msg}

--------------------

An error occurred during the runtime of your program.

1) Setting the environment variable `EQX_ON_ERROR=nan` returns NaN instead of raising
(`EQX_ON_ERROR=off` removes the checks), so the run can continue and be inspected.

2) Running the function without jit (`with jax.disable_jit():`) raises the error where
error_if is called, with the values at hand.
"""


# Equinox's donation modes: (donate the first argument's arrays, donate the rest's, warn
# when a donated buffer is unusable)
DONATE = {"all": (True, True, False), "all-except-first": (False, True, False),
          "warn": (True, True, True), "warn-except-first": (False, True, True),
          "none": (False, False, False)}


def filter_jit(fun, donate: str = "none"):
    """Compile ``fun``, tracing the array leaves of its arguments; other leaves are static.

    Non-array leaves (ints, strings, functions, a Module's static fields) are hashed into
    the cache key, so Python control flow on them works. Outputs may hold non-array
    leaves too (invarax goes beyond Equinox here: they need no wrapping): they are
    returned as the values the traced call produced.

    Arguments:
        fun: any function of pytrees; it may itself be a pytree, such as a bound method
            ``model.__call__`` whose module holds arrays.
        donate: one of Equinox's modes (``DONATE``): the arrays of ``fun`` and of the
            arguments (all, or all but the first argument's) are donated, as
            ``jit(donate_argnums=...)`` donates them; the ``"warn"`` modes show JAX's
            warning for a donated buffer that no output can take.

    Returns:
        The compiled function; results are bitwise those of calling ``fun`` (N3).
        ``.lower(*args, **kwargs)`` gives the program for these arguments (``.as_text()``,
        ``.compile()``, whose result is called with arguments like these), as Equinox's.

    Example:
        >>> f = filter_jit(lambda x, name: (2 * x, name.upper()))
        >>> f(jnp.ones(2), "done")
        (Array([2., 2.], dtype=float32), 'DONE')
    """
    # One cache per wrapped function (shared by every filter_jit of it, as JAX's jit),
    # keyed on the static part (the transforms around the function included) and avals.
    owner = _innermost(fun)
    donate_first, donate_rest, warn = DONATE[donate]
    flags = (donate_rest, donate_first, donate_rest, donate_rest)  # fun, first, rest, kwargs

    def run(donated, kept, static: Static):
        f, first, rest, kwargs = (
            _merged(d if flag else k, structure, owner) for d, k, flag, structure in
            zip(donated, kept, flags, static.value, strict=True))
        out = _flat(f(*first, *rest, **kwargs))
        return out[0], Static.keyed(out[1], out[1])

    run = Jitted(run, donate_argnums=(0,) if donate_first or donate_rest else (),
                 cache_owner=owner, donation_warning=warn)

    def split(args, kwargs):
        """``run``'s arguments: the donated arrays, the kept ones (each a list per part:
        the function, the first argument, the others, the keywords), and the rest of the
        parts as a Static (their structures and non-array leaves, ``owner`` replaced)."""
        parts = [_flat(p, owner) for p in (fun, args[:1], args[1:], kwargs)]
        structures = tuple(structure for _, structure in parts)
        return (tuple(p[0] if flag else None for p, flag in zip(parts, flags, strict=True)),
                tuple(None if flag else p[0] for p, flag in zip(parts, flags, strict=True)),
                Static.keyed(structures, structures))

    @functools.wraps(fun)
    def jitted(*args, **kwargs):
        try:
            out_dynamic, out_static = run(*split(args, kwargs))
        except EquinoxRuntimeError as e:
            if getattr(e, "_reported", False) or config.read("jax_disable_jit"):
                raise  # reported by an inner filter_jit, or raised where error_if ran
            reported = EquinoxRuntimeError(_ON_ERROR_MSG.format(msg=e))
            reported._reported = True
            raise reported from None
        return _merged(out_dynamic, out_static.value)

    jitted.lower = lambda *args, **kwargs: Lowered(run.lower(*split(args, kwargs)), split)
    return jitted


def _flat(tree, owner=None) -> tuple:
    """``(arrays, structure)``: the array leaves of ``tree`` (a list) and what rebuilds it
    from them, ``(treedef, mask, others)`` (``mask`` marks the array leaves, ``others`` are
    the other leaves, ``owner`` replaced by a stand-in); a structure is hashable when the
    other leaves are, and equal structures rebuild equal trees."""
    leaves, treedef = tree_flatten(tree)
    mask = tuple(map(is_array, leaves))
    arrays = [leaf for leaf, m in zip(leaves, mask, strict=True) if m]
    others = tuple(_OWNER if leaf is owner and owner is not None else leaf
                   for leaf, m in zip(leaves, mask, strict=True) if not m)
    return arrays, (treedef, mask, others)


def _merged(arrays, structure, owner=None):
    """The tree ``_flat`` took apart, with ``arrays`` for its array leaves."""
    treedef, mask, others = structure
    arrays, others = iter(arrays), iter(others)
    leaves = [next(arrays) if m else next(others) for m in mask]
    return tree_unflatten(treedef, [owner if leaf is _OWNER else leaf for leaf in leaves])


class Lowered:
    """``filter_jit(f).lower(*args, **kwargs)``: the program for these arguments, as
    Equinox's: ``as_text()`` prints it, ``compile()`` gives the callable."""

    def __init__(self, lowered, split):
        self._lowered, self._split = lowered, split

    def as_text(self) -> str:
        """The optimised program, in jaxpr format."""
        return self._lowered.as_text()

    def compile(self, compiler_options=None) -> Compiled:
        """The compiled program; ``compiler_options`` (XLA's) are checked and ignored."""
        return Compiled(self._lowered.compile(compiler_options), self._split)


class Compiled:
    """``filter_jit(f).lower(...).compile()``: call it with arguments like the lowered
    ones (the same non-array leaves, arrays of the same shapes and dtypes)."""

    def __init__(self, compiled, split):
        self._compiled, self._split = compiled, split

    def __call__(self, *args, **kwargs):
        out_dynamic, out_static = self._compiled(*self._split(args, kwargs))
        return _merged(out_dynamic, out_static.value)
