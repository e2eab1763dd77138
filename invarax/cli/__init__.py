"""The ``invarax`` command: ``demo`` (the main job) and ``ir`` (print a program's jaxpr)."""

from ._main import main

__all__ = ["main"]
