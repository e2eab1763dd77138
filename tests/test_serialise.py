"""Checkpoints: Equinox's leaf format both ways, jnp.save/load/savez, safetensors, atomic
writes, clear errors for mismatches and damaged files."""

import io
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import invarax
import invarax.numpy as jnp
from invarax.serialise import (
    CorruptFileError,
    load_safetensors,
    save_safetensors,
    tree_deserialise_leaves,
    tree_serialise_leaves,
)

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
          np.float16, np.float32, np.complex64]
SHAPES = [(), (0,), (1,), (3,), (2, 0, 3), (1, 1), (4, 5), (2, 3, 4)]


def _bits(x):
    a = np.asarray(x)
    return a.dtype, a.shape, a.tobytes()


def _assert_trees_bitwise(a, b):
    la, ta = invarax.tree_flatten(a)
    lb, tb = invarax.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb, strict=True):
        assert type(x) is type(y), (type(x), type(y))
        if isinstance(x, (invarax.Array, np.ndarray, np.generic)):
            assert _bits(x) == _bits(y)
        else:
            assert x == y or (x != x and y != y)


def _value(draw_rng, dtype, shape):
    raw = draw_rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize,
                            dtype=np.uint8)
    value = raw.view(dtype).reshape(shape) if raw.size else np.zeros(shape, dtype)
    return value.astype(bool) if dtype is np.bool_ else value


@st.composite
def _trees(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    leaves = {}
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["array", "numpy", "python", "static"]))
        if kind in ("array", "numpy"):
            value = _value(rng, draw(st.sampled_from(DTYPES)), draw(st.sampled_from(SHAPES)))
            leaves[f"l{i}"] = jnp.asarray(value) if kind == "array" else value
        elif kind == "python":
            leaves[f"l{i}"] = draw(st.one_of(st.booleans(), st.integers(-2**63, 2**63 - 1),
                                             st.floats(allow_nan=True), st.complex_numbers()))
        else:
            leaves[f"l{i}"] = draw(st.sampled_from(["relu", None, jnp.tanh]))
    return {"params": leaves, "nested": [leaves.copy(), (leaves.get("l0"),)]}


ROUND_TRIPS = int(os.environ.get("INVARAX_ROUNDTRIP_EXAMPLES", "60"))


@settings(max_examples=ROUND_TRIPS, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_trees())
def test_round_trip_is_bitwise(tree):
    """Random pytrees (every dtype, zero-size and 0-d arrays, NaN and Python numbers of any
    size, unsaved leaves) come back bit for bit. ``INVARAX_ROUNDTRIP_EXAMPLES=N``."""
    f = io.BytesIO()
    tree_serialise_leaves(f, tree)
    f.seek(0)
    _assert_trees_bitwise(tree_deserialise_leaves(f, tree), tree)
    assert f.read() == b""


