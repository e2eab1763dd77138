"""``custom_jvp``: a function with its own JVP rule.

The decorated function is traced to a jaxpr and bound as one ``custom_jvp_call``; its JVP
calls the user's rule (tangents instantiated) and checks what it returns against the
function's outputs. Under a JVP trace that owns an argument the rule runs directly on the
primal values (``jvp_by_rule``).
"""


from __future__ import annotations

import functools

from ..core.api_util import fun_name
from ..core.array import Array, is_python_scalar, to_array
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten
from ..core.trace import EVAL_TRACE, Primitive, current_trace, set_current_trace
from ..interpreters import ad, batching
from ..ops.elementwise import add, stop_gradient
from ._autodiff import wraps
from ._custom_common import (
    TRACE,
    Split,
    SymbolicZero,
    batch_call_jaxpr,
    batched,
    batched_name,
    check_no_closure_tangents,
    check_outputs,
    def_call,
    direct_call,
    nondiff_positions,
    primals_and_tangents,
    resolve_kwargs,
    rule_tangents,
)

# ---------------------------------------------------------------------------------------
# custom_jvp

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
def_call(custom_jvp_call_p, "call_jaxpr")


def _custom_jvp_call_jvp(primals, tangents, *, name, call_jaxpr, jvp, num_consts):
    check_no_closure_tangents(tangents[:num_consts], "custom_jvp", name)
    return jvp(primals[num_consts:], list(tangents[num_consts:]))  # ad.Zero kept: see rule


def _custom_jvp_call_batch(vals, dims, *, trace, name, call_jaxpr, jvp, num_consts):
    body, consts = batch_call_jaxpr(call_jaxpr, vals, dims, trace, f"custom_jvp of {name}")
    num_out = len(call_jaxpr.out_avals)
    in_avals = call_jaxpr.in_avals[num_consts:]
    zero_outs = []

    def batched_jvp(primals, tangents):
        # Zero tangents stay symbolic: the batched rule takes the others only.
        zero_ins = [isinstance(t, ad.Zero) for t in tangents]

        def rule(ins):  # primals and nonzero tangents in, outputs and nonzero tangents out
            given = iter(ins[len(primals):])
            ts = [ad.Zero(ad.tangent_aval(a)) if z else next(given)
                  for a, z in zip(in_avals, zero_ins, strict=True)]
            outs, touts = jvp(ins[: len(primals)], ts)
            zero_outs[:] = [isinstance(t, ad.Zero) for t in touts]
            return [*outs, *(t for t in touts if not isinstance(t, ad.Zero))]

        # A tangent has its primal's shape, so its batch axis is its primal's.
        in_dims = dims[num_consts:]
        t_dims = [d for d, z in zip(in_dims, zero_ins, strict=True) if not z]
        batched_rule = batched(rule, [*in_dims, *t_dims], trace)
        res = batched_rule([*primals, *(t for t in tangents if not isinstance(t, ad.Zero))])
        outs, touts = res[:num_out], iter(res[num_out:])
        return outs, [ad.Zero(ad.tangent_aval(o.aval)) if z else next(touts)
                      for o, z in zip(outs, zero_outs, strict=True)]

    batched_jvp.__name__ = batched_name(jvp)
    outs = custom_jvp_call_p.bind(*consts, *vals, name=name, call_jaxpr=body, jvp=batched_jvp,
                                  num_consts=len(consts) + num_consts)
    return outs, [0] * len(outs)


def _custom_jvp_call_transpose(cts, *args, name, call_jaxpr, jvp, num_consts):
    # Staged into a linear jaxpr (applied to a tangent, e.g. inside another rule), the call
    # is linear in its undefined inputs: as JAX, transpose its body; the rule plays no part.
    return ad.backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(cts))


def _custom_jvp_call_transpose_accumulating(cts, args, accs, same, *, name, call_jaxpr, jvp,
                                            num_consts):
    # As above, adding into the accumulated cotangents as the inlined body would.
    cts_in = ad.backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(cts),
                              accs, same)
    return [None if ct is None or same[i] != i else ct for i, ct in enumerate(cts_in)]


