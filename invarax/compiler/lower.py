"""Turn a jaxpr into a Python function over NumPy arrays.

The generated function calls, for each equation, the very impl that eager
evaluation calls, so a jitted function gives eager's bits (N3). Large
elementwise equations run in fusion groups (``fusion.py``): chunk by chunk, on
threads, each chunk through the same impls.

Each intermediate is released right after its last use. The output of a fusion
group, or of an equation computed by one ufunc, is written into the buffer of a
value that dies there, instead of a fresh array, when the program owns that
buffer: the program owns the outputs of its fusion groups and ufunc equations
(fresh arrays, or buffers it owned before) and the inputs the caller donates. A
buffer is lent this way only if every reader of the value is such an item,
which never returns a view, so no live value can alias it; the program's inputs
(unless donated), constants and outputs are never written over.

Such a buffer also outlives the call: when an owned value dies without being lent on,
its buffer is given to the buffer pool (``core/buffers.py``, by shape and dtype, shared
with fusion's scratch blocks and scan's stacked outputs), and an item whose output has
no dying buffer to take (in this call, a later one or another program) writes into a
pooled one instead of a fresh array, whose pages the system would fault in again at
every call (a transformer's activations: 4 MB arrays, a millisecond each). The pool
hands out only buffers that no live value references, so this changes no bit.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core import buffers, narrow
from ..core.array import ArrayImpl
from ..core.eval import eval_jaxpr
from ..core.ir import Jaxpr, Literal
from ..core.lowering import lowering
from ..core.trace import EVAL_TRACE, set_current_trace
from .dots import biased_products, contractions, stacked_products
from .fusion import Group, plan, ufunc_of
from .native import native_scan, native_while
from .pads import pad_sums


def compile_jaxpr(jaxpr: Jaxpr, donated=None):
    """Return ``run(*consts, *args) -> list`` evaluating ``jaxpr`` on NumPy arrays.

    Arguments:
        jaxpr: the program.
        donated: a bool per invar (default: none): True hands that argument's buffer to the
            program, which may write over it (if it is writeable and shares no memory with
            another argument) once it no longer needs its value.

    Returns:
        The function; ``run.source`` is its Python source, ``run.groups`` its fusion groups
        and ``run.reused`` the values whose buffers their outputs are written into.

    Example:
        >>> run = compile_jaxpr(make_jaxpr(jnp.sin)(1.0).jaxpr)
        >>> run(np.float32(0.5))
        [np.float32(0.47942555)]
    """
    if _holds_narrow(jaxpr):
        return _run_eagerly(jaxpr)
    donated = tuple(donated) if donated is not None else (False,) * len(jaxpr.invars)
    if len(donated) != len(jaxpr.invars):
        raise ValueError(f"donated has {len(donated)} entries for {len(jaxpr.invars)} inputs")
    p = _Program(biased_products(jaxpr), donated, kept=())
    lines = [f"def run({', '.join(p.params)}):", "    with _errstate(all='ignore'):"]
    lines += [f"        {line}" for line in (*p.pre, *p.body)]
    lines.append(f"        return [{', '.join(p.outs)}]")
    return p.make("\n".join(lines))


def _holds_narrow(jaxpr: Jaxpr) -> bool:
    return narrow.involves([v.aval for v in (*jaxpr.constvars, *jaxpr.invars)]) or any(
        narrow.involves([v.aval for v in eqn.outvars]) for eqn in jaxpr.eqns)


def _eagerly(jaxpr: Jaxpr, *args) -> list:
    """``jaxpr`` (constvars first) on NumPy ``args``, each equation run as eager evaluation
    runs it: a program of ``ml_dtypes``' types (bfloat16, float8, int4, ...) takes this path,
    unfused, one rounding per operation (``core/narrow.py``), so its bits are eager's."""
    with set_current_trace(EVAL_TRACE):
        outs = eval_jaxpr(jaxpr, [], *(ArrayImpl(np.asarray(a), False) for a in args))
    return [o._value for o in outs]


def _program_of(run):
    run.source, run.groups, run.reused, run.native = "", [], [], False
    return run


def _run_eagerly(jaxpr: Jaxpr):
    return _program_of(functools.partial(_eagerly, jaxpr))