@settings(max_examples=max(10, ROUND_TRIPS // 3), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_trees())
def test_round_trips_through_equinox_are_bitwise(tree):
    """invarax -> Equinox -> invarax and Equinox -> invarax, for random pytrees."""
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    as_jax = invarax.tree_map(
        lambda x: jax.numpy.asarray(np.asarray(x)) if isinstance(x, invarax.Array) else x, tree)
    f = io.BytesIO()
    tree_serialise_leaves(f, tree)
    f.seek(0)
    theirs = eqx.tree_deserialise_leaves(f, as_jax)
    g = io.BytesIO()
    eqx.tree_serialise_leaves(g, theirs)
    g.seek(0)
    _assert_trees_bitwise(tree_deserialise_leaves(g, tree), tree)


def test_round_trip_through_a_path_adds_eqx_and_leaves_no_temporary(tmp_path):
    model = invarax.nn.MLP(2, 3, 8, 2, key=invarax.random.PRNGKey(0))
    tree_serialise_leaves(tmp_path / "model", model)
    assert os.listdir(tmp_path) == ["model.eqx"]
    like = invarax.nn.MLP(2, 3, 8, 2, key=invarax.random.PRNGKey(1))
    _assert_trees_bitwise(tree_deserialise_leaves(str(tmp_path / "model"), like), model)


def test_a_failed_write_keeps_the_previous_checkpoint(tmp_path):
    path = tmp_path / "ckpt.eqx"
    old = {"w": jnp.arange(4.0), "n": jnp.arange(3)}
    tree_serialise_leaves(path, old)
    before = path.read_bytes()

    def crash_after_first(f, x):
        invarax.default_serialise_filter_spec(f, x)
        if x.dtype == np.int32:
            raise OSError("disk full")

    with pytest.raises(RuntimeError, match=r"leaf \['n'\].*disk full"):
        tree_serialise_leaves(path, {"w": jnp.zeros(4), "n": jnp.zeros(3, "int32")},
                              filter_spec=crash_after_first)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.eqx"]


def test_filter_spec_as_a_prefix_pytree():
    tree = {"keep": jnp.ones(2), "skip": jnp.arange(3.0)}
    spec = {"keep": invarax.default_serialise_filter_spec, "skip": lambda f, x: None}
    f = io.BytesIO()
    tree_serialise_leaves(f, tree, filter_spec=spec)
    f.seek(0)
    like = {"keep": jnp.zeros(2), "skip": jnp.full(3, 7.0)}
    out = tree_deserialise_leaves(
        f, like, filter_spec={"keep": invarax.default_deserialise_filter_spec,
                              "skip": lambda f, x: x})
    assert np.array_equal(out["keep"], np.ones(2)) and out["skip"] is like["skip"]


def _saved(tree):
    f = io.BytesIO()
    tree_serialise_leaves(f, tree)
    return f.getvalue()


TREE = {"w": jnp.arange(6.0).reshape(2, 3), "n": 3, "b": [np.ones((3, 2)).T]}


@pytest.mark.parametrize("like, message", [
    ({**TREE, "w": jnp.zeros((3, 2))},
     r"\['w'\] of the file\) has changed shape from \(3, 2\) in `like` to \(2, 3\) on disk"),
    ({**TREE, "w": jnp.zeros((2, 3), "int32")},
     r"\['w'\] of the file\) has changed dtype from int32 in `like` to float32 on disk"),
    ({**TREE, "n": 1.5}, r"\['n'\] of the file\) has changed dtype from float64 in `like` to "
                         r"int64 on disk"),
    ({**TREE, "x": jnp.zeros(2)}, r"ends before leaf \['x'\] \(leaf 4 of the 4"),
])
def test_mismatch_errors_name_the_path_and_both_values(like, message):
    with pytest.raises(ValueError, match=message):
        tree_deserialise_leaves(io.BytesIO(_saved(TREE)), like)


def test_a_file_with_more_leaves_than_like(tmp_path):
    tree_serialise_leaves(tmp_path / "a.eqx", TREE)
    with pytest.raises(CorruptFileError, match="holds more leaves than `like`"):
        tree_deserialise_leaves(tmp_path / "a.eqx", {"b": [np.zeros((2, 3))], "n": 0})


def test_every_truncation_and_every_bit_flip_is_an_error():
    data = _saved(TREE)
    leaves_end = len(data) - 48  # the trailer: 16 bytes of marker, 32 of SHA-256
    for n in range(len(data)):
        if n == leaves_end:
            continue  # exactly the leaves: Equinox's own format, loaded without checksum
        with pytest.raises(CorruptFileError):
            tree_deserialise_leaves(io.BytesIO(data[:n]), TREE)
    for n in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[n] ^= 1 << bit
            with pytest.raises(ValueError):  # CorruptFileError, or a mismatch in a header
                tree_deserialise_leaves(io.BytesIO(bytes(damaged)), TREE)


def test_loading_never_unpickles(tmp_path):
    f = io.BytesIO()
    np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(CorruptFileError, match="never unpickles"):
        tree_deserialise_leaves(io.BytesIO(f.getvalue()), [np.zeros(1)])
    (tmp_path / "o.npy").write_bytes(f.getvalue())
    with pytest.raises(CorruptFileError, match="never unpickles"):
        jnp.load(tmp_path / "o.npy")
    with pytest.raises(ValueError, match="never unpickles"):
        jnp.load(tmp_path / "o.npy", allow_pickle=True)


def test_jnp_save_load_savez(tmp_path):
    x = jnp.arange(12.0).reshape(3, 4)
    jnp.save(tmp_path / "x", x)
    assert _bits(jnp.load(tmp_path / "x.npy")) == _bits(x)
    assert _bits(np.load(tmp_path / "x.npy")) == _bits(x)
    jnp.savez(tmp_path / "z", x, k=jnp.arange(3))
    z = jnp.load(tmp_path / "z.npz")
    assert _bits(z["arr_0"]) == _bits(x) and _bits(z["k"]) == _bits(jnp.arange(3))
    z.close()
    (tmp_path / "t.npy").write_bytes((tmp_path / "x.npy").read_bytes()[:-3])
    with pytest.raises(CorruptFileError, match="truncated"):
        jnp.load(tmp_path / "t.npy")
    assert sorted(os.listdir(tmp_path)) == ["t.npy", "x.npy", "z.npz"]


def test_jnp_save_load_against_jax(tmp_path):
    jax_numpy = pytest.importorskip("jax.numpy")
    x = jnp.linspace(-1.0, 1.0, 7)
    jnp.save(tmp_path / "a.npy", x)
    assert _bits(jax_numpy.load(tmp_path / "a.npy")) == _bits(x)
    jax_numpy.save(tmp_path / "b.npy", jax_numpy.arange(5, dtype="int32"))
    assert _bits(jnp.load(tmp_path / "b.npy")) == _bits(np.arange(5, dtype=np.int32))


def test_equinox_reads_invarax_checkpoints_and_back(tmp_path):
    eqx = pytest.importorskip("equinox")
    jax = pytest.importorskip("jax")
    ours = invarax.nn.MLP(3, 2, 8, 2, key=invarax.random.PRNGKey(0))
    theirs = eqx.nn.MLP(3, 2, 8, 2, key=jax.random.PRNGKey(5))
    tree_serialise_leaves(tmp_path / "ours.eqx", ours)
    loaded = eqx.tree_deserialise_leaves(tmp_path / "ours.eqx", theirs)
    for a, b in zip(jax.tree.leaves(eqx.filter(loaded, eqx.is_array)),
                    invarax.tree_leaves(invarax.filter(ours, invarax.is_array)), strict=True):
        assert _bits(a) == _bits(b)
    eqx.tree_serialise_leaves(tmp_path / "theirs.eqx", theirs)
    back = tree_deserialise_leaves(tmp_path / "theirs.eqx", ours)
    for a, b in zip(invarax.tree_leaves(invarax.filter(back, invarax.is_array)),
                    jax.tree.leaves(eqx.filter(theirs, eqx.is_array)), strict=True):
        assert _bits(a) == _bits(b)
    scalars = {"step": 7, "lr": 0.125, "flag": True, "z": 1 + 2j, "g": np.float32(2.5)}
    eqx.tree_serialise_leaves(tmp_path / "s.eqx", scalars)
    _assert_trees_bitwise(tree_deserialise_leaves(tmp_path / "s.eqx", scalars), scalars)


def test_safetensors_round_trip_and_like(tmp_path):
    model = invarax.nn.MLP(2, 1, 4, 1, key=invarax.random.PRNGKey(0))
    params = invarax.filter(model, invarax.is_array)
    save_safetensors(tmp_path / "m.safetensors", params, metadata={"format": "np"})
    flat = load_safetensors(tmp_path / "m.safetensors")
    assert sorted(flat) == ["layers.0.bias", "layers.0.weight", "layers.1.bias",
                            "layers.1.weight"]
    back = load_safetensors(tmp_path / "m.safetensors", like=params)
    _assert_trees_bitwise(back, params)
    with pytest.raises(KeyError, match="no tensor 'w'"):
        load_safetensors(tmp_path / "m.safetensors", like={"w": jnp.zeros(2)})
    with pytest.raises(TypeError, match="holds arrays only"):
        save_safetensors(tmp_path / "bad.safetensors", {"n": 3})
    assert sorted(os.listdir(tmp_path)) == ["m.safetensors"]


def test_safetensors_damage_is_an_error(tmp_path):
    f = io.BytesIO()
    save_safetensors(f, {"a": jnp.arange(6.0), "b": jnp.ones((2, 2), "int32")})
    data = f.getvalue()
    for n in range(len(data)):
        with pytest.raises((CorruptFileError, TypeError)):
            load_safetensors(io.BytesIO(data[:n]))


def test_safetensors_against_the_package(tmp_path):
    stn = pytest.importorskip("safetensors.numpy")
    arrays = {"x": np.arange(5, dtype=np.int32), "y": np.eye(3, dtype=np.float32),
              "e": np.zeros((0, 2), np.float16), "m": np.array([True, False])}
    stn.save_file(arrays, str(tmp_path / "theirs.safetensors"))
    ours = load_safetensors(tmp_path / "theirs.safetensors")
    assert {k: _bits(v) for k, v in ours.items()} == {k: _bits(v) for k, v in arrays.items()}
    save_safetensors(tmp_path / "ours.safetensors", {k: jnp.asarray(v) for k, v in
                                                      arrays.items()})
    theirs = stn.load_file(str(tmp_path / "ours.safetensors"))
    assert {k: _bits(v) for k, v in theirs.items()} == {k: _bits(v) for k, v in arrays.items()}


def test_bfloat16_and_float8_files_are_jax_and_safetensors_bytes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    safetensors = pytest.importorskip("safetensors")
    jax_numpy = pytest.importorskip("jax.numpy")
    arrays = {"a": np.asarray([1.5, 2, -0.3], ml_dtypes.bfloat16),
              "b": np.asarray([1.5, -3], ml_dtypes.float8_e4m3fn),
              "c": np.asarray([1.5, 2], ml_dtypes.float8_e5m2)}
    theirs = safetensors.serialize({k: safetensors.TensorSpec(
        dtype=v.dtype.name, shape=list(v.shape), data_ptr=v.ctypes.data, data_len=v.nbytes)
        for k, v in arrays.items()})
    f = io.BytesIO()
    save_safetensors(f, {k: jnp.asarray(v) for k, v in arrays.items()})
    assert f.getvalue() == theirs
    back = load_safetensors(io.BytesIO(theirs))
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and np.asarray(back[k]).tobytes() == v.tobytes()
    # .npy: bfloat16 is written as NumPy writes it and read back as JAX's jnp.load does
    jnp.save(tmp_path / "x.npy", jnp.asarray(arrays["a"]))
    assert jax_numpy.load(tmp_path / "x.npy").dtype == jax_numpy.bfloat16
    jax_numpy.save(tmp_path / "y.npy", jax_numpy.asarray(arrays["a"]))
    y = jnp.load(tmp_path / "y.npy")
    assert y.dtype == jnp.bfloat16 and np.asarray(y).tobytes() == arrays["a"].tobytes()
