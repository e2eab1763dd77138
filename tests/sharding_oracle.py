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
               "axes": axes_programs(jax, jax.sharding)}, sys.stdout)
