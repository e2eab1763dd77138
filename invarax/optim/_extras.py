"""Small transformations of optax: stateless wrappers, NaN zeroing, non-negative params,
update-norm normalisation, adaptive clipping, periodic application, conditional
application, freezing, ``named_chain``, ``MultiSteps``' skip functions, lookahead,
per-example clipping and monitoring."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core.pytree import tree_flatten, tree_leaves, tree_map
from ..transforms._vmap import vmap
from ._adaptive import ema
from ._base import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    chain,
    init_empty_state,
    require_params,
    set_to_zero,
    with_extra_args_support,
    zeros_like_params,
)
from ._linesearch import cond
from ._transform import _zero_count, masked, safe_increment
from ._tree_math import _abs_sq, tree_norm, tree_zeros_like
from ._wrappers import partition


def stateless(f) -> GradientTransformation:
    """A stateless transformation from ``f(updates, params) -> updates``.

    Example:
        >>> stateless(lambda u, p: 2 * u).update(jnp.ones(1), EmptyState())[0]
        Array([2.], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        del state
        return f(updates, params), EmptyState()

    return GradientTransformation(init_empty_state, update_fn)


def stateless_with_tree_map(f) -> GradientTransformation:
    """A stateless transformation applying ``f(update, param)`` leaf by leaf (``param`` is
    None when the update gets no params).

    Example:
        >>> t = stateless_with_tree_map(lambda u, p: -u)
        >>> t.update([jnp.ones(1)], EmptyState())[0]
        [Array([-1.], dtype=float32)]
    """
    def update_fn(updates, state, params=None):
        del state
        if params is not None:
            return tree_map(f, updates, params), EmptyState()
        return tree_map(lambda u: f(u, None), updates), EmptyState()

    return GradientTransformation(init_empty_state, update_fn)


class ZeroNansState(NamedTuple):
    """The state of ``zero_nans``: per leaf, whether the last updates held a NaN."""

    found_nan: Any


def zero_nans() -> GradientTransformation:
    """Replace NaNs in the updates by zeros (and record, per leaf, whether there were any).

    Example:
        >>> opt = zero_nans()
        >>> opt.update(jnp.array([1.0, jnp.nan]), opt.init(jnp.zeros(2)))
        (Array([1., 0.], dtype=float32), ZeroNansState(found_nan=Array(True, dtype=bool)))
    """
    def init_fn(params):
        return ZeroNansState(tree_map(lambda p: jnp.array(False), params))

    def update_fn(updates, state, params=None):
        del params, state
        found = tree_map(lambda u: jnp.any(jnp.isnan(u)), updates)
        return (tree_map(lambda u: jnp.where(jnp.isnan(u), jnp.zeros_like(u), u), updates),
                ZeroNansState(found))

    return GradientTransformation(init_fn, update_fn)


NonNegativeParamsState = EmptyState


def keep_params_nonnegative() -> GradientTransformation:
    """Change each update that would make its parameter negative into ``-param`` (to 0).

    Example:
        >>> opt = keep_params_nonnegative()
        >>> opt.update(jnp.array([-2.0, -0.5]), opt.init(jnp.ones(2)), jnp.ones(2))[0]
        Array([-1. , -0.5], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        require_params("keep_params_nonnegative", params)
        return tree_map(lambda p, u: None if p is None else jnp.where((p + u) < 0.0, -p, u),
                        params, updates, is_leaf=lambda x: x is None), state

    return GradientTransformation(lambda params: NonNegativeParamsState(), update_fn)


def normalize_by_update_norm(scale_factor: float = 1.0,
                             eps: float = 1e-6) -> GradientTransformation:
    """Divide the updates by ``(global norm + eps) / scale_factor``.

    Example:
        >>> normalize_by_update_norm(eps=0.0).update(jnp.array([3.0, 4.0]), EmptyState())[0]
        Array([0.6, 0.8], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        del params
        g_norm = (tree_norm(updates) + eps) / scale_factor
        return tree_map(lambda g: g / g_norm, updates), state

    return GradientTransformation(init_empty_state, update_fn)


def unitwise_norm(x, axis=None):
    """The L2 norm of each unit of ``x`` (a slice along ``axis``; by default the whole of a
    vector, each column of a matrix, each filter of a convolution kernel), broadcast to
    ``x``'s shape, as optax's.

    Example:
        >>> unitwise_norm(jnp.array([[3.0, 0.0], [4.0, 1.0]]))
        Array([[5., 1.],
               [5., 1.]], dtype=float32)
    """
    x = jnp.asarray(x)
    if axis is not None:
        squared = jnp.sum(_abs_sq(x), axis=axis, keepdims=True)
    elif jnp.squeeze(x).ndim <= 1:
        squared = jnp.sum(_abs_sq(x), keepdims=True)
    elif x.ndim in (2, 3):
        squared = jnp.sum(_abs_sq(x), axis=0, keepdims=True)
    elif x.ndim in (4, 5):
        squared = jnp.sum(_abs_sq(x), axis=tuple(range(x.ndim - 1)), keepdims=True)
    else:
        raise ValueError(f"adaptive_grad_clip: a parameter of shape {x.shape} has no default "
                         "unit; pass axis= to name the axes to reduce")
    return jnp.broadcast_to(jnp.sqrt(squared), x.shape)


def unitwise_clip(g_norm, max_norm, grad, div_eps=1e-6):
    """``grad`` scaled to ``max_norm`` where its unit norm ``g_norm`` reaches it, as optax's
    (the three of one shape; ``div_eps`` keeps the division finite).

    Example:
        >>> unitwise_clip(jnp.array([5.0, 1.0]), jnp.array([1.0, 2.0]), jnp.array([3.0, 1.0]))
        Array([0.6, 1. ], dtype=float32)
    """
    shapes = {np.shape(g_norm), np.shape(max_norm), np.shape(grad)}
    if len(shapes) > 1:
        raise ValueError(f"unitwise_clip: g_norm, max_norm and grad must have one shape, got "
                         f"{np.shape(g_norm)}, {np.shape(max_norm)} and {np.shape(grad)}")
    clipped = grad * (max_norm / jnp.maximum(g_norm, div_eps))
    return jnp.where(g_norm < max_norm, grad, clipped)


AdaptiveGradClipState = EmptyState


def adaptive_grad_clip(clipping: float, eps: float = 1e-3,
                       axis=None) -> GradientTransformation:
    """Clip each unit's update (a column, a filter) to ``clipping`` times its parameter's
    norm (at least ``eps``), as in NFNets.

    Example:
        >>> opt = adaptive_grad_clip(0.1)
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.ones(2)), jnp.array([6.0, 8.0]))[0]
        Array([0.6, 0.8], dtype=float32)
    """
    def update_fn(updates, state, params=None):
        require_params("adaptive_grad_clip", params)
        g_norm, p_norm = tree_map(lambda x: unitwise_norm(x, axis), (updates, params))
        max_norm = tree_map(lambda x: clipping * jnp.maximum(x, eps), p_norm)
        return tree_map(unitwise_clip, g_norm, max_norm, updates), state

    return GradientTransformation(init_empty_state, update_fn)


class ApplyEvery(NamedTuple):
    """The state of ``apply_every``: the step within the period and the accumulated sum."""

    count: Any
    grad_acc: Any


def apply_every(k: int = 1) -> GradientTransformation:
    """Accumulate the updates over ``k`` steps and emit their sum every ``k``-th step
    (zeros in between).

    Example:
        >>> opt = apply_every(2)
        >>> u, state = opt.update(jnp.ones(1), opt.init(jnp.zeros(1)))
        >>> u, opt.update(jnp.ones(1), state)[0]
        (Array([0.], dtype=float32), Array([2.], dtype=float32))
    """
    def init_fn(params):
        return ApplyEvery(_zero_count(), zeros_like_params("apply_every.init", params))

    def update_fn(updates, state, params=None):
        del params
        c = state.count % k
        grad_acc = tree_map(lambda g, ga: (c != 0) * ga + g, updates, state.grad_acc)
        emit = c == (k - 1)
        return (tree_map(lambda ga: emit * ga, grad_acc),
                ApplyEvery(safe_increment(state.count) % k, grad_acc))

    return GradientTransformation(init_fn, update_fn)


class ConditionallyTransformState(NamedTuple):
    """The state of ``conditionally_transform``: the inner state and the step count."""

    inner_state: Any
    step: Any


class ConditionallyMaskState(NamedTuple):
    """The state of ``conditionally_mask``: the step count and the inner state."""

    step: Any
    inner_state: Any


def _conditionally(inner, should_transform_fn, forward_extra_args, on_reject):
    inner = with_extra_args_support(inner)

    def step(updates, state, params, extra_args):
        kwargs = extra_args if forward_extra_args else {}
        return cond(should_transform_fn(state.step, **kwargs),
                    lambda: inner.update(updates, state.inner_state, params, **extra_args),
                    lambda: (on_reject(updates), state.inner_state))

    return inner, step


def conditionally_transform(inner, should_transform_fn,
                            forward_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply ``inner`` only at the steps where ``should_transform_fn(step)`` is true; at the
    others the updates pass unchanged and the inner state is kept.

    Example:
        >>> opt = conditionally_transform(scale(10.0), lambda step: step % 2 == 0)
        >>> u, state = opt.update(jnp.ones(1), opt.init(jnp.zeros(1)))
        >>> u, opt.update(jnp.ones(1), state)[0]
        (Array([10.], dtype=float32), Array([1.], dtype=float32))
    """
    inner, step = _conditionally(inner, should_transform_fn, forward_extra_args, lambda u: u)

    def update_fn(updates, state, params=None, **extra_args):
        updates, inner_state = step(updates, state, params, extra_args)
        return updates, ConditionallyTransformState(inner_state, safe_increment(state.step))

    return GradientTransformationExtraArgs(
        lambda params: ConditionallyTransformState(inner.init(params), _zero_count()), update_fn)


def conditionally_mask(inner, should_transform_fn,
                       forward_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply ``inner`` only at the steps where ``should_transform_fn(step)`` is true; at the
    others the updates are zeros and the inner state is kept.

    Example:
        >>> opt = conditionally_mask(scale(10.0), lambda step: step % 2 == 0)
        >>> u, state = opt.update(jnp.ones(1), opt.init(jnp.zeros(1)))
        >>> u, opt.update(jnp.ones(1), state)[0]
        (Array([10.], dtype=float32), Array([0.], dtype=float32))
    """
    inner, step = _conditionally(inner, should_transform_fn, forward_extra_args,
                                 tree_zeros_like)

    def update_fn(updates, state, params=None, **extra_args):
        updates, inner_state = step(updates, state, params, extra_args)
        return updates, ConditionallyMaskState(safe_increment(state.step), inner_state)

    return GradientTransformationExtraArgs(
        lambda params: ConditionallyMaskState(_zero_count(), inner.init(params)), update_fn)


def freeze(mask) -> GradientTransformation:
    """Zero the updates of the parameters that ``mask`` selects (``masked(set_to_zero(),
    mask)``).

    Example:
        >>> opt = freeze({"a": True, "b": False})
        >>> p = {"a": jnp.ones(1), "b": jnp.ones(1)}
        >>> opt.update(p, opt.init(p))[0]
        {'a': Array([0.], dtype=float32), 'b': Array([1.], dtype=float32)}
    """
    return masked(set_to_zero(), mask)


def selective_transform(optimizer, *, freeze_mask) -> GradientTransformation:
    """Run ``optimizer`` on the parameters that ``freeze_mask`` leaves out; zero the others.

    Example:
        >>> opt = selective_transform(scale(10.0), freeze_mask={"a": True, "b": False})
        >>> p = {"a": jnp.ones(1), "b": jnp.ones(1)}
        >>> opt.update(p, opt.init(p))[0]
        {'a': Array([0.], dtype=float32), 'b': Array([10.], dtype=float32)}
    """
    return partition({"train": optimizer, "freeze": set_to_zero()},
                     param_labels=lambda params: tree_map(
                         lambda m: "freeze" if m else "train", freeze_mask))


def named_chain(*args) -> GradientTransformationExtraArgs:
    """``chain`` whose state is an ordered dict keyed by the given names.

    Arguments:
        *args: ``(name, transformation)`` pairs, names unique.

    Example:
        >>> opt = named_chain(("clip", clip(1.0)), ("sgd", sgd(0.1)))
        >>> list(opt.init(jnp.zeros(1)))
        ['clip', 'sgd']
    """
    names = [name for name, _ in args]
    if len(names) != len(set(names)):
        raise ValueError(f"named_chain: the names must be unique, got {names}")
    transforms = [(name, with_extra_args_support(t)) for name, t in args]

    def init_fn(params):
        return collections.OrderedDict((name, t.init(params)) for name, t in transforms)

    def update_fn(updates, state, params=None, **extra_args):
        new_state = collections.OrderedDict()
        for name, t in transforms:
            updates, new_state[name] = t.update(updates, state[name], params, **extra_args)
        return updates, new_state

    return GradientTransformationExtraArgs(init_fn, update_fn)


ShouldSkipUpdateFunction = Callable[[Any, Any, Any], tuple[Any, Any]]
"""The type of ``MultiSteps``' ``should_skip_update_fn``: ``(updates, gradient_step, params)
-> (should_skip, state)``."""


def skip_not_finite(updates, gradient_step, params):
    """A ``MultiSteps`` skip function: skip updates holding a NaN or infinity.

    Returns:
        ``(should_skip, {"should_skip": ..., "num_not_finite": ...})``.
    """
    del gradient_step, params
    counts = [jnp.sum(jnp.logical_not(jnp.isfinite(p))) for p in tree_leaves(updates)]
    num_not_finite = jnp.sum(jnp.stack(counts))
    should_skip = num_not_finite > 0
    return should_skip, {"should_skip": should_skip, "num_not_finite": num_not_finite}


def skip_large_updates(updates, gradient_step, params, max_squared_norm):
    """A ``MultiSteps`` skip function (with ``max_squared_norm`` bound by ``partial``): skip
    updates whose squared norm is at least ``max_squared_norm`` (or NaN).

    Returns:
        ``(should_skip, {"should_skip": ..., "norm_squared": ...})``.
    """
    del gradient_step, params
    norm_sq = jnp.sum(jnp.stack([jnp.sum(p ** 2) for p in tree_leaves(updates)]))
    should_skip = jnp.logical_not(norm_sq < max_squared_norm)
    return should_skip, {"should_skip": should_skip, "norm_squared": norm_sq}


class LookaheadState(NamedTuple):
    """The state of ``lookahead``: the fast optimizer's state and the steps since a sync."""

    fast_state: Any
    steps_since_sync: Any


class LookaheadParams(NamedTuple):
    """The parameters ``lookahead`` works on: the fast and the slow copies."""

    fast: Any
    slow: Any

    @classmethod
    def init_synced(cls, params) -> LookaheadParams:
        """Both copies equal to ``params``."""
        return cls(slow=params, fast=params)


def lookahead(fast_optimizer, sync_period: int, slow_step_size: float,
              reset_state: bool = False) -> GradientTransformation:
    """Lookahead: the fast parameters follow ``fast_optimizer``; every ``sync_period`` steps
    the slow ones move ``slow_step_size`` of the way to them and the fast ones are reset.

    The params are a ``LookaheadParams`` (``init`` also takes the fast params alone), and so
    are the updates returned.

    Example:
        >>> opt = lookahead(sgd(1.0), sync_period=2, slow_step_size=0.5)
        >>> params = LookaheadParams.init_synced(jnp.zeros(1))
        >>> state = opt.init(params)
        >>> for _ in range(2):
        ...     updates, state = opt.update(jnp.ones(1), state, params)
        ...     params = apply_updates(params, updates)
        >>> params
        LookaheadParams(fast=Array([-1.], dtype=float32), slow=Array([-1.], dtype=float32))
    """
    if sync_period < 1:
        raise ValueError(f"lookahead: sync_period must be >= 1, got {sync_period}")

    def init_fn(params):
        fast = getattr(params, "fast", params)
        return LookaheadState(fast_optimizer.init(fast), _zero_count())

    def update_fn(updates, state, params=None):
        if not isinstance(params, LookaheadParams):
            raise TypeError("lookahead: the update needs the params as a LookaheadParams "
                            "(LookaheadParams.init_synced(params) makes one), got "
                            f"{type(params).__name__}")
        updates, fast_state = fast_optimizer.update(updates, state.fast_state, params.fast)
        sync_next = state.steps_since_sync == (sync_period - 1)
        difference = tree_map(lambda f, u, s: f + u - s, params.fast, updates, params.slow)
        slow_updates = tree_map(lambda d: slow_step_size * sync_next * d, difference)
        fast_updates = tree_map(lambda u, d: u - sync_next * (1 - slow_step_size) * d,
                                updates, difference)
        if reset_state:
            fast_state = tree_map(lambda cur, init: (1 - sync_next) * cur + sync_next * init,
                                  fast_state, fast_optimizer.init(params.fast))
        return (LookaheadParams(fast=fast_updates, slow=slow_updates),
                LookaheadState(fast_state, (state.steps_since_sync + 1) % sync_period))

    return GradientTransformation(init_fn, update_fn)


def per_example_global_norm_clip(grads, l2_norm_clip: float):
    """Clip each example's gradients (leading axis) to global norm ``l2_norm_clip``, then sum
    over the examples (for differential privacy).

    Returns:
        ``(summed clipped gradients, number of examples clipped)``.

    Example:
        >>> g = [jnp.array([[3.0, 4.0], [0.3, 0.4]])]
        >>> per_example_global_norm_clip(g, 1.0)
        ([Array([0.90000004, 1.2       ], dtype=float32)], Array(1, dtype=int32))
    """
    leaves = tree_leaves(grads)
    if not leaves or any(np.ndim(g) < 1 or np.shape(g)[0] != np.shape(leaves[0])[0]
                         for g in leaves):
        raise ValueError("per_example_global_norm_clip: every leaf of grads needs the batch of "
                         "examples on axis 0 (one length for all)")
    norms = vmap(tree_norm)(grads)
    multipliers = jnp.minimum(l2_norm_clip / norms, 1.0)
    multipliers = jnp.where(jnp.isnan(multipliers), 1.0, multipliers)
    clipped = tree_map(lambda g: jnp.tensordot(multipliers, g, axes=1), grads)
    return clipped, jnp.sum(multipliers < 1.0)


def per_example_layer_norm_clip(grads, global_l2_norm_clip: float, uniform: bool = True):
    """``per_example_global_norm_clip`` of each leaf (layer) separately, with clip norms
    splitting ``global_l2_norm_clip`` equally (``uniform``) or by the leaves' sizes.

    Returns:
        A pair of trees like ``grads``: the summed clipped gradients and the counts.

    Example:
        >>> g = {"a": jnp.array([[3.0, 4.0]]), "b": jnp.array([[0.1]])}
        >>> per_example_layer_norm_clip(g, 2.0 ** 0.5)[1]
        {'a': Array(1, dtype=int32), 'b': Array(0, dtype=int32)}
    """
    leaves, treedef = tree_flatten(grads)
    if uniform:
        norms = [global_l2_norm_clip * (1.0 / len(leaves)) ** 0.5 for _ in leaves]
    else:
        total = sum(int(np.size(g[0])) for g in leaves)
        norms = [global_l2_norm_clip * (int(np.size(g[0])) / total) ** 0.5 for g in leaves]
    pairs = [per_example_global_norm_clip(g, n) for g, n in zip(leaves, norms, strict=True)]
    return (treedef.unflatten([p[0] for p in pairs]), treedef.unflatten([p[1] for p in pairs]))


class SnapshotState(NamedTuple):
    """The state of ``snapshot``: ``{name: measurement}`` of the last updates."""

    measurement: dict


def snapshot(measure_name: str, measure) -> GradientTransformation:
    """Record ``measure(updates)`` in the state under ``measure_name``; updates unchanged.

    Example:
        >>> opt = snapshot("norm", tree_l2_norm)
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)))[1]
        SnapshotState(measurement={'norm': Array(5., dtype=float32)})
    """
    def update_fn(updates, state, params=None):
        del params, state
        return updates, SnapshotState({measure_name: measure(updates)})

    return GradientTransformation(lambda params: SnapshotState({measure_name: measure(params)}),
                                  update_fn)


class MonitorState(NamedTuple):
    """The state of ``monitor``: the last measurements and the measures' own states."""

    measurements: dict
    measure_states: tuple


def monitor(measures: dict) -> GradientTransformationExtraArgs:
    """Record measurements of the updates (``measurements[name]``); updates unchanged.

    Arguments:
        measures: ``{name: measure}``, each a function of the updates or a transformation
            whose output updates are the measurement (``measure_with_ema``, say).

    Example:
        >>> opt = monitor({"norm": tree_l2_norm})
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)))[1].measurements
        {'norm': Array(5., dtype=float32)}
    """
    wrapped = {name: with_extra_args_support(
        m if isinstance(m, GradientTransformation) else stateless(lambda u, _, m=m: m(u)))
        for name, m in measures.items()}

    def init_fn(params):
        return MonitorState({}, tuple(m.init(params) for m in wrapped.values()))

    def update_fn(updates, state, params=None, **extra_args):
        measurements, new_states = {}, []
        for (name, m), s in zip(wrapped.items(), state.measure_states, strict=True):
            measurements[name], s = m.update(updates, s, params, **extra_args)
            new_states.append(s)
        return updates, MonitorState(measurements, tuple(new_states))

    return GradientTransformationExtraArgs(init_fn, update_fn)


def measure_with_ema(measure, decay: float, debias: bool = True,
                     accumulator_dtype=None) -> GradientTransformationExtraArgs:
    """A measure for ``monitor``: the exponential moving average of ``measure(updates)``.

    Example:
        >>> opt = monitor({"norm": measure_with_ema(tree_l2_norm, 0.5, debias=False)})
        >>> opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)))[1].measurements
        {'norm': Array(2.5, dtype=float32)}
    """
    average = ema(decay, debias, accumulator_dtype)
    return chain(stateless(lambda updates, _: measure(updates)),
                 average._replace(init=lambda params: average.init(measure(params))))
