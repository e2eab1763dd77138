"""Structured control flow with JAX's signatures: ``cond``, ``switch``, ``while_loop``,
``fori_loop``, ``scan`` and ``map``.

Each traces the user's functions to closed jaxprs (the tracers they close over become
leading operands) and binds one primitive (``ops/cond.py``, ``ops/scan_p.py``,
``ops/while_p.py``) whose rules make it differentiable, batchable and compiled. Operands,
carries and ``xs`` are pytrees; a body that changes the carry's structure, shape or dtype,
or branches returning different types, raise an error naming the pytree path and both
types. As in JAX, a weakly typed initial carry (a Python scalar) takes the type the body
gives it: ``fori_loop(0, 3, lambda i, x: x + y, 0.0)`` carries ``y``'s dtype.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from ..control_flow import common as cf
from ..control_flow.cond import cond_p
from ..control_flow.scan import scan_p
from ..control_flow.while_loop import while_p
from ..core import dtypes
from ..core.array import to_array
from ..core.config import config
from ..core.errors import ConcretizationTypeError
from ..core.ir import ClosedJaxpr, Jaxpr, Var
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ..core.trace import Tracer
from ..ops.elementwise import convert_element_type, max, min, ne
from ..ops.shape import concatenate, expand_dims


def _leaves(tree, what: str):
    """``(arrays, treedef, paths)`` of the pytree ``tree``; a non-array leaf is an error
    naming its path."""
    pairs, treedef = tree_flatten_with_path(tree)
    paths = [keystr(p) for p, _ in pairs]
    return [to_array(x, f"{what}{p}") for (_, x), p in zip(pairs, paths, strict=True)], treedef, \
        paths


def _describe(a) -> str:
    weak = " (weakly typed)" if a.weak_type else ""
    return f"{a.dtype.name}{list(a.shape)}{weak}"


def _check_carry(who, what, in_tree, out_tree, in_avals, out_avals, paths):
    """The body's carry output must match its input carry (structure, shapes, dtypes)."""
    if in_tree != out_tree:
        raise TypeError(
            f"{who} body function carry input and carry output must have the same pytree "
            f"structure, but the input {what} is {in_tree} and the output is {out_tree}. "
            f"Return the new {what} with the structure of the initial one.")
    for p, a, b in zip(paths, in_avals, out_avals, strict=True):
        if not cf.typematch(a, b):
            diff = "shapes" if a.shape != b.shape else "dtypes"
            raise TypeError(
                f"{who} body function carry input and carry output must have equal types, "
                f"but the input {what} component {what}{p} has type {_describe(a)} and the "
                f"corresponding output component has type {_describe(b)}, so the {diff} "
                f"differ. Make the body return {what}{p} with the initial shape and dtype "
                f"(e.g. .astype({a.dtype.name}) or a reshape), or start from an initial value "
                "of the type the body returns.")


def _promote_weak(arrays, out_avals):
    """The initial carries that are weakly typed and that the body returns with another
    type, converted to it (as JAX does); ``(arrays, changed)``."""
    new, changed = [], False
    for x, o in zip(arrays, out_avals, strict=True):
        if x.weak_type and x.shape == o.shape and (x.dtype != o.dtype or not o.weak_type):
            dtype = dtypes.canonicalize(np.promote_types(x.dtype, o.dtype))
            x = convert_element_type(x, dtype, weak_type=o.weak_type and dtype == o.dtype)
            changed = True
        new.append(x)
    return new, changed


class _Body:
    """A user function on pytrees as a flat function; records its output structure."""

    def __init__(self, fun, in_trees, split_out=None):
        self.fun, self.in_trees, self.split_out = fun, in_trees, split_out
        self.out_trees = None

    def __call__(self, ins):
        args, start = [], 0
        for tree in self.in_trees:
            args.append(tree_unflatten(tree, ins[start:start + tree.num_leaves]))
            start += tree.num_leaves
        out = self.fun(*args)
        parts = self.split_out(out) if self.split_out else (out,)
        leaves, self.out_trees = [], []
        for part in parts:
            flat, tree = tree_flatten(part)
            leaves += flat
            self.out_trees.append(tree)
        return [to_array(x, "a control-flow body's output") for x in leaves]


