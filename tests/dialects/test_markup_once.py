"""Each converted format's markers are written once, in its grammar: its declaration and renderer read them there.

For every dialect in ``CONVERTED``, each literal its declaration holds (openers, the texts its heads and looks check,
end markers, closers, item and value tags, string quotes, the spans it enables) is the text of a terminal of its
grammar, read by ``dialects.markup``; that reading is the one Lark's compiler makes of the same terminals; and no
plain terminal of its grammar (so no marker its renderer writes either) is written in ``streamparse/dialects/*.py``'s
code (docstrings, ``doc=``/``source=`` texts and the ``*_SOURCE`` texts describe formats and are not scanned; one
character and plain words are not looked for), beyond the few occurrences ``ELSEWHERE`` lists, each with its
reason. The families (``xml_family``'s ``XmlCall``, ``kv_family``'s ``KvCall``) are spelled once by their own
declarations and are not listed here.
"""

from __future__ import annotations

import functools
from pathlib import Path
import re
from typing import Iterator

from lark import Lark
from lark.lexer import PatternStr
import pytest

from code_strings import code_strings
from streamparse.arguments.grammar import grammar_text
from streamparse.dialects import DIALECTS, SPANS
from streamparse.dialects.markup import MarkerError, marker, plain_terminals
from streamparse.dialects.spec import LIT, OPT, Dialect

# The dialects whose markers are read from their grammars (dialects/__init__.py and dialects/render.py), by
# importance: the formats most served first. Each reads the grammar named by its declaration's ``grammar``.
CONVERTED = (
    "hermes", "kimi_k2", "deepseek_v3", "deepseek_v31", "deepseek_v32", "deepseek_v41", "gigachat35", "openai",
    "mistral", "mistral_v11", "llama3_json", "gemma4", "functiongemma", "kimi_k3", "olmo3",
    "apertus", "cohere", "granite", "phi4_mini", "hunyuan", "nemotron", "tools_array", "function_tag", "name_tag",
    "pythonic", "lfm2", "internlm", "gigachat3", "solar_open", "plamo3", "tool_use", "llama31_builtin",
    "functionary_v32", "react", "granite_20b_fc", "dots_json", "longcat", "minimax_m3", "command_r",
    # no markup of their own: every literal they check is JSON's (``{``, ``"name"``) or angle_json's bare ``<``/``>``
    "xlam", "tool_calls_json", "generic", "angle_json",
)

# Literals a declaration checks that are not the format's markup: JSON's and Python's own punctuation and keys,
# and a tool's name standing in an opener or closer.
NOT_MARKUP = {"{", "{{", "[", "(", ":", '"', "'", '"name"', '"tool_calls"', "'tool_calls'", '"tool_call"',
              "'tool_call'", "<{", ">", "<{name}>", "</{name}>"}

# Where a scanned literal is still written in dialects/*.py's code, and why (occurrences counted).
ELSEWHERE = {
    # the same text, but not the format's markup
    "call:": (2, "Lark rule syntax in the grammars the families derive: kv_family's 'glm_call:', xml_family's 'call:'"),
    "<tool_use>": (2, "decoders_wild.py's error messages name the element"),
    # another format's own declaration writing the same tag (a family member: its declaration is its one place)
    "<function_calls>": (1, "claude_xml's wrapper (Claude's tag, OLMo 3 writes it too), in its xml_family declaration"),
    "</function_calls>": (1, "claude_xml's wrapper's closer, in its xml_family declaration"),
}


@functools.cache
def _code_strings(path: Path) -> tuple[str, ...]:
    """``path``'s string constants but what describes a format (``doc=``, ``source=``, a ``*_SOURCE`` name)."""
    return code_strings(path.read_text(encoding="utf-8"),
                        lambda name: name in ("doc", "source") or name.endswith("_SOURCE"))


_SOURCES = sorted(Path(__file__).resolve().parents[2].joinpath("streamparse", "dialects").glob("*.py"))


def _occurrences(literal: str) -> int:
    return sum(text.count(literal) for path in _SOURCES for text in _code_strings(path))


