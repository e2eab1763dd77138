"""``invarax.extend``: JAX's ``jax.extend`` (``core``, ``linear_util``) and the JAX modules
that libraries defining their own primitives use (``interpreters.ad``, ``batching``,
``mlir``; ``api_util``)."""

from . import api_util, core, interpreters, linear_util  # noqa: F401