def _trace_carry(who, what, fun, carry, rest_avals, in_trees, split_out, description):
    """Trace ``fun`` of the carry (and ``rest_avals`` after it): weakly typed initial
    carries the body changes are promoted and the body traced again; then the carry types
    are checked. Returns ``(closed, hoisted, body, carry)``."""
    arrays, tree, paths = carry
    for _ in range(2):
        body = _Body(fun, in_trees, split_out)
        closed, hoisted = cf.trace_body(body, [x.aval for x in arrays] + rest_avals,
                                        description)
        out_tree = body.out_trees[0]
        n = len(arrays)
        if out_tree != tree:
            break
        arrays, changed = _promote_weak(arrays, closed.out_avals[:n])
        if not changed:
            break
    _check_carry(who, what, tree, out_tree, [x.aval for x in arrays], closed.out_avals[:n],
                 paths)
    return closed, hoisted, body, arrays


# ---------------------------------------------------------------------------------------
# scan and map


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loop ``f`` over the leading axis of ``xs``, carrying state: JAX's ``lax.scan``.

    Equivalent to (but one primitive, compiled once, differentiable and batchable)::

        def scan(f, init, xs, length=None):
            carry, ys = init, []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, np.stack(ys)

    Arguments:
        f: ``f(carry, x) -> (carry, y)``; ``carry`` keeps its structure, shapes and dtypes.
        init: the initial carry (a pytree of arrays).
        xs: a pytree of arrays with a common leading size, or None (then ``length``
            iterations with ``x = None``).
        length: the number of iterations (required without ``xs``).
        reverse: iterate from the last element to the first (ys keep their positions).
        unroll: accepted as in JAX and recorded; the compiled loop runs every iteration the
            same way, so it changes no bit.
        _split_transpose: accepted as in JAX; ignored.

    Returns:
        ``(final_carry, ys)``, ``ys`` the stacked ``y`` outputs.

    Example:
        >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(1.0, 4.0))
        (Array(6., dtype=float32), Array([0., 2., 9.], dtype=float32))
    """
    if not callable(f):
        raise TypeError(f"lax.scan: f must be callable, got {type(f).__name__}")
    xs_arrays, xs_tree, xs_paths = _leaves(xs, "xs")
    length = _scan_length(xs_arrays, xs_paths, length)
    if config.jax_disable_jit:
        return _scan_in_python(f, init, xs_arrays, xs_tree, length, reverse)
    carry = _leaves(init, "init")
    x_avals = [x.aval.update(shape=x.shape[1:]) for x in xs_arrays]

    def split_out(out):
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            size = f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""
            raise TypeError("scan body function must return a pair (carry, y), got "
                            f"{type(out).__name__}{size}")
        return out

    closed, hoisted, body, arrays = _trace_carry(
        "scan", "carry", f, carry, x_avals, [carry[1], xs_tree], split_out,
        f"scan of {getattr(f, '__name__', 'f')}")
    n = len(arrays)
    outs = scan_p.bind(*hoisted, *arrays, *xs_arrays, jaxpr=closed, length=length,
                       linear=(False,) * (len(hoisted) + n + len(xs_arrays)), num_carry=n,
                       num_consts=len(hoisted), reverse=bool(reverse), unroll=unroll)
    return (tree_unflatten(carry[1], outs[:n]), tree_unflatten(body.out_trees[1], outs[n:]))


def _scan_in_python(f, carry, xs, xs_tree, length, reverse):
    """``scan`` under ``disable_jit``, as JAX's: a Python loop calling ``f`` on the carry as
    it comes (the first time ``init`` as given) and each slice of ``xs``; ``ys`` stacked."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown: run it outside disable_jit")
    steps = range(length - 1, -1, -1) if reverse else range(length)
    ys = []
    for i in steps:
        carry, y = f(carry, tree_unflatten(xs_tree, [x[i] for x in xs]))
        ys.append(tree_flatten(y))
    if reverse:
        ys.reverse()
    columns = zip(*(leaves for leaves, _ in ys), strict=True)
    stacked = [concatenate([expand_dims(to_array(y, "a scan body's y"), (0,)) for y in ys_i], 0)
               for ys_i in columns]
    return carry, tree_unflatten(ys[0][1], stacked)


def _scan_length(xs, paths, length):
    if length is not None:
        try:
            length = operator.index(length)
        except TypeError:
            raise TypeError(f"lax.scan: length must be a Python int, got {length!r}") from None
        if length < 0:
            raise ValueError(f"lax.scan: length must be non-negative, got {length}")
    for x, p in zip(xs, paths, strict=True):
        if x.ndim == 0:
            raise ValueError(
                f"scan got value with no leading axis to scan over: xs{p} of shape (). Every "
                "array in xs must have a leading axis of the scan's length.")
    sizes = {x.shape[0] for x in xs}
    if len(sizes) > 1:
        listed = ", ".join(f"xs{p} has {x.shape[0]}" for x, p in zip(xs, paths, strict=True))
        raise ValueError(f"scan got values with different leading axis sizes: {listed}. Every "
                         "array in xs must have the same leading size.")
    if length is None:
        if not sizes:
            raise ValueError("scan got no values to scan over and `length` not provided: pass "
                             "xs, or length=N.")
        return sizes.pop()
    if sizes and sizes != {length}:
        raise ValueError(f"scan got `length` argument of {length} which disagrees with leading "
                         f"axis sizes {sorted(sizes)}: drop length or make them agree.")
    return length


