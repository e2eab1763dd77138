"""Module and filtered-transform behaviours that Equinox's tests found different, each
run on invarax and on the same definitions in Equinox (skipped without it)."""

import abc
import functools
import typing
import warnings

import numpy as np
import pytest

import invarax
import invarax.numpy as jnp

eqx = pytest.importorskip("equinox")
jax = pytest.importorskip("jax")

LIBS = [(invarax, invarax), (jax, eqx)]  # (the JAX namespace, the Equinox namespace)


@pytest.mark.parametrize(("jx", "ex"), LIBS)
@pytest.mark.parametrize("call", [False, True])
def test_filtered_transform_decorating_a_method_binds_self(jx, ex, call):
    # Equinox's test_methods: @filter_grad on a method differentiates w.r.t. the instance
    class M(ex.Module):
        increment: object

        def method(self, x):
            return (x + self.increment) ** 2

        grad_method = ex.filter_grad(method)
        __call__ = ex.filter_grad(method) if call else method

    m = M(jx.numpy.array(2.0))
    grads = m.grad_method(jx.numpy.array(1.0))
    assert type(grads) is M and float(grads.increment) == 6.0
    if call:
        assert float(m(jx.numpy.array(1.0)).increment) == 6.0
    assert float(ex.filter_grad(m.method)(jx.numpy.array(1.0))) == 6.0


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_vmap_decorated_method_maps_the_instance_too(jx, ex):
    class M(ex.Module):
        w: object

        @ex.filter_vmap
        def scale(self, x):
            return self.w * x

    out = M(jx.numpy.arange(3.0)).scale(jx.numpy.ones(3))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0])


@pytest.mark.parametrize("jx", [invarax, jax])
def test_jit_static_argnums_0_on_a_method_binds_self(jx):
    class Scaler:
        def __init__(self, a):
            self.a = a

        def __hash__(self):
            return hash(self.a)

        def __eq__(self, other):
            return self.a == other.a

        @functools.partial(jx.jit, static_argnums=0)
        def apply(self, x):
            return self.a * x

    assert float(Scaler(3.0).apply(jx.numpy.array(2.0))) == 6.0
    assert Scaler.apply.__wrapped__.__name__ == "apply"  # unbound: the jitted function


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_bound_method_equality_and_names(jx, ex):
    class M(ex.Module):
        w: object

        def f(self, x):
            return x

    a, b = M(1), M(1)
    assert a.f == b.f and hash(a.f) == hash(b.f)
    assert not (a.f == M(2).f) and not (a.f == (lambda x: x))
    assert bool(M(jx.numpy.ones(2)).f == M(jx.numpy.ones(2)).f)
    assert (a.f.__name__, a.f.__qualname__.rsplit(".", 2)[-2:]) == ("f", ["M", "f"])
    # Equinox's test_wrap_method: a bound method is a Module whose leaves are the module's
    assert isinstance(a.f, ex.Module) and type(a.f).__name__ == "BoundMethod"
    assert jx.tree_util.tree_leaves(a.f) == [1]
    assert repr(a.f).startswith("BoundMethod(") and "__func__=<function " in repr(a.f)


_T = typing.TypeVar("_T")


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_orig_class_of_a_generic_module(jx, ex):
    class A(ex.Module, typing.Generic[_T]):
        x: int = 0

    assert A[int]().__orig_class__ == A[int]


@pytest.mark.parametrize(("jx", "ex"), LIBS)
@pytest.mark.parametrize("name", ["filter_jit", "filter_grad", "filter_value_and_grad",
                                  "filter_vmap", "filter_pmap", "module_update_wrapper"])
