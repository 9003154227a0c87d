"""The lexical side of re-emitting JSON (``stream_json``): token and string patterns, escapes, bare scalars.

Invariant: pure data and pure functions of ``str``; nothing here keeps state between calls.
"""

from __future__ import annotations

import json
import re

from ..arguments.schema import ArgumentError, number_value

__all__ = ["TOKEN", "WORD_END", "IN_STRING", "PLAIN", "SIMPLE_ESCAPES", "HEX", "JSON_WS", "ESCAPES", "escaped", "scalar",
           "comment_end"]

# A "/" is a token of its own (a comment may start there) and ends a word; ``stream_json`` joins a "/" that
# starts no comment back into its word.
TOKEN = re.compile(r"""\s+|[{}\[\]:,"'/]|[^\s{}\[\]:,"'/]+""")
WORD_END = re.compile(r"""[\s{}\[\]:,"'/]""")
IN_STRING = {'"': re.compile(r'["\\\x00-\x1f]'), "'": re.compile("['\"\\\\\\x00-\\x1f]")}
# Text inside a string that needs no repair and cannot end it: plain characters and complete JSON escapes.
# (runs of plain characters with one escape between runs: sre reads a run in one step)
PLAIN = {q: re.compile(r"[^{0}\\\x00-\x1f]*+(?:\\(?:[\"\\/bfnrt]|u[0-9a-fA-F]{{4}})[^{0}\\\x00-\x1f]*+)*+".format(
    q if q == '"' else "'\"")) for q in "\"'"}
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": "true", "false": "false", "null": "null", "True": "true", "False": "false", "None": "null"}
SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
HEX = frozenset("0123456789abcdefABCDEF")
JSON_WS = frozenset(" \t\r\n")
ESCAPES = {i: f"\\u{i:04x}" for i in range(32)} | {ord("\""): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n",
                                                   ord("\r"): "\\r", ord("\t"): "\\t", ord("\b"): "\\b", ord("\f"): "\\f"}


def escaped(s: str) -> str:
    """``s`` as the inside of a JSON string, as ``json.dumps(s, ensure_ascii=False)`` writes it."""
    return s.translate(ESCAPES)


def scalar(word: str) -> str:
    """A bare word in value position, as JSON text."""
    if word in _LITERALS:
        return _LITERALS[word]
    if _JSON_NUMBER.fullmatch(word):
        return word
    try:
        return json.dumps(number_value(word.lstrip("+")))
    except (ArgumentError, ValueError):
        return json.dumps(word, ensure_ascii=False)


def comment_end(state: str, text: str, i: int, n: int) -> tuple[str, int]:
    """Inside a comment (``state`` "//", "/*", or "/**" when a "*" ended the last piece): ``("", end)`` when
    it ends in ``text[i:n]`` (a line comment before its line break, a block comment after its ``*/``),
    else ``(state, n)``."""
    if state == "//":
        j = text.find("\n", i, n)
        return ("", j) if j >= 0 else (state, n)
    if state == "/**" and text[i] == "/":
        return "", i + 1
    j = text.find("*/", i, n)
    if j >= 0:
        return "", j + 2
    return ("/**" if text.endswith("*", i, n) else "/*"), n
