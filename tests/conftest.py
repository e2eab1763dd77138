"""Shared test fixtures (the x64 and exact-elementary flags are reset after every test by the
conftest at the root, which the docstring examples share)."""

import importlib.util

import numpy as np
import pytest

import invarax

# Run by tests/test_distributed.py under mpiexec: importing it would start a run.
collect_ignore = ["mpi_program.py"]
if importlib.util.find_spec("mpmath") is None:  # the elementary tests skip without it
    collect_ignore.append("mp_reference.py")


@pytest.fixture
def x64():
    invarax.config.update("jax_enable_x64", True)
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)

