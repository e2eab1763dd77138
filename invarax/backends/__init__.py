"""Backends for accelerators: each registers its rules in the lowering table and a runner
that puts eager operations on its devices (``core/backends.py``). Importing one needs no
accelerator; it is used only where its devices are found."""
