"""Every public name of ``jax.numpy`` (tests/jax_numpy_names.txt) exists in
``invarax.numpy`` or is listed, with a reason, in docs/numpy_coverage.md."""

import importlib.util
import pathlib
import re

import pytest

import invarax.numpy as jnp
from invarax.core.dtypes import ML_FLOATS, ML_INTS

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = [line.strip() for line in (ROOT / "tests" / "jax_numpy_names.txt").read_text().split("\n")
         if line.strip() and not line.startswith("#")]
DOC = (ROOT / "docs" / "numpy_coverage.md").read_text()
EXCEPTIONS = dict(re.findall(r"^\| `([\w]+)` \| (.+) \|$", DOC, re.MULTILINE))
NO_ML_DTYPES = importlib.util.find_spec("ml_dtypes") is None


def _served(name):
    # ml_dtypes' types (jnp.bfloat16, ...) need the optional ml_dtypes package
    return hasattr(jnp, name) or (NO_ML_DTYPES and name in ML_FLOATS + ML_INTS)


def test_the_list_is_jax_numpy():
    jax_numpy = pytest.importorskip("jax.numpy")
    public = {n for n in dir(jax_numpy) if not n.startswith("_")}
    # The list was taken from one JAX version; it must still be (nearly) all of it.
    assert set(NAMES) <= public | {"fft", "linalg"}
    assert len(NAMES) >= 400


def test_every_name_exists_or_is_documented():
    missing = [n for n in NAMES if not _served(n)]
    undocumented = [n for n in missing if n not in EXCEPTIONS]
    assert not undocumented, f"add these to jnp or to docs/numpy_coverage.md: {undocumented}"
    assert all(len(reason.strip()) > 10 for reason in EXCEPTIONS.values())


def test_documented_exceptions_are_jax_names():
    assert set(EXCEPTIONS) <= set(NAMES)


def test_the_documented_count_is_current():
    present = sum(map(_served, NAMES))
    match = re.search(r"\*\*(\d+) of the (\d+)\*\* exist", DOC)
    assert match, "docs/numpy_coverage.md states the coverage as '**N of the M** exist'"
    assert int(match.group(2)) == len(NAMES)
    assert int(match.group(1)) <= present  # names landing from other issues only add
