"""``invarax.extend.core.primitives``: every primitive object under JAX's name
(``add_p``, ``dot_general_p``, ``custom_jvp_call_p``, ``scan_p``, ...).

Example:
    >>> from invarax.extend.core import primitives
    >>> primitives.dot_general_p
    dot_general
"""

from ...lax._primitives import primitive_named


def __getattr__(name):
    return primitive_named(__name__, name)
