"""``invarax.nn``: Equinox's layers and ``jax.nn``'s activation functions.

Layers are ``invarax.Module`` s with Equinox's signatures, parameter shapes and
initialisation (the same key gives Equinox's initial parameters). Beyond Equinox, ``Linear``,
``MLP``, ``Conv`` and ``Embedding`` also take natively batched input, bitwise equal to
``vmap``. See docs/nn.md.
"""

from ..scipy.special import logsumexp
from ._activations import (
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
from ._attention import MultiheadAttention
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
from ._embedding import Embedding
from ._linear import Identity, Linear
from ._mlp import MLP
from ._normalisation import LayerNorm, RMSNorm
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
from ._sequential import Lambda, Sequential

__all__ = [
    "Conv", "Conv1d", "Conv2d", "Conv3d", "Dropout", "Embedding", "Identity", "Lambda",
    "LayerNorm", "Linear", "MLP", "MultiheadAttention", "RMSNorm", "Sequential",
    "gelu", "identity", "log_softmax", "logsumexp", "one_hot", "relu", "sigmoid", "silu",
    "softmax", "softplus",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptivePool", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "ConvTranspose", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "Pool",
]
