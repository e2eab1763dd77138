"""Line searches, as optax has them: ``scale_by_backtracking_linesearch`` (Armijo) and
``scale_by_zoom_linesearch`` (strong Wolfe, Nocedal & Wright's zoom), and
``value_and_grad_from_state``.

optax runs them in ``lax.while_loop`` and ``lax.cond``. Here the loop is a Python loop of at
most its bound of iterations, and each branch a Python choice, whenever the condition is a
concrete value (eager code, the usual way to run L-BFGS). Under ``jit`` or ``vmap`` the
condition is traced: then every iteration up to the bound is traced, each one's result
selected with ``where`` (an iteration after the loop ended keeps the state bit for bit),
and both branches of a choice are computed and one selected. The values are the same as
eagerly, bit for bit; only the work grows (the bound's number of function evaluations, and
two per zoom iteration).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core.pytree import tree_leaves, tree_map
from ..core.trace import Tracer
from ..transforms._autodiff import value_and_grad
from ._base import GradientTransformationExtraArgs, check_state
from ._transform import safe_increment
from ._tree_math import tree_add_scale, tree_cast_like, tree_scale, tree_vdot, tree_zeros_like


def _concrete(pred):
    """``pred`` as a Python bool, or None if it is traced."""
    return None if isinstance(pred, Tracer) else bool(pred)


def _select(pred, on_true, on_false):
    return tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; a traced ``pred``
    computes both and selects each leaf (the two results must have one structure)."""
    known = _concrete(pred)
    if known is not None:
        return true_fn(*operands) if known else false_fn(*operands)
    return _select(pred, true_fn(*operands), false_fn(*operands))


def bounded_while_loop(cond_fn, body_fn, state, max_iterations: int):
    """``lax.while_loop(cond_fn, body_fn, state)`` for a loop known to end within
    ``max_iterations`` iterations (see the module docstring for the traced case)."""
    for _ in range(max_iterations):
        go = cond_fn(state)
        known = _concrete(go)
        if known is False:
            break
        new = body_fn(state)
        state = new if known else tree_cast_like(_select(go, new, state), state)
    return state


