"""Decoders of the newer formats (issue 18): one item's text -> ``[(name, arguments)]``. Pure; they raise ArgumentError.

Invariant: as in ``decoders``, a decoder sees one complete item and never the stream, and
returns only the values the model wrote. JSON bodies go through ``loads_calls`` (``json.loads``
first; an expression in a call's arguments keeps the block as text, as in ``decoders.json_calls``); the tag formats (Gemma 4, FunctionGemma, DeepSeek DSML, Olmo 3) are parsed by their
Lark grammar and folded by ``Rules`` with one method per rule, so the grammar is the definition.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lark import Token

from ..arguments.relaxed_json import holds_expression
from ..arguments.schema import ArgumentError, call_from_object, loads_calls, number_value
from .decoders import PythonCalls, Rules, GrammarDecoder
from .markup import marker
from .spec import Calls

__all__ = ["generic_calls", "cohere_calls", "apertus_calls", "gemma4_calls", "functiongemma_calls", "dsml_calls",
           "kimi_k3_calls", "olmo3_calls", "minimax_m3_calls"]

Decoded = tuple[Calls, bool]  # (calls, repaired)


def _items(value: Any) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ArgumentError("no calls in block")
    return items


# --------------------------------------------------------------------------- JSON bodies

def generic_calls(text: str, head_name: str | None) -> Decoded:
    """llama.cpp's generic form: ``{"tool_call": {"name", "arguments"}}`` (or its ``"tool_calls"`` list)."""
    value, repaired = loads_calls(text)
    if isinstance(value, dict) and "name" not in value:
        if isinstance(value.get("tool_call"), dict):
            value = value["tool_call"]
        elif isinstance(value.get("tool_calls"), list):
            value = value["tool_calls"]
        else:
            raise ArgumentError("neither 'tool_call' nor 'tool_calls' in the object")
    return [call_from_object(item) for item in _items(value)], repaired


def cohere_calls(text: str, head_name: str | None) -> Decoded:
    """Cohere Command actions: ``{"tool_call_id", "tool_name", "parameters"}`` objects (a list, or one)."""
    value, repaired = loads_calls(text)
    calls = []
    for item in _items(value):
        if isinstance(item, dict) and "name" not in item and "tool_name" in item:
            item = {("name" if k == "tool_name" else k): v for k, v in item.items() if k != "tool_call_id"}
        calls.append(call_from_object(item))
    return calls, repaired


def apertus_calls(text: str, head_name: str | None) -> Decoded:
    """Apertus: objects of one key each, the tool's name, holding the arguments: ``[{"NAME": {…}}]``."""
    value, repaired = loads_calls(text)
    calls: Calls = []
    for item in _items(value):
        if not isinstance(item, dict) or len(item) != 1:
            raise ArgumentError("an Apertus call is an object with exactly one key, the tool's name")
        (name, arguments), = item.items()
        if not isinstance(arguments, dict):
            raise ArgumentError(f"arguments of {name!r} must be an object")
        calls.append(call_from_object({"name": name, "arguments": arguments}))  # its checks: name, expressions
    return calls, repaired


# --------------------------------------------------------------------------- Gemma 4 / FunctionGemma

class _GemmaCalls(Rules):
    """Tree of ``gemma4.lark`` / ``functiongemma.lark`` -> one call; ``delim`` is the string delimiter."""

    def __init__(self, delim: str):
        self.delim = delim

    def _text(self, tok: Any) -> str:
        s = str(tok)
        return s[len(self.delim) : -len(self.delim)] if tok.type == "STRING" else s

    def start(self, children: list[Any]) -> list[Any]:
        name, arguments = children
        return [((str(name), arguments), False)]

    def object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return dict(pairs)

    def pair(self, children: list[Any]) -> tuple[str, Any]:
        key, value = children
        return self._text(key), value

    def array(self, items: list[Any]) -> list[Any]:
        return items

    def string(self, children: list[Any]) -> str:
        return self._text(children[0])

    def number(self, children: list[Any]) -> int | float:
        return number_value(str(children[0]))

    def true(self, _: list[Any]) -> bool:
        return True

    def false(self, _: list[Any]) -> bool:
        return False

    def none(self, _: list[Any]) -> None:
        return None


gemma4_calls = GrammarDecoder("gemma4", _GemmaCalls(marker("gemma4", "_QUOTE")))
functiongemma_calls = GrammarDecoder("functiongemma", _GemmaCalls(marker("functiongemma", "_QUOTE")))


# --------------------------------------------------------------------------- DeepSeek V3.2 / V4 DSML

_DSML_NAME = re.compile(r'name\s*=\s*"([^"]*)"')
_DSML_JSON = re.compile(r'string\s*=\s*"false"')


