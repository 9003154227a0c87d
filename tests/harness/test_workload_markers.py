"""The benchmark's workloads spell no format's markup themselves: they read every marker from the declarations.

For each format the workloads write (``RENDERERS``), its markers are gathered from its declaration: the plain
terminals of its grammar (``dialects.markup``), its openers, end markers, closers, item and nest tags, the spans it
enables, and a family member's ``XmlCall``/``KvCall`` tags. None of them may be written in the code of
``streamparse/harness/workloads.py`` (its string constants and the literal parts of its f-strings; docstrings and
comments describe and are not read). One character and plain words (``function``) are not looked for: they are
not distinctive. The workloads still carry those markers (they are read, not dropped), which the last tests show.
"""

from __future__ import annotations

from pathlib import Path
import re
from typing import Iterator

import pytest

from code_strings import code_strings
from streamparse.dialects import DIALECTS, SPANS
from streamparse.dialects.kv_family import KvCall
from streamparse.dialects.markup import marker, plain_terminals
from streamparse.dialects.render import RENDERERS
from streamparse.dialects.spec import Dialect
from streamparse.dialects.xml_family import XmlCall
from streamparse.harness import workloads
from streamparse.harness.workloads import build_workload

SOURCE = Path(workloads.__file__)

# JSON's keys and a tool's name in a tag: texts a declaration holds that are no format's own markup.
NOT_MARKUP = {'"name"', '"tool_calls"', '"tool_call"', "<{name}>", "</{name}>", "<{", "{{"}


def _family_tags(declared: Dialect) -> Iterator[str]:
    if isinstance(declared.markup, XmlCall):
        xml = declared.markup
        yield from (xml.call_open, xml.param_open, xml.value_close, xml.call_close, f"<{xml.call}>",
                    f"<{xml.param}>")
    if isinstance(declared.kv, KvCall):
        kv = declared.kv
        yield from (kv.key_open, kv.value_close, f"</{kv.key}>", f"<{kv.value}>", *(kv.item_tags or ()))


def _declared(declared: Dialect) -> Iterator[str]:
    """Every text ``declared`` (its grammar included) writes as markup."""
    if declared.grammar:
        yield from plain_terminals(declared.grammar).values()
    for opener in declared.openers:
        yield opener.text
        yield from opener.end or ()
    yield from (*declared.end, *declared.closers, *(declared.item or ()), *(declared.nest or ()))
    for span in SPANS:
        if span.dialect == declared.name:
            yield from (span.opener, *span.closers)
    yield from _family_tags(declared)


def _markers(dialect: str) -> set[str]:
    """The dialect's markers distinctive enough to look for in code: three characters or more, not a plain word."""
    return {text for text in _declared(DIALECTS[dialect])
            if len(text) >= 3 and not text.isalnum() and text not in NOT_MARKUP}


def _code_strings(source: str) -> tuple[str, ...]:
    """The string constants of ``source``'s code (f-strings' literal parts included), docstrings left out."""
    return code_strings(source)


def _written(strings: list[str], marker_text: str) -> bool:
    """Whether a constant holds ``marker_text`` (one ending in a word character, not as the start of a longer word:
    ``functions.`` is looked for whole, ``<invoke`` not inside ``<invoked``)."""
    tail = r"(?!\w)" if marker_text[-1].isalnum() or marker_text[-1] == "_" else ""
    pattern = re.compile(re.escape(marker_text) + tail)
    return any(pattern.search(text) for text in strings)


@pytest.mark.parametrize("dialect", sorted(RENDERERS))
def test_workloads_write_no_marker_of_a_format_in_their_code(dialect: str) -> None:
    strings = _code_strings(SOURCE.read_text(encoding="utf-8"))
    written = sorted(m for m in _markers(dialect) if _written(strings, m))
    assert not written, f"{dialect}: markers written literally in {SOURCE.name}: {written}"


def test_the_scan_finds_a_marker_written_in_code() -> None:
    """Not vacuous: the markers gathered hold the ones the mixed workloads write, and a constant or an f-string
    part holding one is found."""
    deepseek = _markers("deepseek_v3")
    assert "<｜tool▁calls▁begin｜>" in deepseek and "<|tool_calls_section_begin|>" in _markers("kimi_k2")
    assert {'<invoke name="', "</parameter>", "<minimax:tool_call>"} <= _markers("minimax_m2")
    assert "<|start|>assistant" in _markers("openai")
    code = 'X = ("<｜tool▁calls▁begin｜>", 1)\ndef f(n):\n    """<|tool_calls_section_begin|>"""\n' \
           '    return f"<|tool_call_begin|>functions.{n}"\n'
    strings = _code_strings(code)
    assert _written(strings, "<｜tool▁calls▁begin｜>")
    assert _written(strings, "functions.") and _written(strings, "<|tool_call_begin|>")
    assert not _written(strings, "<|tool_calls_section_begin|>")  # a docstring describes
    assert not _written(['<invoked name="'], "<invoke")


@pytest.mark.parametrize("dialect, expected", [
    ("deepseek_v3", ("deepseek_v3", "_CALLS_BEGIN", "_BEGIN", "_TYPE", "_SEP", "_JSON_FENCE", "_END", "_CALLS_END")),
    ("deepseek_v31", ("deepseek_v31", "_CALLS_BEGIN", "_BEGIN", "_SEP", "_END", "_CALLS_END")),
    ("kimi_k2", ("kimi_k2", "_SECTION_BEGIN", "_BEGIN", "_FUNCTIONS", "_ARGS_BEGIN", "_END", "_SECTION_END")),
    ("openai", ("openai", "_ASSISTANT", "_COMMENTARY", "_END")),
    ("mistral", ("mistral", "_OPEN")),
    ("phi4_mini", ("phi4_mini", "_OPEN")),
    ("cohere", ("cohere", "_OPEN", "_CLOSE")),
    ("olmo3", ("olmo3", "_CALLS", "_CALLS_END")),
])
def test_the_mixed_workload_carries_the_declared_markers(dialect: str, expected: tuple[str, ...]) -> None:
    grammar, *terminals = expected
    text = build_workload(f"mixed:{dialect}").text
    for terminal in terminals:
        assert marker(grammar, terminal) in text, (dialect, terminal)


def test_the_minimax_workload_writes_the_xml_familys_invokes() -> None:
    declared = DIALECTS["minimax_m2"]
    xml = declared.markup
    assert isinstance(xml, XmlCall) and declared.nest is not None
    workload = build_workload("mixed:minimax_m2")
    for name, args in workload.calls:
        assert xml.render(name, args) in workload.text
    assert workload.text.count(declared.nest[0]) == 3 and workload.text.count(declared.nest[1]) == 3
