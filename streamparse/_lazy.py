"""Submodules as attributes, imported on first access (``streamparse.proxy.app`` after ``import streamparse``).

Invariant: importing a package costs only what its ``__init__`` imports; a submodule loads the
first time its name is read. A data directory (a namespace package to the import system: no
origin) and a private name are never submodules.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from types import ModuleType
from typing import Any, Callable, Iterable

__all__ = ["lazy_submodules"]


def lazy_submodules(package: str, path: Iterable[str], names: Callable[[], Iterable[str]]
                    ) -> tuple[Callable[[str], ModuleType], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (``names``: its globals)."""

    def getattr_(name: str) -> ModuleType:
        if name.isidentifier() and not name.startswith("_"):
            spec = importlib.util.find_spec(f"{package}.{name}")
            if spec is not None and spec.origin is not None:
                return importlib.import_module(spec.name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def dir_() -> list[str]:
        found: Any = pkgutil.iter_modules(list(path))
        return sorted({*names(), *(m.name for m in found if not m.name.startswith("_"))})

    return getattr_, dir_
