"""Shardings in types and sharding propagation: placement never changes a value (every
result bitwise the unplaced program's, eager and jit), ``typeof``, ``AbstractMesh``,
``out_sharding=``, ``lax.pcast``/``pvary`` (eager, jit, vmap, grad inside ``shard_map``,
bitwise the ``vmap`` program), and the errors. What is printed is compared with JAX's in
tests/test_sharding.py (``test_shardings_in_types_match_jax``)."""

import numpy as np
import pytest
from helpers import assert_bitwise, data

import invarax
import invarax.numpy as jnp
from invarax import lax
from invarax.distributed.propagation import ShardingTypeError
from invarax.sharding import AbstractMesh, AxisType, NamedSharding, reshard
from invarax.sharding import PartitionSpec as P


def _program(a, b, w):
    h = jnp.tanh(a @ w + 1.0) * jnp.exp(-b[:, :1])
    return jnp.sum(h * h, axis=1), h.sum(0) @ w, jnp.maximum(h, 0.25).mean(0)


@pytest.mark.parametrize("axis_type", [AxisType.Explicit, AxisType.Auto])
def test_placed_operands_give_the_unplaced_bits(axis_type):
    mesh = invarax.make_mesh((2, 4), ("x", "y"), axis_types=(axis_type,) * 2)
    a, b, w = data((16, 8), seed=1), data((16, 4), seed=2), data((8, 8), seed=3)
    want = _program(a, b, w)
    def loss(*v):
        return _program(*v)[0].sum()

    with invarax.set_mesh(mesh):
        placed = (reshard(a, P("x", None)), reshard(b, P("x", "y")), reshard(w, P(None, "y")))
        for got in [_program(*placed), invarax.jit(_program)(*placed)]:
            for g, r in zip(got, want, strict=True):
                assert_bitwise(g, r)
        want_grads = invarax.grad(loss, argnums=(0, 1, 2))(a, b, w)
        for grads in [invarax.grad(loss, argnums=(0, 1, 2))(*placed),
                      invarax.jit(invarax.grad(loss, argnums=(0, 1, 2)))(*placed)]:
            for g, r, p in zip(grads, want_grads, placed, strict=True):
                assert_bitwise(g, r)
                assert g.sharding.is_equivalent_to(p.sharding, g.ndim)  # a primal's placement
        # forward over reverse, eagerly: the linearized, transposed operations never raise
        hess = invarax.hessian(lambda r: jnp.sum(jnp.sin(r @ placed[2])))(placed[0][0])
        assert_bitwise(hess, invarax.hessian(lambda r: jnp.sum(jnp.sin(r @ w)))(a[0]))
        rows, _, _ = _program(*placed)
        assert rows.sharding.mesh == mesh  # placed on the operands' mesh
        assert str(invarax.typeof(rows)) == (
            "float32[16@x]" if axis_type is AxisType.Explicit else "float32[16]")


def test_out_sharding_resolves_an_ambiguous_contraction_bitwise():
    mesh = invarax.make_mesh((2, 4), ("x", "y"))
    a, w = data((8, 16), seed=4), data((16, 4), seed=5)
    with invarax.set_mesh(mesh):
        sa, sw = reshard(a, P(None, "y")), reshard(w, P("y", None))
        with pytest.raises(ShardingTypeError, match="ambiguous"):
            jnp.dot(sa, sw)
        got = jnp.dot(sa, sw, out_sharding=P("x"))
        assert got.sharding.spec == P("x", None)
        assert_bitwise(got, jnp.dot(a, w))
        assert_bitwise(jnp.einsum("ij,jk->ik", sa, sw, out_sharding=P("x")), jnp.dot(a, w))
        z = jnp.zeros((4, 2), out_sharding=P("y"))
        assert (str(invarax.typeof(z)), z.sharding.spec) == ("float32[4@y,2]", P("y", None))
    with pytest.raises(ValueError, match="no mesh is in context"):
        jnp.ones(4, out_sharding=P("x"))


def test_operands_on_other_devices_are_an_error():
    left = invarax.make_mesh((4,), ("x",))
    right = invarax.make_mesh((4,), ("x",), devices=invarax.devices()[4:])
    u = invarax.device_put(jnp.ones(4), NamedSharding(left, P("x")))
    v = invarax.device_put(jnp.ones(4), NamedSharding(right, P("x")))
    with pytest.raises(ValueError, match=r"incompatible devices for add.*\[0, 1, 2, 3\].*"
                       r"\[4, 5, 6, 7\].*Place both on one mesh"):
        u + v


def test_typeof_and_abstract_mesh():
    mesh = invarax.make_mesh((2, 4), ("x", "y"))
    x = reshard(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("y")))
    t = invarax.typeof(x)
    assert (str(t), repr(t), t.str_short()) == (
        "float32[8@y]", "ShapedArray(float32[8@y])", "f32[8@y]")
    assert t.sharding.mesh == AbstractMesh((2, 4), ("x", "y"), (AxisType.Explicit,) * 2)
    assert t.sharding.spec == P("y") and t == invarax.typeof(x * 2) and t.vma == frozenset()
    assert t != invarax.typeof(jnp.arange(8.0)) and hash(t) == hash(invarax.typeof(x + 1))
    assert repr(invarax.typeof(2.0)) == "ShapedArray(float32[], weak_type=True)"
    plain = invarax.core.aval.ShapedArray((8,), np.float32)
    assert invarax.typeof(jnp.arange(8.0)) == plain and plain == invarax.typeof(jnp.zeros(8))
    assert hash(invarax.typeof(jnp.zeros(8))) == hash(plain) and t != plain
    assert mesh.abstract_mesh.explicit_axes == ("x", "y")
    seen = []

    def inside(v):
        seen.append((invarax.sharding.get_abstract_mesh(), str(invarax.typeof(v))))
        return v

    with invarax.set_mesh(mesh):
        invarax.sharding.auto_axes(inside, axes="y", out_sharding=P())(x)
    ((abstract, shown),) = seen
    assert (abstract.auto_axes, abstract.explicit_axes, shown) == (("y",), ("x",), "float32[8]")
    assert invarax.sharding.get_abstract_mesh().empty
    with pytest.raises(ValueError, match="one size per name"):
        AbstractMesh((2,), ("x", "y"))