def _loop_eagerly(jaxpr: Jaxpr, num_consts: int, num_carry: int):
    """``compile_loop``'s loop of a body of ``ml_dtypes``' types, through ``_eagerly``."""
    n_const = len(jaxpr.constvars) + num_consts
    n_xs = len(jaxpr.invars) - num_consts - num_carry

    def run(*args):
        consts, carry = args[:n_const], list(args[n_const:n_const + num_carry])
        rest = args[n_const + num_carry:-1]
        xs, ys, order = rest[:n_xs], rest[n_xs:], args[-1]
        for i in order:
            outs = _eagerly(jaxpr, *consts, *carry, *(x[i] for x in xs))
            carry = outs[:num_carry]
            for y, out in zip(ys, outs[num_carry:], strict=True):
                y[i] = out
        return carry

    return _program_of(run)


def _while_eagerly(cond: Jaxpr, body: Jaxpr, cond_nconsts: int, body_nconsts: int):
    """``compile_while``'s loop of ``ml_dtypes``' types, through ``_eagerly``."""
    nc = len(cond.constvars) + cond_nconsts
    nb = len(body.constvars) + body_nconsts

    def run(*args):
        cond_consts, body_consts, carry = args[:nc], args[nc:nc + nb], list(args[nc + nb:])
        while _eagerly(cond, *cond_consts, *carry)[0]:
            carry = _eagerly(body, *body_consts, *carry)
        return carry

    return _program_of(run)


def compile_loop(jaxpr: Jaxpr, num_consts: int, num_carry: int, native: bool = False):
    """Return ``loop(*consts, *carry, *xs, *ys, order) -> carry``: a ``scan`` of ``jaxpr``
    (consts, carry, x slices -> carry, y slices) in one generated function.

    For each ``i`` in ``order`` the body's statements (those ``compile_jaxpr`` generates,
    calling the same impls and fusion groups) run on ``x[i]`` for each ``x`` of ``xs``,
    rebind the carry and write the y slices into ``ys[k][i]``: no call, list or error-state
    switch per iteration. The consts (and ``jaxpr``'s constvars) are kept for every
    iteration, and the statements that read only them run once, before the loop (the same
    operations on the same values). A 0-d ``+``, ``-``, ``*``, comparison (or float ``/``) is
    written as the Python operator, which NumPy computes on scalars by the same IEEE
    operation as its ufunc (correctly rounded, in the operands' precision) in a tenth of the
    time; a NaN result, whose sign and payload NumPy's scalar path may pick from the other
    operand, is computed again by the ufunc. The body's bits are those of ``compile_jaxpr(jaxpr)``.

    Example:
        >>> j = make_jaxpr(lambda c, x: (c + x, c * x))(1.0, 2.0).jaxpr
        >>> ys = np.empty(3, np.float32)
        >>> compile_loop(j, 0, 1)(np.float32(0), np.arange(3, dtype=np.float32), ys, range(3))
        [np.float32(3.0)]
        >>> ys
        array([0., 0., 2.], dtype=float32)
    """
    if _holds_narrow(jaxpr):
        return _loop_eagerly(jaxpr, num_consts, num_carry)
    n_in = len(jaxpr.invars)
    kept = [*jaxpr.constvars, *jaxpr.invars[:num_consts]]
    scanned = {id(v): f"x{k}" for k, v in enumerate(jaxpr.invars[num_consts + num_carry:])}
    carries = list(zip(jaxpr.invars[num_consts:num_consts + num_carry],
                       jaxpr.outvars[:num_carry], strict=True))
    slots = {}
    for k, v in enumerate(jaxpr.outvars[num_carry:]):
        slots.setdefault(id(v), f"y{k}")
    p = _Program(jaxpr, (False,) * n_in, kept=kept, scalar_operators=True, invariant=kept,
                 scanned=scanned, carries=carries, slots=slots)
    n_const = len(jaxpr.constvars) + num_consts
    carry_in = p.params[n_const:n_const + num_carry]
    xs_in = p.params[n_const + num_carry:]
    xs = [f"x{k}" for k in range(len(xs_in))]
    ys = [f"y{k}" for k in range(len(p.outs) - num_carry)]
    args = [*p.params[:n_const], *carry_in, *xs, *ys, "order"]
    owned = [p.params[len(jaxpr.constvars) + jaxpr.invars.index(v)] for v in p.owned_carries]
    lines = [f"def run({', '.join(args)}):", *_as_scalars(jaxpr, p.params[:n_const + num_carry]),
             *(f"    {name} = _copy({name})" for name in owned),
             "    with _errstate(all='ignore'):", *(f"        {line}" for line in p.pre),
             "        for _i in order:"]
    lines += [f"            {v} = {x}[_i]" for v, x in zip(xs_in, xs, strict=True)]
    lines += [f"            {line}" for line in p.body]
    lines += [f"            {y}[_i] = {o}" for y, o in zip(ys, p.outs[num_carry:], strict=True)
              if y not in p.slotted]
    if num_carry:  # after the ys, which may be carry inputs
        lines.append(f"            {', '.join(carry_in)}, = {', '.join(p.outs[:num_carry])},")
    if not p.body and not num_carry and not ys:
        lines.append("            pass")
    lines.append(f"    return [{', '.join(carry_in)}]")
    run = p.make("\n".join(lines))
    run.native = False
    return (native and native_scan(jaxpr, num_consts, num_carry, run)) or run


