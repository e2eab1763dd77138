"""Fusion groups as CUDA kernels, checked without a GPU: the generated source, compiled for
the host (its element function is plain C), gives exactly the unfused ops' bits on the whole
fusion test table (every unary, binary and select case with a per-element form or an
elementary function, float32, float64, int32, uint8, bool, special values included), with
broadcast and 0-d operands; and it compiles to clean PTX with NVRTC (skipped when NVRTC is
absent).
"""

import ctypes
import re

import numpy as np
import pytest
from helpers import assert_bitwise, assert_bitwise_any_nan
from test_fusion import values
from test_fusion_native import N, _special, _table

import invarax
import invarax.lax as lax
import invarax.numpy as jnp
from invarax.compiler import c_forms, fusion, fusion_cuda
from invarax.compiler.native_build import load
from invarax.core.ir import Literal
from invarax.kernels import nvrtc
from invarax.kernels.elementary import NAMES, NAMES2


def groups_of(f, args):
    """The fusion groups of ``f`` at ``args``, and the jaxpr they come from."""
    jaxpr = invarax.make_jaxpr(f)(*args).jaxpr
    with fusion._settings(min_size=0, min_work=0):
        items = fusion.plan(jaxpr)
    return [g for g in items if isinstance(g, fusion.Group)], jaxpr


def values_of(jaxpr, args) -> dict:
    """``id(var) -> value`` of every variable of ``jaxpr`` at ``args``, by the eager ops; a
    ``broadcast_in_dim`` gives a NumPy view with zero strides, as the compiled program
    hands a group a broadcast operand."""
    env = {id(v): np.asarray(a) for v, a in zip(jaxpr.invars, args, strict=True)}
    for eqn in jaxpr.eqns:
        ins = [v.val if isinstance(v, Literal) else env[id(v)] for v in eqn.invars]
        if eqn.primitive.name == "broadcast_in_dim":
            shape, dims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
            x = np.asarray(ins[0])
            x = x.reshape([x.shape[dims.index(d)] if d in dims else 1 for d in range(len(shape))])
            outs = [np.broadcast_to(x, shape)]
        else:
            outs = eqn.primitive.bind(*map(jnp.asarray, ins), **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update((id(v), np.asarray(o)) for v, o in zip(eqn.outvars, outs, strict=True))
    return env


def run_on_host(group, jaxpr, args):
    """The group's outputs computed by its generated source compiled for the host."""
    kernel = fusion_cuda.group_kernel(group)
    fn = load(kernel.source, "group_host", includes=(str(nvrtc.CSRC), str(nvrtc.DEVICE)))
    assert fn is not None, "no C compiler runs here"
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_longlong]
    where = values_of(jaxpr, args)
    shape = group.shape
    ins = []
    for v in group.invars:
        if isinstance(v, Literal):
            ins.append(np.zeros(1))  # (written into the source)
        else:
            x = where[id(v)]
            assert x.dtype == np.dtype(v.aval.dtype)
            ins.append(np.broadcast_to(x, shape) if x.shape != () else x.reshape(1))
    outs = [np.empty(v.aval.shape, np.dtype(v.aval.dtype)) for v in group.outvars]
    ins, periods = fusion_cuda.operands(group, ins)
    size = int(np.prod(shape))
    scratch = [np.empty(size, t) for t in kernel.scratch]
    ptrs = [x.ctypes.data for x in [*ins, *outs]] + periods + [t.ctypes.data for t in scratch]
    fn((ctypes.c_void_p * len(ptrs))(*ptrs), size // group.row_length() if kernel.per_row
       else size)
    return outs


def gpu_form(f, args) -> bool:
    """Whether ``f`` fused is one group with a CUDA form."""
    groups, _ = groups_of(f, args)
    try:
        return len(groups) == 1 and bool(fusion_cuda.group_kernel(groups[0]))
    except c_forms.Unsupported:
        return False


def gpu_table(dtype, args, like=None):
    """The fusion table's cases (of ``like``'s) that a GPU group computes, as one function."""
    ops = [op for op in _table(dtype, like=like) if gpu_form(op, args)]
    assert len(ops) > 5
    return lambda *a: tuple(op(*a) for op in ops)


def check_table(dtype, args, like=None):
    f = gpu_table(dtype, args, like)
    groups, jaxpr = groups_of(f, args)
    assert len(groups) == 1
    (group,) = groups
    want = f(*map(jnp.asarray, args))  # eager: the unfused ops
    got = run_on_host(group, jaxpr, args)
    produced = {id(v): k for k, v in enumerate(jaxpr.outvars)}
    for v, out in zip(group.outvars, got, strict=True):
        assert_bitwise(out, np.asarray(want[produced[id(v)]]))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_table_on_the_host_equals_the_unfused_ops(dtype):
    args = (values((N,), dtype, 1), values((N,), dtype, 2), values((N,), np.bool_, 3),
            np.asarray(values((1,), dtype, 4)[0]))
    check_table(dtype, args)


