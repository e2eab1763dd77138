"""Every primitive has its rules: impl, abstract eval, JVP, transpose iff it is linear, and
a CPU lowering.

Exceptions are listed explicitly, each with its reason.
"""

import pytest

import invarax  # noqa: F401  (defines every primitive)
import invarax.module.internal  # noqa: F401  (and Equinox's internal ones)
from invarax.core.lowering import LOWERINGS
from invarax.core.trace import PRIMITIVES, Primitive
from invarax.interpreters import ad


def test_primitives_are_registered():
    for name in (
        "sin",
        "add",
        "dot_general",
        "reduce_sum",
        "broadcast_in_dim",
        "jit",
        "convert_element_type",
        "select_n",
        "gather",
        "scatter-add",
        "sort",
    ):
        assert name in PRIMITIVES, name


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_has_impl_and_abstract_eval(name):
    prim = PRIMITIVES[name]
    assert callable(prim.impl), f"{name} has no impl rule"
    assert callable(prim.abstract_eval), f"{name} has no abstract-eval rule"


def test_primitive_names_are_unique():
    with pytest.raises(ValueError, match="exists already"):
        Primitive("sin")


# ---------------------------------------------------------------------------------------
# Differentiation rules: a JVP rule for every primitive, a transpose rule iff it is linear.

# Primitives without a JVP rule by design, with the reason.
NO_JVP = {
    "iota": "no operands: nothing to differentiate",
    "axis_index": "no operands: the position along a named axis",
    "while_grad": "the backward pass of checkpointed_while_loop (reverse over reverse: not yet)",
    "checkpointed_while": "the forward pass of checkpointed_while_loop's reverse mode (a "
                          "custom_vjp: forward mode raises, as Equinox's)",
    "eig": "forward only (issue 16 scopes jnp.linalg.eig as JAX's CPU eig, undifferentiated)",
    "qr_raw": "forward only, as JAX's qr(mode='raw') (LAPACK's Householder form)",
}

# Primitives whose JVP rule gives a zero tangent whatever the input (ad.defjvp_zero):
# their outputs are integers or booleans, or piecewise constant in the inputs.
ZERO_DERIVATIVE = {
    **dict.fromkeys(["eq", "ne", "lt", "le", "gt", "ge", "is_finite"], "boolean output"),
    **dict.fromkeys(["and", "or", "xor", "not", "reduce_and", "reduce_or"], "integer/bool only"),
    **dict.fromkeys(["argmax", "argmin"], "integer output"),
    **dict.fromkeys(["shift_left", "shift_right_logical"], "integer only"),
    **dict.fromkeys(["sign", "floor", "ceil", "round"], "piecewise constant"),
    "nextafter": "a zero tangent by convention (JAX has no rule; its slope in x is 1)",
    "bitcast_convert_type": "reinterpreted bits have no derivative (JAX's rule is zero)",
}

# Primitives whose JVP rule is being written (their xfail turns into a pass when it lands).
AWAITING_JVP = {}

# Primitives linear in (some of) their operands: they, and only they, have a transpose rule.
LINEAR = {
    "add": "",
    "pvary": "",
    "sub": "",
    "neg": "",
    "mul": "bilinear: linear in either operand when the other is known",
    "div": "in its numerator",
    "convert_element_type": "",
    "select_n": "in its cases, not in the predicate",
    "real": "",
    "imag": "",
    "conj": "",
    "broadcast_in_dim": "",
    "reshape": "",
    "transpose": "",
    "squeeze": "",
    "rev": "",
    "concatenate": "",
    "pad": "in the operand and the padding value together",
    "slice": "",
    "dynamic_slice": "in the operand, not the start indices",
    "dynamic_update_slice": "in operand and update together",
    "gather": "in the operand",
    "scatter-add": "in operand and updates together",
    "scatter": "in operand and updates together (the overwritten entries drop out)",
    "scatter-mul": "in the operand, for fixed updates",
    "reduce_sum": "",
    "cumsum": "",
    "dot_general": "bilinear",
    "conv_general_dilated": "bilinear",
    "reduce_window_sum": "",
    "select_and_gather_add": "in the tangent, for a fixed operand that selects",
    "select_and_scatter_add": "in the source, for a fixed operand that selects",
    "custom_lin": "the linear part of a custom_vjp",
    "psum": "a sum over a named axis",
    "sharding_constraint": "the identity (where the value lives, not what it is)",
    "all_gather": "a concatenation over a named axis",
    "triangular_solve": "in b, not in the triangular matrix a",
    "fft": "",
    "ppermute": "a movement between the members of a named axis",
    "psum_scatter": "a sum over a named axis, then a block of it",
    "all_to_all": "a movement between the members of a named axis",
    "nondifferentiable_backward": "the identity; its transpose raises if a cotangent flows",
    "announce_jaxpr": "the identity (Equinox's announce_transform), announcing each step",
}

