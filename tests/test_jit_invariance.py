"""N3, compilation invariance: ``jit(f)(x)`` is bitwise eager ``f(x)``.

- every primitive, through the op table of tests/test_vmap_primitives.py (float32 and
  float64), with its per-example gradient program for differentiable ones;
- composite programs: an MLP training step, softmax cross-entropy, layer norm and their
  gradients, the expression of JAX issue 15736, a long elementwise chain, jacfwd /
  jacrev / hessian, vmap of grad, custom derivatives, checkpoint, random numbers;
- random programs (hypothesis): DAGs of elementwise, broadcasting, reduction and matmul
  operations over a few inputs, with repeated subexpressions so that CSE fires. Each runs
  eagerly, jitted and as ``make_jaxpr(optimize=True)`` evaluated: all bitwise equal.

Each check also compares the weak types, and runs the optimised jaxpr through
``eval_jaxpr``, so the passes are checked apart from the lowering.
"""

import numpy as np
import pytest
from helpers import assert_bitwise, data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_vmap_primitives import CASES, DIFFERENTIABLE, NOT_IN_TABLE, loss_of, pool

import invarax
import invarax.module.internal  # noqa: F401  (defines Equinox's internal primitives)
import invarax.numpy as jnp
from invarax import grad, hessian, jacfwd, jacrev, jit, lax, make_jaxpr, random, vmap
from invarax.core.eval import eval_jaxpr
from invarax.core.ir import typecheck
from invarax.core.trace import PRIMITIVES


def check_n3(f, *args):
    """Assert that ``jit(f)`` and the optimised jaxpr of ``f`` give eager ``f``'s bits."""
    args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    want = invarax.tree_leaves(f(*args))
    got = invarax.tree_leaves(jit(f)(*args))
    closed = make_jaxpr(f, optimize=True)(*args)
    typecheck(closed.jaxpr)
    flat = invarax.tree_leaves(args)
    optimised = eval_jaxpr(closed.jaxpr, closed.consts, *flat)
    assert len(got) == len(want) == len(optimised)
    for g, o, w in zip(got, optimised, want, strict=True):
        assert_bitwise(g, w)
        assert_bitwise(o, w)
        assert g.weak_type == w.weak_type == o.weak_type
    return want


# ---------------------------------------------------------------------------------------
# Every primitive


@pytest.mark.parametrize("name", CASES)
def test_every_primitive(name):
    args = [x[0] for x in pool(name, 1)]
    check_n3(CASES[name].f, *args)


@pytest.mark.parametrize("name", [n for n in CASES if any(a.is_float for a in CASES[n].args)])
def test_every_primitive_float64(x64, name):
    args = [x[0] for x in pool(name, 1, np.float64)]
    check_n3(CASES[name].f, *args)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_every_gradient(name):
    args = [x[0] for x in pool(name, 1)]
    check_n3(loss_of(name), *args)


def test_iota_and_collectives():
    check_n3(lambda x: x + lax.iota(np.float32, 5), data((5,)))
    f = vmap(lambda x: x - lax.psum(x, "i") / lax.pmax(x, "i") + lax.pmin(x, "i")
             + lax.axis_index("i"), axis_name="i")
    check_n3(f, data((4, 3)))
    check_n3(vmap(lambda x: lax.all_gather(x, "i") * 2.0, axis_name="i"), data((3, 2)))


# Primitives covered by the composite programs below rather than by the op table.
COMPOSITE = {"iota", "psum", "pmax", "pmin", "all_gather", "axis_index", "custom_jvp_call",
             "custom_vjp_call", "custom_lin", "checkpoint",
             "cond", "scan", "while", "while_grad"}  # tests/test_control_flow_transforms.py
COMPOSITE |= {"checkpointed_while"}  # tests/test_checkpointed_while.py (jit, vmap, grad)
COMPOSITE |= {"debug_callback", "pure_callback"}  # tests/test_debug_callbacks.py
COMPOSITE |= {"ppermute", "psum_scatter", "all_to_all"}  # tests/test_pmap.py (jit bodies)
COMPOSITE |= {"error_if"}  # tests/test_module_errors.py (eager, jit, vmap, grad)
COMPOSITE |= {"sharding_constraint"}  # tests/test_sharding_jit.py (eager, jit, vmap, grad)
COMPOSITE |= {"pvary"}  # tests/test_sharding_types.py (eager, jit, vmap, grad)
COMPOSITE |= {"qr_raw"}  # tests/test_compat_runtime.py (eager, jit, vmap)
COMPOSITE |= {"io_callback"}  # tests/test_compat_extend.py (jit against JAX)
COMPOSITE |= {"bitcast_convert_type"}  # tests/test_lax_more.py (eager, jit, vmap, vs JAX)
COMPOSITE |= {"dce_probe"}  # tests/test_module_dce.py (eager, jit, vmap, jvp, grad)
COMPOSITE |= {"announce_jaxpr"}  # tests/test_module_announce.py (eager, jit, vmap, jvp, grad)
# equinox.internal's primitives: tests/test_eqx_internal_primitives.py (jit, vmap, jvp)
COMPOSITE |= {"noinline", "nonbatchable", "nondifferentiable_backward", "nontraceable",
              "unvmap_all", "unvmap_any", "unvmap_max", "vprim"}


