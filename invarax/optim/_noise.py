"""Gradient noise: ``add_noise`` and ``noisy_sgd``, and the random tree utilities
(``tree_random_like``, ``tree_split_key_like``), with JAX's random bits (invarax.random
gives the same bits as ``jax.random``)."""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from .. import random
from ..core.pytree import tree_map, tree_structure
from ._alias import _check_learning_rate
from ._base import GradientTransformation, chain, check_state
from ._transform import _zero_count, safe_increment, scale_by_learning_rate
from ._tree_math import tree_add_scale


def tree_split_key_like(rng_key, target_tree):
    """One key per leaf of ``target_tree``: ``random.split(rng_key, number of leaves)``.

    Example:
        >>> keys = tree_split_key_like(random.key(0), {"a": jnp.ones(2), "b": jnp.ones(3)})
        >>> sorted(keys)
        ['a', 'b']
    """
    treedef = tree_structure(target_tree)
    keys = random.split(rng_key, treedef.num_leaves)
    return treedef.unflatten([keys[i] for i in range(treedef.num_leaves)])


def tree_random_like(rng_key, target_tree, sampler=random.normal, dtype=None):
    """Random leaves shaped like ``target_tree``'s, each from its own split of ``rng_key``.

    Arguments:
        rng_key: a key.
        target_tree: the tree whose structure, shapes and dtypes to follow.
        sampler: ``sampler(key, shape, dtype)`` (default ``random.normal``).
        dtype: the dtype of every leaf (None: each target leaf's).

    Example:
        >>> tree_random_like(random.key(0), [jnp.ones(2)])[0].shape
        (2,)
    """
    keys = tree_split_key_like(rng_key, target_tree)
    return tree_map(lambda leaf, key: sampler(key, np.shape(leaf), dtype or leaf.dtype),
                    target_tree, keys)


class AddNoiseState(NamedTuple):
    """The state of ``add_noise``: the step count and the random key."""

    count: Any
    rng_key: Any


def add_noise(eta: float, gamma: float, key=None, *, seed: int | None = None
              ) -> GradientTransformation:
    """Add Gaussian noise of variance ``eta / t**gamma`` at step ``t`` to the updates.

    Arguments:
        eta: the initial variance.
        gamma: the decay exponent of the variance.
        key: a random key or an int seed (None: 0, with a warning as in optax).
        seed: deprecated; an int seed.

    Returns:
        A ``GradientTransformation`` whose state is an ``AddNoiseState``.

    Example:
        >>> opt = add_noise(0.01, 0.55, key=0)
        >>> opt.update(jnp.zeros(2), opt.init(jnp.zeros(2)))[0].shape
        (2,)
    """
    if seed is not None:
        warnings.warn('add_noise: "seed" is deprecated; use "key"', DeprecationWarning,
                      stacklevel=2)
        if key is not None:
            raise ValueError("add_noise: pass key or seed, not both")
        key = seed
    if key is None:
        warnings.warn("add_noise: no key given, using key 0; pass key= (optax will require "
                      "it)", stacklevel=2)
        key = 0

    def init_fn(params):
        del params
        return AddNoiseState(_zero_count(),
                             random.key(key) if isinstance(key, (int, np.integer)) else key)

    def update_fn(updates, state, params=None):
        del params
        check_state("add_noise.update", state, AddNoiseState)
        count = safe_increment(state.count)
        std = jnp.sqrt(eta / count ** gamma)
        rng_key, sample_key = random.split(state.rng_key)
        noise = tree_random_like(sample_key, updates)
        return tree_add_scale(updates, std, noise), AddNoiseState(count, rng_key)

    return GradientTransformation(init_fn, update_fn)


def noisy_sgd(learning_rate, eta: float = 0.01, gamma: float = 0.55, key=None, *,
              seed: int | None = None) -> GradientTransformation:
    """SGD with annealed Gaussian gradient noise: ``chain(add_noise(...),
    scale_by_learning_rate(learning_rate))``.

    Example:
        >>> opt = noisy_sgd(0.1, key=1)
        >>> opt.update(jnp.zeros(2), opt.init(jnp.zeros(2)))[0].shape
        (2,)
    """
    _check_learning_rate("noisy_sgd", learning_rate)
    return chain(add_noise(eta, gamma, key, seed=seed), scale_by_learning_rate(learning_rate))
