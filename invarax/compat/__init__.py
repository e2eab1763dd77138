"""Run unchanged JAX, Equinox and optax code on invarax: an import alias.

``invarax.compat.install()``, or running a program with ``python -m invarax.compat
script.py [args]``, makes every later ``import jax``, ``import equinox`` or ``import optax``
(and their submodules), in your code and in the libraries you use, import invarax's modules
instead. A served module has only the names invarax implements; asking for another raises
an error naming it. ``jaxtyping`` stays the real one.
"""

from ._alias import AliasModule, install, installed, uninstall
from ._table import VERSIONS

__all__ = ["AliasModule", "VERSIONS", "install", "installed", "uninstall"]
