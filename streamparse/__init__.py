"""streamparse: tool calls written as markup in an LLM's streamed text -> structured tool calls.

The core is sans-I/O: :class:`StreamParser` takes text deltas and returns events.

Invariant: ``import streamparse`` loads the core only (no starlette, httpx, uvicorn, anyio).
Every public submodule is still an attribute of the package (``streamparse.asgi``,
``streamparse.server``, ``streamparse.openai``...): it is imported on first access.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .aio import aparse, iparse
from . import dialects
from .dialects import ALIASES, DIALECTS, Dialect
from .events import Diagnostic, Event, ParseResult, ReasoningDelta, TextDelta, ToolCall, ToolCallDelta, ToolCallStart
from .parser import StreamParser, parse

__all__ = [
    "ALIASES",
    "dialects",
    "DIALECTS",
    "Dialect",
    "Diagnostic",
    "Event",
    "ParseResult",
    "ReasoningDelta",
    "StreamParser",
    "TextDelta",
    "ToolCall",
    "ToolCallStart",
    "ToolCallDelta",
    "aparse",
    "iparse",
    "parse",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> ModuleType:
    """A public submodule not imported yet (``streamparse.asgi``): import it now.

    A data directory (a namespace package to the import system: no origin) is not a submodule.
    """
    if name.isidentifier() and not name.startswith("_"):
        spec = importlib.util.find_spec(f"{__name__}.{name}")
        if spec is not None and spec.origin is not None:
            return importlib.import_module(spec.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    import pkgutil

    return sorted({*globals(), *(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))})
