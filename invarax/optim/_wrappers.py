"""Transformations of transformations: ``inject_hyperparams``, ``partition``, ``flatten``,
``apply_if_finite`` and ``MultiSteps``, with optax's semantics and states.

optax chooses between two branches with ``lax.cond`` in ``apply_if_finite`` and
``MultiSteps``; here both branches are computed and each output leaf is selected with
``where``: the same values (each branch is a pure function of the same inputs), and no
control flow, so the step traces under ``jit`` and ``vmap`` as it is.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core.array import Array
from ..core.pytree import tree_flatten, tree_leaves, tree_map
from ._base import GradientTransformationExtraArgs, check_state, with_extra_args_support
from ._transform import _zero_count, masked, safe_increment
from ._tree_math import tree_cast_like, tree_dtype, tree_zeros_like


def _where_tree(pred, on_true, on_false):
    """Leaf by leaf ``where(pred, a, b)``, each leaf keeping ``on_false``'s dtype."""
    return tree_map(lambda a, b: jnp.where(pred, a, b).astype(jnp.asarray(b).dtype),
                    on_true, on_false)


# ---------------------------------------------------------------------------------------
# inject_hyperparams


class WrappedScheduleState(NamedTuple):
    """The state of a schedule given to ``inject_hyperparams``: its step count (int32)."""

    count: Any


class InjectStatefulHyperparamsState(NamedTuple):
    """The state of ``inject_hyperparams``: the step count, the current hyperparameters (a
    dict one may edit between steps), the schedules' states and the inner state."""

    count: Any
    hyperparams: dict
    hyperparams_states: dict
    inner_state: Any


InjectHyperparamsState = InjectStatefulHyperparamsState


def _convert_floats(x, dtype):
    if isinstance(x, Array) and not getattr(x, "weak_type", False):
        return x
    current = x.dtype if hasattr(x, "dtype") else type(x)
    if np.issubdtype(current, np.floating):
        return jnp.asarray(x, dtype=dtype)
    return x


