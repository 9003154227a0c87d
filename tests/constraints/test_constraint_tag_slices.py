"""``Tag.inner`` and ``Tag.list_key`` (the one slicing the GBNF grammar and the structural tags share): a list
form's opener + one call's ``inner`` begin is the tag's ``begin``, ``inner`` end + closer its ``end``, and the
tags of one list dialect share one key; a tag outside a list is its own call, whole."""

from __future__ import annotations

import pytest

from streamparse.constraints.forms import LISTS, Tag, supported, tags_for

TOOLS = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}},
         "write_file": {"type": "object", "properties": {"path": {"type": "string"}}}}


@pytest.mark.parametrize("dialect", [d for d in LISTS if supported(d)])
def test_a_list_form_is_cut_into_opener_call_and_closer(dialect: str) -> None:
    listed = [t for t in tags_for(dialect, TOOLS, loose=False) if t.joiner]
    assert listed, dialect
    keys = {t.list_key for t in listed}
    assert len(keys) == 1  # both tools' calls stand in the one list block of this dialect
    opener, closer, joiner, line_start = keys.pop()
    assert (opener, closer, joiner) == LISTS[dialect] and line_start == listed[0].line_start
    for tag in listed:
        begin, end = tag.inner
        assert opener + begin == tag.begin and end + closer == tag.end
        assert tag.tool in begin and not begin.startswith(opener)


def test_a_tag_outside_a_list_is_whole_and_keyed_by_nothing_but_its_line_rule() -> None:
    tag = Tag("f", "<tool_call>\n{\"name\": \"f\", \"arguments\": ", "}\n</tool_call>", "json", "<tool_call>")
    assert tag.inner == (tag.begin, tag.end)
    assert tag.list_key == ("", "", "", False)


def test_hand_written_offsets_cut_where_they_say() -> None:
    tag = Tag("g", "<<[g(", ")]>>", "python", "<<[", opens=3, closes=3, joiner="; ", line_start=True)
    assert tag.inner == ("g(", ")")
    assert tag.list_key == ("<<[", "]>>", "; ", True)
