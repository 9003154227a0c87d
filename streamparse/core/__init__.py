"""The sans-I/O engine: text deltas in, events out.

Invariant: nothing in ``core`` does I/O or imports an I/O library (starlette, httpx, anyio,
uvicorn); it reads the dialect declarations (``streamparse.dialects``) and types values with
``streamparse.arguments``, the two layers below it, and nothing above.
"""

from __future__ import annotations

from .aio import aparse, iparse
from .events import (Diagnostic, Event, ParseResult, ReasoningDelta, TextDelta, ToolCall, ToolCallDelta,
                     ToolCallStart)
from .parser import StreamParser, parse

__all__ = ["Diagnostic", "Event", "ParseResult", "ReasoningDelta", "StreamParser", "TextDelta", "ToolCall",
           "ToolCallDelta", "ToolCallStart", "aparse", "iparse", "parse"]

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
