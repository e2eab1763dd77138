"""invarax.sharding: meshes, PartitionSpecs and NamedShardings, placing arrays
(device_put, make_array_from_*), what an array says of its pieces, visualize_array_sharding,
and the errors — against JAX's answers (computed with 8 CPU devices in a subprocess) for
the blocks, shard shapes, replica ids, specs and the drawn tables."""

import contextlib
import io

import numpy as np
import pytest
import sharding_oracle
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PmapSharding,
    SingleDeviceSharding,
    get_mesh,
    reshard,
    use_mesh,
)
from invarax.sharding import PartitionSpec as P

block = sharding_oracle.block

CASES = [
    ((8,), ("x",), ["x"], (16,)),
    ((8,), ("x",), [], (8,)),
    ((8,), ("x",), [None, "x"], (3, 8)),
    ((2, 4), ("a", "b"), ["a", "b"], (8, 8)),
    ((2, 4), ("a", "b"), ["b"], (8, 8)),
    ((2, 4), ("a", "b"), [["a", "b"]], (8,)),
    ((2, 4), ("a", "b"), [], (8,)),
    ((2, 4), ("a", "b"), ["a"], (8,)),
    ((2, 4), ("a", "b"), [None, "a"], (4, 8)),
    ((2, 4), ("a", "b"), ["b", "a"], (8, 4)),
    ((2, 4), ("a", "b"), [["b", "a"], None], (16, 3)),
    ((4, 2), ("a", "b"), [None, ["a", "b"]], (3, 16)),
    ((2, 2, 2), ("a", "b", "c"), ["a", ["c", "b"]], (4, 8)),
    ((2, 2, 2), ("a", "b", "c"), [["a", "b", "c"]], (8,)),
    ((2, 2, 2), ("a", "b", "c"), ["c", None, "a"], (2, 3, 4)),
    ((1, 8), ("a", "b"), ["a", "b"], (3, 8)),
    # errors
    ((2, 4), ("a", "b"), ["b"], (7,)),
    ((2, 4), ("a", "b"), ["c"], (8,)),
    ((2, 4), ("a", "b"), ["a", "a"], (8, 8)),
]


def _mesh(sizes, names):
    return invarax.make_mesh(sizes, names, axis_types=(AxisType.Auto,) * len(names))


def _spec(entries):
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


@pytest.fixture(scope="module")
def jax_answers():
    pytest.importorskip("jax")
    cases = [{"mesh": list(m), "names": list(n), "spec": s, "shape": list(sh)}
             for m, n, s, sh in CASES]
    return sharding_oracle.ask(cases)


@pytest.mark.parametrize("k", range(len(CASES)))
def test_placement_matches_jax(jax_answers, k, capsys):
    sizes, names, spec, shape = CASES[k]
    want = jax_answers["cases"][k]
    mesh = _mesh(sizes, names)
    if "error" in want:  # JAX's duplicate-axis error is no ValueError; invarax's errors are
        with pytest.raises(ValueError):
            invarax.device_put(jnp.zeros(shape), NamedSharding(mesh, _spec(spec)))
        return
    sharding = NamedSharding(mesh, _spec(spec))
    x = invarax.device_put(jnp.zeros(shape), sharding)
    assert {str(d.id): block(i) for d, i in sharding.devices_indices_map(shape).items()} == (
        want["indices"])
    assert list(sharding.shard_shape(shape)) == want["shard_shape"]
    assert [[s.device.id, block(s.index), s.replica_id] for s in x.addressable_shards] == (
        want["shards"])
    assert sharding.is_fully_replicated == want["replicated"]
    assert repr(sharding.spec) == want["spec"]
    if want["visual"] is not None:
        invarax.debug.visualize_array_sharding(x)
        got = capsys.readouterr().out
        if len(want["visual"].splitlines()[0]) < 80:
            assert got == want["visual"]
        else:  # narrowed to 80 characters (JAX's table then loses its labels)
            rule, want_rule = got.splitlines()[0], want["visual"].splitlines()[0]
            assert len(rule) == len(want_rule) and rule.count("┬") == want_rule.count("┬")