def inject_hyperparams(inner_factory: Callable[..., Any], static_args: str | Iterable[str] = (),
                       hyperparam_dtype=None) -> Callable[..., GradientTransformationExtraArgs]:
    """Wrap an optimizer factory so that its numeric hyperparameters live in the state.

    The returned factory takes ``inner_factory``'s arguments. Numbers become arrays in
    ``state.hyperparams`` (edit them between steps to change, say, the learning rate);
    schedules (callables) are evaluated at each step's count and their values stored there;
    bools, strings, None and the ``static_args`` are passed as they are.

    Arguments:
        inner_factory: a function returning a ``GradientTransformation`` (``adam``, ...).
        static_args: names of arguments never made arrays (e.g. sizes of the state).
        hyperparam_dtype: the dtype of float hyperparameters (None: the widest float dtype
            of the parameters).

    Returns:
        A factory returning a ``GradientTransformationExtraArgs`` whose state is an
        ``InjectStatefulHyperparamsState``.

    Example:
        >>> opt = inject_hyperparams(sgd)(learning_rate=0.1)
        >>> state = opt.init(jnp.zeros(2))
        >>> state.hyperparams["learning_rate"]
        Array(0.1, dtype=float32)
        >>> state.hyperparams["learning_rate"] = jnp.asarray(0.5)
        >>> opt.update(jnp.ones(2), state)[0]
        Array([-0.5, -0.5], dtype=float32)
    """
    static_args = {static_args} if isinstance(static_args, str) else set(static_args)
    signature = inspect.signature(inner_factory)
    if not static_args.issubset(signature.parameters):
        raise ValueError(
            f"inject_hyperparams: static_args {sorted(static_args)} must name parameters of "
            f"{getattr(inner_factory, '__name__', inner_factory)}, whose parameters are "
            f"{list(signature.parameters)}")

    @functools.wraps(inner_factory)
    def wrapped(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        schedules, numeric, other = {}, {}, {}
        for name, value in bound.arguments.items():
            if name in static_args or isinstance(value, bool):
                other[name] = value
            elif callable(value):
                schedules[name] = value
            elif isinstance(value, (int, float, Array, np.ndarray, np.generic)):
                numeric[name] = value
            else:
                other[name] = value

        def dtype_of(params):
            return hyperparam_dtype if hyperparam_dtype is not None else \
                tree_dtype(params, "highest")

        def init_fn(params):
            dtype = dtype_of(params)
            hyperparams = {k: jnp.asarray(_convert_floats(v, dtype)) for k, v in numeric.items()}
            states = {k: WrappedScheduleState(_zero_count()) for k in schedules}
            hyperparams.update({k: _convert_floats(f(states[k].count), dtype)
                                for k, f in schedules.items()})
            inner = inner_factory(**other, **hyperparams)
            return InjectStatefulHyperparamsState(_zero_count(), hyperparams, states,
                                                  inner.init(params))

        def update_fn(updates, state, params=None, **extra_args):
            check_state("inject_hyperparams.update", state, InjectStatefulHyperparamsState)
            dtype = dtype_of(params)
            hyperparams = {k: _convert_floats(v, dtype) for k, v in state.hyperparams.items()}
            hyperparams.update({
                k: _convert_floats(f(state.hyperparams_states[k].count), dtype)
                for k, f in schedules.items()})
            states = {k: WrappedScheduleState(safe_increment(state.hyperparams_states[k].count))
                      for k in schedules}
            inner = with_extra_args_support(inner_factory(**other, **hyperparams))
            updates, inner_state = inner.update(updates, state.inner_state, params,
                                                **extra_args)
            return updates, InjectStatefulHyperparamsState(
                safe_increment(state.count), hyperparams, states, inner_state)

        return GradientTransformationExtraArgs(init_fn, update_fn)

    return wrapped


# ---------------------------------------------------------------------------------------
# partition / multi_transform


class PartitionState(NamedTuple):
    """The state of ``partition``: a dict from each label to its transformation's state."""

    inner_states: Mapping[Hashable, Any]


MultiTransformState = PartitionState


def partition(transforms: Mapping[Hashable, Any], param_labels, *,
              mask_compatible_extra_args: bool = False) -> GradientTransformationExtraArgs:
    """Apply a different transformation to each group of parameters, chosen by a label.

    Arguments:
        transforms: a dict from label to ``GradientTransformation``.
        param_labels: a pytree of labels with the parameters' structure (or a prefix of
            it), or a function of the parameters returning one.
        mask_compatible_extra_args: accepted for optax compatibility; extra arguments are
            passed to every group unchanged.

    Returns:
        A ``GradientTransformationExtraArgs`` whose state is a ``PartitionState``.

    Example:
        >>> opt = partition({"fast": sgd(1.0), "frozen": set_to_zero()},
        ...                 {"w": "fast", "b": "frozen"})
        >>> params = {"w": jnp.ones(1), "b": jnp.ones(1)}
        >>> opt.update(params, opt.init(params))[0]
        {'b': Array([0.], dtype=float32), 'w': Array([-1.], dtype=float32)}
    """
    del mask_compatible_extra_args

    def labels_of(tree):
        return param_labels(tree) if callable(param_labels) else param_labels

    def group(labels, label):
        return tree_map(lambda leaf: leaf == label, labels)

    def init_fn(params):
        labels = labels_of(params)
        missing = set(tree_leaves(labels)) - set(transforms)
        if missing:
            raise ValueError(
                f"partition: the labels {sorted(map(str, missing))} have no transformation; "
                f"the transformations are labelled {sorted(map(str, transforms))}")
        return PartitionState({label: masked(tx, group(labels, label)).init(params)
                               for label, tx in transforms.items()})

    def update_fn(updates, state, params=None, **extra_args):
        check_state("partition.update", state, PartitionState)
        labels = labels_of(updates)
        new_states = {}
        for label, tx in transforms.items():
            updates, new_states[label] = masked(tx, group(labels, label)).update(
                updates, state.inner_states[label], params, **extra_args)
        return updates, PartitionState(new_states)

    return GradientTransformationExtraArgs(init_fn, update_fn)


multi_transform = partition


# ---------------------------------------------------------------------------------------
# flatten


def _flatten(tree):
    leaves = tree_leaves(tree)
    return jnp.concatenate([jnp.reshape(leaf, [-1]) for leaf in leaves])


def _unflatten(like, flat):
    leaves, treedef = tree_flatten(like)
    offsets = list(itertools.accumulate(int(np.size(leaf)) for leaf in leaves))[:-1]
    pieces = jnp.split(flat, offsets)
    return treedef.unflatten([jnp.reshape(piece, np.shape(leaf))
                              for piece, leaf in zip(pieces, leaves, strict=True)])


def flatten(inner) -> GradientTransformationExtraArgs:
    """Run ``inner`` on one vector: all the leaves raveled and concatenated (in leaf order).

    Arguments:
        inner: a ``GradientTransformation``.

    Returns:
        A ``GradientTransformationExtraArgs`` whose state is ``inner``'s state for the flat
        vector; the updates come back in the parameters' structure and shapes.

    Example:
        >>> opt = flatten(scale_by_adam())
        >>> params = {"a": jnp.zeros(2), "b": jnp.zeros((1, 1))}
        >>> opt.init(params).mu
        Array([0., 0., 0.], dtype=float32)
    """
    inner = with_extra_args_support(inner)

    def init_fn(params):
        return inner.init(_flatten(params))

    def update_fn(updates, state, params=None, **extra_args):
        flat, state = inner.update(_flatten(updates), state,
                                   None if params is None else _flatten(params), **extra_args)
        return _unflatten(updates, flat), state

    return GradientTransformationExtraArgs(init_fn, update_fn)


# ---------------------------------------------------------------------------------------
# apply_if_finite


class ApplyIfFiniteState(NamedTuple):
    """The state of ``apply_if_finite``: consecutive non-finite steps, whether the last step
    was finite, the total of non-finite steps, and the inner state."""

    notfinite_count: Any
    last_finite: Any
    total_notfinite: Any
    inner_state: Any


def apply_if_finite(inner, max_consecutive_errors: int) -> GradientTransformationExtraArgs:
    """Skip a step (zero updates, state kept) whose updates hold a NaN or infinity.

    After more than ``max_consecutive_errors`` such steps in a row, the step is taken anyway.

    Arguments:
        inner: the ``GradientTransformation`` to guard.
        max_consecutive_errors: the number of consecutive non-finite steps skipped.

    Returns:
        A ``GradientTransformationExtraArgs`` whose state is an ``ApplyIfFiniteState``.

    Example:
        >>> opt = apply_if_finite(sgd(0.1), max_consecutive_errors=2)
        >>> updates, state = opt.update(jnp.array([1.0, jnp.nan]), opt.init(jnp.zeros(2)))
        >>> updates, state.total_notfinite
        (Array([0., 0.], dtype=float32), Array(1, dtype=int32))
    """
    inner = with_extra_args_support(inner)

    def init_fn(params):
        return ApplyIfFiniteState(_zero_count(), jnp.array(True), _zero_count(),
                                  inner.init(params))

    def update_fn(updates, state, params=None, **extra_args):
        check_state("apply_if_finite.update", state, ApplyIfFiniteState)
        isfinite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf))
                                      for leaf in tree_leaves(updates)]))
        notfinite_count = jnp.where(isfinite, jnp.zeros([], jnp.int32),
                                    safe_increment(state.notfinite_count))
        take = jnp.logical_or(isfinite, notfinite_count > max_consecutive_errors)
        new, inner_state = inner.update(updates, state.inner_state, params, **extra_args)
        new = _where_tree(take, new, tree_zeros_like(new))
        inner_state = _where_tree(take, inner_state, state.inner_state)
        total = jnp.where(isfinite, state.total_notfinite,
                          safe_increment(state.total_notfinite))
        return new, ApplyIfFiniteState(notfinite_count, isfinite, total, inner_state)

    return GradientTransformationExtraArgs(init_fn, update_fn)


