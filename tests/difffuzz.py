"""The differential fuzzer against JAX, shared by tests/test_fuzz_jax.py (bounded, in CI) and
tests/scripts/fuzz_vs_jax.py (long runs).

A program is a few lines of Python source over ``jnp`` (``v2 = jnp.sum(v0 * 2, axis=0)``),
drawn by hypothesis from the templates below: elementwise ops, broadcasting, Python
scalars (weak types), dtype promotion, ``where``, reductions with axes, shape ops,
indexing and ``.at[]`` updates, dot/matmul/einsum. It is run in invarax and in JAX
(eagerly, under ``jit``, its ``grad`` and its ``vmap``), and the two must agree: the same
dtype and shape and values within tolerance, or both raise.

Not generated (being fixed elsewhere, issue 20): floor division and remainder by zero,
out-of-bounds indices, ``custom_jvp``.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import strategies as st

SHAPES = [(), (3,), (2, 3), (1, 3), (4, 1, 3), (2, 1)]
INPUT_DTYPES = ["float32", "float32", "float32", "int32", "bool", "float16", "uint8",
                "int8", "complex64"]

UNARY = ["sin", "cos", "exp", "tanh", "abs", "negative", "square", "sign", "floor", "ceil",
         "log1p", "sqrt", "expm1", "arctan", "sinh", "round", "logical_not", "isnan"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "arctan2",
          "greater", "equal", "logical_and", "logaddexp"]
OPERATORS = ["+", "-", "*", "/", ">", "<=", "==", "&", "|", "**"]
SCALARS = ["2", "1.5", "-3", "True", "0.5", "1j"]
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "any", "all", "var"]
AXES = ["None", "0", "-1", "(0, 1)", "1"]
DTYPES = ["float32", "int32", "bool_", "float16", "uint8", "int8", "complex64"]


def _templates(v, w):
    """Line templates over the variables ``v`` and ``w`` (source strings), as strategies."""
    return st.one_of(
        st.sampled_from(UNARY).map(lambda f: f"jnp.{f}({v})"),
        st.sampled_from(BINARY).map(lambda f: f"jnp.{f}({v}, {w})"),
        st.sampled_from(OPERATORS).map(lambda op: f"{v} {op} {w}"),
        st.tuples(st.sampled_from(["+", "*", "-", "/", ">"]), st.sampled_from(SCALARS),
                  st.booleans()).map(lambda t: f"{t[1]} {t[0]} {v}" if t[2] else
                                     f"{v} {t[0]} {t[1]}"),
        st.just(f"jnp.where({v} > 0, {v}, {w})"),
        st.tuples(st.sampled_from(REDUCTIONS), st.sampled_from(AXES), st.booleans()).map(
            lambda t: f"jnp.{t[0]}({v}, axis={t[1]}, keepdims={t[2]})"),
        st.tuples(st.sampled_from(["argmax", "argmin"]), st.sampled_from(["None", "0", "-1"]))
        .map(lambda t: f"jnp.{t[0]}({v}, axis={t[1]})"),
        st.sampled_from([
            f"jnp.reshape({v}, (-1,))", f"jnp.transpose({v})", f"jnp.expand_dims({v}, 0)",
            f"jnp.squeeze({v})", f"jnp.broadcast_to({v}, (2,) + {v}.shape)",
            f"jnp.concatenate([{v}, {w}], axis=0)", f"jnp.stack([{v}, {w}])",
            f"jnp.flip({v}, 0)", f"jnp.cumsum({v}, axis=0)", f"jnp.clip({v}, -1, 1)",
            f"jnp.ones_like({v})", f"{v}.T", f"{v}[None]", f"{v}[..., ::-1]", f"{v}[0]",
            f"{v}[1:]", f"{v}[..., 0]", f"{v}.at[0].set(7)", f"{v}.at[..., -1].add({w})",
            f"{v}.at[0].multiply(2)", f"jnp.take({v}, jnp.array([0, 0]), axis=0)",
            f"jnp.dot({v}, {w})", f"{v} @ {w}", f"jnp.einsum('...i,...i->...', {v}, {w})",
            f"jnp.matmul({v}, jnp.transpose({w}))", f"jnp.outer({v}, {w})",
            f"jnp.sum({v} * {w})", f"jnp.tensordot({v}, {w}, axes=1)",
            f"jnp.sort({v}, axis=-1)", f"jnp.argsort({v}, axis=0)", f"jnp.cumprod({v}, axis=-1)",
            f"{v} // 2", f"{v} % 3", f"jnp.std({v}, axis=0)", f"{v}.at[-1].max({w})",
            f"jnp.repeat({v}, 2, axis=0)", f"jnp.tile({v}, 2)", f"jnp.pad({v}, 1)",
            f"jnp.roll({v}, 1, axis=0)", f"jnp.moveaxis({v}, 0, -1)", f"jnp.ravel({v})",
            f"jnp.swapaxes({v}, 0, -1)", f"jnp.minimum({v}, 0.5)", f"jnp.logical_xor({v}, {w})",
            f"jnp.vstack([{v}, {w}])", f"jnp.hstack([{v}, {w}])", f"jnp.exp2({v})",
            f"jnp.log({v} * {v} + 1)", f"{v}.sum()", f"{v}.mean(axis=-1)",
            f"{v}.reshape(-1)[::2]", f"jnp.atleast_2d({v})",
        ]),
        st.sampled_from(DTYPES).map(lambda d: f"{v}.astype(jnp.{d})"),
    )


@st.composite
def programs(draw, max_inputs=3, max_lines=5):
    """``(source, inputs)``: the source of ``def f(v0, ..., vk)`` and NumPy inputs."""
    n_in = draw(st.integers(1, max_inputs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [_array(rng, draw(st.sampled_from(SHAPES)), draw(st.sampled_from(INPUT_DTYPES)))
              for _ in range(n_in)]
    lines = []
    for i in range(draw(st.integers(1, max_lines))):
        n = n_in + i
        v = f"v{draw(st.integers(max(0, n - 3), n - 1))}"  # mostly the latest values
        w = f"v{draw(st.integers(0, n - 1))}"
        lines.append(f"    v{n} = {draw(_templates(v, w))}")
    args = ", ".join(f"v{i}" for i in range(n_in))
    source = f"def f({args}):\n" + "\n".join(lines) + f"\n    return v{n_in + len(lines) - 1}\n"
    return source, inputs


def _array(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int32", "uint8", "int8"):
        return rng.integers(0 if dtype == "uint8" else -5, 6, shape).astype(dtype)
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def compile_program(source: str, jnp):
    """The function ``f`` of ``source`` with ``jnp`` as its ``jnp``."""
    namespace = {"jnp": jnp}
    exec(compile(source, "<fuzz program>", "exec"), namespace)  # noqa: S102  (our own source)
    return namespace["f"]


class Outcome:
    """What a run gave: a NumPy array (with its weak type) or the exception raised."""

    def __init__(self, run):
        try:
            out = run()
            self.value, self.weak, self.error = np.asarray(out), _weak(out), None
        except Exception as e:  # noqa: BLE001  (an error is an outcome to compare)
            self.value, self.weak, self.error = None, None, e


def _weak(x):
    weak = getattr(x, "weak_type", None)
    if weak is None:  # a JAX array
        aval = getattr(x, "aval", None)
        weak = getattr(aval, "weak_type", None)
    return weak


def disagreement(ours: Outcome, theirs: Outcome, rtol: float = 2e-4):
    """None if the outcomes agree, else a description of the difference."""
    if ours.error is not None or theirs.error is not None:
        if ours.error is not None and theirs.error is not None:
            return None
        side, error = ("invarax", ours.error) if ours.error else ("JAX", theirs.error)
        return f"only {side} raised: {type(error).__name__}: {error}"
    a, b = ours.value, theirs.value
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"invarax gave {a.dtype}{list(a.shape)}, JAX {b.dtype}{list(b.shape)}"
    if ours.weak is not None and theirs.weak is not None and ours.weak != theirs.weak:
        return f"weak type: invarax {ours.weak}, JAX {theirs.weak} ({a.dtype}{list(a.shape)})"
    if a.dtype.kind in "biu":
        return None if np.array_equal(a, b) else f"values differ:\n{a}\n{b}"
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    b64 = b.astype(a64.dtype)
    if a.dtype.kind == "f":  # an overflow to inf on one side only, within rounding of max
        big = float(np.finfo(a.dtype).max)
        a64, b64 = np.clip(a64, -big, big), np.clip(b64, -big, big)
    finite = np.isfinite(b64)
    scale = 1.0 + (float(np.max(np.abs(b64[finite]))) if finite.any() else 0.0)
    eps = float(np.finfo(a.dtype).eps)
    tol = max(rtol, 4 * eps)
    if np.allclose(a64, b64, rtol=tol, atol=tol * scale, equal_nan=True):
        return None
    if a.dtype == np.float16 and np.allclose(a64, b64, rtol=64 * eps, atol=64 * eps * scale,
                                             equal_nan=True):
        return f"float16 rounding: values differ beyond rtol {tol}, within {64 * eps:.3g}"
    return f"values differ beyond rtol {tol}:\n{a}\n{b}"


def transforms(jax_like, jnp, f, inputs, batched):
    """The runs to compare: name -> zero-argument callable."""
    arrays = [jnp.asarray(x) for x in inputs]
    runs = {
        "eager": lambda: f(*arrays),
        "jit": lambda: jax_like.jit(f)(*arrays),
        "vmap": lambda: jax_like.vmap(f)(*(jnp.asarray(x) for x in batched)),
    }
    first = np.asarray(inputs[0])
    if first.dtype.kind == "f":
        runs["grad"] = lambda: jax_like.grad(lambda *xs: jnp.sum(f(*xs)).real)(*arrays)
        runs["jit(grad)"] = lambda: jax_like.jit(jax_like.grad(
            lambda *xs: jnp.sum(f(*xs)).real))(*arrays)
    return runs


def batch(inputs, rng, size=3):
    """Each input stacked with ``size - 1`` perturbed copies: the vmap inputs."""
    out = []
    for x in inputs:
        x = np.asarray(x)
        copies = [x] + [_array(rng, x.shape, str(x.dtype)) for _ in range(size - 1)]
        out.append(np.stack(copies))
    return out


def compare(source: str, inputs, seed: int = 0):
    """``{run name: description}`` of the runs where invarax and JAX disagree."""
    import jax
    import jax.numpy as jjnp

    import invarax
    import invarax.numpy as ijnp

    batched = batch(inputs, np.random.default_rng(seed))
    ours = transforms(invarax, ijnp, compile_program(source, ijnp), inputs, batched)
    theirs = transforms(jax, jjnp, compile_program(source, jjnp), inputs, batched)
    with np.errstate(all="ignore"):
        ours = {name: Outcome(run) for name, run in ours.items()}
        theirs = {name: Outcome(run) for name, run in theirs.items()}
    found = {}
    for name in ours:
        diff = disagreement(ours[name], theirs[name])
        twin = _TWINS.get(name)
        if diff is not None and twin is not None and disagreement(ours[name], theirs[twin]) \
                is None and disagreement(theirs[name], theirs[twin]) is not None:
            diff = f"JAX's {name} differs from its {twin}, invarax agrees with it: {diff}"
        if diff is not None:
            found[name] = diff
    return found


# JAX's eager and jit results may differ (XLA rewrites under jit; eager power with a concrete
# exponent); invarax's never do (N3). Where invarax matches the twin, it is that difference.
_TWINS = {"eager": "jit", "jit": "eager", "grad": "jit(grad)", "jit(grad)": "grad"}


# Disagreements listed as deliberate or owned elsewhere (docs/reliability.md): a difference
# whose text matches one of these is counted as known, not reported.
KNOWN = {
    "max/min of complex": r"reduce_m(ax|in) does not accept dtype complex|argm(ax|in).*complex",
    "round of complex": r"round of a complex array is not supported",
    "arctan2 of complex": r"atan2 does not accept dtype complex",
    "rint of complex": r"rint of a complex array is not supported",
    "JAX's jit differs from its eager": r"^JAX's \S+ differs from its",
    "float16 accuracy": r"^float16 rounding",
}
# Known differences told by the program as well: (pattern of the difference, of the source).
KNOWN_IN_SOURCE = {
    "0/0 of broadcast bools": (r"^values differ(?s:.*)nan", r"jnp\.divide\(| / "),
    "all/any of complex": (r"^values differ", r"jnp\.(all|any)\((?s:.*)(1j|complex64)"
                           r"|(1j|complex64)(?s:.*)jnp\.(all|any)\("),
}


def known(diff: str, source: str = "") -> str | None:
    """The name of the known difference that ``diff`` (of program ``source``) is, or None."""
    for name, pattern in KNOWN.items():
        if re.search(pattern, diff):
            return name
    for name, (pattern, in_source) in KNOWN_IN_SOURCE.items():
        if re.search(pattern, diff) and re.search(in_source, source):
            return name
    return None