def test_shard_map_layouts_match_jax(jax_answers):
    mesh = _mesh((2, 4), ("a", "b"))
    x = jnp.arange(8.0)
    programs = sharding_oracle.shard_map_programs(jnp, lax, P)
    for name, (f, i, o) in programs.items():
        got = invarax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o)(x)
        assert got.tolist() == jax_answers["shard_map"][name], name


def test_auto_and_explicit_axes_match_jax(jax_answers):
    assert sharding_oracle.axes_programs(invarax, invarax.sharding) == jax_answers["axes"]
    with pytest.raises(TypeError, match="needs out_sharding"):
        invarax.sharding.auto_axes(lambda u: u)(jnp.ones(2))
    from invarax.experimental.shard import auto_axes, explicit_axes, reshard
    assert (auto_axes, explicit_axes, reshard) == (
        invarax.sharding.auto_axes, invarax.sharding.explicit_axes, invarax.sharding.reshard)


def test_shardings_in_types_match_jax(jax_answers):
    # typeof's printing, eager and jit propagation, the Explicit-mode errors, out_sharding,
    # get_abstract_mesh and shard_map's varying axes (tests/sharding_oracle.py)
    got = sharding_oracle.types_programs(invarax, invarax.sharding)
    want = jax_answers["types"]
    assert set(got) == set(want)
    for name in want:
        assert got[name] == want[name], name


# ---------------------------------------------------------------------------------------
# Meshes and specs


def test_mesh_and_spec_basics():
    mesh = invarax.make_mesh((2, 4), ("a", "b"))
    assert mesh.axis_types == (AxisType.Explicit,) * 2  # JAX's default for make_mesh
    assert repr(mesh) == ("Mesh(axis_sizes=(2, 4), axis_names=('a', 'b'), "
                          "axis_types=(Explicit, Explicit))")
    assert str(mesh) == "Mesh('a': 2, 'b': 4, axis_types=(Explicit, Explicit))"
    assert mesh.size == 8 and mesh.axis_sizes == (2, 4) and dict(mesh.shape) == {"a": 2, "b": 4}
    assert mesh.devices[1, 2] == invarax.devices()[6]
    assert not mesh.is_multi_process and mesh.local_devices == invarax.devices()
    assert mesh == invarax.make_mesh((2, 4), ("a", "b"))
    assert hash(mesh) == hash(invarax.make_mesh((2, 4), ("a", "b")))
    assert mesh != invarax.make_mesh((4, 2), ("a", "b"))
    low = Mesh(np.array(invarax.devices()[:4]).reshape(2, 2), ("x", "y"))
    assert low.axis_types == (AxisType.Auto,) * 2
    assert invarax.make_mesh((2,), "x", devices=invarax.devices()[6:]).device_ids.tolist() == [6, 7]
    assert repr(P("a", None, ("a", "b"))) == "P('a', None, ('a', 'b'))"
    assert P(("a",)) == P("a") and P("a") != P("a", None) and P() == P()
    assert len(P("a", None)) == 2 and list(P(("a", "b"), None)) == [("a", "b"), None]
    assert repr(P(P.UNCONSTRAINED, "a")) == "P(UNCONSTRAINED, 'a')"
    s = NamedSharding(mesh, P("a"))
    assert s == NamedSharding(mesh, P("a")) and hash(s) == hash(NamedSharding(mesh, P("a")))
    assert s.is_equivalent_to(NamedSharding(mesh, P("a", None)), 2)
    assert not s.is_equivalent_to(NamedSharding(mesh, P("b")), 1)
    one = NamedSharding(invarax.make_mesh((1,), ("a",)), P("a"))
    assert SingleDeviceSharding(invarax.devices()[0]).is_equivalent_to(one, 1)
    assert s.num_devices == 8 and s.device_set == set(invarax.devices())
    assert s.is_fully_addressable and s.memory_kind == "device"
    assert repr(s) == ("NamedSharding(mesh=Mesh('a': 2, 'b': 4, axis_types=(Explicit, "
                       "Explicit)), spec=P('a',), memory_kind=device)")