def test_jit_places_outputs_per_call_placement():
    mesh = invarax.make_mesh((2, 4), ("x", "y"))
    f = invarax.jit(lambda v: jnp.sin(v).T)
    m = data((8, 4), seed=7)
    by_rows, by_cols = reshard(m, NamedSharding(mesh, P("x"))), reshard(
        m, NamedSharding(mesh, P(None, "y")))
    assert f(by_rows).sharding.spec == P(None, "x")
    assert f(by_cols).sharding.spec == P("y", None)
    assert f(m).sharding.device_set == {invarax.devices()[0]}
    assert_bitwise(f(by_rows), f(m))
    seen = []

    @invarax.jit
    def outer(v):  # a jit inside a jit: its program carries the placement too
        w = f(v)
        seen.append(str(invarax.typeof(w)))
        return w.sum(0)

    assert outer(by_rows).sharding.spec == P("x")
    assert seen == ["float32[4,8@x]"]


def _weighted(c, x):
    return lax.psum((lax.pcast(c, "i", to="varying") * x).sum(), "i")


def test_pvary_is_bitwise_its_vmap_program_and_transposes_to_psum():
    mesh = invarax.make_mesh((4,), ("i",))
    c, x = data((3,), seed=8), data((12,), seed=9)
    sm = invarax.shard_map(_weighted, mesh=mesh, in_specs=(P(), P("i")), out_specs=P())
    vm = invarax.vmap(_weighted, in_axes=(None, 0), axis_name="i")
    blocks = x.reshape(4, 3)
    assert_bitwise(sm(c, x), vm(c, blocks)[0])
    assert_bitwise(invarax.jit(sm)(c, x), vm(c, blocks)[0])
    grad = invarax.grad(sm)(c, x)
    assert_bitwise(grad, invarax.grad(lambda c: vm(c, blocks)[0])(c))
    assert_bitwise(invarax.jit(invarax.grad(sm))(c, x), grad)
    # the cotangent of the copies summed: psum of the blocks
    assert_bitwise(grad, invarax.vmap(lambda b: lax.psum(b, "i"), axis_name="i")(blocks)[0])
    # vmap of the shard_map: each example's bits
    batch = data((2, 3), seed=10)
    assert_bitwise(invarax.vmap(sm, in_axes=(0, None))(batch, x)[1], sm(batch[1], x))
    # eagerly, under vmap directly, with nested axes and pytrees
    both = invarax.vmap(invarax.vmap(lambda v, k: v + lax.pvary(k, ("i", "j"))["a"],
                                     in_axes=(0, None), axis_name="j"),
                        in_axes=(0, None), axis_name="i")
    assert_bitwise(both(jnp.zeros((2, 3, 1)), {"a": jnp.ones(1)}), jnp.ones((2, 3, 1)))


def test_pcast_errors():
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        lax.pvary(jnp.ones(2), "i")
    with pytest.raises(ValueError, match="allowed values"):
        lax.pcast(jnp.ones(2), "i", to="sideways")
    with pytest.raises(NotImplementedError, match="to='varying'"):
        lax.pcast(jnp.ones(2), "i", to="reduced")
    with pytest.raises(TypeError, match="not a set"):
        lax.pvary(jnp.ones(2), {"i"})
    assert lax.pvary(jnp.ones(2), ()) is not None


def test_shard_map_body_sees_manual_axes_and_infers_in_specs_under_jit():
    mesh = invarax.make_mesh((2, 4), ("x", "y"))
    seen = []

    def body(v):
        seen.append((str(invarax.typeof(v)), invarax.sharding.get_abstract_mesh().manual_axes))
        return lax.psum(v, "y")

    f = invarax.shard_map(body, mesh=mesh, out_specs=P("x"))  # in_specs from the placement
    x = reshard(data((8, 4), seed=11), NamedSharding(mesh, P("x", "y")))
    want = f(x)
    got = invarax.jit(f)(x)
    assert_bitwise(got, want)
    assert seen == [("float32[4,1]{V:(x,y)}", ("x", "y"))] * 2
    blocks = np.asarray(x).reshape(2, 4, 4, 1).transpose(0, 2, 1, 3)  # [x block, y block]
    by_vmap = invarax.vmap(invarax.vmap(lambda b: lax.psum(b, "y"), axis_name="y"),
                           axis_name="x")(blocks)
    assert_bitwise(want, by_vmap[:, 0].reshape(8, 1))


def test_nested_and_batched_gradients_live_where_their_primals_do():
    mesh = invarax.make_mesh((2, 4), ("x", "y"))
    v = data((8,), seed=12)

    def f(u):
        return jnp.sum(jnp.sin(u) ** 3)

    def second(u):
        return invarax.grad(lambda w: invarax.grad(f)(w).sum())(u)

    with invarax.set_mesh(mesh):
        placed = reshard(v, P("x"))
        for got in [second(placed), invarax.jit(second)(placed)]:
            assert_bitwise(got, second(v))
            assert got.sharding.spec == P("x")
        rows = reshard(data((4, 8), seed=13), P("x"))
        assert invarax.vmap(invarax.grad(f))(rows).sharding.spec == P("x", None)
