"""Which invarax module serves each module of JAX, Equinox and optax under the alias.

The table is data: one line per served module. A module whose entry says ``True`` also
serves its public submodules by the same path under its invarax module (``jax.scipy.stats``
is ``invarax.scipy.stats``); the others serve only the submodules listed here.
"""

from __future__ import annotations

#: The releases whose APIs invarax follows (and is tested against): what the aliased
#: ``jax.__version__``, ``equinox.__version__`` and ``optax.__version__`` report, for
#: libraries that check them. invarax's own version stays ``invarax.__version__``.
VERSIONS = {"jax": "0.10.2", "equinox": "0.13.8", "optax": "0.2.8", "jax.lib": "0.10.2"}

#: The top-level names the alias serves; any module under them is invarax's or an error.
ROOTS = ("jax", "equinox", "optax")

#: served module -> (invarax module, whether its submodules follow by path)
MODULES = {
    "jax": ("invarax", False),
    "jax.numpy": ("invarax.numpy", True),
    "jax.lax": ("invarax.lax", True),
    "jax.random": ("invarax.random", True),
    "jax.nn": ("invarax.nn", False),
    "jax.nn.initializers": ("invarax.nn.initializers", False),
    "jax.tree_util": ("invarax.tree_util", False),
    "jax.tree": ("invarax.tree", False),
    "jax.scipy": ("invarax.scipy", True),
    "jax.debug": ("invarax.debug", False),
    "jax.typing": ("invarax.typing", False),
    "jax.test_util": ("invarax.test_util", False),
    "jax.custom_derivatives": ("invarax.custom_derivatives", False),
    "jax.ad_checkpoint": ("invarax.ad_checkpoint", False),
    "jax.errors": ("invarax.errors", False),
    "jax.dtypes": ("invarax.dtypes", False),
    "jax.flatten_util": ("invarax.flatten_util", False),
    "jax.experimental": ("invarax.experimental", True),
    "jax.example_libraries": ("invarax.example_libraries", True),
    "jax.extend": ("invarax.extend", True),
    "jax.core": ("invarax.extend.core", False),
    "jax.api_util": ("invarax.extend.api_util", False),
    "jax.interpreters": ("invarax.extend.interpreters", True),
    "jax.sharding": ("invarax.sharding", True),
    # The one private module that real code commonly imports (TypePromotionError), and
    # jax.lib for its __version__ (jaxlib's, read by version checks).
    "jax._src": ("invarax.compat._private", False),
    "jax._src.dtypes": ("invarax.dtypes", False),
    "jax._src.ad_util": ("invarax.compat._ad_util", False),  # lineax: stop_gradient_p
    "jax.lib": ("invarax.compat._private", False),
    "equinox": ("invarax.module", True),
    "equinox.nn": ("invarax.nn", False),
    "equinox.debug": ("invarax.debug", False),
    # Equinox's attention functions live in a private module that its users (and tests) name
    "equinox.nn._attention": ("invarax.nn._attention", False),
    "optax": ("invarax.optim", True),
}

#: Names a served module has beyond its invarax module's attributes:
#: served module -> {name: "invarax.module:attribute"}.
EXTRA = {
    "equinox": {
        "apply_updates": "invarax.optim:apply_updates",
        "clear_caches": "invarax.transforms:clear_caches",
        "tree_serialise_leaves": "invarax.serialise:tree_serialise_leaves",
        "tree_deserialise_leaves": "invarax.serialise:tree_deserialise_leaves",
        "default_serialise_filter_spec": "invarax.serialise:default_serialise_filter_spec",
        "default_deserialise_filter_spec": "invarax.serialise:default_deserialise_filter_spec",
    },
    "equinox.internal": {"breakpoint_if": "invarax.debug:breakpoint_if"},
}


def invarax_module(name: str) -> str | None:
    """The invarax module that serves module ``name``, or None if the alias has none.

    Example:
        >>> invarax_module("jax.scipy.stats.norm")
        'invarax.scipy.stats.norm'
        >>> invarax_module("jax.ops") is None
        True
    """
    if name in MODULES:
        return MODULES[name][0]
    parent = name.rpartition(".")[0]
    while parent:
        if parent in MODULES:
            target, by_path = MODULES[parent]
            rest = name[len(parent) + 1 :]
            if not by_path or any(part.startswith("_") for part in rest.split(".")):
                return None
            return f"{target}.{rest}"
        parent = parent.rpartition(".")[0]
    return None