def map(f, xs, *, batch_size=None):
    """``f`` applied to each slice of ``xs`` along its leading axis, as a ``scan``.

    Arguments:
        f: a function of one slice (a pytree like ``xs`` without the leading axis).
        xs: a pytree of arrays with a common leading size.
        batch_size: if given, ``f`` is ``vmap``-ed over batches of that many slices (the
            last, partial batch separately), as JAX's.

    Returns:
        The stacked outputs of ``f``.

    Example:
        >>> lax.map(lambda x: x * 2.0, jnp.arange(3.0))
        Array([0., 2., 4.], dtype=float32)
    """
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    from ..ops.shape import concatenate, reshape, slice_in_dim
    from ..transforms._vmap import vmap

    leaves, tree, paths = _leaves(xs, "xs")
    n = _scan_length(leaves, paths, None)
    nb, rem = divmod(n, batch_size)

    def batches(lo, hi, shape):
        return tree_unflatten(tree, [reshape(slice_in_dim(x, lo, hi, 1, 0), (*shape, *x.shape[1:]))
                                     for x in leaves])

    out_leaves = []
    if nb:
        ys = scan(lambda _, x: ((), vmap(f)(x)), (), batches(0, nb * batch_size,
                                                              (nb, batch_size)))[1]
        ys_l, ys_tree = tree_flatten(ys)
        out_leaves.append([reshape(y, (nb * batch_size, *y.shape[2:])) for y in ys_l])
    if rem:
        ys_l, ys_tree = tree_flatten(vmap(f)(batches(nb * batch_size, n, (rem,))))
        out_leaves.append(ys_l)
    if len(out_leaves) == 1:
        return tree_unflatten(ys_tree, out_leaves[0])
    return tree_unflatten(ys_tree, [concatenate([a, b], 0)
                                    for a, b in zip(*out_leaves, strict=True)])


# ---------------------------------------------------------------------------------------
# while_loop and fori_loop


def while_loop(cond_fun, body_fun, init_val):
    """Apply ``body_fun`` to a carry while ``cond_fun`` of it is True: JAX's ``lax.while_loop``.

    Equivalent to ``while cond_fun(val): val = body_fun(val)``, as one primitive:
    differentiable in forward mode, batchable (an example whose condition is False keeps
    its carry, bit for bit, while others go on) and compiled. Reverse mode raises, as in
    JAX; use ``scan``, ``fori_loop`` with concrete bounds, or ``checkpointed_while_loop``.

    Arguments:
        cond_fun: ``cond_fun(val) -> bool`` scalar.
        body_fun: ``body_fun(val) -> val``, keeping its structure, shapes and dtypes.
        init_val: the initial carry (a pytree of arrays).

    Returns:
        The final carry.

    Example:
        >>> lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)
        Array(16, dtype=int32, weak_type=True)
    """
    for name, fun in (("cond_fun", cond_fun), ("body_fun", body_fun)):
        if not callable(fun):
            raise TypeError(f"lax.while_loop: {name} must be callable, got {type(fun).__name__}")
    if config.jax_disable_jit:
        try:  # a Python loop, as JAX's; a traced condition (under vmap) takes the primitive
            val = _as_arrays(init_val)
            while cond_fun(val):
                val = _as_arrays(body_fun(val))
            return val
        except ConcretizationTypeError:
            pass
    carry = _leaves(init_val, "init_val")
    body, hoisted_b, _, arrays = _trace_carry("while_loop", "init_val", body_fun, carry, [],
                                              [carry[1]], None, "while_loop body")
    cond_body = _Body(cond_fun, [carry[1]])
    cond, hoisted_c = cf.trace_body(cond_body, [x.aval for x in arrays], "while_loop cond")
    _check_predicate(cond, cond_body.out_trees[0])
    outs = while_p.bind(*hoisted_c, *hoisted_b, *arrays, body_jaxpr=body,
                        body_nconsts=len(hoisted_b), cond_jaxpr=cond,
                        cond_nconsts=len(hoisted_c))
    return tree_unflatten(carry[1], outs)


