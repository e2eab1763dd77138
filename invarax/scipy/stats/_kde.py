"""``gaussian_kde``: a Gaussian kernel density estimate, as JAX's
``jax.scipy.stats.gaussian_kde`` (SciPy's, with weights), in invarax ops."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ... import random
from ...core.pytree import register_pytree_node_class
from ...transforms import vmap
from .. import linalg
from ..special import logsumexp, ndtr


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 (JAX's and SciPy's name)
    """A Gaussian kernel density estimate of the ``(d, n)`` points ``dataset``.

    Arguments:
        dataset: the data, shape ``(d, n)`` (or ``(n,)`` for ``d = 1``).
        bw_method: ``"scott"`` (the default), ``"silverman"``, a scalar factor, or a
            function of the estimate returning one.
        weights: optional weights of the ``n`` points (normalised to sum 1).

    The estimate is a pytree (its arrays are leaves), so it passes through ``jit``.

    Example:
        >>> import invarax.numpy as jnp
        >>> kde = gaussian_kde(jnp.array([0.0, 1.0, 2.0, 3.0]))
        >>> kde.evaluate(jnp.array([1.5]))
        Array([0.24186465], dtype=float32)
    """

    __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if jnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        dataset = dataset.astype(jnp.result_type(dataset, 0.0))
        if weights is None:
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            weights = jnp.atleast_1d(jnp.asarray(weights))
            dtype = jnp.result_type(dataset, weights, 0.0)
            dataset, weights = dataset.astype(dtype), weights.astype(dtype)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        neff = 1 / jnp.sum(weights ** 2)
        if bw_method is None or bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif np.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            self.neff, self.dataset, self.weights = neff, dataset, weights
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False,
                                                 aweights=weights))
        self.neff, self.dataset, self.weights = neff, dataset, weights
        self.covariance = data_covariance * factor ** 2
        self.inv_cov = jnp.linalg.inv(data_covariance) / factor ** 2

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    d = property(lambda self: self.dataset.shape[0], doc="The dimension of the points.")
    n = property(lambda self: self.dataset.shape[1], doc="The number of points.")

    def evaluate(self, points):
        """The density at ``points`` (shape ``(d, m)``; ``(m,)`` for ``d = 1``)."""
        return self._kernel_sum(points, in_log=False)

    __call__ = pdf = evaluate

    def logpdf(self, x):
        """The log of the density at ``x``."""
        return self._kernel_sum(x, in_log=True)

    def integrate_box_1d(self, low, high):
        """The probability mass between scalars ``low`` and ``high`` (``d = 1`` only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (ndtr(high) - ndtr(low)))

    def resample(self, key, shape=()):
        """Draw ``shape`` points from the estimate: shape ``(d, *shape)``."""
        shape = tuple(shape)
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        factor = linalg.cholesky(self.covariance, lower=True)
        z = random.normal(eps_key, (*shape, self.d), self.dataset.dtype)
        eps = jnp.einsum("ij,...j->...i", factor, z)
        return self.dataset[:, ind] + jnp.moveaxis(eps, -1, 0)

    def _points(self, points):
        points = jnp.atleast_2d(jnp.asarray(points))
        if jnp.iscomplexobj(points):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _kernel_sum(self, points, in_log: bool):
        xi = self._points(points).T
        dtype = jnp.result_type(self.dataset, xi, 0.0)
        whitening = linalg.cholesky(self.inv_cov.astype(dtype), lower=True)
        train = jnp.dot(self.dataset.T.astype(dtype), whitening)
        xi = jnp.dot(xi.astype(dtype), whitening)
        log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * self.d * jnp.log(
            jnp.asarray(2 * np.pi, dtype))
        weights = self.weights.astype(dtype)

        def at(x):
            arg = log_norm - 0.5 * jnp.sum(jnp.square(train - x), axis=1)
            if in_log:
                return logsumexp(jnp.log(weights) + arg, axis=0)
            return jnp.sum(weights * jnp.exp(arg), axis=0)

        return vmap(at)(xi)
