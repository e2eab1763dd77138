"""JAX's placement facts for the sharding tests, computed in a subprocess with 8 CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=8``, fixed before JAX starts): run as
a script, it reads the cases as JSON on stdin and writes JAX's answers as JSON on stdout.

A case is ``{"mesh": [sizes], "names": [...], "spec": [...], "shape": [...]}`` (a spec entry
is a name, a list of names or null); an answer holds the devices' blocks, the shard shape,
the shards' replica ids, whether it is fully replicated, the spec's repr, the text of
``visualize_array_sharding`` (None without ``rich``), or the error's type.
"""

import contextlib
import io
import json
import os
import subprocess
import sys


def shard_map_programs(jnp, lax, P):
    """A few shard_map programs on a (2, 4) mesh of axes ("a", "b") whose outputs are exact
    (integers): name -> (f, in_specs, out_specs), written with ``jnp``, ``lax`` and ``P``
    of JAX or of invarax."""
    return {
        "axis_index_ab": (lambda v: jnp.array([lax.axis_index(("a", "b"))]), P(("a", "b")),
                          P(("a", "b"))),
        "axis_index_ba": (lambda v: jnp.array([lax.axis_index(("b", "a"))]), P(("a", "b")),
                          P(("a", "b"))),
        "out_ba": (lambda v: v, P(("a", "b")), P(("b", "a"))),
        "unmentioned": (lambda v: v.sum(keepdims=True), P("a"), P("a")),
        "broadcast_b": (lambda v: v.sum(keepdims=True), P("a"), P(("a", "b"))),
        "psum_a": (lambda v: lax.psum(v, "a"), P("a"), P()),
    }


def block(index):
    """A device's block (a tuple of slices) as JSON: ``[start, stop]``, or None for all."""
    return [None if s.start is None and s.stop is None else [s.start, s.stop] for s in index]


def _answer(jax, case):
    from jax.sharding import AxisType, NamedSharding, PartitionSpec

    mesh = jax.make_mesh(tuple(case["mesh"]), tuple(case["names"]),
                         axis_types=(AxisType.Auto,) * len(case["names"]))
    spec = PartitionSpec(*[tuple(p) if isinstance(p, list) else p for p in case["spec"]])
    shape = tuple(case["shape"])
    try:
        sharding = NamedSharding(mesh, spec)
        x = jax.device_put(jax.numpy.zeros(shape), sharding)
    except Exception as error:  # noqa: BLE001 (the error's type is the answer)
        return {"error": [e.__name__ for e in type(error).__mro__]}
    text = None
    if len(shape) in (1, 2):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                jax.debug.visualize_array_sharding(x)
            text = out.getvalue()
        except ValueError:  # rich is not installed
            text = None
    return {
        "indices": {str(d.id): block(i) for d, i in sharding.devices_indices_map(shape).items()},
        "shard_shape": list(sharding.shard_shape(shape)),
        "shards": [[s.device.id, block(s.index), s.replica_id] for s in x.addressable_shards],
        "replicated": sharding.is_fully_replicated,
        "spec": repr(spec),
        "visual": text,
    }


def _shard_maps(jax):
    """JAX's outputs of ``shard_map_programs`` on ``arange(8.0)``."""
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(8.0)
    programs = shard_map_programs(jnp, lax, P)
    return {name: jax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o)(x).tolist()
            for name, (f, i, o) in programs.items()}


def axes_programs(jax, sharding):
    """``auto_axes`` and ``explicit_axes`` of JAX or invarax (``sharding``: its
    ``jax.sharding``) on a (2, 4) mesh in context: name -> (values, output spec)."""
    P = sharding.PartitionSpec
    mesh = jax.make_mesh((2, 4), ("a", "b"))
    x, y = jax.numpy.arange(8.0), jax.numpy.ones(8)
    with jax.set_mesh(mesh):
        added = sharding.auto_axes(lambda u, v: u + v)(x, y, out_sharding=P("a"))
        fixed = sharding.auto_axes(lambda u: u * 3, out_sharding=P("b"))(x)
        doubled = sharding.explicit_axes(lambda u: u * 2)(x, in_sharding=P("b"))
    return {"added": [added.tolist(), repr(added.sharding.spec)],
            "fixed": [fixed.tolist(), repr(fixed.sharding.spec)],
            "doubled": [doubled.tolist(), None]}


