"""``jit`` under grad, jvp, linearize and vmap stays a compiled call (as JAX keeps ``pjit``).

- structure: the JVP of a jitted call is a ``jit`` of the JVP'd body; under linearize it
  splits into a known call (primal outputs and residuals, run compiled at once) and a
  staged call of the tangent part, transposed into a ``jit`` of the backward pass;
  under vmap it is a ``jit`` of the batched body;
- N3: ``grad(jit(f))`` is bitwise ``grad(f)`` and ``jit(grad(f))``, and likewise for
  jvp, vjp, linearize, jacfwd, jacrev, hessian, vmap, nesting, static arguments,
  pytrees and custom derivatives or checkpoint inside the jitted function;
- the order of cotangent sums: where a value is used inside and outside a jitted call,
  its gradient is bitwise that of the function without the ``jit`` (the transposed call
  adds to the cotangent already accumulated, as the body inlined would);
- symbolic zeros (integer and unused inputs, constant outputs) and errors.
"""

import numpy as np
import pytest
from helpers import assert_bitwise, data
from test_jit_invariance import (
    cross_entropy,
    custom_program,
    labels,
    layer_norm,
    log_softmax,
    mlp,
    mlp_params,
)

import invarax
import invarax.numpy as jnp
from invarax import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    lax,
    linearize,
    make_jaxpr,
    value_and_grad,
    vjp,
    vmap,
)
from invarax.compiler.jit import jit_p
from invarax.core.trace import EVAL_TRACE
from invarax.interpreters import ad


def leaves_equal(a, b):
    la, lb = invarax.tree_leaves(a), invarax.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb, strict=True):
        assert_bitwise(x, y)
        assert x.dtype == y.dtype and x.weak_type == y.weak_type


def check_grads(f, *args, argnums=0):
    """``grad(jit(f))``, ``grad(f)`` and ``jit(grad(f))``: all bitwise equal."""
    want = grad(f, argnums=argnums)(*args)
    leaves_equal(grad(jit(f), argnums=argnums)(*args), want)
    leaves_equal(jit(grad(f, argnums=argnums))(*args), want)
    leaves_equal(jit(grad(jit(f), argnums=argnums))(*args), want)
    return want


def count_eager_binds(monkeypatch, fun, *args):
    """The primitives ``fun(*args)`` binds eagerly, by name."""
    counts = {}
    process = type(EVAL_TRACE).process_primitive

    def counting(primitive, vals, params):
        counts[primitive.name] = counts.get(primitive.name, 0) + 1
        return process(EVAL_TRACE, primitive, vals, params)

    monkeypatch.setattr(EVAL_TRACE, "process_primitive", counting, raising=False)
    out = fun(*args)
    monkeypatch.undo()
    return out, counts


# ---------------------------------------------------------------------------------------
# Structure


def test_grad_of_jit_is_a_known_call_and_a_transposed_call():
    f = jit(lambda x: jnp.sin(x) * x)
    text = str(make_jaxpr(grad(lambda x: jnp.sum(f(x))))(jnp.ones(3)))
    assert text.count("jit[") == 2
    assert "sin a" in text and "cos a" in text  # the known call: primal and residuals
    closed = make_jaxpr(grad(lambda x: jnp.sum(f(x))))(jnp.ones(3))
    known, backward = [e for e in closed.eqns if e.primitive.name == "jit"]
    # known: x -> (sin(x) * x, sin x, cos x); the input is forwarded, not returned
    assert [str(a.str_short()) for a in known.params["jaxpr"].out_avals] == ["f32[3]"] * 3
    assert known.invars[0] in backward.invars
    assert {e.primitive.name for e in backward.params["jaxpr"].eqns} == {"mul", "add"}


def test_jvp_and_vmap_of_jit_are_calls():
    f = jit(lambda x: jnp.sin(x) * x)
    x = jnp.ones(3)
    jvp_text = str(make_jaxpr(lambda x: jvp(f, (x,), (x,)))(x))
    assert jvp_text.count("jit[") == 1 and "cos" in jvp_text
    vmap_jaxpr = make_jaxpr(vmap(f))(jnp.ones((2, 3)))
    (eqn,) = vmap_jaxpr.eqns
    assert eqn.primitive.name == "jit"
    assert eqn.params["jaxpr"].in_avals[0].shape == (2, 3)


