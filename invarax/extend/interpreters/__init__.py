"""``invarax.extend.interpreters``: JAX's ``jax.interpreters.ad``, ``batching`` and ``mlir``,
the rule tables of invarax's transformations under JAX's names, for a library's primitives."""

from . import ad, batching, mlir  # noqa: F401
