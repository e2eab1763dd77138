"""Shared test fixtures (the x64 and exact-elementary flags are reset after every test by the
conftest at the root, which the docstring examples share)."""

import importlib.util
import os
import shutil
import tempfile

import numpy as np
import pytest

import invarax

# Run by tests/test_distributed.py under mpiexec: importing it would start a run.
collect_ignore = ["mpi_program.py", "mpi_sharding_program.py"]
if importlib.util.find_spec("mpmath") is None:  # the elementary tests skip without it
    collect_ignore.append("mp_reference.py")

# JAX, the oracle of the differential tests, compiles each program it meets, and eagerly it
# meets the same program again and again: a lax.cond, scan or while_loop outside jit (optax's
# MultiSteps, Equinox's layers) is traced afresh at every call and compiled afresh, and so is
# each jax.jit of a new function. A compilation cache for this session, in a temporary folder,
# compiles each distinct program once (the same XLA executable, so the same values; it halves
# the time of the optax tests). Set before jax is imported (it reads these at import), taken
# out of the environment once the test modules are imported, so that no subprocess of a test
# shares the folder; a cache the user set is left alone.
_JAX_CACHE_DIR = None
if "JAX_COMPILATION_CACHE_DIR" not in os.environ and importlib.util.find_spec("jax"):
    _JAX_CACHE_DIR = tempfile.mkdtemp(prefix="invarax-tests-jax-cache-")
_JAX_CACHE_ENV = {"JAX_COMPILATION_CACHE_DIR": _JAX_CACHE_DIR,
                  "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                  "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
if _JAX_CACHE_DIR is not None:
    os.environ.update(_JAX_CACHE_ENV)


def pytest_collection_finish(session):
    if _JAX_CACHE_DIR is not None:
        for name in _JAX_CACHE_ENV:
            os.environ.pop(name, None)


def pytest_unconfigure(config):
    if _JAX_CACHE_DIR is not None:
        shutil.rmtree(_JAX_CACHE_DIR, ignore_errors=True)


@pytest.fixture
def x64():
    invarax.config.update("jax_enable_x64", True)
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)

