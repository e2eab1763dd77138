"""The compared libraries: which are installed, their workloads, their versions."""

from __future__ import annotations

import importlib.metadata
import importlib.util

from . import problems

# Import name -> column title, invarax first (the reference of the output checks).
TITLES = {"invarax": "invarax", "jax": "JAX", "torch": "PyTorch", "autograd": "autograd"}


def installed() -> list[str]:
    """The import names of the libraries that can be imported here."""
    return [name for name in TITLES if importlib.util.find_spec(name) is not None]


def load(name: str, cfg: problems.Config):
    """``(workloads, to_numpy)`` of library ``name``: see ``jaxlike.workloads``."""
    if name in ("invarax", "jax"):
        from . import jaxlike

        lib = importlib.import_module(name)
        jnp = importlib.import_module(f"{name}.numpy")
        return jaxlike.workloads(lib, jnp, cfg), jaxlike.to_numpy
    peer = importlib.import_module(f".{name}_peer", __package__)
    return peer.workloads(cfg), peer.to_numpy


def versions(names) -> dict:
    """Distribution name -> version of NumPy and of the libraries ``names`` (and jaxlib)."""
    dists = ["numpy", *names] + (["jaxlib"] if "jax" in names else [])
    return {dist: importlib.metadata.version(dist) for dist in dists}