def test_wrappers_keep_name_doc_qualname_annotations_through_filter_jit(jx, ex, name):
    # Equinox's test_wrapper_attributes: the wrapper crosses filter_jit as a pytree
    def f(x: int) -> str:
        """some doc"""
        return "hi"

    seen = {}

    @ex.filter_jit
    def g(k):
        seen.update((a, getattr(k, a)) for a in
                    ("__name__", "__doc__", "__qualname__", "__annotations__", "__module__"))

    class Wrapper(ex.Module):  # a user's wrapper (Equinox's noinline is one)
        fn: object = ex.field(static=True)

        @property
        def __wrapped__(self):
            return self.fn

    wrap = getattr(ex, name) if name != "module_update_wrapper" else (
        lambda fn: ex.module_update_wrapper(Wrapper(fn)))
    g(wrap(f))
    assert seen == {"__name__": "f", "__doc__": "some doc", "__qualname__": f.__qualname__,
                    "__annotations__": {"x": int, "return": str}, "__module__": __name__}


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_static_field_overridden_by_a_class_attribute_is_not_traced(jx, ex):
    # Equinox's test_class_attribute_of_static_field_with_abstract_property: the str list
    # is a class attribute, never a leaf, so jit can take the module as a traced argument
    class AbstractBase(ex.Module):
        config: list = ex.field(static=True)

        @property
        @abc.abstractmethod
        def config(self):  # noqa: F811
            pass

    class Child(AbstractBase):
        config = ["a", "b"]

        def __init__(self):
            pass

    assert jx.jit(lambda m: len(m.config))(Child()) == 2
    assert jx.tree_util.tree_leaves(Child()) == []


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_unassigned_default_is_not_a_leaf(jx, ex):
    class M(ex.Module):
        w: object
        scale: float = 2.0

        def __init__(self, w):
            self.w = w

    m = M(jx.numpy.ones(2))
    assert len(jx.tree_util.tree_leaves(m)) == 1
    assert jx.tree_util.tree_map(lambda x: 2 * x, m).scale == 2.0


def test_pformat_weak_prefix_and_numpy_tag_as_equinox():
    # Equinox's test_pformat: weak arrays print `weak_`, NumPy arrays `(numpy)`
    def values(jx):
        return [jx.numpy.array(1), jx.numpy.arange(12).reshape(3, 4), np.array(1),
                np.arange(12.0).reshape(3, 4).astype(np.float16), np.float32(1.5),
                jx.numpy.asarray(2.0), jx.numpy.ones(2, bool),
                jx.ShapeDtypeStruct((2,), jx.numpy.float32)]

    for ours, theirs in zip(values(invarax), values(jax), strict=True):
        assert invarax.tree_pformat(ours, struct_as_array=True) == eqx.tree_pformat(
            theirs, struct_as_array=True)
    assert invarax.tree_pformat(np.array(1), short_arrays=False) == "array(1)"

    class M(invarax.Module):
        w: object

    assert repr(M(jnp.array(1.0))) == "M(w=weak_f32[])"


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_deserialise_into_a_filter_eval_shape_model(jx, ex, tmp_path):
    # Equinox's test_eval_shape: the `like` of ShapeDtypeStructs costs no arrays
    model = ex.nn.MLP(2, 2, 2, 2, key=jx.random.key(0))
    ex.tree_serialise_leaves(tmp_path / "m.eqx", model)
    like = ex.filter_eval_shape(ex.nn.MLP, 2, 2, 2, 2, key=jx.random.key(1))
    loaded = ex.tree_deserialise_leaves(tmp_path / "m.eqx", like)
    assert ex.tree_equal(model, loaded, typematch=True)


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_deserialise_errors_carry_equinox_messages(jx, ex, tmp_path):
    # Equinox's test_helpful_errors: a RuntimeError naming the leaf's path
    path = tmp_path / "t.eqx"
    ex.tree_serialise_leaves(path, (jx.numpy.array(1), {}))
    two = {"a": jx.numpy.array(2), "b": jx.numpy.array(2)}
    with pytest.raises(RuntimeError, match=r"Error at leaf with path \(SequenceKey\(idx=1\), "
                                           r"DictKey\(key='a'\)\)"):
        ex.tree_deserialise_leaves(path, (jx.numpy.array(2), two))
    ex.tree_serialise_leaves(path, (jx.numpy.array(1), {"a": jx.numpy.array(1), "b": 1}))
    bad = {"a": jx.numpy.array(2, dtype=jx.numpy.float32), "b": 2}
    with pytest.raises(RuntimeError, match=r"Deserialised leaf at path \(SequenceKey\(idx=1\), "
                                           r"DictKey\(key='a'\)\)"):
        ex.tree_deserialise_leaves(path, (jx.numpy.array(2), bad))


