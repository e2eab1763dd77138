"""``invarax ir MODULE:FUNCTION --args 'f32[3],f32[]'``: print the IR of a user's function.

The function is traced on zero-filled arguments of the given abstract values, optionally
under ``grad``, ``jvp`` or ``vmap``, and printed in JAX's jaxpr format; ``--optimize``
prints the program ``jit`` runs (after CSE, DCE and constant folding).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys

import numpy as np

from ..core import dtypes

_SPEC = re.compile(r"\s*([a-z]+[0-9]*)\[([0-9,\s]*)\]\s*")
_BY_SHORT = {dtypes.short_name(d): np.dtype(d) for d in dtypes.SUPPORTED}


class UsageError(ValueError):
    """A command-line argument that cannot be used; the message says how to fix it."""


def parse_avals(text: str) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Parse ``'f32[3],f32[]'`` into ``[((3,), float32), ((), float32)]``.

    Arguments:
        text: comma-separated abstract values in jaxpr notation, ``DTYPE[DIMS]``.

    Returns:
        A list of (shape, dtype) pairs.

    Example:
        >>> parse_avals("f32[2,3], i32[]")
        [((2, 3), dtype('float32')), ((), dtype('int32'))]
    """
    avals, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _SPEC.match(text, pos)
        if match is None:
            raise UsageError(
                f"cannot read --args at {text[pos:]!r}: write abstract values as in a jaxpr, "
                "e.g. --args 'f32[3],f32[]' (dtypes: " + ", ".join(sorted(_BY_SHORT)) + ")"
            )
        name, dims = match.groups()
        if name not in _BY_SHORT:
            raise UsageError(
                f"unknown dtype {name!r} in --args; use one of " + ", ".join(sorted(_BY_SHORT))
            )
        shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
        avals.append((shape, _BY_SHORT[name]))
        pos = match.end()
        if pos < len(text):
            if text[pos] != ",":
                raise UsageError(f"expected ',' between abstract values in --args, got {text!r}")
            pos += 1
    return avals


def load_function(target: str):
    """Import ``MODULE:FUNCTION`` (the module from the current directory or sys.path)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"expected MODULE:FUNCTION (e.g. mymodel:loss), got {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"cannot import module {module_name!r}: {err}") from err
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{target} is not callable")
    return obj


def program_text(fun, avals, transform=None, optimize=False, batch=4) -> str:
    """The printed jaxpr of ``fun`` (under ``transform``) for arguments of ``avals``."""
    import invarax

    _check_arity(fun, len(avals))
    wide = any(dtypes.canonicalize(d) != d for _, d in avals)
    previous = invarax.config.jax_enable_x64
    if wide:
        invarax.config.update("jax_enable_x64", True)
    try:
        args = [invarax.numpy.zeros(s, d) for s, d in avals]
        if transform == "grad":
            fun = invarax.grad(fun)
        elif transform == "jvp":
            primal_fun, n = fun, len(args)
            fun = lambda *a: invarax.jvp(primal_fun, a[:n], a[n:])  # noqa: E731
            args = args + [invarax.numpy.zeros(s, d) for s, d in avals]
        elif transform == "vmap":
            fun = invarax.vmap(fun)
            args = [invarax.numpy.zeros((batch, *s), d) for s, d in avals]
        kwargs = {"optimize": True} if optimize else {}
        if optimize and "optimize" not in inspect.signature(invarax.make_jaxpr).parameters:
            raise UsageError("--optimize needs the jit optimiser, which this build lacks")
        return str(invarax.make_jaxpr(fun, **kwargs)(*args))
    finally:
        invarax.config.update("jax_enable_x64", previous)


def _check_arity(fun, count: int) -> None:
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*range(count))
    except TypeError as err:
        raise UsageError(
            f"{getattr(fun, '__name__', 'the function')}{signature} cannot take the {count} "
            f"argument(s) given by --args ({err}); give one abstract value per argument"
        ) from None


def add_parser(commands) -> None:
    """Register the ``ir`` sub-command."""
    parser = commands.add_parser(
        "ir", help="print the IR of MODULE:FUNCTION for given abstract arguments",
        description="Print the jaxpr of a function, e.g. "
                    "invarax ir mymodel:loss --args 'f32[3],f32[]' --grad --optimize",
    )
    parser.add_argument("target", metavar="MODULE:FUNCTION")
    parser.add_argument("--args", required=True, metavar="AVALS",
                        help="abstract arguments, e.g. 'f32[3],f32[]'")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--grad", dest="transform", action="store_const", const="grad",
                     help="the program of grad(FUNCTION) (w.r.t. the first argument)")
    how.add_argument("--jvp", dest="transform", action="store_const", const="jvp",
                     help="the program of jvp(FUNCTION) with tangents shaped as the arguments")
    how.add_argument("--vmap", dest="transform", action="store_const", const="vmap",
                     help="the program of vmap(FUNCTION) over a new leading axis")
    parser.add_argument("--batch", type=int, default=4, help="batch size for --vmap (default 4)")
    parser.add_argument("--optimize", action="store_true",
                        help="show the optimised program that jit runs")


def run(args, out) -> int:
    """Run ``invarax ir`` with parsed ``args``; errors are printed, not raised."""
    try:
        fun = load_function(args.target)
        avals = parse_avals(args.args)
        text = program_text(fun, avals, args.transform, args.optimize, args.batch)
    except UsageError as err:
        print(f"invarax ir: error: {err}", file=sys.stderr)
        return 2
    print(text, file=out)
    return 0
