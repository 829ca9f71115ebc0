"""Renamed keywords and CLI flags, accepted for one release with a deprecation note.

evalkit follows scipy's names: ``confidence_level``, ``n_resamples``, ``alternative`` and
``rng`` (a seed or a :class:`numpy.random.Generator`). The spellings of evalkit 0.1 (``level``,
``n_boot``, ``bootstrap``, ``n_replicates``, ``seed``, ...) still work in this release, with a
:class:`DeprecationWarning`; they go in evalkit 0.3.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["renamed_keywords", "REMOVAL"]

#: The release that drops the old names.
REMOVAL = "0.3"

F = TypeVar("F", bound=Callable[..., Any])


def renamed_keywords(**old_to_new: str) -> Callable[[F], F]:
    """Decorator: ``fn(old=v)`` calls ``fn(new=v)`` with a :class:`DeprecationWarning`.

    Passing both spellings is a TypeError. The wrapped function keeps its name, docstring and
    signature (``functools.wraps``), so ``help()`` shows the new names only.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(level="confidence_level")
    ... def f(*, confidence_level=0.95):
    ...     return confidence_level
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f(level=0.9), w[0].category.__name__
    (0.9, 'DeprecationWarning')
    """

    def decorate(fn: F) -> F:
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", "function"))

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{name}() got both {old!r} (the old name) and {new!r}; pass {new!r} only.")
                    warnings.warn(f"{name}(): the keyword {old!r} is deprecated and will be removed in evalkit "
                                  f"{REMOVAL}; use {new!r}.", DeprecationWarning, stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        wrapper.__dict__["_renamed_keywords"] = dict(old_to_new)
        return cast(F, wrapper)

    return decorate