def _record_warnings(fn, *args):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(w.message).split("\n")[0] for w in record]


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_jit_donation_modes_as_equinox(jx, ex):
    # donate= was accepted and ignored; now Equinox's modes donate as jit does
    def add(x, y):
        return x + y

    for mode, deleted in [("all", (True, False)), ("warn-except-first", (False, True)),
                          ("none", (False, False))]:
        x, y = jx.numpy.ones(1000) * 2.0, jx.numpy.ones(1000) * 3.0
        out, seen = _record_warnings(ex.filter_jit(add, donate=mode), x, y)
        assert (x.is_deleted(), y.is_deleted()) == deleted, mode
        assert seen == [] and float(out[0]) == 5.0

    def reduce(x, y):
        return x + jx.numpy.sum(y)

    for mode, seen_want in [("warn", ["Some donated buffers were not usable: float32[10]."]),
                            ("all", [])]:
        y = jx.numpy.ones(10)
        _, seen = _record_warnings(ex.filter_jit(reduce, donate=mode), jx.numpy.array(1.0), y)
        assert seen == seen_want and not y.is_deleted()


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_donated_buffer_is_reused(jx, ex):
    x = jx.numpy.ones(1000) * 2.0  # an array owning its buffer
    where = x.unsafe_buffer_pointer()
    out = ex.filter_jit(lambda x: x + 1, donate="all")(x)
    assert x.is_deleted() and out.unsafe_buffer_pointer() == where
    # A scalar, and an output the program does not write in place (a scatter), take the
    # donated buffer too.
    for x, f in [(jx.numpy.array(0.0), lambda x: x + 1),
                 (jx.numpy.ones(1000) * 2.0, lambda x: x.at[0].add(1.0)),
                 (jx.numpy.ones(4) * 2.0, lambda x: (x.sum(), x * 3.0))]:
        where = x.unsafe_buffer_pointer()
        out = jx.tree_util.tree_leaves(ex.filter_jit(f, donate="all")(x))[-1]
        assert x.is_deleted() and out.unsafe_buffer_pointer() == where
    # jnp.copy is a new buffer: donating it leaves the original intact.
    a = jx.numpy.ones(3) * 2.0
    b = jx.numpy.copy(a)
    assert b.unsafe_buffer_pointer() != a.unsafe_buffer_pointer()
    ex.filter_jit(lambda x: x + 1, donate="all")(b)
    assert b.is_deleted() and not a.is_deleted() and float(a[0]) == 2.0


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_a_donated_zeros_field_is_reused_as_equinox(jx, ex):
    # Equinox's test_buffer_donation_method: jnp.zeros owns its buffer (in invarax too:
    # not a broadcast of one zero), which the donating method's output takes.
    class M(ex.Module):
        buffer: object
        mlp: object

        def __init__(self):
            self.mlp = ex.nn.MLP(10, 10, 10, 3, key=jx.random.PRNGKey(0))
            self.buffer = jx.numpy.zeros((100000,))

        @ex.filter_jit(donate="all")
        def __call__(self, x):
            return self.mlp(x), ex.tree_at(lambda s: s.buffer, self, self.buffer.at[0].add(1))

    m = new = M()
    where = m.buffer.unsafe_buffer_pointer()
    for _ in range(3):
        _, new = new(jx.numpy.ones(10))
    assert float(new.buffer[0]) == 3.0 and float(new.buffer[1:].sum()) == 0.0
    assert new.buffer.unsafe_buffer_pointer() == where
    assert all(x.is_deleted() for x in jx.tree_util.tree_leaves(ex.filter(m, ex.is_array)))


@pytest.mark.parametrize(("jx", "ex"), LIBS)
@pytest.mark.parametrize("donate", ["all", "all-except-first", "none"])
def test_filter_jit_ahead_of_time_as_equinox(jx, ex, donate):
    # Equinox's test_aot_compilation(_kwargs): .lower(...).compile() with static leaves
    def f(x, y, **kwargs):
        return 2 * x + y + kwargs["test"]

    x = jx.numpy.array(3)
    lowered = ex.filter_jit(f, donate=donate).lower(x, 4, test=123)
    assert isinstance(lowered.as_text(), str)
    assert int(lowered.compile()(jx.numpy.array(5), 4, test=123)) == 137


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_pmap_devices_axis_size_and_aot_as_equinox(jx, ex):
    # Equinox's pmap tests pass devices= through to pmap; test_out, test_aot_compilation
    pmap = functools.partial(ex.filter_pmap, devices=jx.devices("cpu")[:1])
    add = pmap(lambda a, b: a + b[0]["a"], in_axes=(0, [{"a": None}]))
    assert add(jx.numpy.array([1]), [{"a": jx.numpy.array([2])}]).tolist() == [[3]]
    same = pmap(lambda x: x, in_axes=None, out_axes=None, axis_size=1)(jx.numpy.array([3, 4]))
    assert same.tolist() == [3, 4]
    broadcast = pmap(lambda x: x, out_axes=0, axis_size=1)(1)  # a scalar output, stacked
    assert broadcast.shape == (1,) and broadcast.tolist() == [1]
    lowered = pmap(lambda x, y: 2 * x + y, donate="none").lower(jx.numpy.array([3]), 4)
    assert isinstance(lowered.as_text(), str)
    assert lowered.compile()(jx.numpy.array([3]), 4).tolist() == [10]


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_pmap_traces_and_named_axes_as_equinox(jx, ex):
    # Equinox traces each new call twice (output shapes, then pmap), once across wrappers
    # of an equal function; in_axes may name parameters; a scalar cannot be mapped
    pmap = functools.partial(ex.filter_pmap, devices=jx.devices("cpu")[:1])
    traces = []

    def f(x, y):
        traces.append(1)
        return x + y

    pmap(f, in_axes=None, axis_size=1)(jx.numpy.array(1), 2)
    pmap(f, in_axes=None, axis_size=1)(jx.numpy.array(3), 2)
    assert len(traces) == 2
    pmap(f, in_axes=None, axis_size=1)(jx.numpy.array(1), 3)
    assert len(traces) == 4
    out = pmap(f, in_axes=dict(y=1))(jx.numpy.ones((1, 4)), jx.numpy.full((1, 1), 2.0))
    assert out.tolist() == [[3.0, 3.0, 3.0, 3.0]]
    with pytest.raises(ValueError):
        pmap(f, in_axes=lambda leaf: 0)(jx.numpy.array(3.0), jx.numpy.array([3.0]))