def test_residuals_are_minimal():
    # The tangent of a long chain of additions needs no residual at all; of exp, its output.
    f = jit(lambda x: jnp.exp(x + 1.0) + 2.0 + x)
    _, f_lin = linearize(f, jnp.ones(4))
    (eqn,) = [e for e in f_lin.jaxpr.eqns if e.primitive.name == "jit"]
    staged = eqn.params["jaxpr"]
    assert len(staged.in_avals) == 2  # exp's output and the tangent
    assert len(f_lin.jaxpr.consts) == 1


def test_under_grad_the_work_runs_compiled(monkeypatch):
    def chain(x):
        for i in range(30):
            x = jnp.tanh(x * 1.5 + 0.5) - jnp.sin(x * float(i))
        return jnp.sum(x)

    x = data((64,))
    _, eager = count_eager_binds(monkeypatch, grad(chain), x)
    _, jitted = count_eager_binds(monkeypatch, grad(jit(chain)), x)
    assert sum(eager.values()) > 200
    assert jitted.get("jit") == 2  # the known call and the transposed tangent call
    assert sum(jitted.values()) <= 6
    _, lin = count_eager_binds(monkeypatch, lambda x: linearize(jit(chain), x), x)
    assert lin == {"jit": 1}  # only the known part runs now; the tangent part is staged
    _, batched = count_eager_binds(monkeypatch, vmap(jit(chain)), data((3, 64)))
    assert batched == {"jit": 1}


def test_derived_programs_are_cached():
    f = jit(lambda x: jnp.sum(jnp.sin(x) * x))
    g = grad(f)
    x = jnp.ones(5)
    g(x)
    before = str(make_jaxpr(g)(x))
    a, b = make_jaxpr(g)(x), make_jaxpr(g)(x)
    assert str(a) == before
    jaxprs = lambda c: [e.params["jaxpr"] for e in c.eqns if e.primitive.name == "jit"]
    assert all(p is q for p, q in zip(jaxprs(a), jaxprs(b), strict=True))


# ---------------------------------------------------------------------------------------
# N3: bitwise equalities


def test_mlp_step():
    params, x, y = mlp_params([20, 32, 32, 10]), jnp.asarray(data((16, 20))), jnp.asarray(
        labels(16, 10))
    loss = lambda p, x, y: cross_entropy(mlp(p, x), y)
    check_grads(loss, params, x, y)
    want = value_and_grad(loss)(params, x, y)
    leaves_equal(value_and_grad(jit(loss))(params, x, y), want)


def test_softmax_layer_norm_15736_and_chains():
    logits, y = jnp.asarray(data((8, 10))), jnp.asarray(labels(8, 10))
    check_grads(cross_entropy, logits, y)
    check_grads(lambda z: jnp.sum(jnp.exp(log_softmax(z))), logits)
    x, gamma, beta = jnp.asarray(data((6, 16))), jnp.asarray(data((16,), seed=1)), jnp.asarray(
        data((16,), seed=2))
    check_grads(lambda x, g, b: jnp.sum(jnp.sin(layer_norm(x, g, b))), x, gamma, beta,
                argnums=(0, 1, 2))

    def expr(x1, x2):
        return jnp.sum((x1 / x2 - jnp.exp(x2)) * (jnp.sin(x1 / x2) + x1 / x2 - jnp.exp(x2)))

    check_grads(expr, jnp.asarray(data((1000,))), jnp.asarray(data((1000,), seed=1)),
                argnums=(0, 1))

    def chain(x, y):
        for i in range(40):
            x = jnp.tanh(x * y + 0.5) - jnp.exp(-x) / (1.0 + y * y) + jnp.sin(x * float(i))
        return jnp.sum(x)

    check_grads(chain, jnp.asarray(data((257,))), jnp.asarray(data((257,), seed=1)),
                argnums=(0, 1))