def _scalar_operator(item):
    """The Python operator computing ``item`` on 0-d operands bit for bit, or None: the
    lowering's ``operator``, where a ufunc computes the item (so not an integer ``/``) on
    two float32, float64 or integer operands."""
    if isinstance(item, Group) or any(v.aval.shape != () for v in (*item.invars,
                                                                  *item.outvars)):
        return None
    op, dtype = lowering(item.primitive).operator, item.invars[0].aval.dtype
    if op is None or ufunc_of(item) is None or len(item.invars) != 2:
        return None
    if dtype.kind not in "fiu" or (dtype.kind == "f" and dtype.itemsize < 4):
        return None
    return op


def compile_while(cond: Jaxpr, body: Jaxpr, cond_nconsts: int, body_nconsts: int,
                  native: bool = False):
    """Return ``loop(*cond_consts, *body_consts, *carry) -> carry``: a ``while`` of ``cond``
    (cond consts, carry -> bool) and ``body`` (body consts, carry -> carry) in one generated
    function.

    Each iteration runs the statements ``compile_loop`` would generate for ``cond``, stops
    if its result is False, else those for ``body``, and rebinds the carry. The jaxprs'
    constvars come first among the consts (``cond``'s, then ``body``'s). With ``native``, as
    ``compile_loop``.

    Example:
        >>> c = make_jaxpr(lambda x: x < 10)(1).jaxpr
        >>> b = make_jaxpr(lambda x: x * 2)(1).jaxpr
        >>> compile_while(c, b, 0, 0)(np.int32(1))
        [np.int32(16)]
    """
    if _holds_narrow(cond) or _holds_narrow(body):
        return _while_eagerly(cond, body, cond_nconsts, body_nconsts)
    nc = len(cond.constvars) + cond_nconsts
    nb = len(body.constvars) + body_nconsts
    c = _Program(cond, (False,) * len(cond.invars), kept=[*cond.constvars, *cond.invars],
                 scalar_operators=True, prefix="c",
                 invariant=[*cond.constvars, *cond.invars[:cond_nconsts]])
    b = _Program(body, (False,) * len(body.invars),
                 kept=[*body.constvars, *body.invars[:body_nconsts]], scalar_operators=True,
                 prefix="b", invariant=[*body.constvars, *body.invars[:body_nconsts]])
    b.namespace.update(c.namespace)
    carry, cond_carry = b.params[nb:], c.params[nc:]
    lines = [f"def run({', '.join([*c.params[:nc], *b.params[:nb], *carry])}):",
             *_as_scalars(cond, c.params[:nc]), *_as_scalars(body, b.params),
             "    with _errstate(all='ignore'):", *(f"        {line}" for line in (*c.pre, *b.pre)),
             "        while True:"]
    if carry:
        lines.append(f"            {', '.join(cond_carry)}, = {', '.join(carry)},")
    lines += [f"            {line}" for line in c.body]
    lines.append(f"            if not {c.outs[0]}:")
    lines.append("                break")
    lines += [f"            {line}" for line in b.body]
    if carry:
        lines.append(f"            {', '.join(carry)}, = {', '.join(b.outs)},")
    lines.append(f"    return [{', '.join(carry)}]")
    b.groups += c.groups
    b.reused += c.reused
    run = b.make("\n".join(lines))
    run.native = False
    return (native and native_while(cond, body, cond_nconsts, body_nconsts)) or run


