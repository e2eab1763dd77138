"""The examples in the docstrings of the modules issue 19 added run and give what they
show (the docs pages run as doctests through pytest's --doctest-glob; these are modules)."""

import doctest
import importlib

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp

MODULES = [
    "invarax.numpy._logic", "invarax.numpy._math", "invarax.numpy._matrix",
    "invarax.numpy._stats", "invarax.numpy._nanfuncs", "invarax.numpy._quantiles",
    "invarax.numpy._differences", "invarax.numpy._binning", "invarax.numpy._manip",
    "invarax.numpy._selection", "invarax.numpy._setops", "invarax.numpy._misc",
    "invarax.numpy._polyfit",
    "invarax.numpy._ufunc", "invarax.ops.gamma", "invarax.ops.bessel", "invarax.scipy.special",
    *(f"invarax.scipy.stats.{d}" for d in invarax.scipy.stats.__all__),
    "invarax.transforms._shapes", "invarax.core.partial", "invarax.transforms._callbacks",
    "invarax.debug",
    "invarax.checkpoint_policies", "invarax.transforms._checkpoint", "invarax.compiler.stages",
    "invarax.core.pytree", "invarax.test_util",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    globs = {"jnp": jnp, "np": np, "invarax": invarax, "linearize": invarax.linearize}
    result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