def test_jvp_vjp_linearize():
    f = lambda x, y: (jnp.sin(x) * y, jnp.cumsum(x * x))
    x, y, t = jnp.asarray(data((5,))), jnp.asarray(data((5,), seed=1)), jnp.asarray(
        data((5,), seed=2))
    leaves_equal(jvp(jit(f), (x, y), (t, t)), jvp(f, (x, y), (t, t)))
    leaves_equal(jit(lambda *a: jvp(f, a[:2], a[2:]))(x, y, t, t), jvp(f, (x, y), (t, t)))
    out, f_vjp = vjp(jit(f), x, y)
    out2, f_vjp2 = vjp(f, x, y)
    leaves_equal(out, out2)
    leaves_equal(f_vjp((t, t)), f_vjp2((t, t)))
    out, f_lin = linearize(jit(f), x, y)
    out2, f_lin2 = linearize(f, x, y)
    leaves_equal(out, out2)
    leaves_equal(f_lin(t, x), f_lin2(t, x))


def test_jacobians_and_hessian():
    f = lambda x: jnp.sin(x) * jnp.sum(x ** 2) + jnp.cumsum(x)
    x = jnp.asarray(data((5,)))
    for transform in (jacfwd, jacrev):
        want = transform(f)(x)
        leaves_equal(transform(jit(f))(x), want)
        leaves_equal(jit(transform(f))(x), want)
    h = lambda x: jnp.sum(jnp.tanh(x) * x[::-1])
    want = hessian(h)(x)
    leaves_equal(hessian(jit(h))(x), want)
    leaves_equal(jit(hessian(h))(x), want)
    s = lambda x: jnp.sin(x) * jnp.exp(x)
    leaves_equal(grad(grad(jit(s)))(0.7), grad(grad(s))(0.7))
    leaves_equal(grad(jit(grad(jit(s))))(0.7), grad(grad(s))(0.7))


def test_nested_jit():
    inner = jit(lambda x, y: jnp.exp(x) * y + jnp.exp(x))
    f = lambda x: jnp.sum(inner(x, x) + inner(x, x) * inner(2.0 * x, x))
    x = jnp.asarray(data((9,)))
    check_grads(f, x)
    outer = jit(lambda x: jnp.sum(jit(lambda x: jnp.sin(jit(jnp.cos)(x)))(x) * x))
    leaves_equal(grad(outer)(x), jit(grad(outer))(x))
    leaves_equal(grad(outer)(x), grad(lambda x: jnp.sum(jnp.sin(jnp.cos(x)) * x))(x))


def test_vmap_of_jit_and_jit_inside_vmap_of_grad():
    f = lambda x, w: jnp.tanh(x @ w) * x[:3]
    xs, w = jnp.asarray(data((7, 4))), jnp.asarray(data((4, 3), seed=1))
    want = vmap(f, in_axes=(0, None))(xs, w)
    leaves_equal(vmap(jit(f), in_axes=(0, None))(xs, w), want)
    leaves_equal(jit(vmap(f, in_axes=(0, None)))(xs, w), want)
    for i in range(7):
        assert_bitwise(want[i], f(xs[i], w))
    leaves_equal(vmap(jit(f), in_axes=(1, None), out_axes=1)(xs.T, w),
                 vmap(f, in_axes=(1, None), out_axes=1)(xs.T, w))
    params, x, y = mlp_params([4, 8, 3]), jnp.asarray(data((7, 4))), jnp.asarray(labels(7, 3))
    loss = lambda p, x, y: cross_entropy(mlp(p, x[None]), y[None])
    want = vmap(grad(loss), in_axes=(None, 0, 0))(params, x, y)
    leaves_equal(vmap(grad(jit(loss)), in_axes=(None, 0, 0))(params, x, y), want)
    leaves_equal(jit(vmap(grad(jit(loss)), in_axes=(None, 0, 0)))(params, x, y), want)
    leaves_equal(grad(lambda p: jnp.sum(vmap(jit(loss), in_axes=(None, 0, 0))(p, x, y)))(params),
                 grad(lambda p: jnp.sum(vmap(loss, in_axes=(None, 0, 0))(p, x, y)))(params))