_custom_jvp_call_batch.needs_trace = True
ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
ad.transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose
ad.accumulating_transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose_accumulating
batching.batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch


class custom_jvp:
    """A function with a custom JVP (forward-mode) rule, from which reverse mode follows.

    Arguments:
        fun: the function; its arguments and outputs may be pytrees of arrays.
        nondiff_argnums: positions of arguments that are not differentiated (Python
            values such as functions, or arrays treated as constants). The rule receives
            them first: ``rule(*nondiff_args, primals, tangents)``, with ``primals`` and
            ``tangents`` holding the other arguments.

    Returns:
        The decorated function; define its rule with ``defjvp`` (or ``defjvps``).

    Example:
        >>> @custom_jvp
        ... def log1pexp(x):
        ...     return jnp.log(1.0 + jnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))
        >>> float(grad(log1pexp)(100.0))  # the plain formula would give nan
        1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        wraps(fun)(self)
        self._fun = fun
        self._nondiff_argnums = tuple(nondiff_argnums)
        self._jvp = None
        self._symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        """Define the JVP rule.

        Arguments:
            jvp: ``jvp(primals, tangents) -> (primal_out, tangent_out)`` (after the
                nondiff arguments, if any); ``primals`` and ``tangents`` are tuples of
                the arguments and of their tangents (zeros where an argument is not
                differentiated); ``tangent_out`` has ``primal_out``'s structure, shapes
                and dtypes (a ``SymbolicZero`` in it stands for zeros).
            symbolic_zeros: as JAX's: the tangent of an argument that is not
                differentiated comes as a ``SymbolicZero`` instead of zeros.

        Returns:
            ``jvp``, so that ``defjvp`` can be used as a decorator.

        Example:
            >>> f = custom_jvp(lambda x: x ** 3)
            >>> _ = f.defjvp(lambda p, t: (f(p[0]), 3.0 * p[0] ** 2 * t[0]))
            >>> jvp(f, (2.0,), (1.0,))  # the rule got Python floats, and made them: as JAX
            (8.0, 12.0)
            >>> jvp(f, (jnp.float32(2.0),), (jnp.float32(1.0),))[1]
            Array(12., dtype=float32)
        """
        self._jvp = jvp
        self._symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        """Define the JVP rule by one function per argument, whose contributions add up.

        Arguments:
            jvps: for each argument, ``None`` (no derivative) or ``f(t, primal_out,
                *primals)``, giving that argument's contribution to the output tangent for
                its tangent ``t``.

        Returns:
            None.

        Example:
            >>> f = custom_jvp(lambda x, y: jnp.sin(x) * y)
            >>> f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y,
            ...           lambda t, ans, x, y: jnp.sin(x) * t)
            >>> [float(g) for g in grad(f, argnums=(0, 1))(0.0, 2.0)]
            [2.0, 0.0]
        """
        if self._nondiff_argnums:
            raise TypeError("defjvps cannot be used with nondiff_argnums; use defjvp")

        def jvp(primals, tangents):
            if len(jvps) != len(primals):
                raise TypeError(
                    f"defjvps of {self.__name__} was given {len(jvps)} rule(s) for a call "
                    f"with {len(primals)} argument(s); give one (or None) per argument"
                )
            out = self(*primals)
            terms = [rule(t, out, *primals)
                     for rule, t in zip(jvps, tangents, strict=True) if rule is not None]
            if not terms:
                zero = lambda x: ad.zeros_like_aval(ad.tangent_aval(to_array(x).aval))
                return out, tree_map(zero, out)
            return out, functools.reduce(lambda a, b: tree_map(add, a, b), terms)

        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        name = self.__name__
        if self._jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name}; use defjvp.")
        args = resolve_kwargs(self._fun, args, kwargs)
        nondiff = nondiff_positions(self._nondiff_argnums, args, name)
        if current_trace() is EVAL_TRACE:
            return self._fun(*args)
        args = tuple(tree_map(lambda x: stop_gradient(x) if isinstance(x, Array) else x, a)
                     if i in nondiff else a for i, a in enumerate(args))
        direct = direct_call(self._fun, args, nondiff,
                             lambda trace: jvp_by_rule(self, trace, args, nondiff))
        if direct is not TRACE:
            return direct
        split = Split(args, nondiff)
        jaxpr, consts, leaves, out_tree = split.trace(self._fun, f"custom_jvp of {name}")
        rule, symbolic = self._jvp, self._symbolic_zeros

        def flat_rule(primals, tangents):
            what = f"the custom JVP rule {fun_name(rule)} of {name}"
            tangents = rule_tangents(tangents, symbolic)
            res = rule(*split.nondiff, tuple(split.unflatten(primals)),
                       tuple(split.unflatten(tangents)))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"{what} must return a pair (primal_out, tangent_out), got "
                                f"{type(res).__name__}")
            outs = check_outputs(res[0], out_tree, jaxpr.out_avals, f"the primal output of {what}")
            touts = _check_tangents(res[1], out_tree, outs, what)
            return outs, touts

        flat_rule.__name__ = fun_name(rule)
        outs = custom_jvp_call_p.bind(*consts, *leaves, name=name, call_jaxpr=jaxpr,
                                      jvp=flat_rule, num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _check_tangents(touts, out_tree, outs, what):
    """The tangent outputs of a custom JVP rule, flat; zero for non-float outputs."""
    leaves, tree = tree_flatten(touts)
    if tree != out_tree:
        raise TypeError(
            f"{what} must return a tangent output with the primal output's structure "
            f"{out_tree}, got {tree}"
        )
    checked = []
    for (path, t), out in zip(tree_flatten_with_path(touts)[0], outs, strict=True):
        if not ad.is_differentiable(out.aval):
            checked.append(ad.Zero(out.aval))
            continue
        if isinstance(t, SymbolicZero):
            t = t.instantiate()
        t = to_array(t, f"a tangent output of {what}")
        if t.shape != out.shape or t.dtype != out.dtype:
            raise TypeError(
                f"{what} must return tangents with the shapes and dtypes of the primal outputs, "
                f"but the tangent output{keystr(path)} is {t.aval.str_short()} for a primal "
                f"output {out.aval.str_short()}"
            )
        checked.append(t)
    return checked


def jvp_by_rule(f, trace, args, nondiff):
    """The outputs of ``f(*args)`` as ``trace``'s tracers, from the rule of ``f`` called on
    the primals and tangents of ``args`` in the parent trace (JAX's
    ``process_custom_jvp_call`` of a JVP trace)."""
    split = Split(args, nondiff)
    primals, tangents, tree = primals_and_tangents(trace, split, f.__name__, raw=True)
    tangents = rule_tangents(tangents, f._symbolic_zeros)
    rule, name = f._jvp, f.__name__
    what = f"the custom JVP rule {fun_name(rule)} of {name}"
    with set_current_trace(trace.parent):
        res = rule(*split.nondiff, tuple(tree_unflatten(tree, primals)),
                   tuple(tree_unflatten(tree, tangents)))
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"{what} must return a pair (primal_out, tangent_out), got "
                        f"{type(res).__name__}")
    out_leaves, out_tree = tree_flatten(res[0])
    outs = [to_array(x, f"the primal output of {what}") for x in out_leaves]
    touts = _check_tangents(res[1], out_tree, outs, what)
    raws = [None] * len(outs)
    if any(map(is_python_scalar, out_leaves)):  # kept as given (with its tangent), as JAX
        raws = [(x, t) if is_python_scalar(x) and is_python_scalar(t) else None
                for x, t in zip(out_leaves, out_tree.flatten_up_to(res[1]), strict=True)]
    return tree_unflatten(out_tree, [trace.pack(o, t, r)
                                     for o, t, r in zip(outs, touts, raws, strict=True)])


