"""Shared test fixtures: the x64 flag is reset after every test."""

import numpy as np
import pytest

import invarax

# The pmap tests map over up to 8 devices; the count is fixed when devices are first used.
invarax.config.update("jax_num_cpu_devices", 8)


@pytest.fixture(autouse=True)
def _reset_x64():
    yield
    invarax.config.update("jax_enable_x64", False)


@pytest.fixture
def x64():
    invarax.config.update("jax_enable_x64", True)
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)