def test_mesh_in_context():
    mesh = invarax.make_mesh((2,), ("x",))
    assert get_mesh() is None
    with mesh:
        assert invarax.device_put(jnp.ones(4), P("x")).sharding == NamedSharding(mesh, P("x"))
    with use_mesh(mesh):
        assert get_mesh() is mesh
    invarax.set_mesh(mesh)
    try:
        assert get_mesh() is mesh
    finally:
        invarax.set_mesh(None)
    with pytest.raises(ValueError, match="no mesh is in context"):
        invarax.device_put(jnp.ones(4), P("x"))


# ---------------------------------------------------------------------------------------
# Placing arrays


def test_device_put_places_without_changing_values():
    mesh = _mesh((2, 4), ("a", "b"))
    tree = {"w": data((8, 4)), "b": data((4,), seed=1)}
    shardings = {"w": NamedSharding(mesh, P("a", "b")), "b": NamedSharding(mesh, P())}
    placed = invarax.device_put(tree, shardings)
    for key in tree:
        assert_bitwise(placed[key], tree[key])
        assert placed[key].sharding == shardings[key] and placed[key].committed
    x = placed["w"]
    assert len(x.addressable_shards) == 8 and x.is_fully_addressable
    assert not x.is_fully_replicated and placed["b"].is_fully_replicated
    shard = x.addressable_shards[5]
    assert shard.device == invarax.devices()[5] and shard.data.sharding.device_set == {
        invarax.devices()[5]}
    assert_bitwise(shard.data, tree["w"][4:8, 1:2])
    assert_bitwise(x.addressable_data(5), tree["w"][4:8, 1:2])
    assert not jnp.ones(2).committed
    assert invarax.device_put(x, NamedSharding(mesh, P())).sharding.spec == P()
    assert reshard(x, NamedSharding(mesh, P(None, "a"))).sharding.spec == P(None, "a")
    assert lax.with_sharding_constraint(x, NamedSharding(mesh, P())).is_fully_replicated


def test_make_array_functions():
    mesh = _mesh((2, 4), ("a", "b"))
    s = NamedSharding(mesh, P("b", "a"))
    full = data((8, 6))
    seen = []

    def block(index):
        seen.append(index)
        return full[index]

    x = invarax.make_array_from_callback((8, 6), s, block)
    assert_bitwise(x, full)
    assert x.sharding == s and len(seen) == 8
    assert seen == [s.devices_indices_map((8, 6))[d] for d in mesh.devices.flat]
    blocks = [invarax.device_put(full[i], d) for d, i in s.devices_indices_map((8, 6)).items()]
    assert_bitwise(invarax.make_array_from_single_device_arrays((8, 6), s, blocks[::-1]), full)
    plain = [full[i] for i in s.devices_indices_map((8, 6)).values()]
    assert_bitwise(invarax.make_array_from_single_device_arrays((8, 6), s, plain), full)
    local = invarax.make_array_from_process_local_data(s, full)
    assert_bitwise(local, full)
    assert local.sharding == s
    with pytest.raises(ValueError, match="Expected 8 per-device arrays"):
        invarax.make_array_from_single_device_arrays((8, 6), s, plain[:3])
    with pytest.raises(ValueError, match=r"has shape \(8, 6\) and dtype.*shape \(2, 3\)"):
        invarax.make_array_from_callback((8, 6), s, lambda index: full)
    with pytest.raises(ValueError, match="this process is the only one"):
        invarax.make_array_from_process_local_data(s, full, (16, 6))


