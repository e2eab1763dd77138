"""``invarax.verify()`` and the ``invarax verify`` command: a fixed battery of workloads
whose digests the numerics contract fixes on every CPU and at every thread count."""

from ._battery import compare, verify

__all__ = ["compare", "verify"]
