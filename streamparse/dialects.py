"""Dialects: the markup families models use to write tool calls.

A dialect is data: a name, the Lark grammar that describes its block
(``grammars/<grammar>.lark``) and the *shape* of what the block holds. The
streaming scanner (``parser.py``) finds where a block starts and ends; this
module turns a complete block into ``(name, arguments)`` pairs.

JSON-bodied blocks take the fast path first: ``json.loads`` of the body the
scanner cut out. Only when that fails is the whole block (with unclosed
brackets closed) parsed with the dialect's grammar, whose relaxed JSON accepts
what models get wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer
from lark.exceptions import LarkError
from lark.visitors import merge_transformers

from ._grammar import load_grammar
from .arguments import ArgumentError, RelaxedJsonToPython, call_from_object, close_open_brackets, first_line

# What a block's decoded value is.
CALL = "call"  # one call object
CALLS = "calls"  # an array of call objects (or one object)
TOOL_CALLS = "tool_calls"  # {"tool_calls": [call, ...]}
ARGUMENTS = "arguments"  # the arguments object; the name comes from the tag
XML = "xml"  # Qwen3-Coder <function=…><parameter=…>


@dataclass(frozen=True)
class Dialect:
    name: str
    grammar: str
    shape: str
    gated: bool = False  # only recognised when its name(s) are provided tools
    doc: str = ""


DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("qwen3_xml", "qwen3_xml", XML, doc="<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>"),
        Dialect("tool_call_json", "tool_call_json", CALL, doc='<tool_call>{"name": …, "arguments": …}</tool_call>, any letter case'),
        Dialect("tools_array", "tools_array", CALLS, doc="<tools>[{…}, {…}]</tools>, each element emitted as it closes"),
        Dialect("function_tag", "function_tag", CALL, doc='<function>{"name": …, "parameters": …}</function>'),
        Dialect("angle_json", "angle_json", CALL, doc='<{"name": …, "arguments": …}>'),
        Dialect("name_tag", "name_tag", ARGUMENTS, gated=True, doc="<TOOL_NAME>{…}</function> or </TOOL_NAME>"),
        Dialect("tool_calls_json", "tool_calls_json", TOOL_CALLS, gated=True, doc='bare {"tool_calls": [{"name": …, "arguments": …}]}'),
        Dialect("bare_json", "bare_json", CALL, gated=True, doc='bare {"name": …, "arguments": …} at a line start, fenced or not'),
        Dialect("mistral", "mistral", CALLS, doc='[TOOL_CALLS][{"name": …, "arguments": …}]'),
        Dialect("mistral_v11", "mistral_v11", ARGUMENTS, doc="[TOOL_CALLS]NAME[ARGS]{…} (newer Mistral tokenizers)"),
    )
}


class _EnvelopeToPython(Transformer):
    """``start`` of an envelope grammar -> its JSON value (the tag, if any, is known already)."""

    def start(self, children: list[Any]) -> Any:
        values = [c for c in children if not isinstance(c, Token)]
        if len(values) != 1:
            raise ArgumentError("block holds no JSON value")
        return values[0]


_ENVELOPE_TRANSFORMER = merge_transformers(_EnvelopeToPython(), relaxed_json=RelaxedJsonToPython())


def decode_json_block(dialect: Dialect, body: str, opener: str, closer: str) -> tuple[Any, bool]:
    """Decode a JSON-bodied block. Returns ``(value, repaired)``.

    ``opener``/``closer`` are the block's markers as written (without any
    markdown fence); the grammar sees them on the repair path.
    """
    try:
        return json.loads(body, strict=False), False
    except ValueError:
        pass
    text = opener + close_open_brackets(body.strip()) + closer
    try:
        tree = load_grammar(dialect.grammar).parse(text)
        return _ENVELOPE_TRANSFORMER.transform(tree), True
    except LarkError as exc:
        raise ArgumentError(f"{dialect.name}: unreadable block: {first_line(exc)}") from None


def calls_from_value(dialect: Dialect, value: Any, tag_name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The ``(name, arguments)`` pairs a decoded block value holds, by the dialect's shape."""
    if dialect.shape == ARGUMENTS:
        if not isinstance(value, dict) or not tag_name:
            raise ArgumentError("a name tag must hold an arguments object")
        return [(tag_name, value)]
    if dialect.shape == TOOL_CALLS:
        if not isinstance(value, dict) or not isinstance(value.get("tool_calls"), list):
            raise ArgumentError('expected {"tool_calls": [...]}')
        items = value["tool_calls"]
    elif dialect.shape == CALLS:
        items = value if isinstance(value, list) else [value]
    else:
        items = [value]
    if not items:
        raise ArgumentError("no calls in block")
    return [call_from_object(item) for item in items]


class _Qwen3ToPython(Transformer):
    def start(self, children: list[Any]) -> Any:
        return children[0]

    def function(self, children: list[Any]) -> tuple[str, dict[str, str]]:
        head, *params = children
        return str(head)[len("<function=") : -1], dict(params)

    def param(self, children: list[Any]) -> tuple[str, str]:
        key = str(children[0])[len("<parameter=") : -1].strip()
        value = str(children[1]) if len(children) > 1 else ""
        # One leading and one trailing newline belong to the layout, not the value.
        if value.startswith("\n"):
            value = value[1:]
        if value.endswith("\n"):
            value = value[:-1]
        return key, value


_QWEN3_TRANSFORMER = _Qwen3ToPython()


def decode_qwen3_function(text: str) -> tuple[str, dict[str, str]]:
    """``<function=NAME>…</function>`` -> ``(NAME, {key: raw value text})``."""
    try:
        return _QWEN3_TRANSFORMER.transform(load_grammar("qwen3_xml").parse(text))
    except LarkError as exc:
        raise ArgumentError(f"qwen3_xml: unreadable block: {first_line(exc)}") from None


def warm_up() -> None:
    """Build every grammar now (about 15 ms each), so no first call pays for it; servers call this at start-up."""
    for name in {d.grammar for d in DIALECTS.values()} | {"relaxed_json"}:
        load_grammar(name)