def test_every_primitive_is_covered():
    tested = {c.prim for c in CASES.values()}
    assert set(PRIMITIVES) <= tested | COMPOSITE
    assert set(NOT_IN_TABLE) <= COMPOSITE


# ---------------------------------------------------------------------------------------
# Composite programs


def mlp_params(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(jnp.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
             jnp.asarray(np.zeros(n, np.float32)))
            for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def mlp(params, x):
    for w, b in params[:-1]:
        x = jnp.maximum(x @ w + b, 0.0)
    w, b = params[-1]
    return x @ w + b


def log_softmax(z):
    z = z - lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


def cross_entropy(logits, labels):
    return -jnp.mean(jnp.sum(labels * log_softmax(logits), axis=-1))


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * gamma + beta


def labels(n, k, seed=0):
    return np.eye(k, dtype=np.float32)[np.random.default_rng(seed).integers(0, k, n)]


def test_mlp_training_step():
    def step(params, x, y):
        loss, grads = invarax.value_and_grad(lambda p: cross_entropy(mlp(p, x), y))(params)
        new = invarax.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return new, loss

    params, x, y = mlp_params([20, 32, 32, 10]), data((16, 20)), labels(16, 10)
    check_n3(step, params, x, y)
    # two steps in a row: the jitted step's outputs feed the next one
    p1, _ = jit(step)(params, jnp.asarray(x), jnp.asarray(y))
    q1, _ = step(params, jnp.asarray(x), jnp.asarray(y))
    check_n3(step, p1, x, y)
    for a, b in zip(invarax.tree_leaves(p1), invarax.tree_leaves(q1), strict=True):
        assert_bitwise(a, b)


def test_softmax_cross_entropy_and_gradient():
    logits, y = data((8, 10)), labels(8, 10)
    check_n3(cross_entropy, logits, y)
    check_n3(grad(cross_entropy), logits, y)
    check_n3(lambda z: jnp.exp(log_softmax(z)), logits)


def test_layer_norm_and_gradient():
    x, gamma, beta = data((6, 16)), data((16,), seed=1), data((16,), seed=2)
    check_n3(layer_norm, x, gamma, beta)
    loss = lambda x, g, b: jnp.sum(jnp.sin(layer_norm(x, g, b)))
    check_n3(grad(loss, argnums=(0, 1, 2)), x, gamma, beta)


def test_the_expression_of_jax_issue_15736():
    def expr(x1, x2):
        return (x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2))

    x1, x2 = data((1000,)), data((1000,), seed=1)
    check_n3(expr, x1, x2)
    check_n3(grad(lambda a, b: jnp.sum(expr(a, b)), argnums=(0, 1)), x1, x2)
    text = jit(expr).lower(x1, x2).as_text()
    assert text.count(" div ") == 1 and text.count(" exp ") == 1


def test_a_long_elementwise_chain():
    def chain(x, y):
        for i in range(40):
            x = jnp.tanh(x * y + 0.5) - jnp.exp(-x) / (1.0 + y * y) + jnp.sin(x * float(i))
        return x

    check_n3(chain, data((257,)), data((257,), seed=1))


def test_jacobians_and_hessian():
    f = lambda x: jnp.sin(x) * jnp.sum(x ** 2) + jnp.cumsum(x)
    x = data((5,))
    check_n3(jacfwd(f), x)
    check_n3(jacrev(f), x)
    check_n3(hessian(lambda x: jnp.sum(jnp.tanh(x) * x[::-1])), x)


def test_vmap_of_grad():
    params, x, y = mlp_params([4, 8, 3]), data((7, 4)), labels(7, 3)
    per_example = vmap(grad(lambda p, x, y: cross_entropy(mlp(p, x[None]), y[None])),
                       in_axes=(None, 0, 0))
    check_n3(per_example, params, x, y)
    check_n3(jit(vmap(grad(lambda x: jnp.sum(jnp.sin(x) * jnp.cos(x))))), data((3, 4)))


def custom_program():
    """``(body, loss)``: a checkpointed body over a custom_jvp softplus, and a loss that
    also goes through a custom_vjp gradient clip."""

    @invarax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * lax.logistic(p[0])))

    @invarax.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -0.1, 0.1),))
    body = invarax.checkpoint(lambda x: jnp.sin(softplus(x)) * x)
    return body, lambda x: jnp.sum(body(clip_grad(x)) ** 2)


def test_custom_derivatives_and_checkpoint():
    body, loss = custom_program()
    x = data((6,))
    check_n3(loss, x)
    check_n3(grad(loss), x)
    check_n3(vmap(grad(lambda x: jnp.sum(body(x)))), data((3, 6)))


