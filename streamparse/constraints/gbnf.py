"""A small GBNF writer: named rules, escaped literals, character classes, text that avoids words.

Invariant: every rule body this module writes uses only the GBNF subset that llama.cpp,
xgrammar's EBNF reader and llguidance's ``gbnf_to_lark`` all read the same way: double-quoted
literals (``\\\\``, ``\\"``, ``\\n``, ``\\r``, ``\\t``, ``\\xHH`` escapes, other characters as UTF-8),
character classes with the same escapes, ``( )``, ``|``, ``?``, ``*``, ``+`` and ``{m,n}``.
An ``\\xHH`` escape is never followed by a hex digit: xgrammar reads ``\\x`` digits greedily
(``"\\x01a"`` is U+001A there, U+0001 then ``a`` in llama.cpp), so a literal is cut there into
adjacent literals, in parentheses, and a class writes its ``\\x`` escapes last. (``\\u`` is no way
out: llguidance's GBNF reader drops its leading zeros, ``\\u0001a`` becoming ``\\u1a``.)
Rule names are ``[a-z][a-z0-9-]*``; the same body asked for twice gets one rule.
"""

from __future__ import annotations

import functools
import re

__all__ = ["Grammar", "literal", "char_class"]

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# In a class, "]", "[" and "\\" are escaped; "-" stands last and "^" never first, so both are literal
# without an escape (xgrammar reads "\\x" hex digits greedily, llama.cpp knows no "\\^" or "\\-").
_CLASS_ESCAPES = {**_ESCAPES, "]": "\\]", "[": "\\["}


def _escape(char: str, table: dict[str, str]) -> str:
    if char in table:
        return table[char]
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\x{ord(char):02X}"
    return char


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def literal(text: str) -> str:
    """``text`` as a GBNF string literal (the empty string is ``""``); where a hex digit follows
    an ``\\xHH`` escape, adjacent literals in parentheses (one atom wherever a literal stands)."""
    pieces: list[str] = []
    run, after_hex = "", False
    for char in text:
        if after_hex and char in _HEX_DIGITS:
            pieces.append(run)
            run = ""
        escaped = _escape(char, _ESCAPES)
        run += escaped
        after_hex = escaped.startswith("\\x")
    pieces.append(run)
    quoted = " ".join(f'"{p}"' for p in pieces)
    return quoted if len(pieces) == 1 else f"({quoted})"


def char_class(chars: str, *, negate: bool = False) -> str:
    """A character class holding (or, negated, excluding) exactly ``chars``."""
    chosen = set(chars)
    dash, caret = "-" in chosen, "^" in chosen
    escaped = [_escape(c, _CLASS_ESCAPES) for c in sorted(chosen - {"-", "^"})]
    # "\\xHH" escapes last: what follows each is another escape, "^", "-" or "]", never a hex digit
    body = "".join(sorted(escaped, key=lambda e: e.startswith("\\x")))
    if caret:
        if not body and not negate:  # "[^]", "[^-]" would read as negations
            return "[-^]" if dash else literal("^")
        body += "^"
    return f"[{'^' if negate else ''}{body}{'-' if dash else ''}]"


def _fold(text: str) -> str:
    """ASCII letters in lower case (the parser matches markers ignoring ASCII case)."""
    return "".join(c.lower() if c.isascii() else c for c in text)


@functools.lru_cache(maxsize=64)
def _automaton(words: tuple[str, ...], after: str) -> tuple[list[str], dict[str, list[tuple[str, str | None]]], str]:
    """The Aho-Corasick automaton of ``words`` (already case-folded), read ignoring ASCII case: its states
    (partial matches, "" first), each state's transitions that do not lead back to "" (None: a word is
    complete), and the state after ``after``."""
    known = {w[:i] for w in words for i in range(len(w))}
    prefixes = sorted(known, key=lambda p: (len(p), p))
    alphabet = sorted({v for w in words for c in w for v in (c, c.upper() if c.isascii() else c)})

    def step(state: str, char: str) -> str | None:
        seen = state + _fold(char)
        if any(seen.endswith(w) for w in words):
            return None
        return next((seen[i:] for i in range(len(seen) + 1) if seen[i:] in known), "")

    table: dict[str, list[tuple[str, str | None]]] = {}
    for state in prefixes:
        table[state] = [(char, nxt) for char in alphabet for nxt in [step(state, char)] if nxt != ""]
    start = ""
    for char in after:
        start = step(start, char) or ""
    return prefixes, table, start


class Grammar:
    """Rules in the order they were first named; ``root`` is written first."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._by_body: dict[str, str] = {}
        self._used: set[str] = set()

    def name(self, hint: str) -> str:
        """A fresh rule name from ``hint`` (reserved, not yet defined)."""
        base = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-")[:40]
        base = base if base[:1].isalpha() else f"r-{base}".rstrip("-")  # names start with a letter everywhere
        name, n = base, 1
        while name in self._used or name == "root":
            n += 1
            name = f"{base}-{n}"
        self._used.add(name)
        return name

    def define(self, name: str, body: str) -> str:
        """Set the body of a reserved (or new) rule; returns its name."""
        self._used.add(name)
        self.rules[name] = body
        return name

    def rule(self, hint: str, body: str) -> str:
        """A rule with ``body``, shared with any earlier rule of the same body."""
        if body in self._by_body:
            return self._by_body[body]
        name = self.define(self.name(hint), body)
        self._by_body[body] = name
        return name

    def text(self) -> str:
        """The grammar as GBNF text, ``root`` first."""
        if "root" not in self.rules:
            raise ValueError("a grammar needs a root rule")
        order = ["root", *[n for n in self.rules if n != "root"]]
        return "".join(f"{n} ::= {self.rules[n]}\n" for n in order)

    # ----------------------------------------------------------------- text that avoids words

    def avoiding(self, hint: str, words: tuple[str, ...], *, after: str = "") -> str:
        """A rule for any text (the empty one too) in which none of ``words`` occurs, in any ASCII letter case.

        ``after`` is text taken as already read: ``after="\\n"`` makes a word that starts with
        a newline count at the very start too (``"\\n{"`` then also forbids a ``{`` first).
        The rule is the words' Aho-Corasick automaton, one GBNF rule per partial match.
        """
        words = tuple(sorted({_fold(w) for w in words if w}))
        if not words:
            return self.rule("any-text", "[^\\x00]*")  # every character a model writes
        prefixes, table, start = _automaton(words, after)
        names = {p: self.name(f"{hint}-{i}") for i, p in enumerate(prefixes)}
        for state in prefixes:
            alternatives, special = ['""'], ""
            for char, nxt in table[state]:
                special += char
                if nxt is not None:
                    alternatives.append(f"{literal(char)} {names[nxt]}")
            alternatives.append(f"{char_class(special, negate=True)} {names['']}")
            self.define(names[state], " | ".join(alternatives))
        return names[start]
