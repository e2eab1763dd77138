"""The IR: typed variables, literals, equations and jaxprs (A-normal form), and its printer.

Every ``Jaxpr`` is typechecked when it is built: each equation's inputs must be
defined before use, and its outputs must have the avals its primitive's abstract
eval gives. A jaxpr that violates this is an internal error, reported at once.

Jaxprs print in JAX's format: ``{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }``.
As JAX's printer, a jaxpr (or an equation) goes on one line when it fits in 80
columns, and is broken otherwise: one equation a line, and an equation's
parameters one a line when the equation does not fit. Nested jaxprs name their
variables afresh.
"""

from __future__ import annotations

import numpy as np

from .aval import ShapedArray
from .errors import JaxprTypeError


class Var:
    """A variable of the IR; named only when printed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in the IR (``2.0:f32[]``)."""

    __slots__ = ("val", "aval")

    def __init__(self, val: np.ndarray, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val.item()!r}:{self.aval.str_short()})"


class Eqn:
    """``outvars = primitive[params] invars``."""

    __slots__ = ("primitive", "invars", "outvars", "params")

    def __init__(self, primitive, invars, outvars, params):
        self.primitive = primitive
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.params = params

    def __repr__(self):
        return print_eqn(self)


class Jaxpr:
    """A typed program: ``{ lambda constvars ; invars . let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "outvars", "eqns")

    def __init__(self, constvars, invars, outvars, eqns, check: bool = True):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        if check:
            typecheck(self)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return print_jaxpr(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars.

    This is what ``make_jaxpr`` returns; ``str()`` prints it in JAX's format.
    """

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts):
        if len(consts) != len(jaxpr.constvars):
            raise AssertionError("internal error: one value per constvar is needed")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


def typecheck(jaxpr: Jaxpr) -> None:
    """Check that ``jaxpr`` is well formed and well typed; raise ``JaxprTypeError`` if not."""
    defined = set()

    def define(v):
        if not isinstance(v, Var):
            raise JaxprTypeError(f"binder {v!r} is not a Var")
        if id(v) in defined:
            raise JaxprTypeError(f"variable {v!r} is defined twice")
        defined.add(id(v))

    def read(v, where):
        if isinstance(v, Literal):
            return v.aval
        if id(v) not in defined:
            raise JaxprTypeError(f"variable {v!r} is used before it is defined, in {where}")
        return v.aval

    for v in (*jaxpr.constvars, *jaxpr.invars):
        define(v)
    for eqn in jaxpr.eqns:
        in_avals = [read(v, eqn.primitive.name) for v in eqn.invars]
        out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        out_avals = out if eqn.primitive.multiple_results else [out]
        given = [v.aval for v in eqn.outvars]
        if list(out_avals) != given:
            raise JaxprTypeError(
                f"equation {eqn.primitive.name} produces "
                f"{[a.str_short() for a in out_avals]} but binds {[a.str_short() for a in given]}"
            )
        for v in eqn.outvars:
            define(v)
    for v in jaxpr.outvars:
        read(v, "the outputs")


# --- the printer (JAX's format) ---------------------------------------------------------

WIDTH = 80


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
            return "".join(reversed(digits))


def _literal(val) -> str:
    return str(np.asarray(val)[()])  # the shortest repr of the value in its own dtype


def _param(value, column: int, flat: bool, indent: int = 0) -> str:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return _jaxpr(value, _Names(), column, column, flat)
    if isinstance(value, tuple) and value and all(isinstance(v, ClosedJaxpr) for v in value):
        if flat:  # a tuple of jaxprs (cond's branches), one a line when broken
            return "(" + " ".join(_param(v, 0, True) for v in value) + ")"
        pad = " " * (indent + 2)
        items = "".join(f"\n{pad}{_param(v, indent + 2, False)}" for v in value)
        return f"({items}\n{' ' * indent})"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _eqn(eqn, names: _Names, indent: int, flat: bool = False) -> str:
    ins = " ".join(names(v) for v in eqn.invars)
    outs = " ".join(names.binder(v) for v in eqn.outvars)
    head = f"{outs} = {eqn.primitive.name}"
    items = eqn.params.items()
    shown = " ".join(f"{k}={_param(v, 0, True)}" for k, v in items)
    line = f"{head}[{shown}] {ins}" if items else f"{head} {ins}"
    if flat or indent + len(line) <= WIDTH:
        return line.rstrip()
    pad = " " * (indent + 2)
    lines = [f"{pad}{k}={_param(v, indent + 3 + len(k), False, indent + 2)}" for k, v in items]
    return f"{head}[\n" + "\n".join(lines) + f"\n{' ' * indent}] {ins}".rstrip()


def _jaxpr(jaxpr: Jaxpr, names: _Names, column: int, indent: int, flat: bool = False) -> str:
    consts = " ".join(names.binder(v) for v in jaxpr.constvars)
    ins = " ".join(names.binder(v) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let" if consts else f"{{ lambda ; {ins}. let"
    bound = dict(names.names)
    eqns = "; ".join(_eqn(e, names, 0, flat=True) for e in jaxpr.eqns)
    line = f"{head} {eqns} {_outs(jaxpr, names)}"
    if flat or column + len(line) <= WIDTH:
        return line
    names.names = bound  # print again, broken, with the same names
    pad = " " * (indent + 4)
    body = "".join(f"\n{pad}{_eqn(e, names, indent + 4)}" for e in jaxpr.eqns)
    return f"{head}{body}\n{' ' * (indent + 2)}{_outs(jaxpr, names)}"


def _outs(jaxpr: Jaxpr, names: _Names) -> str:
    outs = ", ".join(names(v) for v in jaxpr.outvars)
    return f"in ({outs},) }}" if len(jaxpr.outvars) == 1 else f"in ({outs}) }}"


def print_jaxpr(jaxpr: Jaxpr) -> str:
    """The text of ``jaxpr`` in JAX's format."""
    return _jaxpr(jaxpr, _Names(), 0, 0)


def print_eqn(eqn) -> str:
    """The text of one equation, with fresh variable names."""
    return _eqn(eqn, _Names(), 0)
