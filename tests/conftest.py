"""Shared test fixtures: the x64 and exact-elementary flags are reset after every test."""

import numpy as np
import pytest

import invarax

# The pmap tests map over up to 8 devices; the count is fixed when devices are first used.
invarax.config.update("jax_num_cpu_devices", 8)
_EXACT_AT_IMPORT = invarax.config.invarax_exact_elementary  # True unless INVARAX_EXACT_ELEMENTARY=0


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


@pytest.fixture
def x64():
    invarax.config.update("jax_enable_x64", True)
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)

