"""Turn a jaxpr into a Python function over NumPy arrays.

The generated function calls, for each equation, the very impl that eager
evaluation calls, so a jitted function gives eager's bits (N3). Each
intermediate is released right after its last use.
"""

from __future__ import annotations

import functools

import numpy as np

from ..core.ir import Jaxpr, Literal


def compile_jaxpr(jaxpr: Jaxpr):
    """Return ``run(*consts, *args) -> list`` evaluating ``jaxpr`` on NumPy arrays.

    Example:
        >>> run = compile_jaxpr(make_jaxpr(jnp.sin)(1.0).jaxpr)
        >>> run(np.float32(0.5))
        [0.47942555]
    """
    namespace = {"_errstate": np.errstate}
    names = {}

    def name_of(v):
        if isinstance(v, Literal):
            key = f"lit{len(namespace)}"
            namespace[key] = v.val._value
            return key
        return names[id(v)]

    def bind_name(v):
        names[id(v)] = f"v{len(names)}"
        return names[id(v)]

    params = [bind_name(v) for v in (*jaxpr.constvars, *jaxpr.invars)]
    last_use = _last_uses(jaxpr)
    body = []
    for i, eqn in enumerate(jaxpr.eqns):
        fn = f"f{i}"
        impl = eqn.primitive.impl
        namespace[fn] = functools.partial(impl, **eqn.params) if eqn.params else impl
        ins = ", ".join(name_of(v) for v in eqn.invars)
        outs = ", ".join(bind_name(v) for v in eqn.outvars)
        if eqn.primitive.multiple_results:
            outs = f"({outs},)"
        body.append(f"{outs} = {fn}({ins})")
        dead = [names[id(v)] for v in last_use.get(i, ())]
        if dead:
            body.append(f"del {', '.join(dead)}")
    outs = ", ".join(name_of(v) for v in jaxpr.outvars)
    lines = [f"def run({', '.join(params)}):", "    with _errstate(all='ignore'):"]
    lines += [f"        {line}" for line in body]
    lines.append(f"        return [{outs}]")
    exec(compile("\n".join(lines), "<invarax.jit>", "exec"), namespace)
    return namespace["run"]


def _last_uses(jaxpr: Jaxpr):
    """Map equation index -> the variables whose last use it is (outputs are never freed)."""
    keep = {id(v) for v in jaxpr.outvars}
    last = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.invars:
            if not isinstance(v, Literal) and id(v) not in keep:
                last[id(v)] = (i, v)
    by_eqn = {}
    for i, v in last.values():
        by_eqn.setdefault(i, {})[id(v)] = v
    return {i: list(vs.values()) for i, vs in by_eqn.items()}