def _as_arrays(tree):
    arrays, treedef, _ = _leaves(tree, "a while_loop carry")
    return tree_unflatten(treedef, arrays)


def _check_predicate(cond: ClosedJaxpr, tree):
    avals = cond.out_avals
    if tree.num_leaves != 1 or avals[0].shape != () or avals[0].dtype != np.bool_:
        raise TypeError(
            "cond_fun must return a boolean scalar, but got output type(s) "
            f"{[_describe(a) for a in avals]}. Return e.g. jnp.all(x < 10) or (x < 10)[0], "
            "not an array or a non-boolean value.")


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Loop ``body_fun(i, val)`` for ``i`` from ``lower`` to ``upper``: JAX's ``lax.fori_loop``.

    With concrete bounds (Python ints, or arrays that are not traced) it is a ``scan``
    (so reverse mode works); with traced bounds a ``while_loop``.

    Arguments:
        lower, upper: integer bounds (``upper`` excluded).
        body_fun: ``body_fun(i, val) -> val``.
        init_val: the initial carry (a pytree of arrays).
        unroll: accepted as in JAX (for concrete bounds); changes no bit.

    Returns:
        The final carry.

    Example:
        >>> lax.fori_loop(0, 5, lambda i, x: x + i, 0)
        Array(10, dtype=int32, weak_type=True)
    """
    if not callable(body_fun):
        raise TypeError(f"lax.fori_loop: body_fun must be callable, got {type(body_fun).__name__}")
    lo = to_array(lower, "fori_loop lower")
    hi = to_array(upper, "fori_loop upper")
    for name, b in (("lower", lo), ("upper", hi)):
        if b.ndim != 0 or not np.issubdtype(b.dtype, np.integer):
            raise TypeError(
                f"fori_loop {name} bound must be an integer scalar, got {_describe(b.aval)} "
                f"(lower is {_describe(lo.aval)}, upper is {_describe(hi.aval)}). Pass Python "
                "ints or integer arrays, e.g. int(n) or n.astype(jnp.int32).")
    if lo.dtype != hi.dtype:
        dtype = dtypes.canonicalize(np.promote_types(lo.dtype, hi.dtype))
        lo = convert_element_type(lo, dtype, weak_type=lo.weak_type and hi.weak_type)
        hi = convert_element_type(hi, dtype, weak_type=lo.weak_type and hi.weak_type)
    lo_c, hi_c = _concrete_int(lower), _concrete_int(upper)
    if lo_c is not None and hi_c is not None:
        if config.jax_disable_jit:  # as JAX's: a Python loop, i a Python int
            for i in range(lo_c, hi_c):
                init_val = body_fun(i, init_val)
            return init_val

        def step(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None

        (_, out), _ = scan(step, (lo, init_val), None, length=builtins.max(hi_c - lo_c, 0),
                           unroll=1 if unroll is None else unroll)
        return out

    def cond(carry):
        return carry[0] < carry[1]

    def body(carry):
        i, n, x = carry
        return i + 1, n, body_fun(i, x)

    return while_loop(cond, body, (lo, hi, init_val))[2]


def _concrete_int(x):
    """The value of a bound known now (not traced), else None."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        return None if value is None else int(value)
    return int(np.asarray(x))


# ---------------------------------------------------------------------------------------
# cond and switch


_NO_OPERAND = object()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``: JAX's ``lax.cond``.

    Both branches are traced; only the chosen one runs. Under ``vmap`` with a batched
    ``pred`` both run and each example takes its branch's result (``select_n``).

    Arguments:
        pred: a scalar boolean (or number: nonzero is True).
        true_fun, false_fun: functions of ``operands`` returning the same pytree structure,
            shapes and dtypes.
        operands: the branches' arguments (pytrees of arrays).
        operand: JAX's older keyword form of one argument (``operands`` then empty).

    Returns:
        The chosen branch's output.

    Example:
        >>> lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 2.0)
        Array(3., dtype=float32, weak_type=True)
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("lax.cond: pass the branches' arguments either positionally or "
                            "as operand=, not both")
        operands = (operand,)
    p = to_array(pred, "lax.cond predicate")
    if p.shape != ():
        raise TypeError(
            f"Pred must be a scalar, got {_describe(p.aval)}. Reduce it first (jnp.all / "
            "jnp.any), or use jnp.where(pred, a, b) for an elementwise choice.")
    if not (p.dtype == np.bool_ or np.issubdtype(p.dtype, np.number)):
        raise TypeError(f"Pred type must be either boolean or number, got {p.dtype.name}")
    if p.dtype != np.bool_:
        p = ne(p, np.zeros((), p.dtype))
    index = convert_element_type(p, np.int32)
    chosen = _chosen(index, (false_fun, true_fun))
    if chosen is not None:
        return chosen(*operands)
    return _switch(index, (false_fun, true_fun), operands, "cond",
                   ("false_fun", "true_fun"))


