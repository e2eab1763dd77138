"""What every test and every docstring example starts from: the default config (x64 off,
invarax's own elementary functions as at import), and, for the examples, the names a user
of invarax has at hand, so that each example shows only what it is about.

An example in a docstring of ``invarax`` runs with its module's own names, then ``np``,
``jnp``, ``invarax`` and the top-level names (``grad``, ``jit``, ``lax``, ``random``,
``nn``, ``Module``, ...) and ``random``; one in ``invarax.optim`` has that namespace's
names too (``sgd``, ``chain``, ``tree_l2_norm``, ...), as in optax's own examples.
"""

import numpy as np
import pytest
from _pytest.doctest import DoctestItem

import invarax
import invarax.numpy as jnp
import invarax.optim
import invarax.optim.tree_utils

# The pmap and sharding tests and examples use up to 8 devices; the count is fixed when
# devices are first used.
invarax.config.update("jax_num_cpu_devices", 8)

_EXACT_AT_IMPORT = invarax.config.invarax_exact_elementary  # True unless INVARAX_EXACT_ELEMENTARY=0
_NAMES = {"np": np, "jnp": jnp, "invarax": invarax, "random": invarax.random,
          **{name: getattr(invarax, name) for name in invarax.__all__}}
_OPTIM_NAMES = {name: getattr(module, name)
                for module in (invarax.optim, invarax.optim.tree_utils) for name in module.__all__}


@pytest.fixture(autouse=True)
def _example_names(request):
    """The names an example may use without importing them (setdefault: its module's own
    names come first)."""
    if isinstance(request.node, DoctestItem):
        globs = request.node.dtest.globs
        extra = _OPTIM_NAMES if request.node.dtest.name.startswith("invarax.optim.") else {}
        for name, value in {**_NAMES, **extra}.items():
            globs.setdefault(name, value)


@pytest.fixture(autouse=True)
def _reset_x64():
    yield
    invarax.config.update("jax_enable_x64", False)


@pytest.fixture(autouse=True)
def _reset_exact_elementary():
    """A test that switches invarax's own elementary functions off (to compare with NumPy's)
    must not leave them off for the tests after it."""
    yield
    if invarax.config.invarax_exact_elementary != _EXACT_AT_IMPORT:
        invarax.config.update("invarax_exact_elementary", _EXACT_AT_IMPORT)
