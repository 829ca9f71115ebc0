"""Package exports that load on first use (PEP 562).

``import evalkit.ratings.bt`` runs ``evalkit/ratings/__init__.py`` first; if that imported
every module of the package, a fast path (``evalkit rate`` on a Parquet file) would pay for
pandas and scipy through modules it never calls. A package lists its exports as
``{name: module}`` and gets a module ``__getattr__`` / ``__dir__`` that import the module on
first access (then cache the name in the package namespace).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from typing_extensions import TypeIs

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose ``exports`` map a name to its module
    (relative to the package; ``""``: the name is itself a submodule); ``namespace`` is the
    package's ``globals()``."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - the PEP 562 hook
        if name in exports:
            module = import_module(f"{package}.{exports[name] or name}")
            value = module if not exports[name] else getattr(module, name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:  # noqa: N807
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


def is_dataframe(obj: object) -> TypeIs[pd.DataFrame]:
    """``isinstance(obj, pandas.DataFrame)`` without importing pandas: when pandas has not been
    imported, nothing can be a DataFrame."""
    import sys

    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(obj, pandas.DataFrame)
