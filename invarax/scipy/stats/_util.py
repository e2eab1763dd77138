"""What the distributions share: their arguments promoted to one inexact dtype."""

from __future__ import annotations

from ...numpy._promote import promote_args


def inexact(name, *args):
    """``args`` as arrays of one floating dtype, broadcast together, for ``name``."""
    return promote_args(name, *args, to_inexact=True)