class _DsmlCalls(Rules):
    """Tree of ``deepseek_v32.lark`` -> calls. ``string="true"`` values are raw text (typed by the
    schema later); ``string="false"`` values are JSON, kept as written when they do not parse."""

    token_types = False

    def start(self, children: list[Any]) -> list[Any]:
        return [c for c in children if isinstance(c, tuple)]  # the calls (a token is a string)

    def invoke(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        head, *params = children
        name = _DSML_NAME.search(str(head))
        if name is None or not name.group(1).strip():
            raise ArgumentError("empty function name")
        return (name.group(1).strip(), dict(params)), False

    def param(self, children: list[Any]) -> tuple[str, Any]:
        head = str(children[0])
        key = _DSML_NAME.search(head)
        raw = str(children[1]) if len(children) > 1 else ""
        return (key.group(1).strip() if key else ""), _json_value(raw) if _DSML_JSON.search(head) else raw


def _json_value(raw: str) -> Any:
    """A value declared JSON (DSML ``string="false"``, XTML's non-string types): parsed, or kept as written
    when it does not parse; but arithmetic (``2 * math.pi``) is read as an opaque expression, which the
    call then refuses (``GrammarDecoder`` asks ``refuse_in_arguments``), as every JSON-reading decoder does."""
    try:
        return json.loads(raw)
    except ValueError:
        pass
    try:
        value, _ = loads_calls(raw)
    except ArgumentError:
        return raw
    return value if holds_expression(value) else raw


dsml_calls = GrammarDecoder("deepseek_v32", _DsmlCalls())


# --------------------------------------------------------------------------- Kimi K3 XTML

_XTML_ATTR = re.compile(r'(\w+)="([^"]*)"')


def _xtml_attrs(head: str) -> dict[str, str]:
    return {k: v.replace("&quot;", '"').replace("&amp;", "&") for k, v in _XTML_ATTR.findall(head)}


class _XtmlCalls(Rules):
    """Tree of ``kimi_k3.lark`` -> calls. ``type="string"`` values are raw text; other types are JSON,
    kept as written when they do not parse."""

    token_types = False

    def start(self, children: list[Any]) -> list[Any]:
        return [c for c in children if isinstance(c, tuple)]  # the calls (a token is a string)

    def call(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        head, *args = children
        name = _xtml_attrs(str(head)).get("tool", "").strip()
        if not name:
            raise ArgumentError("a call needs a tool attribute")
        return (name, dict(args)), False

    def arg(self, children: list[Any]) -> tuple[str, Any]:
        attrs = _xtml_attrs(str(children[0]))
        raw = str(children[1]) if len(children) > 1 else ""
        return attrs.get("key", ""), raw if attrs.get("type", "string") == "string" else _json_value(raw)


kimi_k3_calls = GrammarDecoder("kimi_k3", _XtmlCalls())


# --------------------------------------------------------------------------- Olmo 3

class _OlmoCalls(PythonCalls):
    """Tree of ``olmo3.lark``: the pythonic rules, one call per line (JSON's true/false/null accepted too)."""


olmo3_calls = GrammarDecoder("olmo3", _OlmoCalls())


# --------------------------------------------------------------------------- MiniMax-M3: tags named after keys

_M3_NAME = re.compile(r"""name\s*=\s*["']?([^"'<>]*)""")
_M3_TAG = re.compile(r"<\s*/?\s*([^<>\s/]+)[^<>]*>\Z")  # the tag after the namespace marker


class _M3Calls(Rules):
    """Tree of ``minimax_m3.lark`` -> one call. Folded without recursion (``fold_tree``): any depth of nested tags reads.

    An element holding elements is an object of them, or, when every one is an ``<item>``, an array; one holding
    text is that text (typed by the tool's schema later). An element's closing tag must name it."""

    def start(self, children: list[Any]) -> list[Any]:
        head, *body = children
        name = _M3_NAME.search(str(head))
        if name is None or not name.group(1).strip():
            raise ArgumentError("empty function name")
        return [((name.group(1).strip(), _members(body, "the invoke")), False)]

    def element(self, children: list[Any]) -> tuple[str, Any]:
        opened, *body, closed = children
        key = _M3_TAG.search(str(opened))
        shut = _M3_TAG.search(str(closed))
        if key is None or shut is None or key.group(1) != shut.group(1):
            raise ArgumentError(f"a tag closed by another: {str(opened)[-40:]!r}, {str(closed)[-40:]!r}")
        pairs = [c for c in body if isinstance(c, tuple)]
        if not pairs:
            return key.group(1), _Leaf("".join(str(c) for c in body))
        return key.group(1), _members(body, key.group(1))


class _Leaf(str):
    """An element's text, not yet placed: a parameter's is the call's text value (typed by the schema); one inside
    an object or array is read as the JSON literal it spells exactly (``3``, ``true``, ``null``), else text."""


def _members(body: list[Any], where: str) -> Any:
    """Elements beside whitespace: an object, or an array when every element is an ``<item>``."""
    if any(isinstance(c, Token) and str(c).strip() for c in body):
        raise ArgumentError(f"text beside the elements of {where}")
    pairs = [(k, _literal(v) if where != "the invoke" and isinstance(v, _Leaf) else
              str(v) if isinstance(v, _Leaf) else v) for k, v in (c for c in body if isinstance(c, tuple))]
    if pairs and all(k == "item" for k, _ in pairs):
        return [v for _, v in pairs]
    return dict(pairs)


def _literal(text: str) -> Any:
    """``text`` as the JSON number, boolean or null it spells exactly (written back the same), else as it is."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, (dict, list, str)) or json.dumps(value) != text:
        return text
    return value


minimax_m3_calls = GrammarDecoder("minimax_m3", _M3Calls())