def _as_scalars(jaxpr: Jaxpr, names) -> list:
    """Lines turning the 0-d inputs among ``names`` (the first of ``jaxpr``'s constvars and
    invars) into NumPy scalars, which the scalar operators compute on fastest."""
    avals = [v.aval for v in (*jaxpr.constvars, *jaxpr.invars)][:len(names)]
    return [f"    {n} = {n}[()]" for n, a in zip(names, avals, strict=True) if a.shape == ()]


class _Program:
    """The statements evaluating ``jaxpr`` (``params``: its inputs' names, ``body``: the
    lines, ``outs``: its outputs' names); ``kept`` values are never deleted. With
    ``scalar_operators``, 0-d arithmetic is written with Python operators (on NumPy
    scalars; literals become NumPy scalars). For a loop body, ``invariant`` are the values
    the same in every iteration (its consts): the statements that read nothing else go to
    ``pre``, to run once before the loop (the same operations on the same values)."""

    def __init__(self, jaxpr: Jaxpr, donated, kept, scalar_operators=False, prefix="",
                 invariant=(), scanned=None, carries=(), slots=None):
        self.namespace = {"_errstate": np.errstate, "_donor": _donor, "_take": buffers.take,
                          "_give": buffers.give, "_copy": _copy}
        self.prefix, self.scalar_operators, self.invariant = prefix, scalar_operators, invariant
        self.names = {}
        self.params = [self.bind_name(v) for v in (*jaxpr.constvars, *jaxpr.invars)]
        self.slots, self.slotted = slots or {}, set()
        items = [i for i in plan(jaxpr) if not (isinstance(i, Group) and not i.outvars)]
        self.same = same = {id(v) for v in invariant}
        for item in items:
            if invariant and all(isinstance(v, Literal) or id(v) in same for v in item.invars):
                same.update(id(v) for v in item.outvars)
        self.stacked = stacked_products(items, same, scanned or {})
        items = pad_sums(contractions(items), [*jaxpr.outvars, *kept])
        self.hoisted = {i for i, item in enumerate(items) if invariant and all(
            isinstance(v, Literal) or id(v) in same for v in item.invars)}
        kept = [*kept, *(v for i in sorted(self.hoisted) for v in items[i].outvars)]
        self.last_use = _last_uses(items, [*jaxpr.outvars, *kept])
        self.owned_carries = _recyclable(jaxpr, items, self.hoisted, carries)
        self.lenders = _lenders(jaxpr, items, donated, {id(v) for v in self.owned_carries})
        self.body, self.pre, self.groups, self.reused = [], [], [], []
        self.donor_names = {}
        for v, d in zip(jaxpr.invars, donated, strict=True):
            if d and id(v) in self.lenders:
                name = self.names[id(v)]
                others = "".join(f"{p}, " for p in self.params if p != name)
                self.donor_names[id(v)] = f"d{name}"
                self.body.append(f"d{name} = _donor({name}, ({others}))")
        for i, item in enumerate(items):
            self._emit(i, item, self.pre if i in self.hoisted else self.body)
        self.outs = [self.name_of(v) for v in jaxpr.outvars]

    def name_of(self, v) -> str:
        """The name of ``v``'s value in the generated code (a literal's: a new global)."""
        if isinstance(v, Literal):
            key = f"{self.prefix}lit{len(self.namespace)}"
            self.namespace[key] = v.val._value
            return key
        return self.names[id(v)]

    def bind_name(self, v) -> str:
        """A new name for the value of ``v``."""
        self.names[id(v)] = f"{self.prefix}v{len(self.names)}"
        return self.names[id(v)]

    def _emit(self, i: int, item, body: list):
        """Append to ``body`` (or ``pre``) the statements computing ``item``, the ``i``-th."""
        fn, pre = f"{self.prefix}f{i}", self.pre
        slot = (self.slots.get(id(item.outvars[0])) if i not in self.hoisted and not
                isinstance(item, Group) and _writes_into_buffers(item) else None)
        bufs = ([None] if slot else
                _buffers(_candidates(item), self.last_use.get(i, ()), self.lenders))
        self.reused += [b for b in bufs if b is not None]
        buf_names = [_pooled(v, self.namespace, self.prefix) if b is None
                     else self.donor_names.get(id(b), self.names[id(b)])
                     for b, v in zip(bufs, item.outvars, strict=False)]
        if slot:  # a scan's y, computed into its place in the stacked ys
            buf_names = [f"{slot}[_i]"]
            self.slotted.add(slot)
        args = [self.name_of(v) for v in item.invars]
        if item.outvars and id(item.outvars[0]) in self.stacked:  # computed before the loop
            product, whole, side = self.stacked[id(item.outvars[0])]
            self.namespace[fn] = product
            args[side] = whole
            pre.append(f"{self.prefix}s{i} = {fn}({', '.join(args)})")
            body.append(f"{self.bind_name(item.outvars[0])} = {self.prefix}s{i}[_i]")
            self._delete(i, body)
            return
        if (self.invariant and i not in self.hoisted and getattr(item.primitive, "packs", False)
                and not isinstance(item.invars[1], Literal) and id(item.invars[1]) in self.same):
            pre.append(f"{self.prefix}k{i} = {fn}.pack({args[1]})")  # a weight: packed once
            args.append(f"{self.prefix}k{i}")
        op = _scalar_operator(item) if self.scalar_operators else None
        if op is not None:
            self._emit_operator(fn, item, op, args, body)
            self._delete(i, body)
            return
        if isinstance(item, Group):
            self.namespace[fn] = item.runner()
            args += buf_names
            outvars, multiple = item.outvars, True
            self.groups.append(item)
        else:
            impl = lowering(item.primitive).impl
            if bufs and buf_names[0] != "None":  # a ufunc writing into a dead or pooled buffer
                impl = ufunc_of(item)
                args.append(f"out={buf_names[0]}")
            self.namespace[fn] = functools.partial(impl, **item.params) if item.params else impl
            outvars, multiple = item.outvars, item.primitive.multiple_results
        outs = ", ".join(self.bind_name(v) for v in outvars)
        if multiple:
            outs = f"({outs},)"
        call = f"{fn}({', '.join(args)})"
        body.append(f"{outs} = {call}" if outvars else call)  # no outputs: an effect
        lent = {id(b) for b in bufs if b is not None}
        body += [f"_give({self.names[id(v)]})" for v in self.last_use.get(i, ())
                 if id(v) in self.lenders and id(v) not in lent and id(v) not in self.donor_names]
        self._delete(i, body)

    def _emit_operator(self, fn: str, item, op: str, args: list, body: list):
        """A 0-d operation as its Python operator on NumPy scalars; a NaN result computed
        again by the ufunc (whose sign and payload the scalar path may take elsewhere)."""
        for v, a in zip(item.invars, args, strict=True):
            if isinstance(v, Literal):
                self.namespace[a] = self.namespace[a][()]
        out = self.bind_name(item.outvars[0])
        body.append(f"{out} = {args[0]} {op} {args[1]}")
        if item.outvars[0].aval.dtype.kind == "f":  # a NaN: the ufunc's bits
            self.namespace[fn] = ufunc_of(item)
            body.append(f"if {out} != {out}: {out} = {fn}({', '.join(args)})")

    def _delete(self, i: int, body: list):
        """``del`` the values whose last use is the ``i``-th item."""
        dead = [self.names[id(v)] for v in self.last_use.get(i, ())]
        if dead:
            body.append(f"del {', '.join(dead)}")

    def make(self, source: str):
        exec(compile(source, "<invarax.jit>", "exec"), self.namespace)
        run = self.namespace["run"]
        run.source = source
        run.groups = self.groups
        run.reused = self.reused
        return run