def test_a_process_s_local_data_is_its_devices_blocks():
    # As process 1 of 2 (8 devices each; no transport, so nothing is gathered): the mesh
    # (4, 4) puts rows 2-3 of the "a" axis on this process, so its data of a (16, 8) array
    # split P("a", "b") is rows 8-15, every column, and each device's block is cut from it.
    from invarax.distributed import across
    from invarax.distributed.devices import _registry

    _registry.widen(1, 2)
    try:
        mesh = invarax.make_mesh((4, 4), ("a", "b"))
        s = NamedSharding(mesh, P("a", "b"))
        full = np.arange(128.0, dtype=np.float32).reshape(16, 8)
        assert not s.is_fully_addressable and mesh.is_multi_process
        assert across.infer_global_shape((8, 8), s) == (16, 8)
        blocks = across.local_blocks(full[8:], (16, 8), s, "x")
        assert sorted(d.id for d in blocks) == list(range(8, 16))
        for device, index in s.devices_indices_map((16, 8)).items():
            if device.local:
                assert np.array_equal(blocks[device], full[index])
        with pytest.raises(ValueError, match=r"data has shape \(16, 8\).*must have shape "
                                             r"\(8, 8\)"):
            across.local_blocks(full, (16, 8), s, "x")
        x = invarax.make_array_from_process_local_data(s, full[8:])
        assert x.shape == (16, 8) and not x.is_fully_addressable
        assert [sh.device.id for sh in x.addressable_shards] == list(range(8, 16))
        assert all(np.array_equal(np.asarray(sh.data), full[sh.index])
                   for sh in x.addressable_shards)
    finally:
        _registry.widen(0, 1)


def test_pmap_and_single_device_shardings_describe_their_pieces():
    out = invarax.pmap(lambda v: v * 2)(jnp.ones((2, 3)))
    assert isinstance(out.sharding, PmapSharding)
    assert [s.index for s in out.addressable_shards] == [(0, slice(None)), (1, slice(None))]
    assert_bitwise(out.addressable_shards[1].data, np.full(3, 2, np.float32))
    x = invarax.device_put(jnp.ones(3), invarax.devices()[2])
    assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device)"
    assert x.addressable_shards[0].index == (slice(None),)


def test_visualize_layouts():
    mesh = _mesh((2,), ("x",))
    x = invarax.device_put(jnp.zeros((4, 8)), NamedSharding(mesh, P(None, "x")))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        invarax.debug.visualize_array_sharding(x)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "┌" + "─" * 23 + "┬" + "─" * 23 + "┐" and len(lines) == 11
    assert lines[5].split() == ["│", "CPU", "0", "│", "CPU", "1", "│"]
    with pytest.raises(ValueError, match="1 and 2 dimensions"):
        invarax.debug.visualize_array_sharding(jnp.zeros((2, 2, 2)))
    with pytest.raises(TypeError, match="concrete array"):
        invarax.jit(lambda v: invarax.debug.visualize_array_sharding(v) or v)(jnp.ones(2))


# ---------------------------------------------------------------------------------------
# Errors: each names the array, the mesh and the fix


def test_errors_name_the_array_the_mesh_and_the_fix():
    mesh = _mesh((2, 4), ("a", "b"))
    with pytest.raises(ValueError, match=r"device_put's x\['w'\] has shape \(7,\).*splits "
                       r"dimension 0 \(size 7\) into 4 blocks.*Mesh\('a': 2, 'b': 4.*Pad"):
        invarax.device_put({"w": jnp.ones(7)}, NamedSharding(mesh, P("b")))
    with pytest.raises(ValueError, match=r"rank 1\).*2 entries; give at most one"):
        invarax.device_put(jnp.ones(8), NamedSharding(mesh, P("a", "b")))
    with pytest.raises(ValueError, match=r"c of P\('c',\) is not found in mesh: \('a', 'b'\)"):
        NamedSharding(mesh, P("c"))
    with pytest.raises(ValueError, match="duplicate entries for 'a'"):
        NamedSharding(mesh, P("a", ("b", "a")))
    with pytest.raises(TypeError, match=r"write P\('a',\)"):
        NamedSharding(mesh, ("a",))
    with pytest.raises(TypeError, match="mesh axis name"):
        P(3)
    with pytest.raises(ValueError, match=r"needs 16 devices but 8 are available.*"
                       "jax_num_cpu_devices"):
        invarax.make_mesh((4, 4), ("a", "b"))
    with pytest.raises(ValueError, match="one axis name per dimension"):
        Mesh(np.array(invarax.devices()[:4]), ("a", "b"))
    with pytest.raises(ValueError, match="distinct"):
        invarax.make_mesh((2, 2), ("a", "a"))
    with pytest.raises(ValueError, match="memory"):
        NamedSharding(mesh, P(), memory_kind="pinned_host")
