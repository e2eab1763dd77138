"""No NumPy or libm transcendental result reaches a user: exp, log, sin, tanh, pow, erf, ...
are invarax's own kernels (invarax/kernels/elementary.py; N6 in docs/numerics.md), whose
bits are the same on every CPU. NumPy's float ufuncs differ between AVX-512, AVX2 and SSE
machines, and libm's between libm versions; outside the allowed places below, calling one
on a value is a bug (route it through ``invarax.kernels.elementary``)."""

import ast
import pathlib

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.kernels import elementary as kernels

ROOT = pathlib.Path(invarax.__file__).parent

# The modules whose functions of these names compute a transcendental function.
MODULES = {"numpy", "math", "cmath"}
TRANSCENDENTAL = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh",
    "atanh", "power", "float_power", "pow", "cbrt", "erf", "erfc", "lgamma", "gamma",
    "sinc", "i0", "hypot", "emath",
}
# Files allowed them, with the reason.
ALLOWED_FILES = {
    "kernels/elementary.py": "the NumPy fallbacks: complex operands, and every operand with "
                             "config.invarax_exact_elementary switched off (the opt-out)",
    "ops/gamma.py": "lgamma and the incomplete gamma and beta functions: their own kernels "
                    "are another engineer's work in progress",
}
# (file, function) pairs allowed elsewhere, with the reason.
ALLOWED_CALLS = {
    ("ops/transcendental.py", "np.power"): "pow's fallback (_pow_impl): complex operands and the "
                                        "opt-out",
    ("ops/transcendental.py", "np.arctan2"): "atan2's fallback with the opt-out",
    ("random/_discrete.py", "np.log"): "JAX's host-side count of shuffle rounds, "
                                       "ceil(3 log n / log(2**32 - 1)), an integer that must "
                                       "equal JAX's; no float result reaches the user",
}


def transcendental_calls(path):
    """``(line, name)`` for each NumPy/math/cmath transcendental function the file names."""
    tree = ast.parse(path.read_text())
    aliases = {}  # local name -> module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES:
            found += [(node.lineno, f"from {node.module} import {alias.name}")
                      for alias in node.names if alias.name in TRANSCENDENTAL]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr in TRANSCENDENTAL):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_no_numpy_transcendental_outside_the_kernels():
    offenders = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED_FILES:
            continue
        calls = [(line, call) for line, call in transcendental_calls(path)
                 if (name, call) not in ALLOWED_CALLS]
        if calls:
            offenders[name] = calls
    assert offenders == {}, ("NumPy/libm transcendental functions outside "
                             "invarax/kernels/elementary.py (route them through its kernels): "
                             f"{offenders}")


def test_the_allowed_places_exist():
    """A stale entry would let a later offender in unnoticed."""
    for name in ALLOWED_FILES:
        assert (ROOT / name).is_file(), name
    for name, call in ALLOWED_CALLS:
        assert call in {c for _, c in transcendental_calls(ROOT / name)}, (name, call)


def test_the_scan_finds_them(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import math\nimport numpy as _np\nfrom cmath import exp\n"
                      "_np.sin(x)\nmath.log(2)\nmath.sqrt(2)\n_np.add(x, y)\nf = _np.tanh\n")
    assert transcendental_calls(sample) == [
        (3, "from cmath import exp"), (4, "_np.sin"), (5, "math.log"), (8, "_np.tanh")]


def test_constants_are_the_nearest_floats():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    assert kernels.LOG2 == float(mpmath.log(2))
    assert kernels.LOG10 == float(mpmath.log(10))
    assert kernels.LOG_2PI == float(mpmath.log(mpmath.mpf(2 * np.pi)))


def _bits(x):
    return np.asarray(x).tobytes()


def test_routes_the_audit_changed_use_the_kernels():
    """logspace, cumlogsumexp, the log2/log10/exp2 derivatives and logaddexp2 give the bits of
    invarax's own functions."""
    x = np.linspace(-3, 3, 101).astype(np.float32)
    e = np.linspace(0, 3, 50)
    base = np.full_like(e, 10.0)
    assert _bits(jnp.logspace(0, 3, 50)) == _bits(
        kernels.elementary2("pow", base, e).astype(np.float32))
    y = np.asarray(lax.cumlogsumexp(jnp.asarray(x), 0))
    step = y[0]
    for i in range(1, 5):  # hi + log1p(exp(-|a - b|)), NumPy's logaddexp formula
        a, b = step, x[i]
        step = max(a, b) + kernels.elementary("log1p", kernels.elementary("exp", -abs(a - b)))
        assert _bits(y[i]) == _bits(step)
    t = invarax.jvp(jnp.exp2, (jnp.float32(1.5),), (jnp.float32(1.0),))[1]
    assert _bits(t) == _bits(kernels.elementary("exp2", np.float32(1.5))
                             * np.float32(kernels.LOG2))
