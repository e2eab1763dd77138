"""Schedules: functions of the step count giving a learning rate (or any hyperparameter)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import numpy as jnp


def constant_schedule(value) -> Callable[[Any], Any]:
    """The schedule that is ``value`` at every step.

    Arguments:
        value: the value.

    Returns:
        A function of the step count returning ``value``.

    Example:
        >>> constant_schedule(0.1)(1000)
        0.1
    """
    return lambda count: value


def polynomial_schedule(init_value, end_value, power, transition_steps: int,
                        transition_begin: int = 0) -> Callable[[Any], Any]:
    """``init_value`` until ``transition_begin``, then a polynomial path to ``end_value``.

    At step ``t`` the value is ``(init - end) * (1 - s / transition_steps)**power + end``
    with ``s = clip(t - transition_begin, 0, transition_steps)``.

    Arguments:
        init_value: the value before and at ``transition_begin``.
        end_value: the value from ``transition_begin + transition_steps`` on.
        power: the power of the path (1: linear).
        transition_steps: the length of the transition; if not positive, the schedule is
            constant at ``init_value``.
        transition_begin: the step at which the transition starts (negative counts as 0).

    Returns:
        A function of the step count.

    Example:
        >>> polynomial_schedule(1.0, 0.0, power=2, transition_steps=4)(2)
        Array(0.25, dtype=float32, weak_type=True)
    """
    if transition_steps <= 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)

    def schedule(count):
        steps = jnp.clip(count - transition_begin, 0, transition_steps)
        frac = 1 - steps / transition_steps
        return (jnp.asarray(init_value) - jnp.asarray(end_value)) * (frac ** power) + end_value

    return schedule


def linear_schedule(init_value, end_value, transition_steps: int,
                    transition_begin: int = 0) -> Callable[[Any], Any]:
    """A linear path from ``init_value`` to ``end_value`` over ``transition_steps`` steps.

    Arguments:
        init_value: the value before and at ``transition_begin``.
        end_value: the value from ``transition_begin + transition_steps`` on.
        transition_steps: the length of the transition (if not positive: constant).
        transition_begin: the step at which the transition starts.

    Returns:
        ``polynomial_schedule`` with ``power=1``.

    Example:
        >>> linear_schedule(0.0, 1.0, transition_steps=4)(1)
        Array(0.25, dtype=float32, weak_type=True)
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def cosine_decay_schedule(init_value, decay_steps: int, alpha: float = 0.0,
                          exponent: float = 1.0) -> Callable[[Any], Any]:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over ``decay_steps`` steps.

    At step ``t`` the value is ``init_value * ((1 - alpha) * c**exponent + alpha)`` with
    ``c = 0.5 * (1 + cos(pi * min(t, decay_steps) / decay_steps))``.

    Arguments:
        init_value: the value at step 0.
        decay_steps: the length of the decay (positive).
        alpha: the final value as a fraction of ``init_value``.
        exponent: the power of the cosine factor.

    Returns:
        A function of the step count.

    Example:
        >>> cosine_decay_schedule(1.0, decay_steps=10)(5)
        Array(0.49999997, dtype=float32, weak_type=True)
    """
    if not decay_steps > 0:
        raise ValueError(
            f"cosine_decay_schedule: decay_steps must be positive, got {decay_steps}")
    decay_steps = float(decay_steps)

    def schedule(count):
        if isinstance(count, int):
            count = float(count)
        count = jnp.minimum(count, decay_steps)
        cosine = 0.5 * (1 + jnp.cos(math.pi * count / decay_steps))
        return init_value * ((1 - alpha) * cosine ** exponent + alpha)

    return schedule


def join_schedules(schedules: Sequence[Callable[[Any], Any]],
                   boundaries: Sequence[int]) -> Callable[[Any], Any]:
    """Run ``schedules[i + 1]`` from step ``boundaries[i]`` on, restarting its count at 0.

    Arguments:
        schedules: the schedules, in order.
        boundaries: the steps at which each schedule after the first takes over (one fewer
            than the schedules).

    Returns:
        A function of the step count.

    Example:
        >>> s = join_schedules([constant_schedule(1.0), linear_schedule(1.0, 0.0, 10)], [5])
        >>> s(4), s(10)
        (Array(1., dtype=float32, weak_type=True), Array(0.5, dtype=float32, weak_type=True))
    """
    if len(boundaries) != len(schedules) - 1:
        raise ValueError(
            f"join_schedules: {len(schedules)} schedules need {len(schedules) - 1} "
            f"boundaries, got {len(boundaries)}")

    def schedule(count):
        out = schedules[0](count)
        for boundary, following in zip(boundaries, schedules[1:], strict=True):
            out = jnp.where(count < boundary, out, following(count - boundary))
        return out

    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps: int, decay_steps: int,
                                 end_value=0.0, exponent: float = 1.0) -> Callable[[Any], Any]:
    """A linear warmup from ``init_value`` to ``peak_value``, then cosine decay to ``end_value``.

    Arguments:
        init_value: the value at step 0.
        peak_value: the value at the end of the warmup.
        warmup_steps: the length of the warmup.
        decay_steps: the length of the whole schedule, warmup included (the cosine decay
            runs for ``decay_steps - warmup_steps`` steps, which must be positive).
        end_value: the value from ``decay_steps`` on.
        exponent: the power of the cosine factor.

    Returns:
        A function of the step count.

    Example:
        >>> s = warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=2, decay_steps=6)
        >>> s(1), s(2), s(4), s(6)  # doctest: +NORMALIZE_WHITESPACE
        (Array(0.5, dtype=float32, weak_type=True), Array(1., dtype=float32, weak_type=True),
         Array(0.49999997, dtype=float32, weak_type=True), Array(0., dtype=float32, weak_type=True))
    """
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)],
        [warmup_steps],
    )


def exponential_decay(init_value, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value=None) -> Callable[[Any], Any]:
    """``init_value * decay_rate ** ((t - transition_begin) / transition_steps)`` from
    ``transition_begin`` on (``init_value`` before), optionally bounded by ``end_value``.

    Arguments:
        init_value: the value before and at ``transition_begin``.
        transition_steps: the number of steps over which the value is multiplied by
            ``decay_rate`` (if not positive: constant).
        decay_rate: the factor per ``transition_steps`` steps (0: constant).
        transition_begin: the step at which the decay starts (negative counts as 0).
        staircase: decay in whole steps of ``transition_steps`` (the exponent floored).
        end_value: a bound the value never passes (a floor if ``decay_rate < 1``).

    Returns:
        A function of the step count.

    Example:
        >>> s = exponential_decay(1.0, transition_steps=2, decay_rate=0.5)
        >>> s(0), s(4)
        (Array(1., dtype=float32, weak_type=True), Array(0.25, dtype=float32, weak_type=True))
    """
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)
    bound = jnp.maximum if decay_rate < 1.0 else jnp.minimum

    def schedule(count):
        steps = count - transition_begin
        p = steps / transition_steps
        if staircase:
            p = jnp.floor(p)
        value = jnp.where(steps <= 0, init_value, init_value * jnp.power(decay_rate, p))
        return value if end_value is None else bound(value, end_value)

    return schedule


def piecewise_constant_schedule(init_value, boundaries_and_scales: dict | None = None
                                ) -> Callable[[Any], Any]:
    """``init_value``, multiplied by ``scale`` at each ``boundary`` of a dict of them.

    Arguments:
        init_value: the value before the first boundary.
        boundaries_and_scales: ``{step: scale}``; from each step on, the value is multiplied
            by its (non-negative) scale.

    Returns:
        A function of the step count.

    Example:
        >>> s = piecewise_constant_schedule(1.0, {2: 0.5, 4: 0.1})
        >>> [float(s(t)) for t in (0, 2, 3, 4)]
        [1.0, 0.5, 0.5, 0.05000000074505806]
    """
    items = sorted((boundaries_and_scales or {}).items())
    if any(scale < 0.0 for _, scale in items):
        raise ValueError("piecewise_constant_schedule: the scales must be non-negative, got "
                         f"{dict(items)}")

    def schedule(count):
        value = init_value
        for threshold, scale in items:
            indicator = jnp.maximum(0.0, jnp.sign(threshold - count))
            value = value * indicator + (1 - indicator) * scale * value
        return value

    return schedule


def _linear_interpolate(start, end, pct):
    return (end - start) * pct + start


def _cosine_interpolate(start, end, pct):
    return end + (start - end) / 2.0 * (jnp.cos(jnp.pi * pct) + 1)


def piecewise_interpolate_schedule(interpolate_type: str, init_value,
                                   boundaries_and_scales: dict | None = None
                                   ) -> Callable[[Any], Any]:
    """Like ``piecewise_constant_schedule``, but moving from each value to the next
    linearly or along a half cosine between the boundaries.

    Arguments:
        interpolate_type: ``"linear"`` or ``"cosine"``.
        init_value: the value at step 0.
        boundaries_and_scales: ``{step: scale}``; the value reaches ``scale`` times the
            previous one at ``step``.

    Returns:
        A function of the step count.

    Example:
        >>> s = piecewise_interpolate_schedule("linear", 1.0, {4: 0.5})
        >>> [float(s(t)) for t in (0, 2, 4, 9)]
        [1.0, 0.75, 0.5, 0.5]
    """
    interpolate = {"linear": _linear_interpolate, "cosine": _cosine_interpolate}.get(
        interpolate_type)
    if interpolate is None:
        raise ValueError("piecewise_interpolate_schedule: interpolate_type must be 'linear' or "
                         f"'cosine', got {interpolate_type!r}")
    items = sorted((boundaries_and_scales or {}).items())
    if any(scale < 0.0 for _, scale in items):
        raise ValueError("piecewise_interpolate_schedule: the scales must be non-negative, "
                         f"got {dict(items)}")
    boundaries = tuple(b for b, _ in items)
    scales = tuple(s for _, s in items)

    def schedule(count):
        bounds = jnp.stack((0,) + boundaries)
        values = jnp.cumprod(jnp.stack((init_value,) + scales))
        sizes = jnp.maximum(bounds[1:] - bounds[:-1], 1)
        inside = jnp.logical_and(bounds[:-1] <= count, count < bounds[1:])
        pct = (count - bounds[:-1]) / sizes
        values_between = interpolate(values[:-1], values[1:], pct)
        return (jnp.sum(jnp.where(inside, values_between, 0.0))
                + (bounds[-1] <= count) * values[-1])

    return schedule


def _check_transition_steps(who: str, transition_steps: int) -> None:
    if transition_steps <= 0:
        raise ValueError(f"{who}: transition_steps must be positive, got {transition_steps}")


def linear_onecycle_schedule(transition_steps: int, peak_value, pct_start: float = 0.3,
                             pct_final: float = 0.85, div_factor: float = 25.0,
                             final_div_factor: float = 1e4) -> Callable[[Any], Any]:
    """The one-cycle schedule, linear: from ``peak / div_factor`` up to ``peak`` at
    ``pct_start``, back down at ``pct_final``, then to ``peak / final_div_factor`` (of the
    initial value) at ``transition_steps``.

    Example:
        >>> s = linear_onecycle_schedule(10, 1.0)
        >>> round(float(s(3)), 6), round(float(s(8)), 6)
        (1.0, 0.04)
    """
    _check_transition_steps("linear_onecycle_schedule", transition_steps)
    return piecewise_interpolate_schedule(
        "linear", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(pct_final * transition_steps): 1.0 / div_factor,
         transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(transition_steps: int, peak_value, pct_start: float = 0.3,
                             div_factor: float = 25.0,
                             final_div_factor: float = 1e4) -> Callable[[Any], Any]:
    """The one-cycle schedule along half cosines: up to ``peak_value`` at ``pct_start``,
    then down to ``peak_value / (div_factor * final_div_factor)`` at ``transition_steps``.

    Example:
        >>> s = cosine_onecycle_schedule(10, 1.0)
        >>> round(float(s(3)), 6)
        1.0
    """
    _check_transition_steps("cosine_onecycle_schedule", transition_steps)
    return piecewise_interpolate_schedule(
        "cosine", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(transition_steps): 1.0 / (div_factor * final_div_factor)})


def warmup_constant_schedule(init_value, peak_value, warmup_steps: int
                             ) -> Callable[[Any], Any]:
    """A linear warmup from ``init_value`` to ``peak_value``, then constant.

    Example:
        >>> float(warmup_constant_schedule(0.0, 1.0, 4)(2))
        0.5
    """
    return linear_schedule(init_value, peak_value, warmup_steps)


def warmup_exponential_decay_schedule(init_value, peak_value, warmup_steps: int,
                                      transition_steps: int, decay_rate,
                                      transition_begin: int = 0, staircase: bool = False,
                                      end_value=None) -> Callable[[Any], Any]:
    """A linear warmup to ``peak_value``, then ``exponential_decay`` from it.

    Example:
        >>> s = warmup_exponential_decay_schedule(0.0, 1.0, 2, 2, 0.5)
        >>> float(s(1)), float(s(6))
        (0.5, 0.25)
    """
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         exponential_decay(peak_value, transition_steps, decay_rate, transition_begin,
                           staircase, end_value)],
        [warmup_steps])


def sgdr_schedule(cosine_kwargs) -> Callable[[Any], Any]:
    """Warm restarts: ``warmup_cosine_decay_schedule``s one after another.

    Arguments:
        cosine_kwargs: the keyword arguments of each ``warmup_cosine_decay_schedule``.

    Example:
        >>> s = sgdr_schedule([dict(init_value=0.0, peak_value=1.0, warmup_steps=1,
        ...                         decay_steps=4)] * 2)
        >>> float(s(1)), float(s(5))
        (1.0, 1.0)
    """
    boundaries, schedules, step = [], [], 0
    for kwargs in cosine_kwargs:
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        step += kwargs["decay_steps"]
        boundaries.append(step)
    return join_schedules(schedules, boundaries[:-1])
