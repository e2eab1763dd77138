"""``invarax.nn``: Equinox's layers and ``jax.nn``'s activation functions.

Layers are ``invarax.Module`` s with Equinox's signatures, parameter shapes and
initialisation (the same key gives Equinox's initial parameters). Beyond Equinox, ``Linear``,
``MLP``, ``Conv`` and ``Embedding`` also take natively batched input, bitwise equal to
``vmap``. See docs/nn.md.
"""

from ..numpy import tanh  # jax.nn.tanh is jnp.tanh
from ..scipy.special import logsumexp
from . import initializers  # noqa: F401  (jax.nn.initializers)
from ._activations import (
    PReLU,
    gelu,
    identity,
    log_softmax,
    one_hot,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
)
from ._attention import MultiheadAttention, dot_product_attention, dot_product_attention_weights
from ._batch_norm import BatchNorm
from ._conv import (
    Conv,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from ._dropout import Dropout
from ._embedding import Embedding, RotaryPositionalEmbedding
from ._jax_activations import (
    celu,
    elu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    logmeanexp,
    mish,
    relu6,
    selu,
    soft_sign,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    swish,
)
from ._linear import Identity, Linear
from ._mlp import MLP
from ._normalisation import GroupNorm, LayerNorm, RMSNorm
from ._pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AdaptivePool,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    Pool,
)
from ._rnn import GRUCell, LSTMCell
from ._sequential import Lambda, Sequential
from ._shared import Shared, SharedNode
from ._stateful import (
    State,
    StatefulLayer,
    StateIndex,
    delete_init_state,
    inference_mode,
    make_with_state,
)
from ._weight_norm import SpectralNorm, WeightNorm

__all__ = [
    "Conv", "Conv1d", "Conv2d", "Conv3d", "Dropout", "Embedding", "Identity", "Lambda",
    "LayerNorm", "Linear", "MLP", "MultiheadAttention", "RMSNorm", "Sequential",
    "gelu", "identity", "log_softmax", "logsumexp", "one_hot", "relu", "sigmoid", "silu",
    "softmax", "softplus", "tanh",
    "GRUCell", "LSTMCell",
    "BatchNorm", "State", "StateIndex", "StatefulLayer", "delete_init_state",
    "dot_product_attention", "dot_product_attention_weights", "inference_mode",
    "make_with_state",
    "GroupNorm", "PReLU", "RotaryPositionalEmbedding", "Shared", "SharedNode", "SpectralNorm",
    "WeightNorm",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptivePool", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "ConvTranspose", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "Pool",
    "celu", "elu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "leaky_relu",
    "log1mexp", "log_sigmoid", "logmeanexp", "mish", "relu6", "selu", "soft_sign",
    "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "swish",
]
