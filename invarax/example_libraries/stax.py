"""``invarax.example_libraries.stax``: JAX's ``jax.example_libraries.stax``.

A layer is ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns the output
shape and the parameters, ``apply_fun(params, inputs, **kwargs)`` the outputs (``rng=`` a
key, for ``Dropout``); ``serial`` and ``parallel`` combine layers. JAX's initialisers
(JAX's bits for the same key) and formulas.

Example:
    >>> import invarax
    >>> init, apply = serial(Dense(4), Relu, Dense(1))
    >>> out_shape, params = init(invarax.random.key(0), (-1, 3))
    >>> out_shape, apply(params, invarax.numpy.ones((2, 3))).shape
    ((-1, 1), (2, 1))
"""

from __future__ import annotations

import functools
import math

from .. import lax, random
from .. import numpy as jnp
from ..core.aval import ShapeDtypeStruct
from ..nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from ..nn.initializers import glorot_normal, normal, ones, zeros
from ..transforms import eval_shape


def _shape_of(fun, *shapes):
    """The output shape of ``fun`` on float32 inputs of ``shapes``; a leading batch size of
    -1 (unknown) in the first stays -1."""
    out = eval_shape(fun, *(ShapeDtypeStruct([1 if d == -1 else d for d in s], jnp.float32)
                            for s in shapes)).shape
    return (-1, *out[1:]) if shapes[0][0] == -1 else tuple(out)


_GLOROT_NORMAL, _NORMAL, _NORMAL_SMALL = glorot_normal(), normal(), normal(1e-6)


def Dense(out_dim, W_init=_GLOROT_NORMAL, b_init=_NORMAL):  # noqa: N802, N803 (JAX's names)
    """A fully connected layer: ``inputs @ W + b``."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        return (*input_shape[:-1], out_dim), (W_init(k1, (input_shape[-1], out_dim)),
                                              b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        w, b = params
        return jnp.dot(inputs, w) + b

    return init_fun, apply_fun


def _general_conv(transpose, dimension_numbers, out_chan, filter_shape, strides=None,
                  padding="VALID", W_init=None, b_init=_NORMAL_SMALL):  # noqa: N803
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def conv(inputs, w):
        if transpose:
            return lax.conv_transpose(inputs, w, strides, padding,
                                      dimension_numbers=dimension_numbers)
        return lax.conv_general_dilated(inputs, w, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers)

    def init_fun(rng, input_shape):
        sizes = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
                        else next(sizes) for c in rhs_spec]
        k1, k2 = random.split(rng)
        w = W_init(k1, kernel_shape)
        b = b_init(k2, [out_chan if c == "C" else 1 for c in out_spec])
        return _shape_of(conv, input_shape, kernel_shape), (w, b)

    def apply_fun(params, inputs, **kwargs):
        w, b = params
        return conv(inputs, w) + b

    return init_fun, apply_fun


GeneralConv = functools.partial(_general_conv, False)
GeneralConvTranspose = functools.partial(_general_conv, True)
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,  # noqa: N802
              gamma_init=ones):
    """Normalise over ``axis`` (batch statistics), then scale by ``gamma`` and shift by ``beta``."""
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        return input_shape, (beta_init(k1, shape) if center else (),
                             gamma_init(k2, shape) if scale else ())

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        return gamma[ed] * z if scale else z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A layer applying ``fun(inputs, **fun_kwargs)``, without parameters."""
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh, Relu, Exp = elementwise(jnp.tanh), elementwise(relu), elementwise(jnp.exp)
LogSoftmax, Softmax = elementwise(log_softmax, axis=-1), elementwise(softmax, axis=-1)
Softplus, Sigmoid, Elu = elementwise(softplus), elementwise(sigmoid), elementwise(elu)
LeakyRelu, Selu, Gelu = elementwise(leaky_relu), elementwise(selu), elementwise(gelu)


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        strides = strides or (1,) * len(window_shape)
        dims, steps = tuple(window_shape), tuple(strides)
        non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"),
                                                                       spec.index("C"))
        for i in sorted(non_spatial):
            dims, steps = dims[:i] + (1,) + dims[i:], steps[:i] + (1,) + steps[i:]

        def pool(inputs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            if not average:
                return out
            spatial = [d for i, d in enumerate(inputs.shape) if i not in non_spatial]
            counts = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0.0, lax.add,
                                       tuple(window_shape), tuple(strides), padding)
            for i in sorted(non_spatial):
                counts = jnp.expand_dims(counts, i)
            return out / counts

        return (lambda rng, input_shape: (_shape_of(pool, input_shape), ()),
                lambda params, inputs, **kwargs: pool(inputs))

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, average=True)

Flatten = (lambda rng, input_shape: ((input_shape[0], math.prod(input_shape[1:])), ()),
           lambda params, inputs, **kwargs: jnp.reshape(inputs, (inputs.shape[0], -1)))
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)
FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanOut(num):  # noqa: N802
    """``num`` copies of the input."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def FanInConcat(axis=-1):  # noqa: N802
    """The inputs concatenated along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return (*input_shape[0][:ax], size, *input_shape[0][ax + 1:]), ()

    return init_fun, lambda params, inputs, **kwargs: jnp.concatenate(inputs, axis)


def Dropout(rate, mode="train"):  # noqa: N802
    """Keep each input with probability ``rate`` (scaled by ``1 / rate``) if ``mode`` is
    ``"train"``; ``apply_fun`` then needs ``rng=``."""
    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument: apply_fun(params, inputs, rng=key).")
        if mode != "train":
            return inputs
        return jnp.where(random.bernoulli(rng, rate, inputs.shape), inputs / rate, 0)

    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def serial(*layers):
    """The layers one after the other."""
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, param, r in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side, each on its own input of a sequence."""
    init_funs, apply_funs = zip(*layers, strict=True)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape,
                                                               strict=True)], strict=True)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs,
                                                               strict=True)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer made by ``make_layer(input_shape)`` when its input's shape is known."""
    return (lambda rng, input_shape: make_layer(input_shape)[0](rng, input_shape),
            lambda params, inputs, **kwargs: make_layer(inputs.shape)[1](params, inputs,
                                                                         **kwargs))