def _check_steps(who: str, name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{who}: {name} must be a Python int (the loop's bound), got "
                        f"{value!r:.60}")
    if value < 0:
        raise ValueError(f"{who}: {name} must be non-negative, got {value}")
    return int(value)


def _split_kwargs(who: str, value_fn, extra_args: dict):
    """The extra arguments that ``value_fn`` takes; any other raises, naming them."""
    names = set(inspect.signature(value_fn).parameters)
    leftover = sorted(k for k in extra_args if k not in names)
    if leftover:
        raise TypeError(f"{who}: the extra arguments {leftover} are not arguments of "
                        "value_fn; pass only the keyword arguments value_fn takes")
    return {k: v for k, v in extra_args.items() if k in names}


def _value_dtype(params):
    leaves = tree_leaves(params)
    return jnp.real(jnp.zeros((), jnp.asarray(leaves[0]).dtype)).dtype


def _slope(updates, grad):
    return jnp.real(tree_vdot(updates, tree_map(jnp.conj, grad)))


# ---------------------------------------------------------------------------------------
# Backtracking


class BacktrackingLinesearchInfo(NamedTuple):
    """What the last backtracking search did: its number of steps and decrease error."""

    num_linesearch_steps: Any
    decrease_error: Any


class ScaleByBacktrackingLinesearchState(NamedTuple):
    """The state of ``scale_by_backtracking_linesearch``: the last step size, the value
    there, the gradient there (with ``store_grad``, else None) and the search's info."""

    learning_rate: Any
    value: Any
    grad: Any
    info: BacktrackingLinesearchInfo


class _BacktrackingSearch(NamedTuple):
    learning_rate: Any
    new_value: Any
    new_grad: Any
    decrease_error: Any
    iter_num: Any


def scale_by_backtracking_linesearch(
        max_backtracking_steps: int, slope_rtol: float = 1e-4, decrease_factor: float = 0.8,
        increase_factor: float = 1.5, max_learning_rate: float = 1.0, atol: float = 0.0,
        rtol: float = 0.0, store_grad: bool = False,
        verbose: bool = False) -> GradientTransformationExtraArgs:
    """Scale the updates by a step size giving sufficient decrease (Armijo's condition).

    Starting from ``min(increase_factor * last_step, max_learning_rate)``, the step size is
    multiplied by ``decrease_factor`` until ``f(params + s * updates) <= (1 + rtol) f(params)
    + slope_rtol * s * slope + atol``, at most ``max_backtracking_steps`` times; a step whose
    value is NaN or infinite throughout gives a step size of 0.

    Arguments:
        max_backtracking_steps: the most decreases of the step size (a Python int).
        slope_rtol: the fraction of the linear decrease required.
        decrease_factor: the factor of each decrease.
        increase_factor: the factor of the first guess over the last step size.
        max_learning_rate: the largest step size tried.
        atol: the absolute tolerance of the criterion.
        rtol: the relative tolerance of the criterion.
        store_grad: keep the gradient at the new parameters in the state (for
            ``value_and_grad_from_state``).
        verbose: print a message when the search fails (eager values only).

    Returns:
        A ``GradientTransformationExtraArgs``; its update needs ``params`` and the keyword
        arguments ``value``, ``grad`` (at ``params``) and ``value_fn``, and passes any other
        keyword argument to ``value_fn``.

    Example:
        >>> f = lambda x: jnp.sum(x ** 2)
        >>> opt = chain(sgd(1.0), scale_by_backtracking_linesearch(15))
        >>> x = jnp.array([1.0, -2.0])
        >>> u, _ = opt.update(2 * x, opt.init(x), x, value=f(x), grad=2 * x, value_fn=f)
        >>> u
        Array([-1.6,  3.2], dtype=float32)
    """
    who = "scale_by_backtracking_linesearch"
    max_steps = _check_steps(who, "max_backtracking_steps", max_backtracking_steps)

    def init_fn(params):
        dtype = _value_dtype(params)
        return ScaleByBacktrackingLinesearchState(
            learning_rate=jnp.array(1.0, dtype=dtype), value=jnp.array(jnp.inf, dtype=dtype),
            grad=tree_zeros_like(params) if store_grad else None,
            info=BacktrackingLinesearchInfo(jnp.asarray(0), jnp.array(jnp.inf, dtype=dtype)))

    def decrease_error_of(stepsize, slope, value, new_value):
        error = new_value - (1.0 + rtol) * value - stepsize * slope_rtol * slope
        return jnp.maximum(jnp.where(jnp.isnan(error), jnp.inf, error), 0.0)

    def update_fn(updates, state, params=None, *, value, grad, value_fn, **extra_args):
        check_state(f"{who}.update", state, ScaleByBacktrackingLinesearchState)
        fn = functools.partial(value_fn, **_split_kwargs(f"{who}.update", value_fn,
                                                         extra_args))
        slope = _slope(updates, grad)

        def body(search):
            rate = jnp.where(search.iter_num > 0, decrease_factor * search.learning_rate,
                             search.learning_rate)
            new_params = tree_add_scale(params, rate, updates)
            if store_grad:
                new_value, new_grad = value_and_grad(fn)(new_params)
                error = decrease_error_of(rate, slope, value, new_value)
                last = (error <= atol) | (search.iter_num == max_steps)
                new_grad = _select(last, new_grad, search.new_grad)
            else:
                new_value, new_grad = fn(new_params), search.new_grad
                error = decrease_error_of(rate, slope, value, new_value)
            new = _BacktrackingSearch(rate, new_value, new_grad, error, search.iter_num + 1)
            return tree_cast_like(new, search)

        start = _BacktrackingSearch(
            learning_rate=jnp.minimum(increase_factor * state.learning_rate,
                                      max_learning_rate),
            new_value=jnp.asarray(value), new_grad=tree_zeros_like(params),
            decrease_error=jnp.array(jnp.inf), iter_num=jnp.asarray(0))
        search = bounded_while_loop(
            lambda s: (~(s.decrease_error <= atol)) & (s.iter_num <= max_steps), body, start,
            max_steps + 1)
        rate = jnp.where(jnp.isinf(search.decrease_error), 0.0, search.learning_rate)
        if verbose and _concrete(search.decrease_error > atol):
            print(f"INFO: {who}: no step size gave sufficient decrease (value {value}, "
                  f"slope {slope}, step size {search.learning_rate}, decrease error "
                  f"{search.decrease_error})")
        new_state = ScaleByBacktrackingLinesearchState(
            learning_rate=rate, value=search.new_value,
            grad=search.new_grad if store_grad else None,
            info=BacktrackingLinesearchInfo(search.iter_num, search.decrease_error))
        return tree_scale(rate, updates), tree_cast_like(new_state, state)

    return GradientTransformationExtraArgs(init_fn, update_fn)


# ---------------------------------------------------------------------------------------
# Zoom (strong Wolfe)


class ZoomLinesearchInfo(NamedTuple):
    """What the last zoom search did: its number of steps and its two errors."""

    num_linesearch_steps: Any
    decrease_error: Any
    curvature_error: Any


class ScaleByZoomLinesearchState(NamedTuple):
    """The state of ``scale_by_zoom_linesearch``: the last step size, the value and the
    gradient there, and the search's info."""

    learning_rate: Any
    value: Any
    grad: Any
    info: ZoomLinesearchInfo


class ZoomLinesearchState(NamedTuple):
    """The state of one zoom search (optax's ``ZoomLinesearchState``)."""

    count: Any
    params: Any
    updates: Any
    stepsize_guess: Any
    stepsize: Any
    value: Any
    grad: Any
    slope: Any
    value_init: Any
    slope_init: Any
    decrease_error: Any
    curvature_error: Any
    error: Any
    interval_found: Any
    done: Any
    failed: Any
    low: Any
    value_low: Any
    slope_low: Any
    high: Any
    value_high: Any
    slope_high: Any
    cubic_ref: Any
    value_cubic_ref: Any
    safe_stepsize: Any
    safe_value: Any
    safe_grad: Any


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through ``(a, fa)`` with slope ``fpa``, ``(b, fb)``,
    ``(c, fc)``."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    u, v = fb - fa - fpa * db, fc - fa - fpa * dc
    big_a = (dc ** 2 * u + (-(db ** 2)) * v) / denom
    big_b = ((-(dc ** 3)) * u + db ** 3 * v) / denom
    radical = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + jnp.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a, fa, fpa, b, fb):
    """The minimiser of the quadratic through ``(a, fa)`` with slope ``fpa`` and ``(b, fb)``."""
    db = b - a
    big_b = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * big_b)


