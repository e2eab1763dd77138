"""Global flags, set with ``invarax.config.update(name, value)`` as in JAX."""

from __future__ import annotations

import operator


class Config:
    """The library's flags.

    Only flags that change behaviour exist; asking for any other name is an error,
    so a misspelt flag never passes silently.

    Example:
        >>> import invarax
        >>> invarax.config.update("jax_enable_x64", True)
        >>> invarax.config.jax_enable_x64
        True
    """

    _defaults = {
        "jax_enable_x64": False,
        "jax_explain_cache_misses": False,
        # random: JAX's default threefry streams since JAX 0.5 (False: the older ones)
        "jax_threefry_partitionable": True,
        # invarax's own exp, log, sin, ... (correctly rounded, the same bits on every CPU:
        # N6) instead of NumPy's ufuncs; off by default until they reach NumPy's speed
        "invarax_exact_elementary": False,
        # loops whose body is 0-d arithmetic run as compiled C (compiler/native.py)
        "invarax_native_loops": True,
        # local CPU devices of this process (read once, when devices are first used)
        "jax_num_cpu_devices": 1,
    }

    def __init__(self):
        self._values = dict(self._defaults)
        self._listeners = []
        self._validators = {}

    def update(self, name: str, value) -> None:
        """Set flag ``name`` to ``value``."""
        if name not in self._values:
            known = ", ".join(sorted(self._values))
            raise AttributeError(f"unknown config flag {name!r}; known flags: {known}")
        value = _coerce(name, value, self._defaults[name])
        if name in self._validators:
            self._validators[name](value)
        self._values[name] = value
        for listener in self._listeners:
            listener(name, self._values[name])

    def read(self, name: str):
        """Return the value of flag ``name``."""
        return self._values[name]

    def def_validator(self, name: str, validator) -> None:
        """Call ``validator(value)`` before flag ``name`` changes; it raises to refuse."""
        self._validators[name] = validator

    def on_update(self, listener) -> None:
        """Call ``listener(name, value)`` after every update (used to drop caches)."""
        self._listeners.append(listener)

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"unknown config flag {name!r}")


def _coerce(name: str, value, default):
    if isinstance(default, bool):
        return bool(value)
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"config flag {name!r} takes an int, got {value!r}") from None
    if count < 1:
        raise ValueError(f"config flag {name!r} must be at least 1, got {count}")
    return count


config = Config()
