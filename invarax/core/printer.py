"""Print jaxprs in JAX's format: ``{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }``."""

from __future__ import annotations

import numpy as np

from .ir import ClosedJaxpr, Jaxpr, Literal


class _Names:
    """Assigns ``a, b, ..., z, ba, bb, ...`` (base 26) to variables in order of appearance."""

    def __init__(self):
        self.names = {}

    def __call__(self, var) -> str:
        if isinstance(var, Literal):
            return f"{_literal(var.val)}:{var.aval.str_short()}"
        name = self.names.get(id(var))
        if name is None:
            name = self.names[id(var)] = _alphabetic(len(self.names))
        return name

    def binder(self, var) -> str:
        return f"{self(var)}:{var.aval.str_short()}"


def _alphabetic(n: int) -> str:
    digits = []
    while True:
        n, d = divmod(n, 26)
        digits.append(chr(ord("a") + d))
        if n == 0:
            break
    return "".join(reversed(digits))


def _literal(val) -> str:
    item = np.asarray(val).item()
    if isinstance(item, float):
        return repr(float(np.asarray(val)))
    return repr(item)


def _param(value, names, indent) -> str:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return _jaxpr(value, names, indent + 2)
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return repr(value) if isinstance(value, str) else str(value)


def _eqn(eqn, names, indent) -> str:
    params = ""
    if eqn.params:
        shown = [f"{k}={_param(v, names, indent)}" for k, v in sorted(eqn.params.items())]
        params = "[" + " ".join(shown) + "]"
    ins = " ".join(names(v) for v in eqn.invars)
    outs = " ".join(names.binder(v) for v in eqn.outvars)
    return f"{outs} = {eqn.primitive.name}{params} {ins}".rstrip()


def _jaxpr(jaxpr: Jaxpr, names: _Names, indent: int) -> str:
    consts = " ".join(names.binder(v) for v in jaxpr.constvars)
    ins = " ".join(names.binder(v) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let" if consts else f"{{ lambda ; {ins}. let"
    pad = " " * (indent + 4)
    body = "".join(f"\n{pad}{_eqn(e, names, indent + 4)}" for e in jaxpr.eqns)
    outs = " ".join(names(v) for v in jaxpr.outvars)
    tail = f"in ({outs},) }}" if len(jaxpr.outvars) == 1 else f"in ({outs}) }}"
    if not jaxpr.eqns:
        return f"{head} {tail}"
    return f"{head}{body}\n{' ' * (indent + 2)}{tail}"


def print_jaxpr(jaxpr: Jaxpr) -> str:
    """The text of ``jaxpr`` in JAX's format."""
    return _jaxpr(jaxpr, _Names(), 0)


def print_eqn(eqn) -> str:
    """The text of one equation, with fresh variable names."""
    return _eqn(eqn, _Names(), 0)