def test_collective_inside_jit_under_vmap():
    f = lambda x: jnp.sin(x) - lax.psum(x, "i") / 3.0
    xs = jnp.asarray(data((4, 3)))
    want = vmap(grad(lambda x: jnp.sum(f(x))), axis_name="i")(xs)
    leaves_equal(vmap(grad(lambda x: jnp.sum(jit(f)(x))), axis_name="i")(xs), want)


def test_static_arguments_and_pytrees():
    def f(tree, n, *, scale):
        a, (b, c) = tree["a"], tree["bc"]
        for _ in range(n):
            a = jnp.sin(a) * b + c
        return {"out": jnp.sum(a * scale), "aux": b}

    tree = {"a": jnp.asarray(data((4,))), "bc": (jnp.asarray(data((4,), seed=1)), 2.0)}
    g = lambda t: f(t, 3, scale=0.5)["out"]
    gj = lambda t: jit(f, static_argnums=1, static_argnames="scale")(t, 3, scale=0.5)["out"]
    want = grad(g)(tree)
    leaves_equal(grad(gj)(tree), want)
    leaves_equal(jit(grad(g))(tree), want)
    fj = jit(f, static_argnums=1, static_argnames="scale")
    leaves_equal(jvp(lambda t: fj(t, 3, scale=0.5), (tree,), (tree,)),
                 jvp(lambda t: f(t, 3, scale=0.5), (tree,), (tree,)))


def test_custom_derivatives_and_checkpoint_inside_jit():
    body, loss = custom_program()
    x = jnp.asarray(data((6,)))
    check_grads(loss, x)
    want = vmap(grad(lambda x: jnp.sum(body(x))))(jnp.asarray(data((3, 6))))
    leaves_equal(vmap(grad(jit(lambda x: jnp.sum(body(x)))))(jnp.asarray(data((3, 6)))), want)


def test_jit_inside_checkpoint_and_custom_jvp():
    inner = jit(lambda x: jnp.exp(jnp.sin(x)) * x)
    body = invarax.checkpoint(lambda x: jnp.cos(inner(x)) + inner(x * 2.0))
    f = lambda x: jnp.sum(body(x) ** 2)
    x = jnp.asarray(data((6,)))
    want = grad(f)(x)
    leaves_equal(jit(grad(f))(x), want)
    leaves_equal(grad(jit(f))(x), want)
    leaves_equal(jvp(f, (x,), (x,)), jvp(jit(f), (x,), (x,)))

    @invarax.custom_jvp
    def g(x):
        return inner(x)

    g.defjvp(lambda p, t: (g(p[0]), inner(p[0]) * t[0]))
    h = lambda x: jnp.sum(jnp.tanh(g(x)))
    leaves_equal(grad(jit(h))(x), grad(h)(x))
    leaves_equal(jit(grad(h))(x), grad(h)(x))


# ---------------------------------------------------------------------------------------
# The order of cotangent sums: a value used inside and outside a call


def summed_first_differs(acc, c1, c2):
    """Whether ``acc + (c1 + c2)`` and ``(acc + c1) + c2`` differ somewhere (float32)."""
    acc, c1, c2 = (np.asarray(a, np.float32) for a in (acc, c1, c2))
    return not np.array_equal(acc + (c1 + c2), (acc + c1) + c2)


def test_the_data_tells_the_summation_orders_apart():
    # x's contributions in k(x) = sin(x) * x + exp(0.3 x) under sum(k(x) * cos(x)):
    # c1 = w * sin(x) (from the product's right operand), c2 = (w * x) * cos(x) + 0.3 w e
    # (the rest); acc = 3.4 x (from sum(1.7 x * x), after the call).
    x = np.asarray(data((64,), seed=3)) * np.float32(3)
    w = np.cos(x)
    c1 = w * np.sin(x)
    c2 = (w * x) * np.cos(x) + (w * np.exp(x * np.float32(0.3))) * np.float32(0.3)
    acc = x * np.float32(1.7) + np.float32(1.7) * x
    assert summed_first_differs(acc, c1, c2)