def test_pformat_functions_as_equinox():
    # Equinox's test_function: a functools.wraps wrapper prints as a wrapped function
    def f():
        pass

    @functools.wraps(f)
    def g():
        pass

    for value in (f, g, functools.partial(f), functools.partial(f, 1, k=2.0)):
        assert invarax.tree_pformat(value) == eqx.tree_pformat(value)


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_jit_of_module_instances_shares_their_traces(jx, ex):
    # Equinox keys a Module called as the function on its static fields: instances that
    # differ in arrays share a trace, a different static field traces again.
    traces = []

    class Add(ex.Module):
        increment: object
        scale: int = ex.field(static=True, default=1)

        def __call__(self, x):
            traces.append(None)
            return x * self.scale + self.increment

    x = jx.numpy.ones(2)
    outs = [ex.filter_jit(m)(x) for m in (Add(jx.numpy.array(1.0)), Add(jx.numpy.array(2.0)),
                                          Add(jx.numpy.array(3.0), scale=2))]
    assert len(traces) == 2
    assert [float(o[0]) for o in outs] == [2.0, 3.0, 5.0]


@pytest.mark.parametrize(("jx", "ex"), LIBS)
@pytest.mark.parametrize("transform", ["custom_jvp", "custom_vjp", "jit", "grad"])
def test_assigning_a_transformed_module_as_a_field_warns(jx, ex, transform):
    class A(ex.Module):
        f: object

    linear = ex.nn.Linear(2, 2, key=jx.random.PRNGKey(0))
    with pytest.warns(UserWarning, match="Possibly assigning a JAX-transformed callable"):
        A(getattr(jx, transform)(linear))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A(getattr(jx, transform)(lambda x: x))  # no arrays wrapped: no warning


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_filter_vmap_in_axes_holding_a_callable_module_is_a_prefix_node(jx, ex):
    # Equinox's noinline test_complicated: vmap's axes for a model are the model's
    # structure with None/int leaves; the (callable) model node is not an axis function
    mlp = ex.nn.MLP(1, 1, 4, 1, key=jx.random.PRNGKey(0))
    axes = jx.tree_util.tree_map(lambda _: None, mlp)
    assert callable(axes)
    xs = jx.numpy.arange(3.0).reshape(3, 1)
    out = ex.filter_vmap(lambda m, x: m(x), in_axes=(axes, 0))(mlp, xs)
    for i in range(3):
        assert np.array_equal(np.asarray(out[i]), np.asarray(mlp(xs[i])))


@pytest.mark.parametrize(("jx", "ex"), LIBS)
def test_noinline_call_sites_share_their_programs(jx, ex):
    # Equinox's test_complicated: three calls of one noinline function under
    # jit(vmap(grad)) compile each kind of program (primal, cotangent, its residuals) once
    compiled = []
    if ex is invarax:
        import invarax.module.internal as eqxi
    else:
        import equinox.internal as eqxi

    @eqxi.noinline
    def call(f, x):
        x = eqxi.announce_transform(x, announce=lambda s: s.endswith("mlir") and
                                    compiled.append(s))
        return f(x + 1)

    mlp = ex.nn.MLP(1, 1, 4, 1, key=jx.random.PRNGKey(0))

    @jx.jit
    @jx.vmap
    @jx.grad
    def run(x):
        x = x[None]
        (out,) = call(mlp, call(mlp, call(mlp, x))) * x
        return out

    run(jx.numpy.array([1.0, 2.0, 3.0]))
    assert len(compiled) == 3
