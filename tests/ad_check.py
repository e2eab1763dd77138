"""The tests' ``check_grads``: ``invarax.test_util``'s, with its helpers."""

from invarax.test_util import (  # noqa: F401
    FD_RTOL,
    IDENTITY_RTOL,
    check_grads,
    fd_atol,
    numerical_jvp,
)
