"""A format's markers, read by terminal name from its grammar: the grammar is the one place each is written.

Invariant: ``marker(grammar, terminal)`` is the text the terminal ``terminal`` of ``grammar`` stands for
(``arguments.grammar.grammar_text``: ``grammars/<grammar>.lark``), read from the grammar's definitions by Lark's own
grammar of grammars (``lark.lark``, which Lark ships): a string literal (``"<|tool_call_begin|>"``; the escapes
``\\\\ \\" \\n \\t \\r`` read as Lark reads them; an ``i`` flag leaves the text as written), or a sequence of string
literals and such terminals (``_COMMENTARY_TO: _CHANNEL "commentary to="``), which Lark joins into one pattern.
Anything else (a regex, an alternation, an operator, another escape, a missing name) raises ``MarkerError`` naming
the grammar and the terminal, at the import of the declaration that asks. A terminal no rule uses (a section marker
the scanner reads and the item grammar never sees) is read all the same: Lark leaves it out of the parser, not out
of the grammar. Each grammar's text is read once per process (about 1.5 ms each, after 30 ms for ``lark.lark``).
"""

from __future__ import annotations

import functools

from lark import Lark, Token, Tree

from ..arguments.grammar import grammar_text

__all__ = ["MarkerError", "in_lark_regex", "marker", "markers", "pair", "plain_terminals"]


class MarkerError(ValueError):
    """A declaration asked a grammar for a marker the grammar does not spell as plain text."""


@functools.cache
def _grammar_of_grammars() -> Lark:
    """Lark's grammar of its own syntax (its basic lexer: built in two thirds of the contextual one's time, and
    reading every grammar in ``grammars/`` to the same trees)."""
    return Lark.open_from_package("lark", "lark.lark", ("grammars",), parser="lalr", lexer="basic")


@functools.cache
def _definitions(grammar: str) -> dict[str, object]:
    """The grammar's terminal definitions by name: each the body after ``NAME[.priority]:``."""
    tree = _grammar_of_grammars().parse(grammar_text(grammar) + "\n")
    return {str(definition.children[0]): definition.children[-1] for definition in tree.find_data("token")}


_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r"}


def _string(literal: Token) -> str | None:
    """A Lark string literal's text (``"…"`` or ``"…"i``), its escapes ``\\\\ \\" \\n \\t \\r`` read as Lark reads
    them; None when it holds another escape."""
    inner = literal.removesuffix("i")[1:-1]
    text, escaped = [], False
    for char in inner:
        if escaped:
            if char not in _ESCAPES:
                return None
            text.append(_ESCAPES[char])
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            text.append(char)
    return "".join(text)


def _text(grammar: str, node: object, seen: tuple[str, ...]) -> str | None:
    """What ``node`` (a part of a terminal's body) stands for when it is plain text, else None."""
    if isinstance(node, Tree):
        if node.data == "alias" and node.children[1:] == [None]:
            return _text(grammar, node.children[0], seen)
        if node.data == "expr" and all(c is None for c in node.children[1:]):
            return _text(grammar, node.children[0], seen)
        if node.data == "expansion":
            parts = [_text(grammar, c, seen) for c in node.children]
            return None if None in parts else "".join(p for p in parts if p is not None)
        if node.data == "literal" and len(node.children) == 1:
            token = node.children[0]
            return _string(token) if isinstance(token, Token) and token.type == "STRING" else None
        if node.data == "name" and len(node.children) == 1:
            name = str(node.children[0])
            body = _definitions(grammar).get(name)
            return None if body is None or name in seen else _text(grammar, body, (*seen, name))
    return None


@functools.cache
def plain_terminals(grammar: str) -> dict[str, str]:
    """Every terminal of ``grammar`` that stands for plain text, with that text."""
    texts = {name: _text(grammar, body, (name,)) for name, body in _definitions(grammar).items()}
    return {name: text for name, text in texts.items() if text is not None}


def marker(grammar: str, terminal: str) -> str:
    """The text of ``terminal`` in ``grammar``; ``MarkerError`` when it has none or it is not plain text."""
    found = plain_terminals(grammar).get(terminal)
    if found is None:
        defined = terminal in _definitions(grammar)
        why = "is not plain text (a string, or strings joined)" if defined else "is not defined"
        raise MarkerError(f"terminal {terminal} of grammar {grammar!r} {why}: the declaration cannot read its marker")
    return found


def markers(grammar: str, *terminals: str) -> tuple[str, ...]:
    """``marker`` for each of ``terminals``, in order."""
    return tuple(marker(grammar, t) for t in terminals)


def pair(grammar: str, opener: str, closer: str) -> tuple[str, str]:
    """The markers of an opener and its closer."""
    return marker(grammar, opener), marker(grammar, closer)


def in_lark_regex(pattern: str) -> str:
    """``pattern`` written inside a Lark ``/regex/`` (its slashes escaped): the families write their grammars so."""
    return pattern.replace("/", r"\/")
