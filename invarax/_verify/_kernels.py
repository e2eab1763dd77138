"""The battery's kernel workloads: contractions of many shapes (ragged, and K about the
256-element blocks), reductions, scatter-add, convolutions, window reductions, FFTs and the
random streams."""

from __future__ import annotations

import numpy as np

from .. import lax, random
from .. import numpy as jnp
from ._inputs import uniform

#: (M, K, N) of the products: ragged tiles, K about the blocks of 256, and one large enough
#: to split between threads.
PRODUCTS = [(1, 1, 1), (3, 5, 7), (1, 300, 1), (17, 255, 9), (33, 256, 65), (64, 257, 31),
            (65, 511, 33), (7, 512, 129), (129, 513, 70), (5, 1000, 3), (256, 768, 256)]


def _contractions(dtype):
    out = []
    for i, (m, k, n) in enumerate(PRODUCTS):
        a, b = uniform(100 + i, (m, k), dtype), uniform(200 + i, (k, n), dtype)
        out.append(jnp.matmul(a, b))
    a, b = uniform(1, (4, 37, 300), dtype), uniform(2, (4, 300, 23), dtype)
    out += [jnp.einsum("bmk,bkn->bnm", a, b),  # batched, transposed output
            lax.dot_general(b, a, (((1,), (2,)), ((0,), (0,)))),  # contracted axis first
            jnp.tensordot(a, b[0], axes=1), jnp.dot(a[0, 0], b[0, :, 0]),
            jnp.vdot(a[1, 1], a[2, 2]), jnp.einsum("i,i->", a[3, 3], a[3, 4])]
    return out


def _reductions(dtype):
    x = jnp.asarray(uniform(3, (3, 7, 1031), dtype, -4, 4))
    long = jnp.asarray(uniform(4, (100003,), dtype))
    rows = jnp.asarray(uniform(5, (64, 4099), dtype))
    near_one = 1 + x / 64
    indices = jnp.asarray(np.arange(5000) * 7919 % 97)  # repeated, in no order: exact ints
    values = jnp.asarray(uniform(6, (5000, 3), dtype))
    return [jnp.sum(x), jnp.sum(x, axis=0), jnp.sum(x, axis=1), jnp.sum(x, axis=2),
            jnp.mean(x, axis=(0, 2)), jnp.var(x, axis=2), jnp.std(x), jnp.max(x, axis=1),
            jnp.min(x), jnp.argmax(x, axis=2), jnp.prod(near_one, axis=2),
            jnp.cumsum(x, axis=2), jnp.cumprod(near_one, axis=1), jnp.sum(long),
            jnp.sum(rows, axis=1), jnp.linalg.norm(x), jnp.linalg.norm(x, axis=2),
            jnp.zeros((97, 3), dtype).at[indices].add(values)]


def _convolutions(dtype):
    image, image1d = uniform(7, (2, 6, 13, 11), dtype), uniform(8, (3, 4, 50), dtype)
    kernel, grouped = uniform(9, (8, 6, 3, 3), dtype), uniform(10, (4, 3, 5, 5), dtype)
    kernel1d = uniform(11, (5, 4, 7), dtype)
    conv = lax.conv_general_dilated
    return [conv(image, kernel, (1, 1), "SAME"), conv(image, kernel, (2, 2), "VALID"),
            conv(image, kernel, (1, 1), [(2, 1), (0, 3)], rhs_dilation=(2, 2)),
            conv(image, grouped, (1, 2), "SAME", feature_group_count=2),
            conv(image, kernel, (1, 1), [(1, 1), (2, 0)], lhs_dilation=(2, 1)),
            conv(image1d, kernel1d, (3,), "SAME")]


def _windows(dtype):
    x = jnp.asarray(uniform(12, (2, 3, 17, 19), dtype))
    pool = (1, 1, 3, 3)
    return [lax.reduce_window(x, -jnp.inf, lax.max, pool, (1, 1, 2, 2), "SAME"),
            lax.reduce_window(x, 0.0, lax.add, pool, (1, 1, 1, 1), "VALID"),
            lax.reduce_window(x, 0.0, lax.add, (1, 1, 4, 2), (1, 1, 3, 2), "SAME")]


def _fft(dtype):
    complex_dtype = np.result_type(dtype, np.complex64)
    real = uniform(13, (4, 1024), dtype)
    signal = (real + 1j * uniform(14, (4, 1024), dtype)).astype(complex_dtype)
    return [jnp.fft.fft(signal), jnp.fft.ifft(signal), jnp.fft.rfft(real),
            jnp.fft.irfft(signal), jnp.fft.fft(signal[:, :1000]), jnp.fft.fft(signal[:, :997]),
            jnp.fft.rfft(real[:, :999]), jnp.fft.fft2(signal[:, :899].reshape(-1, 31, 29)),
            jnp.fft.fftn(signal.reshape(4, 16, 64))]


def _random(dtype):
    key = random.PRNGKey(42)
    keys = random.split(key, 12)
    shape = (1000,)
    return [random.normal(keys[0], shape, dtype), random.uniform(keys[1], shape, dtype),
            random.truncated_normal(keys[2], -2.0, 3.0, shape, dtype),
            random.gumbel(keys[3], shape, dtype), random.laplace(keys[4], shape, dtype),
            random.exponential(keys[5], shape, dtype), random.logistic(keys[6], shape, dtype),
            random.bernoulli(keys[7], 0.3, shape),
            random.categorical(keys[8], jnp.asarray(uniform(15, (50, 10), dtype)), axis=-1),
            random.normal(random.fold_in(key, 7), (3, 5), dtype)]


def _random_bits():
    key = random.PRNGKey(2024)
    keys = random.split(key, 4)
    return [keys, random.bits(keys[0], (1000,), np.uint32),
            random.randint(keys[1], (1000,), -50, 1000),
            random.permutation(keys[2], 1000), random.choice(keys[3], 100, (20,), False),
            random.split(random.fold_in(key, 3), 3)]


def workloads() -> list[tuple[str, bool, object]]:
    """``(name, needs float64, function)`` for each kernel workload."""
    out = []
    for dtype in (np.float32, np.float64):
        name = np.dtype(dtype).name
        for family, fn in (("contractions", _contractions), ("reductions", _reductions),
                           ("convolutions", _convolutions), ("windows", _windows),
                           ("fft", _fft), ("random", _random)):
            out.append((f"{family}/{name}", dtype == np.float64,
                        lambda fn=fn, dtype=dtype: fn(dtype)))
    out.append(("random/bits", False, _random_bits))
    return out
