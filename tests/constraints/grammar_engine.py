"""A real grammar engine for the constraint tests: llguidance, fed one byte per token.

Invariant: ``accepts`` answers what the engine answers (the GBNF goes through llguidance's own
``gbnf_to_lark``); ``lazy_accepts`` adds llama.cpp's lazy rule on top: text before the trigger
is free, and the grammar is fed from the first non-empty capture group of the first trigger that
matches (``llama_grammar_trigger_pattern::find``). Skips the tests where llguidance is missing.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

llguidance = pytest.importorskip("llguidance")
from llguidance.gbnf_to_lark import gbnf_to_lark  # noqa: E402

EOS = 256


class _ByteTokens:
    """Token i is byte i; token 256 ends the text."""

    eos_token_id = EOS
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [EOS]

    def __call__(self, text: bytes | str) -> list[int]:
        return list(text.encode() if isinstance(text, str) else text)


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokens()))


_TERMINAL = re.compile(r'"(?:[^"\\]|\\.)*"|/(?:[^/\\]|\\.)*/|\b[A-Z][A-Z0-9_]*\b')


@functools.lru_cache(maxsize=256)
def lark(grammar: str) -> str:
    """The GBNF as llguidance's Lark, every named rule a parser rule.

    ``gbnf_to_lark`` makes a rule built only of literals one lexeme; llguidance's lexer does
    not backtrack, so two such lexemes sharing a prefix (two calls' openers) would lose the
    shorter one. With every name lower-cased, lexemes are the literals and classes alone, and
    the engine reads the grammar as llama.cpp's and xgrammar's character-level matchers do.
    """
    text = str(gbnf_to_lark(grammar))
    return _TERMINAL.sub(lambda m: m.group(0).lower() if m.group(0)[0] not in "\"/" else m.group(0), text)


def compiles(grammar: str) -> None:
    matcher = llguidance.LLMatcher(TOKENIZER, lark(grammar), log_level=0)
    assert not matcher.is_error(), matcher.get_error()


def accepts(grammar: str, text: str, *, complete: bool = True) -> bool:
    """Whether the engine takes ``text`` (and, with ``complete``, may end there)."""
    matcher = llguidance.LLMatcher(TOKENIZER, lark(grammar), log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    for token in text.encode():
        if not matcher.consume_token(token) or matcher.is_error():
            return False
    return matcher.is_accepting() if complete else True


def trigger_start(triggers: list[dict[str, Any]], text: str) -> int | None:
    """Where llama.cpp starts feeding the grammar (None: no trigger in ``text``)."""
    for trigger in triggers:
        assert trigger["type"] == 3, "only full-text patterns are written"
        match = re.fullmatch(trigger["value"], text)
        if match:
            groups = [i for i in range(1, (match.lastindex or 0) + 1) if match.group(i)]
            return match.start(groups[0]) if groups else match.start()
    return None


def lazy_accepts(fields: dict[str, Any], text: str) -> bool:
    """llama.cpp's lazy grammar over ``text``: free until a trigger, then the grammar to the end."""
    start = trigger_start(fields["grammar_triggers"], text)
    return True if start is None else accepts(fields["grammar"], text[start:])
