"""Model-written JSON: strict first, repaired second. Pure, no I/O.

The fast path is ``json.loads`` (C speed, ``strict=False`` so raw newlines in
strings are accepted). Only when it fails do we repair: code fences are
stripped, ``//`` and ``/* */`` comments outside strings are removed
(``comments_outside_strings`` names them for the ``repaired`` diagnostic),
unclosed strings and brackets are closed (and mismatched closers
fixed), and the text is parsed with the relaxed-JSON Lark grammar
(``grammars/relaxed_json.lark``: single quotes, unquoted keys, trailing commas,
Python literals). Lark was chosen over an ad-hoc regex rewrite because a grammar
states exactly what is accepted and cannot corrupt string contents the way
quote-replacing regexes do.

Invariant: ``loads_relaxed`` returns a value that ``json.dumps`` writes back as
valid JSON (no NaN, no infinity, no integer Python cannot print), or raises
``ArgumentError``; it never raises anything else, whatever the text. With ``expressions=True``
the value may also hold ``Expression`` objects (arithmetic, never evaluated), which ``json.dumps``
refuses: a caller that asks for them refuses them where they would be arguments (``refuse_in_arguments``).
Every string in the value (a key or a value, at any depth) is one quoted token decoded (one cut by the end of
the text, or of its fence, is closed there) or one bare key, as written: no repair reaches inside a string (a ``//`` or
``/*`` between quotes is the string's text), and none joins pieces of text that stood apart (a block comment or
a stray closer leaves a space, a line comment its line break).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from lark import Token, Transformer, v_args
from lark.exceptions import LarkError, VisitError

from .grammar import load_grammar
from .refusals import (ArgumentError, Expression, ExpressionRefused, expression_paths, holds_expression,
                       refuse_expressions, refuse_in_arguments)

__all__ = ["ArgumentError", "Expression", "ExpressionRefused", "expression_paths", "holds_expression",
           "refuse_expressions", "refuse_in_arguments", "number_value", "decode_string_token", "RelaxedJsonToPython", "strip_fences",
           "strip_comments", "comments_outside_strings", "close_open_brackets", "loads_relaxed", "first_line"]


_INTEGER = re.compile(r"[+-]?\d+")


def number_value(text: str) -> int | float:
    """A number as the model wrote it -> int or finite float; ArgumentError for what JSON cannot carry
    back out (an overflowing float such as ``1e999``, an integer past Python's 4300-digit limit)."""
    try:
        value = int(text) if _INTEGER.fullmatch(text) else float(text)
    except ValueError:
        raise ArgumentError(f"number out of range: {text[:40]}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ArgumentError(f"number out of range: {text[:40]}")
    return value


def _no_constant(name: str) -> Any:
    raise ArgumentError(f"{name} is not JSON")


# ``json.loads`` (raw control characters allowed in strings) that refuses NaN, Infinity and numbers JSON cannot
# carry back out: ValueError for all of them. One decoder, made once: ``json.loads`` with options builds a new
# one (and its scanner) per call, which cost more than the decoding of a whole call.
_loads: Callable[[str], Any] = json.JSONDecoder(strict=False, parse_float=number_value, parse_int=number_value,
                                                parse_constant=_no_constant).decode


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", "'": "'", '"': '"'}
_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] == "u" and len(e) == 5:
            return chr(int(e[1:], 16))
        return _ESCAPES.get(e, "\\" + e)

    return _ESCAPE_RE.sub(one, body)


def decode_string_token(token: str) -> str:
    """Decode a quoted string token of either quote kind, tolerating unknown escapes."""
    if token[0] == '"':
        try:
            decoded: str = json.loads(token, strict=False)  # a quoted token: a str or an error
            return decoded
        except ValueError:
            pass
    return _unescape(token[1:-1])


@v_args(inline=True)
class RelaxedJsonToPython(Transformer[Token, Any]):
    """Tree of ``relaxed_json.lark`` -> plain Python values."""

    def string(self, tok: Any) -> str:
        return decode_string_token(str(tok))

    def number(self, tok: Any) -> int | float:
        return number_value(str(tok).lstrip("+"))

    def true(self, _tok: Any) -> bool:
        return True

    def false(self, _tok: Any) -> bool:
        return False

    def null(self, _tok: Any) -> None:
        return None

    def bare_key(self, tok: Any) -> str:
        return str(tok)

    def pair(self, key: Any, value: Any) -> tuple[str, Any]:
        return (str(key), value)

    def object(self, *pairs: Any) -> dict[str, Any]:
        return dict(pairs)

    def array(self, *items: Any) -> list[Any]:
        return list(items)

    def expression(self, *parts: Any) -> Expression:
        return Expression(" ".join(p.text if isinstance(p, Expression) else str(p) for p in parts))

    def dotted(self, *names: Any) -> str:
        return ".".join(str(n) for n in names)

    def parenthesised(self, inner: Expression) -> Expression:
        return Expression(f"({inner.text})")


_FENCE_LABEL = re.compile(r"```[\w+.\-]{0,32}[ \t]{0,8}\r?\n?")


def strip_fences(text: str) -> str:
    """Remove a markdown fence around ``text`` (string operations only: linear on any input)."""
    body = text.strip()
    m = _FENCE_LABEL.match(body)
    if m is None:
        return text
    body = body[m.end() :]
    if body.endswith("```"):
        body = body[:-3]
    return body


_IN_QUOTE = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_COMMENT_OR_QUOTE = re.compile(r"[\"']|//|/\*")


def _comment_spans(text: str) -> list[tuple[int, int]]:
    """Where ``//`` (to the end of its line, the line break kept) and ``/* */`` comments stand outside strings
    of either quote kind. Linear: one regex search per string, comment or escape."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        m = _COMMENT_OR_QUOTE.search(text, i)
        if m is None:
            break
        tok, j = m.group(), m.start()
        if tok in "\"'":
            q = _IN_QUOTE[tok]
            k = j + 1
            while True:
                e = q.search(text, k)
                if e is None:
                    return spans  # an unclosed string runs to the end: no comment after it
                if text[e.start()] == "\\":
                    k = e.start() + 2
                    continue
                i = e.end()
                break
        elif tok == "//":
            stop = text.find("\n", j)
            i = n if stop < 0 else stop
            spans.append((j, i))
        else:
            stop = text.find("*/", j + 2)
            i = n if stop < 0 else stop + 2
            spans.append((j, i))
    return spans


def comments_outside_strings(text: str) -> list[str]:
    """The comments ``strip_comments`` removes from ``text``, as written (trailing spaces dropped)."""
    return [text[a:b].rstrip() for a, b in _comment_spans(text)]


def strip_comments(text: str) -> str:
    """``text`` without its ``//`` and ``/* */`` comments outside strings (a block comment becomes a space,
    a line comment's line break stays)."""
    spans = _comment_spans(text)
    if not spans:
        return text
    pieces, last = [], 0
    for a, b in spans:
        pieces.append(text[last:a])
        if text[a + 1] == "*":
            pieces.append(" ")
        last = b
    pieces.append(text[last:])
    return "".join(pieces)


_STRUCTURE = re.compile(r"[\"'{}\[\]]")


def close_open_brackets(text: str) -> str:
    """Close what a truncated JSON text left open: a string, then brackets.

    A closer that skips open brackets (``[{"a": {}]``) gets the missing closers put before it;
    a closer with nothing open to close becomes a space. A dangling ``,`` at the end is dropped, and so is
    a dangling key with its ``:`` (its value was never written: nothing is invented for it). Linear: each bracket is pushed and popped once, and the text between
    brackets and quotes is skipped by regex searches (a long string costs one search).
    """
    stack: list[str] = []  # the closers still owed, innermost last
    owed = {"}": 0, "]": 0}
    pieces: list[str] = []  # text before ``start``, with closers inserted or dropped
    start = 0
    quote = ""
    escaped = False
    i, n = 0, len(text)
    while i < n:  # one regex search per string, bracket or escape: a long string is skipped in C
        if quote:
            m = _IN_QUOTE[quote].search(text, i)
            if m is None:
                break
            j = m.start()
            if text[j] == "\\":
                escaped = j + 1 >= n
                i = j + 2
            else:
                quote, i = "", j + 1
            continue
        m = _STRUCTURE.search(text, i)
        if m is None:
            break
        i = m.end()
        ch = m.group()
        if ch in "\"'":
            quote = ch
        elif ch in "{[":
            closer = "}" if ch == "{" else "]"
            stack.append(closer)
            owed[closer] += 1
        else:
            if not owed[ch]:  # nothing to close: a space instead (it never joins the words on either side)
                pieces += [text[start : i - 1], " "]
                start = i
                continue
            missing = []
            while stack[-1] != ch:
                missing.append(stack.pop())
                owed[missing[-1]] -= 1
            stack.pop()
            owed[ch] -= 1
            if missing:
                pieces += [text[start : i - 1], "".join(missing)]
                start = i - 1
    text = "".join(pieces) + text[start:]
    if quote:
        text += ("\\" if escaped else "") + quote
    stripped = text.rstrip()
    if stripped.endswith(":") and stack and stack[-1] == "}":
        text = stripped = _without_dangling_key(stripped)  # its value was never written: the member goes, not null
    if stripped.endswith(","):
        text = stripped[:-1]
    return text + "".join(reversed(stack))


def _without_dangling_key(text: str) -> str:
    """``text`` ends with a key and its colon: drop them (and the comma before them). Walks back over the key
    only; a text whose key cannot be found keeps its colon (and then fails to parse)."""
    i = len(text) - 1  # the colon
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if i == 0:
        return text
    quote = text[i - 1]
    if quote in "\"'":
        j = i - 2
        while j >= 0:
            if text[j] == quote:
                k = j
                while k > 0 and text[k - 1] == "\\":
                    k -= 1
                if (j - k) % 2 == 0:
                    break
            j -= 1
        if j < 0:
            return text
    else:
        j = i
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_$-"):
            j -= 1
        if j == i:
            return text
    rest = text[:j].rstrip()
    return rest[:-1] if rest.endswith(",") else rest


def loads_relaxed(text: str, *, expressions: bool = False) -> tuple[Any, bool]:
    """Parse model-written JSON. Returns ``(value, repaired)``.

    Raises ArgumentError when even the relaxed grammar cannot read it, or when it holds an arithmetic
    expression, unless ``expressions``: then each is an :class:`Expression` in the value, and the caller
    must refuse the ones it would use (``refuse_expressions``).
    """
    try:
        return _loads(text), False
    except ValueError:
        pass
    except RecursionError:  # no repair makes it shallower: stop before the slow relaxed parse
        raise ArgumentError("nested too deeply") from None
    candidate = close_open_brackets(strip_comments(strip_fences(text).strip()))
    try:
        return _loads(candidate), True
    except ValueError:
        pass
    except RecursionError:
        raise ArgumentError("nested too deeply") from None
    try:
        value = RelaxedJsonToPython().transform(load_grammar("relaxed_json").parse(candidate))
        if not expressions:
            refuse_expressions(value, "the JSON")
        return value, True
    except VisitError as exc:  # a value the transformer refused (a number out of range)
        raise ArgumentError(str(exc.orig_exc)) from None
    except LarkError as exc:
        raise ArgumentError(f"not JSON, even relaxed: {first_line(exc)}") from None
    except RecursionError:
        raise ArgumentError("nested too deeply") from None


def first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
