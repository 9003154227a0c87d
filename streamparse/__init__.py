"""Tool calls written as markup in an LLM's streamed text, turned into structured tool calls as they stream.

`StreamParser` takes text deltas and returns events (`TextDelta`, `ReasoningDelta`, `ToolCall`,
`Diagnostic`, ...); `parse`, `aparse` and `iparse` run it over a whole text or an iterable of deltas.
Given the model's chat template (`chat_template=`), they read the format and the start state from it
(`read_template` says what it decided: a `TemplateSetup`).
It does no I/O: the adapters for the wire formats are `streamparse.openai`, `streamparse.anthropic`
and `streamparse.responses`, and `streamparse.asgi` wraps an ASGI app.
"""

# Invariant: ``import streamparse`` loads the core only (no starlette, httpx, uvicorn, anyio).
# Every subpackage and public submodule is an attribute of the package (``streamparse.proxy``,
# ``streamparse.asgi``, ``streamparse.openai``...): it is imported on first access.
#
# Layers, each importing only those before it: ``arguments`` (values) -> ``dialects`` (the format
# table) -> ``core`` (the engine) -> ``wire`` (OpenAI / Anthropic / SSE) -> ``prompting`` -> ``proxy``
# (transports) -> ``harness`` (benchmarks) -> ``cli``. ``openai``, ``anthropic``, ``responses``, ``asgi`` and
# ``render`` are aliases kept at the top because they are the names users import.

from __future__ import annotations

from ._lazy import lazy_submodules
from . import dialects
from .core import (Diagnostic, Event, ParseResult, ReasoningDelta, StreamParser, TextDelta, ToolCall, ToolCallDelta,
                   ToolCallStart, aparse, iparse, parse)
from .core.chat_template import read_template
from .dialects import ALIASES, DIALECTS, Dialect
from .templates import TemplateSetup

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
    "read_template",
    "TemplateSetup",
]
__version__ = "0.1.0"


__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
