"""A tool-prompt template names its own format's markers through placeholders; the declaration spells them.

For every prompted dialect, the texts its declaration holds (its grammar's plain terminals, the literals of its
openers, heads and looks, its end markers, closers, item and value tags, wrapper, quotes and spans, and a family's
``XmlCall``/``KvCall`` tags) are looked for in the sections of ``templates/<dialect>.txt`` and ``_common.txt`` (the
comment before the first header describes the format and is not read): none may be there. Wrong spellings a template
warns against and other formats' tags are other texts, so they stay. Every placeholder a template uses is one the
prompt fills: rendering every section names no unknown one, and each name it uses is either a general placeholder
(``$example``, ``$name`` ...) or one ``template_markers`` gives that dialect.
"""

from __future__ import annotations

from importlib import resources
import re
from string import Template
from typing import Iterator

import pytest

from streamparse.dialects import DIALECTS, SPANS
from streamparse.dialects.kv_family import KvCall
from streamparse.dialects.markup import plain_terminals
from streamparse.dialects.spec import LIT, OPT, Dialect
from streamparse.dialects.xml_family import XmlCall
from streamparse.prompting.markers import template_markers
from streamparse.prompting.requests import PROMPT_DIALECTS, ToolChoice, corrective_message, instructions

_HEADER = re.compile(r"^=== ([\w.]+) ===[ \t]*$", re.M)
# What the prompt fills besides a dialect's markers (requests.instructions and corrective_message).
GENERAL = {"tools", "example", "several_example", "name", "result_example", "result_head", "json_rule", "lead",
           "choice_rule", "format", "parallel_rule", "mistakes", "rules", "result_format"}
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Find a word.", "parameters": {
    "type": "object", "properties": {"word": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["word"]}}}]


def _sections(file: str) -> dict[str, str]:
    """A template file's sections by name (the comment before the first header left out)."""
    text = resources.files("streamparse.prompting").joinpath("templates", file).read_text(encoding="utf-8")
    parts = _HEADER.split(text)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _template(dialect: str) -> dict[str, str]:
    return {**_sections("_common.txt"), **_sections(f"{dialect}.txt")}


def _family_tags(declared: Dialect) -> Iterator[str]:
    if isinstance(declared.markup, XmlCall):
        m = declared.markup
        yield from (m.call_open, m.param_open, m.value_close, m.call_close, f"<{m.call}>", f"<{m.param}>")
        if m.cdata:
            yield from (m.cdata_open, m.cdata_close)
    if isinstance(declared.kv, KvCall):
        k = declared.kv
        yield from (k.key_open, k.value_close, f"</{k.key}>", f"<{k.value}>", *(k.item_tags or ()))
        if k.sep:
            yield k.sep_tag


def _declared(declared: Dialect) -> Iterator[str]:
    """Every text the declaration (its grammar included) writes as markup."""
    terminals = set(plain_terminals(declared.grammar).values())
    yield from terminals
    # a head compares lowercase: a literal lowercased from the grammar's is looked for as the grammar writes it
    lowered = {t.lower() for t in terminals} - terminals
    for opener in declared.openers:
        yield opener.text
        for part in (*opener.head, *opener.look):
            if part.kind in (LIT, OPT):
                yield from (t for t in part.texts if t not in lowered)
        yield from opener.end or ()
    yield from (*declared.end, *declared.closers, *(declared.item or ()), *(declared.nest or ()), *declared.quotes)
    if declared.values is not None:
        yield from (*declared.values.open, declared.values.close, *declared.values.next)
    for span in SPANS:
        if span.dialect == declared.name:
            yield from (span.opener, *span.closers)
    yield from _family_tags(declared)


# JSON's own punctuation and keys and a tool's name in a tag: texts a declaration checks that are not its markup.
NOT_MARKUP = {'"name"', '"tool_calls"', '"tool_call"', "<{name}>", "</{name}>"}