def _zoom_steps(max_linesearch_steps, max_stepsize, tol, increase_factor, slope_rtol,
                curv_rtol, approx_dec_rtol, interval_threshold):
    """The two kinds of iteration of the zoom search and the safe-step fallback."""

    def on_line(value_and_grad_fn, params, stepsize, updates):
        value, grad = value_and_grad_fn(tree_add_scale(params, stepsize, updates))
        return value, grad, _slope(updates, grad)

    def decrease_error_of(stepsize, value, slope, value_init, slope_init):
        error = value - value_init - slope_rtol * stepsize * slope_init
        if approx_dec_rtol is not None:
            approx = jnp.maximum(slope - (2 * slope_rtol - 1.0) * slope_init,
                                 value - value_init - approx_dec_rtol * jnp.abs(value_init))
            error = jnp.minimum(approx, error)
        error = jnp.maximum(error, 0.0)
        return jnp.where(jnp.isnan(error), jnp.inf, error)

    def curvature_error_of(slope, slope_init):
        error = jnp.maximum(jnp.abs(slope) - curv_rtol * jnp.abs(slope_init), 0.0)
        return jnp.where(jnp.isnan(error), jnp.inf, error)

    def try_safe_step(state):
        use_safe = (state.safe_stepsize > 0.0) | jnp.isinf(state.decrease_error)
        stepsize, value, grad = _select(use_safe,
                                        [state.safe_stepsize, state.safe_value, state.safe_grad],
                                        [state.stepsize, state.value, state.grad])
        return tree_cast_like(state._replace(stepsize=stepsize, grad=grad, value=value), state)

    def search_interval(state, value_and_grad_fn):
        iter_num = state.count
        new_stepsize = jnp.where(iter_num == 0, state.stepsize_guess,
                                 increase_factor * state.stepsize)
        if max_stepsize is not None:
            max_reached = new_stepsize >= max_stepsize
            new_stepsize = jnp.minimum(new_stepsize, max_stepsize)
        else:
            max_reached = jnp.asarray(False)
        value, grad, slope = on_line(value_and_grad_fn, state.params, new_stepsize,
                                     state.updates)
        decrease_error = decrease_error_of(new_stepsize, value, slope, state.value_init,
                                           state.slope_init)
        curvature_error = curvature_error_of(slope, state.slope_init)
        error = jnp.maximum(decrease_error, curvature_error)
        safe = _select(decrease_error <= tol, [new_stepsize, value, grad],
                       [state.safe_stepsize, state.safe_value, state.safe_grad])
        set_high = (decrease_error > 0.0) | ((value >= state.value) & (iter_num > 0))
        set_low = (slope >= 0.0) & (~set_high)
        previous = [state.stepsize, state.value, state.slope]
        new = [new_stepsize, value, slope]
        low, value_low, slope_low, high, value_high, slope_high = _select(
            set_low, new + previous, previous + new)
        interval_found = set_high | set_low | (error <= tol)
        done = (error <= tol) | (max_reached & ~interval_found)
        failed = (iter_num + 1 >= max_linesearch_steps) & (~done)
        new_state = ZoomLinesearchState(
            safe_increment(iter_num), state.params, state.updates, state.stepsize_guess,
            new_stepsize, value, grad, slope, state.value_init, state.slope_init,
            decrease_error, curvature_error, error, jnp.asarray(interval_found),
            jnp.asarray(done), jnp.asarray(failed), low, value_low, slope_low, high,
            value_high, slope_high, low, value_low, *safe)
        return tree_cast_like(new_state, state)

    def zoom_into_interval(state, value_and_grad_fn):
        low, value_low, slope_low = state.low, state.value_low, state.slope_low
        high, value_high, slope_high = state.high, state.value_high, state.slope_high
        delta = jnp.abs(high - low)
        left, right = jnp.minimum(high, low), jnp.maximum(high, low)
        middle_cubic = _cubicmin(low, value_low, slope_low, high, value_high, state.cubic_ref,
                                 state.value_cubic_ref)
        use_cubic = (middle_cubic > left + 0.2 * delta) & (middle_cubic < right - 0.2 * delta)
        middle_quad = _quadmin(low, value_low, slope_low, high, value_high)
        use_quad = (~use_cubic) & (middle_quad > left + 0.1 * delta) & \
            (middle_quad < right - 0.1 * delta)
        use_bisection = (~use_cubic) & (~use_quad)
        middle = jnp.where(use_cubic, middle_cubic, state.cubic_ref)
        middle = jnp.where(use_quad, middle_quad, middle)
        middle = jnp.where(use_bisection, (low + high) / 2.0, middle)
        value, grad, slope = on_line(value_and_grad_fn, state.params, middle, state.updates)
        decrease_error = decrease_error_of(middle, value, slope, state.value_init,
                                           state.slope_init)
        curvature_error = curvature_error_of(slope, state.slope_init)
        error = jnp.maximum(decrease_error, curvature_error)
        safe_stepsize, safe_value, safe_grad = _select(
            (decrease_error <= tol) & (value < state.safe_value), [middle, value, grad],
            [state.safe_stepsize, state.safe_value, state.safe_grad])
        done = error <= tol
        set_high_to_middle = (decrease_error > 0.0) | (value >= value_low)
        set_high_to_low = (slope * (high - low) >= 0.0) & (~set_high_to_middle)
        set_low_to_middle = ~set_high_to_middle
        middle_triple = [middle, value, slope]
        new_high = _select(set_high_to_middle, middle_triple, [high, value_high, slope_high])
        new_high = _select(set_high_to_low, [low, value_low, slope_low], new_high)
        new_low = _select(set_low_to_middle, middle_triple, [low, value_low, slope_low])
        cubic_ref, value_cubic_ref = _select(set_high_to_middle | set_high_to_low,
                                             [high, value_high], [low, value_low])
        too_small = delta <= interval_threshold
        presumably_failed = jnp.asarray((state.count + 1) >= max_linesearch_steps) | (
            too_small & (safe_stepsize > 0.0))
        new_state = ZoomLinesearchState(
            safe_increment(state.count), state.params, state.updates, state.stepsize_guess,
            middle, value, grad, slope, state.value_init, state.slope_init, decrease_error,
            curvature_error, error, state.interval_found, done, presumably_failed & ~done,
            *new_low, *new_high, cubic_ref, value_cubic_ref, safe_stepsize, safe_value,
            safe_grad)
        return tree_cast_like(new_state, state)

    def step(state, value_and_grad_fn):
        new = cond(state.interval_found,
                   lambda s: zoom_into_interval(s, value_and_grad_fn),
                   lambda s: search_interval(s, value_and_grad_fn), state)
        return tree_cast_like(cond(new.failed, try_safe_step, lambda s: s, new), state)

    return step


