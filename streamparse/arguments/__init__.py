"""Arguments: model-written JSON read strictly first and repaired second, and values typed by a tool's schema.

Invariant: the lowest layer. Pure functions over values; imports nothing else of streamparse.
``grammar`` (the Lark grammar loader) lives here because relaxed JSON is the first grammar
user; the dialects above load theirs through it.
"""

from __future__ import annotations

from .schema import (ArgumentError, RelaxedJsonToPython, UnparsedArguments, call_from_object, close_open_brackets,
                     coerce_value, decode_string_token, first_line, loads_relaxed, missing_required,
                     number_value, resolve_unparsed, strip_fences, tool_schemas, Note, brief, enum_spelling,
                     mistyped, review_arguments, review_values)
from .tools import ToolSchemas, read_tools
from .xml_values import coerce_xml_value, settle_layout, strip_layout

__all__ = ["ArgumentError", "RelaxedJsonToPython", "UnparsedArguments", "call_from_object", "close_open_brackets",
           "coerce_value", "coerce_xml_value", "decode_string_token", "first_line", "loads_relaxed", "missing_required",
           "number_value", "resolve_unparsed", "strip_fences", "strip_layout", "settle_layout", "tool_schemas", "ToolSchemas", "read_tools", "Note", "brief",
           "enum_spelling", "mistyped", "review_arguments", "review_values"]

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