# Where a template writes the same text as one of its format's markers, and why it is not that marker.
ELSEWHERE = {
    "```": "_common's rules forbid Markdown code fences around a call: the same text as deepseek_v3's and "
           "command_r's fence closer, about every format",
}


def _markers(dialect: str) -> set[str]:
    """The dialect's markers distinctive enough to look for in prose: three characters or more, not a plain word."""
    return {t for t in _declared(DIALECTS[dialect])
            if len(t) >= 3 and not t.isalnum() and t not in NOT_MARKUP and t not in ELSEWHERE}


def _writes(text: str, marker: str) -> bool:
    """Whether ``text`` holds ``marker`` (one ending in a word character, not as the start of a longer word: a
    head's ``<param`` is not in the wrong spelling ``<parameter>``)."""
    tail = r"(?!\w)" if marker[-1].isalnum() or marker[-1] == "_" else ""
    return re.search(re.escape(marker) + tail, text) is not None


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_no_template_section_writes_a_marker_of_its_own_format(dialect: str) -> None:
    written = {(section, marker) for section, text in _template(dialect).items()
               for marker in _markers(dialect) if _writes(text, marker)}
    assert not written, f"{dialect}: markers written in its templates instead of named by placeholder: {written}"


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_the_placeholders_give_the_declarations_markers(dialect: str) -> None:
    """The check above is not vacuous: each marker placeholder a template uses gives a text the declaration holds,
    so the filled sections show the format's markers the templates no longer write."""
    named = template_markers(dialect)
    declared = set(_declared(DIALECTS[dialect]))
    family = DIALECTS[dialect].markup or DIALECTS[dialect].kv
    words = {family.call, family.param} if isinstance(family, XmlCall) else (
        {family.key, family.value, family.item, family.sep} if isinstance(family, KvCall) else set())
    used = {key for text in _template(dialect).values() for key in Template(text).get_identifiers() if key in named}
    for key in used:
        assert named[key] in declared | words | {">", '">'}, (dialect, key, named[key])
    if used:
        filled = "".join(Template(t).safe_substitute(named) for t in _template(dialect).values())
        assert any(named[key] in filled for key in used), dialect


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_every_placeholder_a_template_uses_is_filled(dialect: str) -> None:
    known = GENERAL | set(template_markers(dialect))
    for section, text in _template(dialect).items():
        template = Template(text)
        assert template.is_valid(), f"{dialect}: section {section} has a '$' that names nothing (write $$)"
        unknown = set(template.get_identifiers()) - known
        assert not unknown, f"{dialect}: section {section} names placeholders nothing fills: {unknown}"
    # and the prompt itself fills them: every section is rendered in one of these
    for choice in (ToolChoice(), ToolChoice("required", parallel=False), ToolChoice("named", "lookup")):
        text = instructions(TOOLS, dialect, choice)
        assert text is not None and "$" not in text.replace("$$", "")
    for choice in (ToolChoice("required"), ToolChoice("named", "lookup")):
        assert "${" not in corrective_message(choice, dialect, TOOLS)


def test_a_placeholder_nothing_fills_is_refused() -> None:
    with pytest.raises(KeyError):
        Template("write ${_NOPE}").substitute(template_markers("hermes"))


def test_the_markers_are_the_declarations() -> None:
    hermes, qwen3, glm = (template_markers(d) for d in ("hermes", "qwen3_coder", "glm45"))
    assert (hermes["_OPEN"], hermes["_CLOSE"]) == (DIALECTS["hermes"].openers[0].text, DIALECTS["hermes"].end[0])
    xml = DIALECTS["qwen3_coder"].markup
    assert (qwen3["call_open"], qwen3["value_close"], qwen3["call_close"]) == (xml.call_open, xml.value_close,
                                                                              xml.call_close)
    assert (qwen3["nest_open"], qwen3["nest_close"]) == DIALECTS["qwen3_coder"].nest
    assert glm["key_open"] == DIALECTS["glm45"].kv.key_open
