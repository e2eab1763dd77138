"""The reproducibility report of ``invarax demo``: the same checks in invarax, JAX and PyTorch.

Each framework runs one trained MLP (the same float32 weights) four ways that should give
the same numbers, and each pair is compared bit for bit.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np

CHECKS = (
    "one example vs its row in a batch of 10000",
    "batch of 10 vs the first 10 rows of 10000",
    "jit vs eager, batch of 10000",
    "vmap vs natively batched layers",
)
ROWS = (0, 4321, 9999)


def compare(a, b) -> str:
    """``'bitwise equal'``, or how far apart ``a`` and ``b`` are."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes():
        return "bitwise equal"
    if a.shape != b.shape:
        return f"differs in shape {a.shape} vs {b.shape}"
    gap = max(np.abs(a.astype(np.float64) - b.astype(np.float64)).ravel().tolist())
    return f"differs by {gap:.1e}"


def _pairs(single, batched, jitted, native, x):
    """The four comparisons of ``CHECKS``, each a pair of arrays."""
    full = np.asarray(batched(x))
    rows = np.stack([np.asarray(single(x[i])) for i in ROWS])
    return [
        (rows, full[list(ROWS)]),
        (np.asarray(batched(x[:10])), full[:10]),
        (np.asarray(jitted(x)), full),
        (np.asarray(native(x)), full),
    ]


def invarax_checks(model, x):
    """The checks for an invarax model (a callable Module taking one example)."""
    import invarax

    batched = invarax.vmap(model)
    jitted = invarax.filter_jit(lambda m, v: invarax.vmap(m)(v))
    xs = invarax.numpy.asarray(x)
    return _pairs(model, batched, lambda v: jitted(model, v), model, xs)


def jax_checks(layers, activation, x):
    """The same model written in JAX, or None when JAX is not installed."""
    if importlib.util.find_spec("jax") is None:
        return None
    import jax
    import jax.numpy as jnp

    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in layers]
    act = getattr(jax.nn, activation)

    def mlp(v):
        for w, b in params[:-1]:
            v = act(v @ w.T + b)
        w, b = params[-1]
        return v @ w.T + b

    xs = jnp.asarray(x)
    return _pairs(mlp, jax.vmap(mlp), jax.jit(jax.vmap(mlp)), mlp, xs)


def torch_checks(layers, activation, x):
    """The same model in PyTorch (``torch.compile`` as its jit), or None without PyTorch."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    modules = []
    for w, b in layers:
        linear = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.array(w)))
            linear.bias.copy_(torch.from_numpy(np.array(b)))
        modules += [linear, {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]()]
    model = torch.nn.Sequential(*modules[:-1])
    xs = torch.from_numpy(np.array(x))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = torch.compile(model)
        vmapped = torch.func.vmap(model)
        return _pairs(model, vmapped, compiled, model, xs)


def format_report(columns: dict) -> str:
    """A table: one row per check, one column per framework (``None`` = not installed)."""
    names = list(columns)
    cells = {
        name: (["not installed"] * len(CHECKS) if pairs is None
               else [compare(a, b) for a, b in pairs])
        for name, pairs in columns.items()
    }
    first = max(len(c) for c in CHECKS)
    widths = [max(len(name), *(len(c) for c in cells[name])) for name in names]
    lines = ["  " + " " * first + "".join(f"  {n:<{w}}" for n, w in zip(names, widths,
                                                                          strict=True))]
    for i, check in enumerate(CHECKS):
        row = "".join(f"  {cells[n][i]:<{w}}" for n, w in zip(names, widths, strict=True))
        lines.append(f"  {check:<{first}}{row}")
    return "\n".join(line.rstrip() for line in lines)


def all_equal(pairs) -> bool:
    """Whether every pair of a framework's checks is bitwise equal."""
    return all(compare(a, b) == "bitwise equal" for a, b in pairs)