# Call-like primitives: linear when their body is; a transpose rule is allowed, not required.
CALL_LIKE = {"jit", "checkpoint", "custom_jvp_call", "custom_vjp_call",
             "cond", "scan", "while",  # control flow: while's rule raises JAX's clear error
             "noinline", "vprim"}  # Equinox's: a function's rules applied inside the call

# Linear primitives whose transpose rule is being written.
AWAITING_TRANSPOSE = {}


def _rule_params(awaiting):
    """Every primitive; those in ``awaiting`` (still without the rule) as xfail."""
    return [
        pytest.param(
            name,
            marks=pytest.mark.xfail(
                strict=False, reason=f"rule not yet written ({awaiting[name]})"
            ),
        )
        if name in awaiting
        else name
        for name in sorted(PRIMITIVES)
    ]


@pytest.mark.parametrize("name", _rule_params(AWAITING_JVP))
def test_every_primitive_has_a_jvp_rule(name):
    prim = PRIMITIVES[name]
    if name in NO_JVP:
        assert prim not in ad.jvp_rules, f"{name} has a JVP rule: remove it from NO_JVP"
        return
    assert prim in ad.jvp_rules, (
        f"{name} has no JVP rule: write one (ad.defjvp_zero if its output does not depend "
        "differentiably on its inputs) or list it in NO_JVP with the reason"
    )


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_zero_jvp_rules_are_listed(name):
    rule = ad.jvp_rules.get(PRIMITIVES[name])
    if rule is None:
        return
    is_zero = rule.__qualname__.startswith("defjvp_zero.")
    if name in ZERO_DERIVATIVE:
        assert is_zero, f"{name} is listed in ZERO_DERIVATIVE but its JVP rule is not defjvp_zero"
    else:
        assert not is_zero, (
            f"{name} has a zero JVP rule: list it in ZERO_DERIVATIVE with the reason, or give "
            "it its derivative"
        )


@pytest.mark.parametrize("name", _rule_params(AWAITING_TRANSPOSE))
def test_transpose_rule_iff_linear(name):
    prim = PRIMITIVES[name]
    if name in CALL_LIKE:
        return
    if name in LINEAR:
        assert prim in ad.transpose_rules, f"{name} is linear but has no transpose rule"
    else:
        assert prim not in ad.transpose_rules, (
            f"{name} has a transpose rule but is not linear: remove the rule, or, if it is "
            "linear in some operands, add it to LINEAR with a note saying which"
        )


# ---------------------------------------------------------------------------------------
# Lowering: a CPU rule in the lowering table (core/lowering.py) for every primitive.

@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_has_a_cpu_lowering(name):
    prim = PRIMITIVES[name]
    assert prim in LOWERINGS["cpu"], (
        f"{name} has no CPU lowering: call core.lowering.register_lowering({name}_p, ...) "
        "under its other rules")
    assert LOWERINGS["cpu"][prim].impl is prim.impl, (
        f"{name}'s CPU lowering calls another function than its impl: jit would not give "
        "eager's bits")


def test_rule_lists_name_primitives():
    named = set(NO_JVP) | set(AWAITING_JVP) | set(AWAITING_TRANSPOSE) | set(ZERO_DERIVATIVE)
    named |= CALL_LIKE | set(LINEAR)
    assert named <= set(PRIMITIVES), named - set(PRIMITIVES)
    assert set(AWAITING_TRANSPOSE) <= set(LINEAR)
    assert not set(NO_JVP) & set(AWAITING_JVP)
