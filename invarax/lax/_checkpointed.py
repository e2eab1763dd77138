"""``checkpointed_while_loop``: a ``while_loop`` that reverse mode differentiates, by
recomputation from ``checkpoints`` stored carries (Equinox's
``while_loop(kind="checkpointed")``, with its schedule)."""

from __future__ import annotations

import math

import numpy as np

from ..control_flow import common as cf
from ..control_flow.while_grad import checkpointed_while_p, while_grad_p
from ..core.eval import eval_jaxpr
from ..core.pytree import tree_unflatten
from ..interpreters import ad
from ..ops.elementwise import bitwise_and, lt
from ._control_flow import _Body, _check_predicate, _leaves, _trace_carry, while_loop


def checkpointed_while_loop(cond_fun, body_fun, init_val, *, max_steps, checkpoints=None):
    """A ``while_loop`` of at most ``max_steps`` steps that ``grad`` can differentiate.

    The forward pass is ``while_loop`` (stopping after ``max_steps`` steps if ``cond_fun``
    is still True) that also stores up to ``checkpoints`` of its carries, the initial one
    first, placed without knowing how many steps there will be (online binomial
    checkpointing: Stumm and Walther's algorithm up to
    ``(checkpoints + 1) * (checkpoints + 2) / 2`` steps, Wang and Moin's beyond). The backward
    pass reverses the steps from them, recomputing the carries it needs and storing some in
    the slots that free up (treeverse). Memory is ``checkpoints`` carries. The schedule is
    that of Equinox's ``while_loop(kind="checkpointed")``, step for step: a body that
    prints its step prints the same sequence. The gradient equals that of the
    unrolled loop (within rounding: cotangents of values the body closes over are summed
    from the last step to the first). ``vmap`` works (the examples reverse together over
    the largest trip count, an example's extra steps the identity); forward mode raises,
    as Equinox's does (it is a ``custom_vjp``): use ``while_loop`` for ``jvp``.

    Arguments:
        cond_fun: ``cond_fun(val) -> bool`` scalar.
        body_fun: ``body_fun(val) -> val``.
        init_val: the initial carry (a pytree of arrays).
        max_steps: the most steps the loop takes (a positive int).
        checkpoints: the most carries stored for the backward pass (default Equinox's,
            ``O(sqrt(max_steps))``; 1 is enough: time then grows with ``steps**2``).

    Returns:
        The final carry.

    Example:
        >>> def f(x):
        ...     return checkpointed_while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x),
        ...                                    (0, 1.0), max_steps=100)[1]
        >>> invarax.grad(f)(2.0)  # d/dx x**5
        Array(80., dtype=float32, weak_type=True)
    """
    from ..transforms._custom_derivatives import custom_vjp

    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
        raise ValueError(f"checkpointed_while_loop: max_steps must be a positive int, got "
                         f"{max_steps!r}")
    if checkpoints is None:
        checkpoints = 1 if max_steps == 1 else math.floor(-1.5 + math.sqrt(2 * max_steps
                                                                           + 0.25)) + 1
    if not isinstance(checkpoints, int) or checkpoints < 1:
        raise ValueError(f"checkpointed_while_loop: checkpoints must be an int >= 1, got "
                         f"{checkpoints!r}")
    checkpoints = min(checkpoints, max_steps)
    carry = _leaves(init_val, "init_val")
    body, hoisted_b, _, arrays = _trace_carry(
        "checkpointed_while_loop", "init_val", body_fun, carry, [], [carry[1]], None,
        "checkpointed_while_loop body")
    cond_body = _Body(cond_fun, [carry[1]])
    cond, hoisted_c = cf.trace_body(cond_body, [x.aval for x in arrays],
                                    "checkpointed_while_loop cond")
    _check_predicate(cond, cond_body.out_trees[0])
    nb, nk = len(hoisted_b), len(arrays)

    def forward(bc, cc, init):
        def go(state):
            more = eval_jaxpr(cond.jaxpr, cond.consts, *cc, *state[1])[0]
            return bitwise_and(lt(state[0], np.int32(max_steps)), more)

        def step(state):
            return state[0] + np.int32(1), eval_jaxpr(body.jaxpr, body.consts, *bc, *state[1])

        return while_loop(go, step, (np.int32(0), list(init)))[1]

    def fwd(bc, cc, init):
        outs = checkpointed_while_p.bind(*cc, *bc, *init, cond=cond, body=body,
                                         checkpoints=checkpoints, max_steps=max_steps)
        return outs[:nk], (bc, outs[nk:])

    def bwd(res, cts):
        bc, saved = res
        cts = [ad.zeros_like_aval(a) if c is None else cf.cast_like(c, a)
               for c, a in zip(cts, body.out_avals, strict=True)]
        outs = while_grad_p.bind(*bc, *saved, *cts, body=body, checkpoints=checkpoints)
        return list(outs[:nb]), None, list(outs[nb:])

    loop = custom_vjp(forward)
    loop.defvjp(fwd, bwd)
    return tree_unflatten(carry[1], loop(list(hoisted_b), list(hoisted_c), list(arrays)))