def test_every_elementary_function_is_a_gpu_member():
    """The table's GPU group calls each elementary function's per-element function (float32:
    the fast path and its fix-up, as the CPU's loops), so the table tests check them all."""
    args = (values((N,), np.float32, 1), values((N,), np.float32, 2), values((N,), np.bool_, 3),
            np.asarray(values((1,), np.float32, 4)[0]))
    (group,), _ = groups_of(gpu_table(np.float32, args), args)
    kernel = fusion_cuda.group_kernel(group)
    assert kernel.uses_elementary  # (a dispatcher runs it only with invarax_exact_elementary)
    (plain,), _ = groups_of(lambda x: x * 2.0 + 1.0, (values((N,), np.float32, 1),))
    assert not fusion_cuda.group_kernel(plain).uses_elementary
    calls = set(re.findall(r"\b(elem\w*)\((\d+),", kernel.source))
    more = NAMES.index("log2")
    assert calls == {*(("elem_f32_value", str(c)) for c in range(more)),
                     *(("elem_more_f32_value", str(c)) for c in range(more, len(NAMES))),
                     *(("elem2_f32_value", str(c)) for c in range(len(NAMES2)))}


def test_float64_table_and_special_values(x64):
    args = (_special(np.float64), _special(np.float64)[::-1].copy(), values((N,), np.bool_, 3),
            np.asarray(1.5))
    check_table(np.float64, args, like=np.float32)


def test_elementary_functions_and_broadcast_operands():
    def f(x, v, s):
        b = lax.broadcast_in_dim(v, x.shape, (1,))
        a = lax.exp(x) * b - lax.sin(b / x)
        return a, lax.tanh(a) + lax.max(x, b) * s, lax.logistic(a) - lax.cosh(x)

    x = _special(np.float32)[: 5 * 64].reshape(5, 64)
    v, s = values((64,), np.float32, 2), np.asarray(np.float32(0.75))
    groups, jaxpr = groups_of(f, (x, v, s))
    (group,) = groups
    outs = run_on_host(group, jaxpr, (x, v, s))
    for got, want in zip(outs, f(*map(jnp.asarray, (x, v, s))), strict=True):
        assert_bitwise(got, np.asarray(want))


@pytest.mark.parametrize("row", [2, 7, 129, 1000])
def test_row_reductions(row):
    def f(x, y):  # groups ending in each reduction
        a = x * y - lax.exp(x)
        return (lax.reduce_sum(a, (1,)), lax.reduce_max(x - y, (1,)),
                lax.reduce_min(lax.sin(a), (1,)), lax.reduce_prod(y * 0.5, (1,)),
                lax.reduce_sum(lax.tanh(y) * 2.0, (1,)))

    x, y = (values((9, row), np.float32, seed) for seed in (1, 2))
    x[2, 1], y[3, 0] = np.nan, -0.0
    groups, jaxpr = groups_of(f, (x, y))
    assert {r.primitive.name for g in groups for r in g.reductions} == {
        "reduce_sum", "reduce_max", "reduce_min", "reduce_prod"}
    env = values_of(jaxpr, (x, y))
    for group in groups:
        outs = run_on_host(group, jaxpr, (x, y))
        for v, out in zip(group.outvars, outs, strict=True):
            assert_bitwise_any_nan(out, env[id(v)])  # (a NaN sum's payload is free)


def test_unsupported_groups_are_named():
    cases = [(lambda x: lax.argmax(x * 2.0, 1, np.int32), "argmax"),
             (lambda x: lax.rem(x, 3.0) * 2.0, "rem")]  # no per-element form
    for f, match in cases:
        groups, _ = groups_of(f, (values((512, 1024), np.float32),))
        assert len(groups) == 1
        with pytest.raises(c_forms.Unsupported, match=match):
            for group in groups:
                fusion_cuda.group_kernel(group)


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC absent (pip install 'invarax[cuda13]')")
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_group_sources_compile_to_clean_ptx(dtype, tmp_path, monkeypatch):
    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    args = (values((N,), dtype, 1), values((N,), dtype, 2), values((N,), np.bool_, 3),
            np.asarray(values((1,), dtype, 4)[0]))
    (group,), _ = groups_of(gpu_table(dtype, args), args)
    ptx = nvrtc.compile_ptx("group.cu", source=fusion_cuda.group_kernel(group).source)
    assert ".visible .entry group(" in ptx
    assert nvrtc.forbidden(ptx) == []


