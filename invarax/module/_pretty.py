"""The repr of modules: fields by name, arrays by dtype and shape (``f32[3,2]``)."""

from __future__ import annotations

import abc
import dataclasses
import functools
import types

import numpy as np

from ._filters import is_array

_WIDTH = 88


class Fielded(abc.ABC):  # noqa: B024 (no methods: a class is marked by registering it)
    """The classes printed field by field, ``Name(field=value, ...)``: ``Module`` registers
    itself (``Fielded.register(Module)``), so nested modules print so too."""


def _short(x, structs: bool = False) -> str | None:
    """``f32[3,2]`` for an array (or a tracer; with ``structs``, anything with a shape and
    a dtype, such as a ``ShapedArray``), None for anything else. As Equinox: a weakly
    typed array is ``weak_f32[]``, a NumPy array ``f64[2](numpy)``, a NumPy scalar its repr."""
    if isinstance(x, np.generic) or not (
            is_array(x) or (structs and hasattr(x, "shape") and hasattr(x, "dtype"))):
        return None
    dtype = np.dtype(x.dtype).name
    for long, short in (("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c")):
        dtype = dtype.replace(long, short)
    if getattr(x, "weak_type", False):
        dtype = f"weak_{dtype}"
    kind = "(numpy)" if isinstance(x, np.ndarray) else ""
    return f"{dtype}[{','.join(map(str, x.shape))}]{kind}"


class _Style:
    """How to print: the line width, the indent step, and arrays as ``f32[3]`` or in full."""

    __slots__ = ("width", "step", "short_arrays", "structs")

    def __init__(self, width: int = _WIDTH, step: int = 2, short_arrays: bool = True,
                 structs: bool = False):
        self.width, self.step, self.short_arrays = width, step, short_arrays
        self.structs = structs


_DEFAULT = _Style()


def _fmt(x, indent: int, style: _Style = _DEFAULT) -> str:
    short = _short(x, style.structs)
    if short is not None:
        return short if style.short_arrays else repr(x).replace("\n", "\n" + " " * indent)
    inner = indent + style.step
    if isinstance(x, Fielded):
        return module_repr(x, indent, style)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        parts = [_fmt(v, inner, style) for v in x]
        open_, close = ("[", "]") if isinstance(x, list) else ("(", ")")
        trailing = "," if isinstance(x, tuple) and len(x) == 1 else ""
        return _join(open_, parts, close, indent, style, trailing)
    if isinstance(x, dict):
        parts = [f"{k!r}: {_fmt(v, inner, style)}" for k, v in x.items()]
        return _join("{", parts, "}", indent, style)
    if isinstance(x, functools.partial):
        parts = [_fmt(v, inner, style) for v in (x.func, *x.args)]
        parts += [f"{k}={_fmt(v, inner, style)}" for k, v in x.keywords.items()]
        return _join("partial(", parts, ")", indent, style)
    if isinstance(x, types.FunctionType) and hasattr(x, "__wrapped__"):
        return f"<wrapped function {x.__qualname__}>"  # functools.wraps: as Equinox
    if callable(x) and hasattr(x, "__qualname__"):
        return f"<function {x.__qualname__}>"
    return repr(x)


def _join(open_: str, parts: list[str], close: str, indent: int, style: _Style = _DEFAULT,
          trailing: str = "") -> str:
    flat = open_ + ", ".join(parts) + trailing + close
    if len(flat) + indent <= style.width and "\n" not in flat:
        return flat
    pad = " " * (indent + style.step)
    return open_ + "\n" + ",\n".join(pad + p for p in parts) + ",\n" + " " * indent + close


def module_repr(module, indent: int = 0, style: _Style = _DEFAULT) -> str:
    """The repr of a module: ``Name(field=value, ...)``, wrapped one field per line if long."""
    parts = [
        f"{f.name}={_fmt(getattr(module, f.name, '<unset>'), indent + style.step, style)}"
        for f in dataclasses.fields(module) if f.repr
    ]
    return _join(f"{type(module).__name__}(", parts, ")", indent, style)