X = jnp.asarray(data((64,), seed=3) * np.float32(3))
Y = jnp.asarray(data((64,), seed=4) * np.float32(3))


def k(x):
    return jnp.sin(x) * x + jnp.exp(x * 0.3)


def k2(x, y):
    return jnp.sin(y) * x + y * jnp.exp(x * 0.3) - x * x


# Each program takes the inner function ``f`` (jitted or not) and uses x 2 to 4 times,
# inside and outside the call, in several orders.
PROGRAMS = {
    "after": lambda f: lambda x: jnp.sum(f(x) * jnp.cos(x)) + jnp.sum(x * x * 1.7),
    "before": lambda f: lambda x: jnp.sum(jnp.tanh(x * 1.3) * f(x)),
    "before_and_after": lambda f: lambda x: jnp.sum(
        (x * 0.7) * f(x) + jnp.sin(x) * 2.1 + x * x),
    "twice_in_two_calls": lambda f: lambda x: jnp.sum(f(x) * f(x * 1.5) + x * 4.3),
    "two_args": lambda f: lambda x: jnp.sum(jnp.exp(x * 0.2) * (
        jnp.sum(x * x) + k2f(f)(x, x * 0.9)) + x),
    "deep": lambda f: lambda x: jnp.sum(jnp.tanh(f(jnp.sin(f(x)) + x)) * x + x * 0.3),
}


def k2f(f):
    return jit(k2) if isinstance(f, invarax.compiler.jit.Jitted) else k2


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_with_and_without_an_inner_jit(name):
    prog = PROGRAMS[name]
    want = grad(prog(k))(X)
    got = grad(prog(jit(k)))(X)
    assert np.array_equal(got, want)
    assert np.array_equal(jit(grad(prog(jit(k))))(X), want)
    assert np.array_equal(grad(jit(prog(jit(k))))(X), want)


def test_the_old_order_differs_on_this_data(monkeypatch):
    # Without the accumulating rule (the call's cotangents summed first, then added),
    # the gradients differ: the tests above can fail.
    prog = PROGRAMS["after"]
    want = grad(prog(k))(X)
    monkeypatch.delitem(ad.accumulating_transpose_rules, jit_p)
    assert not np.array_equal(grad(prog(jit(k)))(X), want)


@pytest.mark.parametrize("name", ["after", "before_and_after", "deep"])
def test_vjp_and_jacrev_with_and_without_an_inner_jit(name):
    prog = PROGRAMS[name]
    vec = lambda f: lambda x: prog(f)(x) * x[:5]  # a vector output: x used once more
    for transform in (jacrev,):
        assert np.array_equal(transform(vec(jit(k)))(X), transform(vec(k))(X))
    out, f_vjp = vjp(vec(jit(k)), X)
    out2, f_vjp2 = vjp(vec(k), X)
    assert np.array_equal(out, out2)
    ct = jnp.asarray(data((5,), seed=5))
    (a,), (b,) = f_vjp(ct), f_vjp2(ct)
    assert np.array_equal(a, b)


def test_nested_jit_threads_the_accumulators():
    inner = lambda x, y: jnp.sin(x) * y + x * 1.1
    body = lambda f: lambda x, y: f(x * y, x) * jnp.cos(x) + jnp.exp(f(y, x) * 0.1) + y * x
    outer = lambda f, b: lambda x: jnp.sum(b(f)(x, X) * x + jnp.tanh(x) * 2.5)
    want = grad(outer(inner, body))(Y)
    assert np.array_equal(grad(outer(jit(inner), body))(Y), want)
    assert np.array_equal(grad(outer(inner, lambda f: jit(body(f))))(Y), want)
    assert np.array_equal(grad(outer(jit(inner), lambda f: jit(body(f))))(Y), want)
    assert np.array_equal(jit(grad(outer(jit(inner), lambda f: jit(body(f)))))(Y), want)