def _last_uses(items, outvars):
    """Map item index -> the variables whose last use it is (outputs are never freed)."""
    keep = {id(v) for v in outvars}
    last = {}
    for i, item in enumerate(items):
        for v in item.invars:
            if not isinstance(v, Literal) and id(v) not in keep:
                last[id(v)] = (i, v)
    by_item = {}
    for i, v in last.values():
        by_item.setdefault(i, {})[id(v)] = v
    return {i: list(vs.values()) for i, vs in by_item.items()}


def _writes_into_buffers(item) -> bool:
    """Whether ``item`` can write its outputs into given buffers (and never returns a view):
    a fusion group, or an equation computed by one ufunc, with an array output."""
    if isinstance(item, Group):
        return True
    return ufunc_of(item) is not None and item.outvars[0].aval.shape != ()


def _candidates(item) -> list:
    """For each output of ``item``: the inputs whose buffer it may be written into."""
    if isinstance(item, Group):
        return item.reusable
    if not _writes_into_buffers(item):
        return []
    out = item.outvars[0].aval
    return [[v for v in item.invars if not isinstance(v, Literal)
             and v.aval.shape == out.shape and v.aval.dtype == out.dtype]]


def _recyclable(jaxpr: Jaxpr, items, hoisted, carries) -> list:
    """The carry inputs of a loop body (``carries``: pairs of its carry input and output)
    whose buffer the loop owns in every iteration: the output is computed in the loop by a
    fusion group or ufunc equation (a fresh or recycled buffer, never a view), is no other
    output and is read by no item that could return a view of it, so when the next
    iteration begins no live value reaches its buffer but the carry. The loop copies these
    carries' initial values once (``compile_loop``), so the caller's arrays are never
    written; then the body may write over a carry's buffer once it is dead (``dW = dW +
    g``: in place, as any owned value's)."""
    writers = {id(v) for i, item in enumerate(items)
               if i not in hoisted and _writes_into_buffers(item) for v in item.outvars}
    viewers = {id(v) for item in items if not _writes_into_buffers(item) for v in item.invars}
    count = {}
    for v in jaxpr.outvars:
        count[id(v)] = count.get(id(v), 0) + 1
    return [cin for cin, cout in carries
            if id(cout) in writers and id(cout) not in viewers and count[id(cout)] == 1
            and cin.aval.shape != ()]


