"""Shared test fixtures: the x64 flag is reset after every test."""

import numpy as np
import pytest

import invarax


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