def types_programs(jax, sharding):
    """Shardings in types, on a (2, 4) ``Explicit`` mesh of axes ("X", "Y") in context,
    with JAX or invarax (``sharding``: its ``jax.sharding``): name -> what is printed
    (``str`` of ``typeof``, a concrete spec, an error's message), all exact."""
    import numpy as np

    jnp, P, reshard = jax.numpy, sharding.PartitionSpec, sharding.reshard
    out, seen = {}, []
    mesh = jax.make_mesh((2, 4), ("X", "Y"))

    def error(f):
        try:
            f()
        except Exception as e:  # noqa: BLE001 (the message is the answer)
            # (JAX's message; invarax's goes on with the fix)
            return str(e).split(". Pass")[0].split(". Reshard")[0].rstrip(".")
        return None

    out["numpy"] = [str(jax.typeof(np.arange(8))), repr(jax.typeof(np.arange(8.0)))]
    with jax.set_mesh(mesh):
        a = reshard(np.arange(8.0).reshape(4, 2), P("X", None))
        b = reshard(np.arange(8.0).reshape(1, 8), P(None, "Y"))
        c = reshard(np.arange(32.0).reshape(8, 4), P(("X", "Y"), None))
        d = reshard(np.arange(16.0).reshape(2, 8), P(None, "Y"))
        e = reshard(np.arange(16.0).reshape(8, 2), P("Y", "X"))
        results = {"a": a, "b": b, "c": c, "sin": jnp.sin(a), "scaled": 2.0 * a + 1,
                   "outer": a[:, :1] + b, "T": e.T, "sum0": e.sum(0), "sum1": e.sum(1),
                   "dot": jnp.dot(a, d),
                   "max": jnp.maximum(c, 0.0), "split": a.reshape(2, 2, 2),
                   "mean": jnp.mean(c, axis=-1)}
        for name, x in results.items():
            out[name] = [str(jax.typeof(x)), repr(x.sharding.spec)]
        grad = jax.grad(lambda u, v: (jnp.tanh(u @ v) ** 2).sum(), argnums=(0, 1))(a, d)
        out["grad"] = [f"{jax.typeof(g)} {g.sharding.spec!r}" for g in grad]
        reshapes = [((8, 2), P("Y", "X"), (16,)), ((8, 2), P(None, "X"), (16,)),
                    ((16,), P(("X", "Y")), (2, 4, 2)), ((16,), P(("X", "Y")), (8, 2)),
                    ((16,), P(("X", "Y")), (4, 4)), ((16,), P("Y"), (2, 8)),
                    ((8, 4), P("X", "Y"), (2, 4, 4)), ((8, 4), P("X", "Y"), (8, 2, 2)),
                    ((2, 4, 4), P(None, "Y", None), (8, 4)), ((8, 1, 4), P("X", None, "Y"),
                                                              (8, 4))]
        out["reshape_rules"] = []
        for shape, spec, new in reshapes:
            x = reshard(np.zeros(shape, np.float32), spec)
            out["reshape_rules"].append(
                error(lambda x=x, new=new: x.reshape(new)) is None
                and str(jax.typeof(x.reshape(new))))
        out["mesh"] = [repr(sharding.get_abstract_mesh())]
        sharding.auto_axes(lambda: out["mesh"].append(repr(sharding.get_abstract_mesh())),
                           out_sharding=P())()
        out["twice"] = error(lambda: a + reshard(np.arange(8.0).reshape(4, 2), P(None, "X")))
        f = reshard(np.arange(64.0).reshape(8, 8), P(None, "X"))
        out["contract"] = error(lambda: f @ f) or str(jax.typeof(f @ f))
        out["ambiguous"] = error(lambda: f @ reshard(f, P("X", None)))
        out["contract_mismatch"] = error(lambda: jnp.dot(f, reshard(f, P("Y", None))))
        g = jnp.dot(f, reshard(f, P("X", None)), out_sharding=P("Y"))
        out["out_sharding"] = [str(jax.typeof(g)), repr(g.sharding.spec)]
        for name, x in {"zeros": jnp.zeros((8, 4), out_sharding=P("X")),
                        "arange": jnp.arange(8.0, out_sharding=P("Y")),
                        "reshape": jnp.reshape(c, (32,), out_sharding=P("X"))}.items():
            out[name] = [str(jax.typeof(x)), repr(x.sharding.spec)]

        @jax.jit
        def traced(x, y):
            z = jnp.tanh(x) * 3
            seen.extend([str(jax.typeof(x)), str(jax.typeof(z)), str(jax.typeof(z @ y)),
                         str(jax.typeof(z.sum(0)))])
            return z @ y

        r = traced(c, reshard(np.ones((4, 2), np.float32), P(None, None)))
        out["jit"] = [*seen, repr(r.sharding.spec)]

        @jax.shard_map(in_specs=(P("X", "Y"), P()), out_specs=P("X"))
        def body(x, y):
            s = jax.lax.psum(x, "Y")
            v = jax.lax.pcast(y, "X", to="varying")
            seen.extend([str(jax.typeof(x)), str(jax.typeof(s)), str(jax.typeof(y)),
                         str(jax.typeof(v))])
            return s * v

        seen.clear()
        q = body(reshard(np.arange(32.0).reshape(8, 4), P("X", "Y")), np.ones((4, 1)))
        out["shard_map"] = [*seen, q.tolist()]

        @jax.shard_map(in_specs=(P(), P("X")), out_specs=P())
        def weighted(c, x):
            return jax.lax.psum((jax.lax.pcast(c, "X", to="varying") * x).sum(), "X")

        xs = reshard(np.arange(6.0, dtype=np.float32), P("X"))
        out["pcast_grad"] = jax.grad(weighted)(jnp.ones(3), xs).tolist()
    return out


def ask(cases, timeout=300):
    """JAX's answers for ``cases`` and its shard_map outputs (computed in a subprocess)."""
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
           "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, __file__], input=json.dumps(cases), env=env,
                          capture_output=True, text=True, timeout=timeout, check=True)
    return json.loads(done.stdout)


if __name__ == "__main__":
    import jax

    cases = json.load(sys.stdin)
    import jax.sharding

    json.dump({"cases": [_answer(jax, c) for c in cases], "shard_map": _shard_maps(jax),
               "axes": axes_programs(jax, jax.sharding),
               "types": types_programs(jax, jax.sharding)}, sys.stdout)
