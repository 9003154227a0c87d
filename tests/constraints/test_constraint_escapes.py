"""Control characters in GBNF literals and classes read the same in every engine that gets the grammar.

llama.cpp reads ``\\xHH`` as exactly two hex digits; xgrammar (SGLang's ``ebnf``) reads hex digits
after ``\\x`` greedily, so ``"\\x01a"`` would be U+001A there. The writer never lets a hex digit
follow an ``\\xHH`` escape. Checked with xgrammar, with llguidance through ``gbnf_to_lark`` (the test
engine) and through ``grammar_from("grammar", …)`` (vLLM's guidance backend); each engine's tests
skip where it is not installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse.constraints import build_constraint
from streamparse.constraints.gbnf import char_class, literal
from streamparse.dialects.render import render

Engine = Callable[[str, str], bool]


def _xgrammar(grammar: str, text: str) -> bool:
    engine = pytest.importorskip("xgrammar_engine")  # skips without xgrammar
    return bool(engine.accepts(engine.from_ebnf(grammar), text))


def _llguidance_lark(grammar: str, text: str) -> bool:
    engine = pytest.importorskip("grammar_engine")  # skips without llguidance
    return bool(engine.accepts(grammar, text))


def _llguidance_gbnf(grammar: str, text: str) -> bool:
    llguidance = pytest.importorskip("llguidance")
    engine = pytest.importorskip("grammar_engine")
    matcher = llguidance.LLMatcher(engine.TOKENIZER, llguidance.grammar_from("grammar", grammar), log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return all(matcher.consume_token(b) for b in text.encode()) and bool(matcher.is_accepting())


ENGINES = pytest.mark.parametrize("engine", [_xgrammar, _llguidance_lark, _llguidance_gbnf],
                                  ids=["xgrammar", "llguidance-lark", "llguidance-gbnf"])

CONTROL = "\x00\x01\x07\x08\x0b\x0c\x1b\x1f\x7f"
TRICKY = ["\x01a", "\x1bF", "\x1b[0m", "tab\tthen\x0bB", "\x7f1\x7f", "\x00\x00", "ends with \x1f"]


def test_no_hex_digit_follows_a_hex_escape() -> None:
    assert literal("\x01a") == '("\\x01" "a")'
    assert literal("\x01\x02 z") == '"\\x01\\x02 z"'
    assert literal("a\nb\tc\rd") == '"a\\nb\\tc\\rd"'
    for written in (literal("\x1b[0m\x7fF"), char_class("ab12\x01\x1f-^]"), char_class("F\x7f", negate=True)):
        assert not re.search(r"\\x[0-9A-F]{2}[0-9A-Fa-f]", written), written


@ENGINES
@pytest.mark.parametrize("text", TRICKY)
def test_a_literal_with_control_characters_means_itself(engine: Engine, text: str) -> None:
    grammar = f"root ::= {literal(text)}\n"
    assert engine(grammar, text)
    assert not engine(grammar, text + "x")
    assert not engine(grammar, text.replace("\x01", "\x02").replace("\x1b", "\x1c").replace("\x7f", "~")
                      .replace("\x00", "\x01").replace("\x1f", "\x1e").replace("\x0b", "\x0c"))


@ENGINES
def test_a_class_with_control_characters_holds_exactly_them(engine: Engine) -> None:
    members = CONTROL.replace("\x00", "") + "aF9-^]"
    grammar = f"root ::= {char_class(members)}+\n"
    assert engine(grammar, members)
    for outsider in ("b", "G", "\x02", "\x1e", "0"):
        assert not engine(grammar, outsider), repr(outsider)
    negated = f"root ::= {char_class(members, negate=True)}+\n"
    assert engine(negated, "bG0\x02\x1e")
    assert not engine(negated, "b\x1f")


@ENGINES
def test_literals_in_a_repetition_stay_one_atom(engine: Engine) -> None:
    grammar = f'root ::= {literal(chr(1) + "a")}* "!"\n'
    assert engine(grammar, "\x01a\x01a!")
    assert not engine(grammar, "\x01aa!")


@ENGINES
@pytest.mark.parametrize("dialect", ["qwen3_coder", "pythonic"])
def test_enum_values_with_control_characters_in_a_tool_grammar(engine: Engine, dialect: str) -> None:
    """Raw-text values (qwen3_coder) carry the control character itself into the literal."""
    odd = ["\x1bE", "bell\x07", "del\x7f1", "plain"]
    tools = [{"name": "emit", "input_schema": {"type": "object", "properties": {"code": {"enum": odd}},
                                               "required": ["code"]}}]
    grammar = build_constraint(dialect, tools, tool_choice="required").grammar
    for value in odd:
        assert engine(grammar, render(dialect, "emit", {"code": value})), repr(value)
    assert not engine(grammar, render(dialect, "emit", {"code": "\x1bF"}))


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(CONTROL + "0aAfF9gz \\\"[]\n\t\r-^"), max_size=12))
def test_xgrammar_reads_any_literal_as_its_text(text: str) -> None:
    assert _xgrammar(f"root ::= {literal(text)}\n", text)


@ENGINES
@pytest.mark.parametrize("members", ["^", "^-", "-"])
def test_a_class_of_only_a_caret_or_dash_holds_exactly_them(engine: Engine, members: str) -> None:
    """``[^-]`` would be a negation: a class of ``^`` and ``-`` alone is written so every engine reads its members."""
    grammar = f"root ::= {char_class(members)}+\n"
    assert engine(grammar, members)
    assert not engine(grammar, "a")