def run_row_group_on_host(group, jaxpr, args):
    """A row group's outputs by its generated source compiled for the host: its full
    inputs whole, a row-shaped input repeating every ``size`` rows, one thread a row."""
    kernel = fusion_cuda.group_kernel(group)
    assert kernel.per_row
    fn = load(kernel.source, "group_host", includes=(str(nvrtc.CSRC), str(nvrtc.DEVICE)))
    assert fn is not None, "no C compiler runs here"
    fn.restype = None
    where = values_of(jaxpr, args)
    ins = [np.zeros(1) if isinstance(v, Literal) else np.ascontiguousarray(
        where[id(v)]).reshape(-1) for v in group.invars]
    outs = [np.empty(v.aval.shape, np.dtype(v.aval.dtype)) for v in group.outvars]
    scratch = [np.empty(group.shape, t) for t in kernel.scratch]
    table = [*(x.ctypes.data for x in (*ins, *outs)), *(max(x.size, 1) for x in ins),
             *(t.ctypes.data for t in scratch)]
    size = int(np.prod(group.shape))
    fn((ctypes.c_void_p * (len(table) + 1))(*table, 0),
       ctypes.c_longlong(size // group.row_length()))
    return outs, where


def test_row_groups_on_the_host_equal_the_unfused_ops():
    """Softmax, layer norm and attention, and their gradients: each row group (reductions
    read back inside the group) as one generated kernel, one thread a row, gives the
    unfused ops' bits."""
    from test_fusion_rows import attention, data, layer_norm, softmax

    x = data((6, 5, 40), 1)
    x[0, 0, :3] = [np.inf, -np.inf, np.nan]
    gamma, beta = data((40,), 2, 1.0), data((40,), 3, 1.0)
    q, k, v = data((3, 16, 8), 4), data((3, 16, 8), 5), data((3, 16, 8), 6)
    cases = [(softmax, (x,)), (layer_norm, (x, gamma, beta)),
             (invarax.grad(lambda x, g, b: jnp.sum(layer_norm(x, g, b) ** 2)), (x, gamma, beta)),
             (invarax.grad(lambda q, k, v: jnp.sum(jnp.tanh(attention(q, k, v)))), (q, k, v))]
    rows = 0
    for f, args in cases:
        groups, jaxpr = groups_of(f, args)
        for group in groups:
            if "reduce" not in group.kinds:
                continue
            rows += 1
            got, where = run_row_group_on_host(group, jaxpr, args)
            for var, out in zip(group.outvars, got, strict=True):
                assert_bitwise_any_nan(out, where[id(var)])
    assert rows >= 4


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC absent (pip install 'invarax[cuda13]')")
def test_row_group_sources_compile_to_clean_ptx(tmp_path, monkeypatch):
    from test_fusion_rows import data, layer_norm

    monkeypatch.setenv("INVARAX_CACHE_DIR", str(tmp_path))
    x, gamma, beta = data((4, 3, 40), 1), data((40,), 2, 1.0), data((40,), 3, 1.0)
    groups, _ = groups_of(layer_norm, (x, gamma, beta))
    (group,) = [g for g in groups if "reduce" in g.kinds]
    ptx = nvrtc.compile_ptx("group.cu", source=fusion_cuda.group_kernel(group).source)
    assert ".visible .entry group(" in ptx and nvrtc.forbidden(ptx) == []


def _edges(dtype):
    """Pairs at nextafter's and round's edges: zeros, the smallest subnormals, the largest
    value, infinities, equal operands, halves, and the last fractional floats."""
    f = np.finfo(dtype)
    tiny = f.smallest_subnormal
    x = [0.0, -0.0, 0.0, tiny, -tiny, f.max, np.inf, -np.inf, 1.0, -0.0, 0.5, -0.5, 1.5, -2.5,
         2.0 ** (f.nmant - 1) + 0.5, -(2.0 ** f.nmant) - 1, np.nextafter(dtype(0.5), dtype(0))]
    y = [-1.0, 1.0, 0.0, 0.0, 1.0, np.inf, 0.0, np.inf, 1.0, 0.0, 2.0, -3.0, np.nan, 1.0,
         -1.0, 0.0, 1.0]
    return np.array(x, dtype), np.array(y, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint16])
def test_division_rounding_and_nextafter_at_their_edges(dtype, x64):
    if np.dtype(dtype).kind == "f":
        x, y = _edges(dtype)
        ops = [lax.nextafter, lambda x, y: lax.round(x, 0), lambda x, y: lax.round(y, 1)]
    else:  # the overflow of the lowest value by -1 and division by zero
        info = np.iinfo(dtype)
        x = np.array([info.min, info.min, info.max, 7, -7 % (info.max + 1), 0, 5], dtype)
        y = np.array([-1 % (info.max + 1), 0, 0, 2, 2, 3, info.max], dtype)
        ops = [lax.div]
    for op in ops:
        assert gpu_form(op, (x, y))
        (group,), jaxpr = groups_of(op, (x, y))
        (got,) = run_on_host(group, jaxpr, (x, y))
        assert_bitwise(got, np.asarray(op(jnp.asarray(x), jnp.asarray(y))))
