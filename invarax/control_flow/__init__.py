"""Structured control flow: the ``cond``, ``scan``, ``while``, ``checkpointed_while`` and
``while_grad`` primitives with their rules, and the loop runtime they compile to
(``common``). The user-facing functions are in ``invarax.lax`` (``lax.cond``,
``lax.scan``, ``lax.while_loop``, ...)."""