def scale_by_zoom_linesearch(
        max_linesearch_steps: int, max_learning_rate: float | None = None, tol: float = 0.0,
        increase_factor: float = 2.0, slope_rtol: float = 1e-4, curv_rtol: float = 0.9,
        approx_dec_rtol: float | None = 1e-6, stepsize_precision: float = 1e-5,
        initial_guess_strategy: str = "keep",
        verbose: bool = False) -> GradientTransformationExtraArgs:
    """Scale the updates by a step size meeting the strong Wolfe conditions (zoom search).

    The search grows the step size by ``increase_factor`` until an interval holding an
    acceptable one is found, then shrinks the interval (cubic, quadratic or bisection
    steps) until the sufficient-decrease and curvature conditions hold, within
    ``max_linesearch_steps`` evaluations; failing that, it takes the best step size that
    decreased the value (or the last one tried).

    Arguments:
        max_linesearch_steps: the most evaluations of the function (a Python int).
        max_learning_rate: the largest step size tried (None: no bound).
        tol: the tolerance of the conditions.
        increase_factor: the growth of the step size while searching for an interval.
        slope_rtol: the fraction of the linear decrease required (Armijo).
        curv_rtol: the curvature condition's fraction of the initial slope.
        approx_dec_rtol: the tolerance of the approximate decrease condition (None: off).
        stepsize_precision: the interval length below which the search stops.
        initial_guess_strategy: ``"keep"`` (start at the last step size) or ``"one"``.
        verbose: print a message when the search fails (eager values only).

    Returns:
        A ``GradientTransformationExtraArgs``; its update needs ``params`` and the keyword
        arguments ``value``, ``grad`` (at ``params``) and ``value_fn``, and passes any other
        keyword argument to ``value_fn``.

    Example:
        >>> f = lambda x: jnp.sum(x ** 2)
        >>> opt = chain(sgd(1.0), scale_by_zoom_linesearch(10))
        >>> x = jnp.array([1.0, -2.0])
        >>> u, _ = opt.update(2 * x, opt.init(x), x, value=f(x), grad=2 * x, value_fn=f)
        >>> u
        Array([-1.,  2.], dtype=float32)
    """
    who = "scale_by_zoom_linesearch"
    max_steps = _check_steps(who, "max_linesearch_steps", max_linesearch_steps)
    if initial_guess_strategy not in ("keep", "one"):
        raise ValueError(f"{who}: unknown initial_guess_strategy {initial_guess_strategy!r}; "
                         "use 'keep' or 'one'")
    step = _zoom_steps(max_steps, max_learning_rate, tol, increase_factor, slope_rtol,
                       curv_rtol, approx_dec_rtol, stepsize_precision)

    def init_fn(params):
        dtype = _value_dtype(params)
        return ScaleByZoomLinesearchState(
            learning_rate=jnp.asarray(1.0, dtype=dtype), value=jnp.asarray(jnp.inf, dtype=dtype),
            grad=tree_zeros_like(params),
            info=ZoomLinesearchInfo(jnp.asarray(0), jnp.asarray(jnp.inf), jnp.asarray(jnp.inf)))

    def update_fn(updates, state, params=None, *, value, grad, value_fn, **extra_args):
        check_state(f"{who}.update", state, ScaleByZoomLinesearchState)
        fn = functools.partial(value_fn, **_split_kwargs(f"{who}.update", value_fn,
                                                         extra_args))
        value_and_grad_fn = value_and_grad(fn)
        dtype = _value_dtype(params)
        slope = jnp.real(tree_vdot(updates, grad))
        value = jnp.asarray(value)
        start = ZoomLinesearchState(
            count=jnp.asarray(0), params=params, updates=updates,
            stepsize_guess=state.learning_rate if initial_guess_strategy == "keep" else
            jnp.asarray(1.0),
            stepsize=jnp.asarray(0.0, dtype=dtype), value=jnp.asarray(value, dtype=dtype),
            grad=grad, slope=slope, value_init=value, slope_init=slope,
            decrease_error=jnp.asarray(jnp.inf), curvature_error=jnp.asarray(jnp.inf),
            error=jnp.asarray(jnp.inf), interval_found=jnp.asarray(False),
            done=jnp.asarray(False), failed=jnp.asarray(False), low=jnp.asarray(0.0),
            value_low=value, slope_low=slope, high=jnp.asarray(0.0), value_high=value,
            slope_high=slope, cubic_ref=jnp.asarray(0.0), value_cubic_ref=value,
            safe_stepsize=jnp.asarray(0.0), safe_value=value, safe_grad=grad)
        final = bounded_while_loop(lambda s: ~(s.done | s.failed),
                                   lambda s: step(s, value_and_grad_fn), start, max_steps)
        if verbose and _concrete(final.failed | ~final.done):
            print(f"INFO: {who}: the strong Wolfe conditions did not hold after "
                  f"{int(final.count)} steps (decrease error {final.decrease_error}, "
                  f"curvature error {final.curvature_error}); step size {final.stepsize}")
        new_state = ScaleByZoomLinesearchState(
            learning_rate=final.stepsize, value=final.value, grad=final.grad,
            info=ZoomLinesearchInfo(final.count, final.decrease_error, final.curvature_error))
        return tree_scale(final.stepsize, updates), tree_cast_like(new_state, state)

    return GradientTransformationExtraArgs(init_fn, update_fn)