def switch(index, branches, *operands):
    """``branches[index](*operands)``, ``index`` clamped to the range: JAX's ``lax.switch``.

    Arguments:
        index: a scalar integer; below 0 picks the first branch, past the end the last.
        branches: a sequence of functions of ``operands`` with equal output types.
        operands: the branches' arguments (pytrees of arrays).

    Returns:
        The chosen branch's output.

    Example:
        >>> lax.switch(5, [lambda x: x, lambda x: -x], 2.0)
        Array(-2., dtype=float32, weak_type=True)
    """
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence: lax.switch needs at least one branch")
    for k, b in enumerate(branches):
        if not callable(b):
            raise TypeError(f"lax.switch: branches[{k}] must be callable, got "
                            f"{type(b).__name__}")
    i = to_array(index, "lax.switch index")
    if i.shape != ():
        raise TypeError(f"Branch index must be scalar, got {_describe(i.aval)}")
    if not np.issubdtype(i.dtype, np.integer):
        raise TypeError(f"Index type must be an integer, got {i.dtype.name}: pass an int or an "
                        "integer array (e.g. i.astype(jnp.int32))")
    if len(branches) == 1:
        return branches[0](*operands)
    i = convert_element_type(i, np.int32)
    i = max(min(i, np.int32(len(branches) - 1)), np.int32(0))
    chosen = _chosen(i, branches)
    if chosen is not None:
        return chosen(*operands)
    names = tuple(f"branches[{k}]" for k in range(len(branches)))
    return _switch(i, branches, operands, "switch", names)


def _chosen(index, branches):
    """Under ``disable_jit``, the branch a concrete ``index`` picks (JAX calls it alone);
    else None."""
    if not config.jax_disable_jit:
        return None
    value = index.to_concrete_value() if isinstance(index, Tracer) else index
    return None if value is None else branches[int(value)]


def _switch(index, branches, operands, who, names):
    arrays, tree, _ = _leaves(operands, "operands")
    avals = [x.aval for x in arrays]
    traced = []
    for fun, name in zip(branches, names, strict=True):
        body = _Body(lambda *ops, fun=fun: fun(*ops[0]), [tree])
        closed, hoisted = cf.trace_body(body, avals, f"{who} {name}")
        traced.append((closed, hoisted, body.out_trees[0]))
    _check_branches(who, names, traced)
    # The tracers some branch closes over are operands of every branch.
    shared, seen = [], {}
    for _, hoisted, _ in traced:
        for t in hoisted:
            if id(t) not in seen:
                seen[id(t)] = len(shared)
                shared.append(t)
    jaxprs = []
    for closed, hoisted, _ in traced:
        j = closed.jaxpr
        own = {seen[id(t)]: v for t, v in zip(hoisted, j.invars[:len(hoisted)], strict=True)}
        leading = [own.get(k) or Var(t.aval) for k, t in enumerate(shared)]
        jaxprs.append(ClosedJaxpr(Jaxpr(j.constvars, [*leading, *j.invars[len(hoisted):]],
                                        j.outvars, j.eqns), closed.consts))
    outs = cond_p.bind(index, *shared, *arrays, branches=tuple(jaxprs))
    return tree_unflatten(traced[0][2], outs)


def _check_branches(who, names, traced):
    closed0, _, tree0 = traced[0]
    for (closed, _, tree), name in zip(traced[1:], names[1:], strict=True):
        if tree != tree0:
            raise TypeError(
                f"{who}: {names[0]} and {name} must return the same pytree structure, but "
                f"{names[0]} returns {tree0} and {name} returns {tree}.")
        paths = [keystr(p) for p, _ in tree_flatten_with_path(
            tree_unflatten(tree0, range(tree0.num_leaves)))[0]]
        for p, a, b in zip(paths, closed0.out_avals, closed.out_avals, strict=True):
            if not cf.typematch(a, b):
                raise TypeError(
                    f"{who}: {names[0]} and {name} output must have identical types, but the "
                    f"output{p} is {_describe(a)} in {names[0]} and {_describe(b)} in {name}. "
                    "Make every branch return the same shapes and dtypes (e.g. with .astype).")