def _declared(dialect: Dialect) -> Iterator[str]:
    """Every literal ``dialect``'s declaration (and the spans it enables) holds."""
    for opener in dialect.openers:
        yield opener.text
        for part in (*opener.head, *opener.look):
            if part.kind in (LIT, OPT):
                yield from part.texts
        yield from opener.end or ()
    yield from dialect.end
    yield from dialect.closers
    yield from dialect.item or ()
    yield from dialect.nest or ()
    if dialect.values is not None:
        yield from (*dialect.values.open, dialect.values.close, *dialect.values.next)
    yield from dialect.quotes
    for span in SPANS:
        if span.dialect == dialect.name:
            yield span.opener
            yield from span.closers


def _terminal_of(dialect: Dialect, literal: str) -> str | None:
    """The terminal of the dialect's grammar whose text is ``literal`` (heads check lowercased text)."""
    found = [name for name, text in plain_terminals(dialect.grammar).items() if text.lower() == literal.lower()]
    return found[0] if found else None


def _scanned(text: str) -> bool:
    """Whether a marker is distinctive enough to look for in source text (not one character, nor a plain word)."""
    return len(text) >= 3 and not text.isalnum()


@pytest.mark.parametrize("name", CONVERTED)
def test_every_marker_the_declaration_holds_is_a_terminal_of_its_grammar(name: str) -> None:
    dialect = DIALECTS[name]
    stray = [lit for lit in _declared(dialect) if lit not in NOT_MARKUP and _terminal_of(dialect, lit) is None]
    assert not stray, f"{name}: not terminals of grammars/{dialect.grammar}.lark: {stray}"


_GRAMMARS = sorted({DIALECTS[name].grammar for name in CONVERTED})


@pytest.mark.parametrize("grammar", _GRAMMARS)
def test_no_marker_of_the_grammar_is_written_again_in_the_dialects_code(grammar: str) -> None:
    """Every plain terminal of the grammar (the markers its declarations and renderer read, and the item's own),
    looked for in the code of streamparse/dialects/*.py."""
    written = {text: _occurrences(text) for text in plain_terminals(grammar).values() if _scanned(text)}
    allowed = {text: ELSEWHERE.get(text, (0, ""))[0] for text in written}
    wrong = {text: (found, allowed[text]) for text, found in written.items() if found != allowed[text]}
    assert not wrong, f"{grammar}: markers written in streamparse/dialects/*.py's code (found, allowed): {wrong}"


def _imports(base_path: object, grammar_path: str) -> tuple[str, str]:
    name = grammar_path.removesuffix(".lark")
    return name, grammar_text(name)


@pytest.mark.parametrize("grammar", _GRAMMARS)
def test_the_markers_read_are_what_lark_compiles_the_same_terminals_to(grammar: str) -> None:
    """Every plain terminal, used by a rule or not, compiled by Lark (a rule that takes any of them added): its
    pattern is the text ``markers`` reads."""
    read = plain_terminals(grammar)
    if not read:
        return
    check = "\nmarkers_check: " + " | ".join(sorted(read)) + "\n"
    lark = Lark(grammar_text(grammar) + check, parser="lalr", start="markers_check", import_paths=[_imports])
    for name, text in read.items():
        pattern = lark.get_terminal(name).pattern
        if isinstance(pattern, PatternStr):
            assert pattern.value == text, (grammar, name)
        else:  # strings joined: Lark compiles them into one regex
            assert re.fullmatch(pattern.to_regexp(), text), (grammar, name, pattern)


def test_a_marker_the_grammar_does_not_spell_as_plain_text_is_refused_by_name() -> None:
    with pytest.raises(MarkerError, match="ARGS of grammar 'kimi_k2' is not plain text"):
        marker("kimi_k2", "ARGS")  # a regex
    with pytest.raises(MarkerError, match="_NOPE of grammar 'kimi_k2' is not defined"):
        marker("kimi_k2", "_NOPE")


def test_escapes_are_read_as_lark_reads_them() -> None:
    assert marker("gemma4", "_QUOTE") == '<|"|>'
    assert marker("functionary_v32", "_ALL") == ">>>all\n"
