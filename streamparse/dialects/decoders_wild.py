"""Decoders of the formats seen in the wild (issue 30, §4): one item's text -> ``[(name, arguments)]``. Pure; they
raise ArgumentError.

Invariant: as in ``decoders``, a decoder sees one complete item and never the stream, and returns only the values
the model wrote. Claude-style invokes are the XML-parameter family's (``xml_family``); ``<tool_use>``
blocks and Llama 3.1's built-in calls are parsed by their Lark grammar and folded by ``Rules`` with one method per
rule, so the grammar is the definition. Functionary v3.2 and ReAct bodies are JSON values read by
``decoders.json_calls`` with the name their head gave.
"""

from __future__ import annotations

import re
from typing import Any


from ..arguments.schema import ArgumentError, UnparsedArguments, arguments_from_text
from .decoders import PythonCalls, Rules, GrammarDecoder

__all__ = ["tool_use_calls", "llama31_builtin_calls"]


# --------------------------------------------------------------------------- <tool_use>

_TAG = re.compile(r"<([\w]+)>(.*)</\1>\s*\Z", re.S | re.I)


def _inner(token: Any) -> str:
    """The text between an element's opening and closing tag (the grammar checked that they pair)."""
    m = _TAG.match(str(token))
    if m is None:
        raise ArgumentError("a <tool_use> element whose tags do not pair")
    return m.group(2)


class _ToolUseCalls(Rules):
    """Tree of ``tool_use.lark`` -> one call. Arguments that are not a JSON object are kept as text
    (``UnparsedArguments``: the tool's schema decides), as Cherry Studio keeps them."""

    def start(self, children: list[Any]) -> list[Any]:
        name = _inner(children[0]).strip()
        if not name:
            raise ArgumentError("a <tool_use> block needs a tool name")
        text = _inner(children[1]) if len(children) > 1 else ""
        if not text.strip():
            return [((name, {}), False)]
        arguments: dict[str, Any] | UnparsedArguments
        arguments, repaired = arguments_from_text(name, text.strip())
        return [((name, arguments), repaired)]


tool_use_calls = GrammarDecoder("tool_use", _ToolUseCalls())


# --------------------------------------------------------------------------- Llama 3.1 built-in tools

_CALL_SUFFIX = re.compile(r"\s*\.\s*call\Z")


class _BuiltinCalls(PythonCalls):
    """Tree of ``llama31_builtin.lark`` -> one call: ``brave_search.call(query="…")`` is a call to
    ``brave_search``; the values are the pythonic rules' (JSON's true/false/null accepted too)."""

    def call(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        callee, *args = children
        return (_CALL_SUFFIX.sub("", str(callee)), dict(args)), False


llama31_builtin_calls = GrammarDecoder("llama31_builtin", _BuiltinCalls())
