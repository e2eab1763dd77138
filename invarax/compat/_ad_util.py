"""What the alias serves as JAX's private module ``jax._src.ad_util``: ``stop_gradient_p``,
the primitive of ``lax.stop_gradient``, for which lineax registers a transpose rule
(``jax.interpreters.ad.primitive_transposes[stop_gradient_p]``)."""

from ..ops.arithmetic import stop_gradient_p

__all__ = ["stop_gradient_p"]
