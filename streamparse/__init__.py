"""streamparse: tool calls written as markup in an LLM's streamed text -> structured tool calls.

The core is sans-I/O: :class:`StreamParser` takes text deltas and returns events.
"""

from .aio import aparse, iparse
from .dialects import DIALECTS, Dialect
from .events import Diagnostic, Event, ReasoningDelta, TextDelta, ToolCall
from .parser import ParseResult, StreamParser, parse

__all__ = [
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