def test_the_same_value_passed_twice():
    f = lambda a, b: jnp.sin(b) * a + b * jnp.exp(a * 0.3) - a * a
    for g in (lambda f: lambda x: jnp.sum(f(x, x) * jnp.cos(x) + x * 1.7),
              lambda f: lambda x: jnp.sum(x * 2.3 * f(x, x)),
              lambda f: lambda x: jnp.sum(f(x, x * 1.3) + f(x * 1.3, x) * x)):
        want = grad(g(f))(X)
        assert np.array_equal(grad(g(jit(f)))(X), want)
        assert np.array_equal(jit(grad(g(jit(f))))(X), want)
    # three arguments, the first and last the same; one unused
    h = lambda a, b, c, d: jnp.sin(c) * a + b * jnp.exp(c * 0.3) + a * 1.9
    g = lambda f: lambda x, y: jnp.sum(f(x, y, x, y) * x + y * x)
    want = grad(g(h), argnums=(0, 1))(X, Y)
    got = grad(g(jit(h)), argnums=(0, 1))(X, Y)
    for a, b in zip(got, want, strict=True):
        assert np.array_equal(a, b)


def test_an_input_returned_as_it_is():
    # The call's output is x itself: its uses add to x's accumulator where they are.
    f = lambda a: (a, jnp.sin(a) * a)
    g = lambda f: lambda x: jnp.sum(f(x)[0] * jnp.cos(x) + x * 1.7 + f(x)[1] * x
                                    + f(x)[0] * 2.9)
    want = grad(g(f))(X)
    for wrapped in (jit(f), jit(lambda x: jit(f)(x)), invarax.checkpoint(f),
                    jit(invarax.checkpoint(f))):
        assert np.array_equal(grad(g(wrapped))(X), want)
    assert np.array_equal(jit(grad(g(jit(f))))(X), want)


def test_literals_and_python_scalars_as_call_inputs():
    f = jit(lambda a, b, c: jnp.sin(a) * b + c * a)
    g = lambda f: lambda x: jnp.sum(f(x, 2.0, x) * x + x * 3.1)
    assert np.array_equal(grad(g(f))(X), grad(g(f.__wrapped__))(X))


def test_jit_and_checkpoint_around_part_of_a_function():
    body = lambda x: jnp.cos(jit(k)(x)) * x + k(x * 2.0)
    body_inline = lambda x: jnp.cos(k(x)) * x + k(x * 2.0)
    g = lambda b: lambda x: jnp.sum(b(x) * jnp.sin(x) + x * x * 0.6)
    want = grad(g(body_inline))(X)
    assert np.array_equal(grad(g(body))(X), want)
    assert np.array_equal(grad(g(invarax.checkpoint(body_inline)))(X), want)
    assert np.array_equal(grad(g(invarax.checkpoint(body)))(X), want)
    assert np.array_equal(grad(g(jit(invarax.checkpoint(body))))(X), want)
    assert np.array_equal(jit(grad(g(invarax.checkpoint(body))))(X), want)


def test_the_backward_pass_is_still_one_call_taking_the_accumulator():
    g = PROGRAMS["after"](jit(k))
    closed = make_jaxpr(grad(g))(X)
    known, backward = [e for e in closed.eqns if e.primitive.name == "jit"]
    assert known.params["jaxpr"].eqns[0].primitive.name == "sin"
    # the backward call's last input is x's accumulator (from sum(x * x * 1.7)), its one
    # output the final gradient
    assert len(backward.outvars) == 1
    assert backward.outvars[0] is closed.jaxpr.outvars[0]
    assert backward.invars[-1] in [v for e in closed.eqns if e is not backward
                                   for v in e.outvars]
    assert {e.primitive.name for e in backward.params["jaxpr"].eqns} == {"mul", "add"}
    # nothing accumulated before the call: no accumulator input
    closed = make_jaxpr(grad(lambda x: jnp.sum(jit(k)(x))))(X)
    backward = [e for e in closed.eqns if e.primitive.name == "jit"][-1]
    n_in = len(backward.params["jaxpr"].in_avals)
    closed2 = make_jaxpr(grad(PROGRAMS["before"](jit(k))))(X)
    backward2 = [e for e in closed2.eqns if e.primitive.name == "jit"][-1]
    assert len(backward2.params["jaxpr"].in_avals) == n_in  # x used before: none either