# ---------------------------------------------------------------------------------------
# MultiSteps


class MultiStepsState(NamedTuple):
    """The state of ``MultiSteps``: the mini-step within the current accumulation, the
    number of inner steps taken, the inner state, the accumulated gradients, and the state
    of ``should_skip_update_fn``."""

    mini_step: Any
    gradient_step: Any
    inner_opt_state: Any
    acc_grads: Any
    skip_state: Any = ()


class MultiSteps:
    """Accumulate gradients over ``every_k_schedule`` steps, then take one inner step.

    In between, the updates are zeros. The accumulated gradient is the running mean
    (Welford's ``acc + (g - acc) / (n + 1)``) or, without ``use_grad_mean``, the sum.

    Arguments:
        opt: the inner ``GradientTransformation``.
        every_k_schedule: the number of mini-steps per step: an int, or a function of the
            inner step count.
        use_grad_mean: accumulate the mean (default) rather than the sum.
        should_skip_update_fn: ``f(updates, gradient_step, params) -> (skip, skip_state)``;
            a step it flags (a bool scalar) changes nothing and gives zero updates.
        accumulator_dtype: the dtype of the accumulated gradients.

    Example:
        >>> opt = MultiSteps(sgd(1.0), every_k_schedule=2)
        >>> state = opt.init(jnp.zeros(1))
        >>> first, state = opt.update(jnp.array([1.0]), state)
        >>> second, state = opt.update(jnp.array([3.0]), state)
        >>> first, second
        (Array([-0.], dtype=float32), Array([-2.], dtype=float32))
    """

    def __init__(self, opt, every_k_schedule: int | Callable[[Any], Any],
                 use_grad_mean: bool = True, should_skip_update_fn=None,
                 accumulator_dtype=jnp.float32):
        self._opt = with_extra_args_support(opt)
        self._every_k_schedule = every_k_schedule if callable(every_k_schedule) else \
            (lambda step: every_k_schedule)
        self._use_grad_mean = use_grad_mean
        self._accumulator_dtype = accumulator_dtype
        self._should_skip_update_fn = should_skip_update_fn or \
            (lambda *args, **kwargs: (jnp.array(False), ()))

    @property
    def inner_opt(self):
        """The inner transformation (taking extra arguments)."""
        return self._opt

    def _accumulate(self, grad, acc, n):
        return acc + (grad - acc) / (n + 1) if self._use_grad_mean else grad + acc

    def init(self, params) -> MultiStepsState:
        """The initial state: zero counts and accumulators, and the inner state."""
        gradient_step = jnp.zeros([], jnp.int32)
        _, skip_state = self._should_skip_update_fn(tree_zeros_like(params), gradient_step,
                                                    params)
        return MultiStepsState(jnp.zeros([], jnp.int32), gradient_step, self._opt.init(params),
                               tree_zeros_like(params, dtype=self._accumulator_dtype),
                               skip_state)

    def update(self, updates, state, params=None, **extra_args):
        """Accumulate ``updates``; on the last mini-step, return the inner step's updates."""
        check_state("MultiSteps.update", state, MultiStepsState)
        k_steps = self._every_k_schedule(state.gradient_step)
        skip, skip_state = self._should_skip_update_fn(updates, state.gradient_step, params)
        skip = jnp.asarray(skip)
        if (skip.dtype, skip.shape) != (np.dtype(np.bool_), ()):
            raise ValueError(
                "MultiSteps: should_skip_update_fn must return a bool scalar array, got an "
                f"array of dtype {skip.dtype} and shape {skip.shape}")
        acc_grads = tree_map(lambda g, acc: self._accumulate(g, acc, state.mini_step),
                             updates, state.acc_grads)
        final, inner_state = self._opt.update(tree_cast_like(acc_grads, updates),
                                              state.inner_opt_state, params, **extra_args)
        emit = state.mini_step == (k_steps - 1)
        taken = MultiStepsState(
            mini_step=safe_increment(state.mini_step) % k_steps,
            gradient_step=(emit * safe_increment(state.gradient_step)
                           + (1 - emit) * state.gradient_step),
            inner_opt_state=_where_tree(emit, inner_state, state.inner_opt_state),
            acc_grads=tree_map(lambda acc: ((1 - emit) * acc).astype(self._accumulator_dtype),
                               acc_grads),
            skip_state=skip_state)
        final = tree_map(lambda u: emit * u, final)
        skipped = state._replace(skip_state=skip_state)
        return (_where_tree(skip, tree_zeros_like(final), final),
                _where_tree(skip, skipped, taken))

    def has_updated(self, state) -> Any:
        """Whether the last update was an inner step (a bool scalar)."""
        return jnp.logical_and(state.mini_step == 0, state.gradient_step > 0)

    def gradient_transformation(self) -> GradientTransformationExtraArgs:
        """``(init, update)`` as a ``GradientTransformationExtraArgs``."""
        return GradientTransformationExtraArgs(self.init, self.update)
