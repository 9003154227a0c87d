"""Decoders: one item's text -> ``[(name, arguments)]``. Pure functions; they raise ArgumentError.

Invariant: a decoder sees one complete item (a JSON value, a ``<function=…>`` element,
a ``<tool_call>`` body...) and never the stream. JSON goes through ``json.loads`` first
and the relaxed-JSON grammar only on failure; the tag dialects are read by their
Lark grammar (its compiled program, or Lark) and folded by ``Rules``, one method per rule. The XML-parameter
family (Qwen3-Coder, MiniMax, ...) is derived from its markup in ``xml_family``, the key/value family (GLM, ...)
in ``kv_family``.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from typing import Any, Callable

from lark import Token, Transformer
from lark.visitors import merge_transformers

from ..arguments.grammar import load_grammar
from ..arguments.relaxed_json import Expression, refuse_in_arguments
from ..arguments.schema import ArgumentError, RelaxedJsonToPython, arguments_from_text, call_from_object, decode_string_token, first_line, loads_calls, number_value
from .grammar_program import fold_tree, program_for
from .markup import marker
from .spec import Calls

Decoded = tuple[Calls, bool]  # (calls, repaired)


# --------------------------------------------------------------------------- JSON bodies

def json_calls(text: str, head_name: str | None) -> Decoded:
    """A JSON item: a call object, an array of them, ``{"tool_calls": [...]}``, or (when the
    head gave the name) the arguments object itself. A call object wrapped in doubled braces
    (``{{"name": …, "arguments": {…}}}``: Qwen2.5-Coder-1.5B behind llama.cpp writes it) is read as a repair."""
    doubled = _doubled_call(text) if head_name is None else None
    if doubled is not None:
        return [call_from_object(doubled)], True
    value, repaired = loads_calls(text)  # expressions: refused below where they would be arguments
    if head_name is not None:
        if not isinstance(value, dict):
            raise ArgumentError(f"arguments of {head_name!r} must be an object")
        refuse_in_arguments(head_name, value)
        return [(head_name, value)], repaired
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ArgumentError("no calls in block")
    return [call_from_object(item) for item in items], repaired


def _doubled_call(text: str) -> dict[str, Any] | None:
    """The call object inside ``{{…}}``, when that is exactly one call object with one brace too many on each side."""
    inner = text.strip()
    if not (inner.startswith("{{") and inner.endswith("}}")):
        return None
    try:
        value = json.loads(inner[1:-1])
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("name"), str) else None


def _json_arguments(name: str, text: str) -> tuple[tuple[str, Any], bool]:
    """Arguments written as JSON text after a name (Kimi, DeepSeek, harmony): read as a call object's
    string arguments are (``arguments_from_text``), so an expression in them keeps the block as text."""
    text = text.strip()
    if not text:
        return (name, {}), True  # no arguments written: {} is assumed (and an end-of-stream cut is not a call)
    arguments, repaired = arguments_from_text(name, text)
    return (name, arguments), repaired


# --------------------------------------------------------------------------- grammar-based decoders

_CALL_INDEX = re.compile(r":\d+$")  # a Kimi call id's index after the name


class _OpenPair(tuple[str, str]):
    """A GLM pair whose ``</arg_value>`` was left out: the call is read as a repair."""


class Rules:
    """A grammar's actions, one method per rule (named as the rule): given the rule's children (its tokens, and the
    values of the rules under it), it gives the rule's value, as a Lark ``Transformer`` method would. The grammar's
    program folds an item through them as it reads it (``GrammarProgram.fold``); a tree Lark parsed, the same way
    (``fold_tree``). ``token_types``: the methods ask a token's type (``Token.type``); without it, a token the
    program reads is given as its bare text (Lark's tokens, where Lark parses, are strings all the same)."""

    token_types = True

    def actions(self) -> dict[str, Callable[[list[Any]], Any]]:
        """The rules' methods by name: every public method but this one (a rule's name never starts with ``_``)."""
        return {name: getattr(self, name) for name in dir(self)
                if not name.startswith("_") and name != "actions" and callable(getattr(self, name))}


class _TagCalls(Rules):
    """Trees of the tag grammars -> ``((name, arguments), repaired)`` per call. One method per rule."""

    token_types = False

    def start(self, children: list[Any]) -> Any:
        return [c for c in children if isinstance(c, tuple)]  # the calls (a token is a string)

    # glm45: NAME then <arg_key>/<arg_value> pairs
    def glm_call(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        name, *pairs = children
        repaired = bool(pairs) and isinstance(pairs[-1], _OpenPair)
        return (str(name).strip(), dict(pairs)), repaired

    def pair(self, children: list[Any]) -> tuple[str, str]:
        return str(children[0]).strip(), str(children[1]) if len(children) > 1 else ""

    def open_pair(self, children: list[Any]) -> tuple[str, str]:
        return _OpenPair(self.pair(children))

    # kimi_k2: functions.NAME:IDX <|tool_call_argument_begin|> {json}
    def kimi_call(self, children: list[Any]) -> tuple[tuple[str, Any], bool]:
        call_id, *args = children
        name = _CALL_INDEX.sub("", str(call_id).strip()).removeprefix(marker("kimi_k2", "_FUNCTIONS"))
        return _json_arguments(name, str(args[0]) if args else "")

    # deepseek v3: function<｜tool▁sep｜>NAME ```json {…} ```; v3.1: NAME<｜tool▁sep｜>{…}
    def deepseek_call(self, children: list[Any]) -> tuple[tuple[str, Any], bool]:
        name, *args = children
        return _json_arguments(str(name).strip(), str(args[0]) if args else "")

    # plamo3: NAME … <|plamo:msg|>{json}
    def plamo_call(self, children: list[Any]) -> tuple[tuple[str, Any], bool]:
        return self.deepseek_call(children)


class _TypedTagCalls(_TagCalls):
    """The tag grammars whose tokens are told apart by type (optional ones side by side)."""

    token_types = True

    # solar_open: [ID] <|tool_call:name|> NAME <|tool_call:args|> {json}
    def solar_call(self, children: list[Any]) -> tuple[tuple[str, Any], bool]:
        name = next(c for c in children if isinstance(c, Token) and c.type == "NAME")
        args = [c for c in children if isinstance(c, Token) and c.type == "ARGS"]
        return _json_arguments(str(name).strip(), str(args[0]) if args else "")

    # openai (harmony): functions.NAME … <|message|>{json}
    def harmony_call(self, children: list[Any]) -> tuple[tuple[str, Any], bool]:
        recipient, *args = [c for c in children if not (isinstance(c, Token) and c.type == "META")]
        return _json_arguments(str(recipient).strip().removeprefix(marker("openai", "_FUNCTIONS")),
                               str(args[0]) if args else "")


class PythonCalls(Rules):
    """Tree of ``pythonic.lark`` -> calls: literals only, keyword arguments only."""

    def start(self, calls: list[Any]) -> list[Any]:
        return calls

    def call(self, children: list[Any]) -> tuple[tuple[str, dict[str, Any]], bool]:
        name, *args = children
        return (str(name), dict(args)), False

    def expression(self, parts: list[Any]) -> Expression:
        return Expression(" ".join(map(str, parts)))

    def arg(self, children: list[Any]) -> tuple[str, Any]:
        key, value = children
        return str(key), value

    def string(self, parts: list[Any]) -> str:
        return "".join(_python_string(str(p)) for p in parts)

    def number(self, children: list[Any]) -> int | float:
        return _python_number(str(children[0]))

    def true(self, _: list[Any]) -> bool:
        return True

    def false(self, _: list[Any]) -> bool:
        return False

    def none(self, _: list[Any]) -> None:
        return None

    def list(self, items: builtins.list[Any]) -> builtins.list[Any]:  # lists and tuples alike
        return items

    def dict(self, pairs: builtins.list[Any]) -> builtins.dict[Any, Any]:
        return {k: v for k, v in pairs}

    def kv(self, children: builtins.list[Any]) -> tuple[Any, Any]:
        key, value = children
        if isinstance(key, (dict, list, Expression)):  # an expression is no key either (and never evaluated)
            raise ArgumentError("a dict key must be a literal")
        return key, value


_UNDERSCORED = re.compile(r"[+-]?\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?(?:[eE][+-]?\d+(?:_\d+)*)?")


def _python_number(text: str) -> int | float:
    """A Python number literal as Python reads it (``0x1F``, ``0o17``, ``0b101``, ``1_000``); JSON can carry
    only finite values, and an underscore goes only between digits."""
    if text.lstrip("+-")[1:2] in ("x", "X", "o", "O", "b", "B"):
        try:
            return int(text, 0)
        except ValueError:  # a misplaced underscore, or past Python's digit limit
            raise ArgumentError(f"not a Python number: {text[:40]}") from None
    if "_" in text:
        if not _UNDERSCORED.fullmatch(text):
            raise ArgumentError(f"not a Python number: {text[:40]}")
        text = text.replace("_", "")
    return number_value(text)


_ESCAPE_PAIR = re.compile(r"\\(.)", re.S)
_PYTHON_ESCAPES = frozenset("\n\\'\"abfnrtvx01234567NuU")


def _keep_unknown_escape(m: re.Match[str]) -> str:
    return m.group(0) if m.group(1) in _PYTHON_ESCAPES else "\\" + m.group(0)


def _python_string(token: str) -> str:
    """A Python string literal (any quotes, prefixes, escapes); bytes are not text, so not an argument.
    An unknown escape (``\\ ``, ``\\d``) keeps its backslash, as Python does, without Python's warning."""
    quote = token[:1]
    if quote in ("'", '"') and len(token) >= 2 and token[-1] == quote and quote not in token[1:-1] \
            and "\\" not in token and "\n" not in token:
        return token[1:-1]  # a plain one-quote string: its text is its value (what literal_eval would give)
    if "\\" in token and token[:1] not in "rR" and token[1:2] not in "rR":
        token = _ESCAPE_PAIR.sub(_keep_unknown_escape, token)
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError, MemoryError):
        return decode_string_token(token.lstrip("rRuU"))
    if not isinstance(value, str):
        raise ArgumentError("a bytes literal is not a valid argument")
    return value


_PY_STRUCT = re.compile(r"""'{3}|"{3}|['"(\[{)\]},]""")
_PY_STRING_END = {q: re.compile(r"\\.|" + re.escape(q), re.S) for q in ("'", '"', "'''", '"""')}


def python_list_elements(text: str) -> list[str] | None:
    """The top-level elements of a Python list literal, each as written (stripped), or None when ``text`` is not
    one balanced list. Linear: strings (any quotes, escapes) are skipped by regex searches; never recursive."""
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        return None
    elements: list[str] = []
    depth, start, i, n = 0, 1, 0, len(body)
    while i < n:
        m = _PY_STRUCT.search(body, i)
        if m is None:
            return None
        tok, i = m.group(), m.end()
        if tok[0] in "'\"":
            end = _PY_STRING_END[tok]
            while True:
                e = end.search(body, i)
                if e is None:
                    return None
                i = e.end()
                if e.group() == tok:
                    break
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
            if depth == 0:
                if i != n:
                    return None  # the list closed before the end: not one list
                elements.append(body[start : i - 1].strip())
            elif depth < 0:
                return None
        elif depth == 1:  # a comma between elements
            elements.append(body[start : i - 1].strip())
            start = i
    if depth != 0:
        return None
    if elements and not elements[-1]:
        elements.pop()  # a trailing comma, or an empty list
    return elements


class GrammarDecoder:
    """One item -> its calls, read by ``grammar`` (its program, or Lark where the program declines) and folded by
    ``rules``. A rule that refuses what it read raises its own ``ArgumentError``; anything else unreadable says so."""

    __slots__ = ("grammar", "rules", "_actions")

    def __init__(self, grammar: str, rules: Rules):
        self.grammar, self.rules = grammar, rules
        self._actions: dict[str, Callable[[list[Any]], Any]] | None = None

    @property
    def actions(self) -> dict[str, Callable[[list[Any]], Any]]:
        """The rules' methods by rule name (gathered on first use)."""
        if self._actions is None:
            self._actions = self.rules.actions()
        return self._actions

    def __call__(self, text: str, head_name: str | None) -> Decoded:
        grammar, actions = self.grammar, self.actions
        try:
            program = program_for(grammar)
            results = program.fold(text, actions, self.rules.token_types) if program is not None else None
            if results is None:  # not compiled, or not read by the program: Lark parses (and names what is wrong)
                results = fold_tree(load_grammar(grammar).parse(text), actions)
        except ArgumentError:
            raise
        except Exception as exc:  # noqa: BLE001 - Lark's error, or a rule's on what it could not read: unreadable
            raise ArgumentError(f"{grammar}: unreadable block: {first_line(exc)}") from None
        if not results:
            raise ArgumentError(f"{grammar}: no calls in block")
        for (name, arguments), _ in results:  # an expression is never evaluated: the block stays text
            refuse_in_arguments(name, arguments)
        return [call for call, _ in results], any(repaired for _, repaired in results)

    def __repr__(self) -> str:
        return f"GrammarDecoder({self.grammar!r}, {type(self.rules).__name__})"


kimi_calls = GrammarDecoder("kimi_k2", _TagCalls())
deepseek_v3_calls = GrammarDecoder("deepseek_v3", _TagCalls())
deepseek_v31_calls = GrammarDecoder("deepseek_v31", _TagCalls())
harmony_calls = GrammarDecoder("openai", _TypedTagCalls())
solar_open_calls = GrammarDecoder("solar_open", _TypedTagCalls())
plamo3_calls = GrammarDecoder("plamo3", _TagCalls())
pythonic_calls = GrammarDecoder("pythonic", PythonCalls())




class _Envelope(Transformer[Token, list[Any]]):
    """``start`` of a JSON dialect's grammar -> the JSON values it holds (markers dropped)."""

    def start(self, children: list[Any]) -> list[Any]:
        return [c for c in children if c is not None and not isinstance(c, Token)]


def check_json_grammar(grammar: str, block: str) -> list[Any]:
    """Parse a whole JSON-bodied block with its dialect's grammar (the definition the json.loads reading is held to)."""
    # lark leaves merge_transformers unannotated; it returns the base transformer it was given.
    transformer: _Envelope = merge_transformers(_Envelope(), relaxed_json=RelaxedJsonToPython())  # type: ignore[no-untyped-call]
    return transformer.transform(load_grammar(grammar).parse(block))


__all__ = [
    "GrammarDecoder", "Rules", "json_calls", "kimi_calls", "deepseek_v3_calls",
    "deepseek_v31_calls", "harmony_calls", "solar_open_calls", "plamo3_calls", "pythonic_calls", "check_json_grammar",
    "python_list_elements",
]
