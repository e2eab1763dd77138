"""What the alias serves as JAX's private package ``jax._src`` (only its ``dtypes``, which
real code imports for ``TypePromotionError``) and as ``jax.lib`` (only ``__version__``, the
followed JAX release, which code reads as jaxlib's version)."""