def test_random_numbers():
    key = random.PRNGKey(3)

    def f(key, x):
        k1, k2 = random.split(key)
        return x * random.normal(k1, x.shape) + random.uniform(k2, x.shape), random.bits(k1)

    check_n3(f, key, data((4, 5)))
    check_n3(lambda x: random.normal(key, (100,)) + x, data((100,)))  # folded draws


def test_nested_jit_and_x64(x64):
    inner = jit(lambda x, y: jnp.exp(x) * y + jnp.exp(x))
    check_n3(lambda x: inner(x, x) + inner(x, x) * inner(2.0 * x, x), data((9,), np.float64))
    check_n3(lambda x: jnp.sum(x.astype(jnp.float32)) + 1.0, data((9,), np.float64))


# ---------------------------------------------------------------------------------------
# Random programs

UNARY = {
    "sin": jnp.sin, "tanh": jnp.tanh, "neg": lambda x: -x, "abs": jnp.abs,
    "exp": lambda x: jnp.exp(jnp.minimum(x, 10.0)), "sqrt": lambda x: jnp.sqrt(jnp.abs(x)),
    "log1p": lambda x: jnp.log1p(jnp.abs(x)), "square": lambda x: x * x,
    "relu": lambda x: jnp.maximum(x, 0.0), "scale": lambda x: 0.5 * x + 1.25,
    "sum0": lambda x: jnp.sum(x, axis=0, keepdims=True) + x,  # reduction, broadcast back
    "max1": lambda x: x - jnp.max(x, axis=1, keepdims=True),
    "mean": lambda x: x * jnp.mean(x),
    "transpose_matmul": lambda x: (x.T @ x)[:1] * x,  # (4,3)@(3,4) -> rows broadcast
    "cumsum": lambda x: jnp.cumsum(x, axis=1),
}
BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply,
    "div": lambda a, b: a / (1.0 + jnp.abs(b)), "max": jnp.maximum,
    "where": lambda a, b: jnp.where(a > b, a, b * 2.0),
    "matmul": lambda a, b: (a @ b.T)[:, :1] * b,  # (3,4)@(4,3)[:, :1] broadcast to (3,4)
}
ROW = {"add_row": lambda a, r: a + r, "mul_row": lambda a, r: a * r}


@st.composite
def programs(draw):
    """A program: a list of instructions ``(op, operand indices)`` over nodes 0, 1 (the
    (3, 4) inputs); node 2 is the (4,) row input. Some instructions repeat earlier ones."""
    steps = []
    n_nodes = 2  # matrix-valued nodes; the row is referenced as "row"
    for _ in range(draw(st.integers(2, 12))):
        if steps and draw(st.integers(0, 3)) == 0:
            steps.append(draw(st.sampled_from(steps)))  # a repeated subexpression
        else:
            kind = draw(st.sampled_from(["unary", "binary", "row"]))
            a = draw(st.integers(0, n_nodes - 1))
            if kind == "unary":
                steps.append((draw(st.sampled_from(sorted(UNARY))), (a,)))
            elif kind == "binary":
                steps.append((draw(st.sampled_from(sorted(BINARY))),
                              (a, draw(st.integers(0, n_nodes - 1)))))
            else:
                steps.append((draw(st.sampled_from(sorted(ROW))), (a,)))
        n_nodes += 1
    outputs = draw(st.lists(st.integers(0, n_nodes - 1), min_size=1, max_size=3))
    return steps, outputs


def run_program(program, x, y, row):
    steps, outputs = program
    nodes = [x, y]
    for op, operands in steps:
        args = [nodes[i] for i in operands]
        if op in UNARY:
            nodes.append(UNARY[op](*args))
        elif op in BINARY:
            nodes.append(BINARY[op](*args))
        else:
            nodes.append(ROW[op](*args, row))
    return tuple(nodes[i] for i in outputs)


@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(), seed=st.integers(0, 2**16))
def test_random_programs(program, seed):
    x, y, row = data((3, 4), seed=seed), data((3, 4), seed=seed + 1), data((4,), seed=seed + 2)
    f = lambda x, y, row: run_program(program, x, y, row)
    check_n3(f, x, y, row)
    traced, optimised = make_jaxpr(f)(x, y, row), make_jaxpr(f, optimize=True)(x, y, row)
    assert len(optimised.eqns) <= len(traced.eqns)
    if len(set(program[0])) < len(program[0]):  # a repeated instruction is computed once
        assert len(optimised.eqns) < len(traced.eqns)


@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(), seed=st.integers(0, 2**16))
def test_random_programs_gradients(program, seed):
    x, y, row = data((3, 4), seed=seed), data((3, 4), seed=seed + 1), data((4,), seed=seed + 2)
    loss = lambda x, y, row: sum(jnp.sum(jnp.sin(o)) for o in run_program(program, x, y, row))
    check_n3(grad(loss, argnums=(0, 1, 2)), x, y, row)