def test_derived_transposes_are_cached_by_the_accumulators_present():
    kj = jit(k)
    with_acc, without = PROGRAMS["after"](kj), lambda x: jnp.sum(kj(x) * 2.0)
    body = lambda g: [e for e in make_jaxpr(grad(g))(X).eqns
                      if e.primitive.name == "jit"][-1].params["jaxpr"]
    a, b = body(with_acc), body(without)
    assert len(a.in_avals) == len(b.in_avals) + 1
    assert body(with_acc) is a and body(without) is b


# ---------------------------------------------------------------------------------------
# Symbolic zeros


def test_integer_and_unused_inputs():
    f = jit(lambda x, n, unused: jnp.sin(x) * n)
    x, n, u = jnp.asarray(data((3,))), jnp.arange(3), jnp.ones(3)
    want = grad(lambda x, u: jnp.sum(jnp.sin(x) * n), argnums=(0, 1))(x, u)
    got = grad(lambda x, u: jnp.sum(f(x, n, u)), argnums=(0, 1))(x, u)
    leaves_equal(got, want)
    assert_bitwise(got[1], np.zeros(3, np.float32))
    # jvp with a zero tangent for the unused input: only x's tangent is an input of the call
    closed = make_jaxpr(lambda x, t: jvp(lambda x: f(x, n, u), (x,), (t,)))(x, x)
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "jit"]
    assert len(eqn.invars) == 4  # x, n, unused and the one tangent


def test_outputs_without_a_derivative():
    f = jit(lambda x: (jnp.sin(x), jnp.ones(3) * 2.0, jnp.argmax(x), lax.stop_gradient(x)))
    x = jnp.asarray(data((3,)))
    primals, tangents = jvp(f, (x,), (x,))
    leaves_equal(primals, f(x))
    assert_bitwise(tangents[1], np.zeros(3, np.float32))
    assert_bitwise(tangents[3], np.zeros(3, np.float32))
    leaves_equal(grad(lambda x: jnp.sum(f(x)[0] + f(x)[1] + f(x)[3]))(x), jnp.cos(x))
    # only the unused output gets a cotangent: the transposed call gets nothing
    leaves_equal(grad(lambda x: jnp.sum(f(x)[1]))(x), jnp.zeros(3))


def test_function_of_no_differentiated_input():
    c = jnp.asarray(data((3,)))
    f = jit(lambda x, c: jnp.sum(jnp.sin(c)) + x * 0.0)
    leaves_equal(grad(f)(1.5, c), grad(lambda x, c: jnp.sum(jnp.sin(c)) + x * 0.0)(1.5, c))


# ---------------------------------------------------------------------------------------
# Errors


def test_leaked_tracer_from_a_jitted_function_under_grad():
    stash = []

    @jit
    def f(x):
        stash.append(x)
        return jnp.sin(x)

    grad(f)(1.0)
    with pytest.raises(invarax.UnexpectedTracerError, match="unexpected tracer"):
        jnp.cos(stash[0])
    with pytest.raises(invarax.UnexpectedTracerError):
        grad(lambda x: f(x) * stash[0])(2.0)


def test_forward_mode_of_custom_vjp_inside_jit_still_raises():
    @invarax.custom_vjp
    def h(x):
        return jnp.sin(x)

    h.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (g * jnp.cos(x),))
    x = jnp.asarray(data((3,)))
    with pytest.raises(TypeError):
        jvp(h, (x,), (x,))
    with pytest.raises(TypeError):
        jvp(jit(h), (x,), (x,))
    leaves_equal(grad(lambda x: jnp.sum(jit(h)(x)))(x), grad(lambda x: jnp.sum(h(x)))(x))
