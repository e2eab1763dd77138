"""The ``invarax`` command: ``demo`` (the main job), ``ir`` (print a program's jaxpr) and
``verify`` (check that a machine gives the numerics contract's bits)."""

from ._main import main

__all__ = ["main"]
