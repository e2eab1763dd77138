"""The IR: typed variables, literals, equations and jaxprs (A-normal form).

Every ``Jaxpr`` is typechecked when it is built: each equation's inputs must be
defined before use, and its outputs must have the avals its primitive's abstract
eval gives. A jaxpr that violates this is an internal error, reported at once.
"""

from __future__ import annotations

import numpy as np

from .aval import ShapedArray


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
        from .printer import print_eqn

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
        from .printer import print_jaxpr

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


class JaxprTypeError(TypeError):
    """An ill-typed jaxpr: always an internal error of invarax or of a transformation rule."""


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