def _find_field(state, name):
    """The first field called ``name`` in a nest of NamedTuples, tuples and lists."""
    if hasattr(state, "_fields"):
        if name in state._fields:
            return getattr(state, name)
        children = list(state)
    elif isinstance(state, (tuple, list)):
        children = list(state)
    else:
        return None
    for child in children:
        found = _find_field(child, name)
        if found is not None:
            return found
    return None


def value_and_grad_from_state(value_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``value_and_grad(value_fn)``, reusing the value and gradient a line search stored.

    The returned function takes ``(params, *args, state=opt_state, **kwargs)``: if the state
    holds a finite ``value`` (and its ``grad``), from the line search of the last step, it
    returns them; otherwise it evaluates ``value_and_grad(value_fn)(params, *args,
    **kwargs)``.

    Arguments:
        value_fn: the function minimised.

    Returns:
        A function returning ``(value, grad)``.

    Example:
        >>> f = lambda x: jnp.sum(x ** 2)
        >>> opt = lbfgs()
        >>> x = jnp.array([1.0, -2.0])
        >>> value_and_grad_from_state(f)(x, state=opt.init(x))
        (Array(5., dtype=float32), Array([ 2., -4.], dtype=float32))
    """
    def wrapped(params, *fn_args, state, **fn_kwargs):
        value, grad = _find_field(state, "value"), _find_field(state, "grad")
        if value is None or grad is None:
            raise ValueError(
                "value_and_grad_from_state: the state holds no value or gradient; use an "
                "optimizer whose line search stores them (lbfgs, or "
                "scale_by_backtracking_linesearch(..., store_grad=True))")
        return cond(~jnp.isinf(value) & ~jnp.isnan(value), lambda: (value, grad),
                    lambda: value_and_grad(value_fn)(params, *fn_args, **fn_kwargs))

    return wrapped
