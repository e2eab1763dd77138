"""``GradientTransformation``, ``EmptyState``, ``identity``, ``chain`` and their shared checks."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import Array
from ..core.pytree import (
    keystr,
    tree_flatten_with_path,
    tree_map,
    tree_map_with_path,
    tree_structure,
)
from ..core.trace import Tracer

Params = Any
"""Parameters: a pytree of arrays (optax's ``Params``)."""
Updates = Any
"""Updates (gradients, or what a transformation made of them): a pytree like the params."""
OptState = Any
"""An optimizer state: a pytree of arrays (optax's ``OptState``)."""
Schedule = Callable[[Any], Any]
"""A schedule: a function of the int32 step count returning a scalar."""
ScalarOrSchedule = Any
"""A float, a scalar array or a ``Schedule``."""


TransformInitFn = Callable[[Any], Any]
"""The type of ``init``: ``params -> state``."""
TransformUpdateFn = Callable[..., tuple[Any, Any]]
"""The type of ``update``: ``(updates, state, params=None) -> (updates, state)``."""


class GradientTransformation(NamedTuple):
    """An optimizer, or a piece of one: a pair of pure functions ``(init, update)``.

    ``init(params) -> state`` builds the state (a pytree of arrays) from the parameters;
    ``update(updates, state, params=None) -> (updates, state)`` transforms the gradients
    into updates and returns the next state. Both are pure, so they run under ``jit``,
    ``filter_jit`` and ``vmap``.

    Arguments:
        init: the function building the initial state.
        update: the function transforming updates and state.

    Returns:
        The pair, a NamedTuple (so ``init, update = opt`` works too).

    Example:
        >>> double = GradientTransformation(lambda p: EmptyState(),
        ...                                 lambda u, s, p=None: (2 * u, s))
        >>> double.update(jnp.ones(2), double.init(jnp.ones(2)))
        (Array([2., 2.], dtype=float32), EmptyState())
    """

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class GradientTransformationExtraArgs(GradientTransformation):
    """A ``GradientTransformation`` whose update takes keyword arguments beyond the params.

    ``update(updates, state, params=None, **extra_args)``: a line search reads ``value``,
    ``grad`` and ``value_fn`` there. ``chain`` passes the extra arguments to the links that
    take them (this class) and leaves them out for the others.

    Example:
        >>> t = GradientTransformationExtraArgs(lambda p: EmptyState(),
        ...                                     lambda u, s, p=None, **kw: (kw["k"] * u, s))
        >>> chain(t, scale(2.0)).update(jnp.ones(1), ((), ()), k=3.0)[0]
        Array([6.], dtype=float32)
    """


def with_extra_args_support(tx: GradientTransformation) -> GradientTransformationExtraArgs:
    """``tx`` as a ``GradientTransformationExtraArgs``: its update then ignores extra arguments.

    Arguments:
        tx: a ``GradientTransformation``.

    Returns:
        ``tx`` itself if it takes extra arguments, else a wrapper dropping them.
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update_fn(updates, state, params=None, **extra_args):
        del extra_args
        return tx.update(updates, state, params)

    return GradientTransformationExtraArgs(tx.init, update_fn)


class EmptyState(NamedTuple):
    """The state of a stateless transformation: a pytree with no leaves."""


ClipState = ClipByGlobalNormState = ScaleState = EmptyState
ScaleByTrustRatioState = AddDecayedWeightsState = EmptyState


def _describe(leaf) -> str:
    if isinstance(leaf, (Array, np.ndarray, np.generic)):
        return f"an array of dtype {np.dtype(leaf.dtype).name}"
    return f"{leaf!r:.40} (of type {type(leaf).__name__})"


def check_param(who: str, where: str, leaf, integers: bool = False) -> None:
    """Raise a TypeError unless ``leaf`` (the parameter at ``where``) is a float array or float
    (or, with ``integers``, an integer array or int too)."""
    kinds = "fiu" if integers else "f"  # bfloat16 and the float8 types are floats
    if isinstance(leaf, float) or (integers and isinstance(leaf, int)
                                   and not isinstance(leaf, bool)) or (
            isinstance(leaf, (Array, np.ndarray, np.generic))
            and dtypes.kind(leaf.dtype) in kinds):
        return
    raise TypeError(
        f"{who}: the parameter at {where or 'the root'} is {_describe(leaf)}; optimizers "
        "update float arrays only. For a model with other leaves, initialise with "
        "opt.init(invarax.filter(model, invarax.is_inexact_array)) and take gradients with "
        "invarax.filter_value_and_grad."
    )


def is_static_leaf(leaf) -> bool:
    """Whether ``leaf`` is a function (``custom_jvp`` ones too): static, never a parameter."""
    return callable(leaf) and not isinstance(leaf, (Array, np.ndarray, np.generic))


def check_params(who: str, params, integers: bool = False) -> None:
    """Raise a TypeError naming the first leaf of ``params`` that is not a float array (or,
    with ``integers``, an integer array).

    Python floats pass (they become float arrays); None marks a leaf that is not optimised;
    functions (a Module's activation, say) are static leaves and pass too.
    """
    tree_map_with_path(lambda path, leaf: None if is_static_leaf(leaf)
                       else check_param(who, keystr(path), leaf, integers), params)


def zeros_like_params(who: str, params, fill_value=0, dtype=None):
    """``fill_value`` (zeros) shaped like ``params`` (checked by ``check_params``), of their
    dtypes or ``dtype``; None at its functions."""
    check_params(who, params)
    return tree_map_with_path(
        lambda _, p: None if is_static_leaf(p) else jnp.full_like(p, fill_value, dtype=dtype),
        params)


def init_empty_state(params) -> EmptyState:
    """The init of a stateless transformation: check the parameters (float or integer
    arrays, as optax accepts them), return ``EmptyState()``.

    Example:
        >>> init_empty_state({"w": jnp.ones(2), "n": jnp.arange(2)})
        EmptyState()
    """
    check_params("init", params, integers=True)
    return EmptyState()


def check_state(who: str, state, state_type: type) -> None:
    """Raise a TypeError if ``state`` is not a ``state_type`` (the state of another optimizer)."""
    if not isinstance(state, state_type):
        raise TypeError(
            f"{who}: expected a {state_type.__name__} as the state, got "
            f"{type(state).__name__}; pass the state returned by this optimizer's init "
            "(or by its last update)."
        )


def check_structure(who: str, updates, other, what: str) -> None:
    """Raise a ValueError if ``other`` (the state's moments, or params) differs from ``updates``."""
    expected = tree_structure(updates)
    try:
        expected.flatten_up_to(other)
    except ValueError as e:
        raise ValueError(
            f"{who}: the updates and {what} have different tree structures: {e}\n"
            f"The state must come from init(params) with params of the gradients' structure "
            "(for a model: opt.init(invarax.filter(model, invarax.is_inexact_array)))."
        ) from None
    got = tree_structure(other)
    if got != expected:
        raise ValueError(
            f"{who}: the updates and {what} have different tree structures:\n"
            f"  updates: {expected}\n  {what}: {got}"
        )


def _is_none(x) -> bool:
    return x is None


def map_with_params(who: str, f, updates, params, keep_params: bool = False,
                    integers: bool = False, broadcast: bool = False):
    """``f(update, param)`` at each update that is not None; elsewhere None (or the param).

    ``params`` may hold anything (a Module's functions, say) where the updates are None, as
    the updates of a filtered model do; elsewhere each param must be a float array of its
    update's shape (with ``integers``, an integer array is accepted too). With
    ``keep_params`` the result holds the param where the update is None, and has the params'
    structure. With ``broadcast`` an update need only broadcast with its param (a Python
    scalar update, say), as ``p + u`` does.
    """
    with_paths, treedef = tree_flatten_with_path(updates, is_leaf=_is_none)
    try:
        param_leaves = treedef.flatten_up_to(params)
    except ValueError as e:
        raise ValueError(
            f"{who}: the updates and the params have different tree structures: {e}"
        ) from None
    out = []
    for (path, u), p in zip(with_paths, param_leaves, strict=True):
        if u is not None:
            where = keystr(path)
            check_param(who, where, p, integers)
            if np.shape(p) != np.shape(u) and not (broadcast and _broadcasts(p, u)):
                raise ValueError(
                    f"{who}: the update at {where or 'the root'} has shape {np.shape(u)}, "
                    f"its parameter {np.shape(p)}")
            out.append(f(u, p))
        else:
            out.append(p if keep_params else None)
    return treedef.unflatten(out)


def _broadcasts(p, u) -> bool:
    try:
        np.broadcast_shapes(np.shape(p), np.shape(u))
    except ValueError:
        return False
    return True


def require_params(who: str, params) -> None:
    """Raise a ValueError saying that ``who``'s update needs the parameters."""
    if params is None:
        raise ValueError(f"{who}: the update needs the parameters: call "
                         "opt.update(grads, state, params)")


def check_real(who: str, name: str, value):
    """Raise a TypeError unless a concrete hyperparameter is a real number; return it as a
    float (a tracer is returned as it is)."""
    if isinstance(value, Tracer):
        return value
    if isinstance(value, (Array, np.ndarray, np.generic)) and np.ndim(value) == 0:
        value = float(value)
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be a real number, got {value!r:.60}")
    return value


def check_nonnegative(who: str, name: str, value, *, positive: bool = False) -> None:
    """Raise if a concrete hyperparameter is negative (or not positive); tracers pass."""
    value = check_real(who, name, value)
    if isinstance(value, Tracer):
        return
    if value < 0 or (positive and value == 0):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"{who}: {name} must be {kind}, got {value}")


def identity() -> GradientTransformation:
    """The transformation that returns the updates unchanged.

    Returns:
        A stateless ``GradientTransformation``.

    Example:
        >>> identity().update(jnp.ones(2), EmptyState())
        (Array([1., 1.], dtype=float32), EmptyState())
    """
    def update_fn(updates, state, params=None):
        del params
        return updates, state

    return GradientTransformation(init_empty_state, update_fn)


def set_to_zero() -> GradientTransformation:
    """The transformation that replaces every update by zeros (freezes the parameters).

    Returns:
        A stateless ``GradientTransformation``.

    Example:
        >>> set_to_zero().update(jnp.ones(2), EmptyState())
        (Array([0., 0.], dtype=float32), EmptyState())
    """
    def update_fn(updates, state, params=None):
        del params
        return tree_map(jnp.zeros_like, updates), state

    return GradientTransformation(init_empty_state, update_fn)


def chain(*args: GradientTransformation) -> GradientTransformation:
    """Apply transformations one after another; the state is the tuple of their states.

    Arguments:
        *args: ``GradientTransformation``s, applied left to right.

    Returns:
        A ``GradientTransformationExtraArgs`` whose update feeds each one's output to the next
        (extra keyword arguments go to the links that take them).

    Example:
        >>> opt = chain(clip_by_global_norm(1.0), scale(-0.1))
        >>> updates, state = opt.update(jnp.array([3.0, 4.0]), opt.init(jnp.zeros(2)))
        >>> updates
        Array([-0.06      , -0.08000001], dtype=float32)
    """
    for i, t in enumerate(args):
        if not isinstance(t, GradientTransformation):
            raise TypeError(
                f"chain: argument {i} is a {type(t).__name__}, not a GradientTransformation"
            )

    transforms = [with_extra_args_support(t) for t in args]

    def init_fn(params):
        return tuple(t.init(params) for t in transforms)

    def update_fn(updates, state, params=None, **extra_args):
        if not isinstance(state, tuple) or len(state) != len(transforms):
            raise ValueError(
                f"chain: expected a tuple of {len(transforms)} states (one per "
                f"transformation), got {type(state).__name__}"
                f"{f' of length {len(state)}' if isinstance(state, tuple) else ''}; pass the "
                "state returned by this optimizer's init"
            )
        new_state = []
        for t, s in zip(transforms, state, strict=True):
            updates, s = t.update(updates, s, params, **extra_args)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformationExtraArgs(init_fn, update_fn)