def _lenders(jaxpr: Jaxpr, items, donated, owned_inputs=frozenset()) -> set:
    """The ids of the values whose buffer the program may write over once they are dead:
    owned (the output of a fusion group or of a ufunc equation, a donated input, or an
    input in ``owned_inputs``: a loop's recycled carries), read only by items that never
    return a view of it, and not a program output."""
    owned = {id(v) for v, d in zip(jaxpr.invars, donated, strict=True) if d} | owned_inputs
    for item in items:
        if _writes_into_buffers(item):
            owned.update(id(v) for v in item.outvars)
    for item in items:
        if not _writes_into_buffers(item):
            owned.difference_update(id(v) for v in item.invars)
    owned.difference_update(id(v) for v in jaxpr.outvars)
    return owned


def _buffers(candidates, dying, lenders) -> list:
    """For each output: a dying value whose buffer it is written into, or None."""
    free = [v for v in dying if id(v) in lenders]
    bufs = []
    for options in candidates:
        pick = next((v for v in options if any(v is f for f in free)), None)
        if pick is not None:
            free = [f for f in free if f is not pick]
        bufs.append(pick)
    return bufs


def _copy(x):
    """A fresh C-contiguous copy of ``x``, which a loop owns (a recycled carry's start)."""
    return np.array(x, order="C", copy=True)


def _donor(x, others):
    """``x`` if the program may write over it (writeable, shares no memory with ``others``)."""
    if not (isinstance(x, np.ndarray) and x.flags.writeable):
        return None
    if any(np.may_share_memory(x, o) for o in others if isinstance(o, np.ndarray)):
        return None
    return x


def _pooled(var, namespace, prefix: str) -> str:
    """The expression of an output buffer for ``var`` taken from the buffer pool (``None``,
    a fresh array, below its ``MIN_BYTES``: the heap's memory is already resident); the
    name of its ``(shape, dtype)`` carries the program's ``prefix``, as a while loop's
    condition and body share one namespace."""
    aval = var.aval
    dtype = np.dtype(aval.dtype)
    if math.prod(aval.shape) * dtype.itemsize < buffers.MIN_BYTES:
        return "None"
    key = f"_{prefix}key{len(namespace)}"
    namespace[key] = (tuple(aval.shape), dtype)
    return f"_take(*{key})"
