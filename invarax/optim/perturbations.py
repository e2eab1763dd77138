"""optax's ``optax.perturbations``: differentiable approximations of any function by
stochastic perturbations of its input (Berthet et al. 2020), with derivatives of every
order estimated through the "magic box" (Foerster et al. 2018)."""

from __future__ import annotations

from .. import lax, random
from .. import numpy as jnp
from ..core.pytree import tree_map
from ..transforms import vmap
from ._noise import tree_random_like
from ._tree_math import tree_add_scale, tree_scale, tree_sum


class Normal:
    """The standard normal distribution: ``sample`` and (unnormalised) ``log_prob``."""

    def sample(self, key, sample_shape=(), dtype=float):
        """``random.normal(key, sample_shape, dtype)``."""
        return random.normal(key, sample_shape, dtype)

    def log_prob(self, inputs):
        """``-inputs**2 / 2``."""
        return -0.5 * inputs**2


class Gumbel:
    """The standard Gumbel distribution: ``sample`` and ``log_prob``."""

    def sample(self, key, sample_shape=(), dtype=float):
        """``random.gumbel(key, sample_shape, dtype)``."""
        return random.gumbel(key, sample_shape, dtype)

    def log_prob(self, inputs):
        """``-inputs - exp(-inputs)``."""
        return -inputs - jnp.exp(-inputs)


def _magic_box(x):
    """1 in value, whose derivatives carry those of ``x`` (DiCE's operator)."""
    return jnp.exp(x - lax.stop_gradient(x))


def make_perturbed_fun(fun, num_samples: int = 1000, sigma=0.1, noise=None,
                       use_baseline: bool = True):
    """A smoothed, differentiable version of ``fun``: ``E_z fun(x + sigma z)``, as optax's.

    Arguments:
        fun: a function from a pytree of arrays to a pytree of arrays (it need not be
            differentiable: only its values are used).
        num_samples: the number of perturbations averaged.
        sigma: the scale of the perturbations.
        noise: a distribution with ``sample(key, shape, dtype)`` and ``log_prob``
            (default ``Gumbel()``).
        use_baseline: subtract ``fun(x)`` (unperturbed) to reduce the variance.

    Returns:
        ``perturbed(key, x)``: a Monte-Carlo estimate of the smoothed function, whose
        ``grad`` (of any order) estimates the smoothed function's derivatives.

    Example:
        >>> import invarax
        >>> f = lambda x: jnp.sum(jnp.maximum(x, 0.0))
        >>> smooth = make_perturbed_fun(f, 1000, 0.1)
        >>> g = invarax.grad(smooth, argnums=1)(invarax.random.key(0), jnp.zeros(3))
        >>> bool(((g > 0.4) & (g < 0.9)).all())
        True
    """
    noise = Gumbel() if noise is None else noise

    def estimate(key, x, baseline):
        z = tree_random_like(key, x, sampler=noise.sample)
        shifted = lax.stop_gradient(tree_map(lambda a, b: a + sigma * b, x, z))
        # the noise recomputed from x, so that derivatives flow through log_prob
        z = tree_map(lambda a, s: (s - a) / sigma, x, shifted)
        box = _magic_box(tree_sum(tree_map(noise.log_prob, z)))
        out = tree_scale(box, fun(shifted))
        return tree_add_scale(out, 1 - box, baseline) if use_baseline else out

    def perturbed(key, x):
        baseline = fun(lax.stop_gradient(x)) if use_baseline else None
        keys = random.split(key, num_samples)
        outs = vmap(estimate, in_axes=(0, None, None))(keys, x, baseline)
        return tree_map(lambda o: jnp.mean(o, axis=0), outs)

    return perturbed


__all__ = ["Gumbel", "Normal", "make_perturbed_fun"]
