"""streamparse: tool calls written as markup in an LLM's streamed text -> structured tool calls.

The core is sans-I/O: :class:`StreamParser` takes text deltas and returns events.
"""

from .aio import aparse, iparse
from . import dialects
from .dialects import ALIASES, DIALECTS, Dialect
from .events import Diagnostic, Event, ParseResult, ReasoningDelta, TextDelta, ToolCall
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
    "aparse",
    "iparse",
    "parse",
]
__version__ = "0.1.0"
