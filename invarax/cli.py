"""The ``invarax`` command: ``invarax demo`` runs the main job."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _bitwise(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _mark(equal: bool) -> str:
    return "bitwise equal" if equal else "DIFFERS"


def demo(out=None) -> int:
    """Trace, print and run a program eagerly and under jit, and report the contract checks."""
    out = sys.stdout if out is None else out
    import invarax
    import invarax.numpy as jnp

    def expr(x1, x2):
        return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))

    def mlp(params, x):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    print("invarax demo: one program, traced, printed and run eagerly and under jit\n", file=out)
    print("make_jaxpr of (x1/x2 - exp(x2)) * (sin(x1/x2) + x1/x2 - exp(x2)):", file=out)
    print(invarax.make_jaxpr(expr)(1.0, 1.0), file=out)

    rng = np.random.default_rng(0)
    n = 1_000_000
    x1 = jnp.asarray(rng.standard_normal(n).astype(np.float32))
    x2 = jnp.asarray(rng.uniform(0.5, 2.0, n).astype(np.float32))
    fast = invarax.jit(expr)
    start = time.perf_counter()
    jitted = fast(x1, x2).block_until_ready()
    first = time.perf_counter() - start
    start = time.perf_counter()
    fast(x1, x2).block_until_ready()
    cached = time.perf_counter() - start
    eager = expr(x1, x2)
    checks = [("jit vs eager, 1e6 elements", _bitwise(jitted, eager))]
    print(f"\njit: first call {first * 1e3:.1f} ms (trace + compile + run), "
          f"cached call {cached * 1e3:.1f} ms", file=out)

    sizes = [2, 10, 10, 2]
    params = [
        (jnp.asarray(rng.uniform(-1, 1, (a, b)).astype(np.float32) / np.sqrt(a)),
         jnp.asarray(rng.uniform(-1, 1, b).astype(np.float32) / np.sqrt(a)))
        for a, b in zip(sizes[:-1], sizes[1:], strict=True)
    ]
    x = jnp.asarray(rng.standard_normal((10_000, 2)).astype(np.float32))
    full = invarax.jit(mlp)(params, x)
    checks.append(("MLP 2-10-10-2: jit vs eager on 10000 rows", _bitwise(full, mlp(params, x))))
    checks.append(("MLP rows: batch of 10 vs first 10 of 10000",
                   _bitwise(mlp(params, x[:10]), full[:10])))
    checks.append(("MLP rows: one row vs row 0 of 10000", _bitwise(mlp(params, x[:1]), full[:1])))
    per_example = invarax.vmap(lambda v: mlp(params, v))
    checks.append(("vmap(mlp)(x[:10]) vs vmap(mlp)(x)[:10]",
                   _bitwise(per_example(x[:10]), per_example(x)[:10])))
    checks.append(("vmap(mlp)(x)[7] vs mlp(x[7])", _bitwise(per_example(x)[7], mlp(params, x[7]))))
    loss = lambda p, v: jnp.sum(mlp(p, v) ** 2)
    grads = invarax.vmap(invarax.grad(loss), in_axes=(None, 0))(params, x[:128])
    one = invarax.grad(loss)(params, x[3])
    checks.append(("per-example grads: vmap(grad) vs grad of example 3", all(
        _bitwise(a[3], b) for a, b in zip(invarax.tree_leaves(grads), invarax.tree_leaves(one),
                                          strict=True))))
    col = jnp.asarray(rng.standard_normal((1000, 64)).astype(np.float32))
    checks.append(("sum over axis 0 vs over axis 1 of the transpose",
                   _bitwise(jnp.sum(col, axis=0), jnp.sum(col.T, axis=1))))

    print("\nreproducibility report (the numerics contract):", file=out)
    width = max(len(name) for name, _ in checks)
    for name, equal in checks:
        print(f"  {name:<{width}}  {_mark(equal)}", file=out)
    return 0 if all(equal for _, equal in checks[:2]) else 1


def main(argv=None) -> int:
    """Entry point of the ``invarax`` console script."""
    parser = argparse.ArgumentParser(prog="invarax", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run the main job: trace, jit and check the contract")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
