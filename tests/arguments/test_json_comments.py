"""Comments in model-written JSON: removed outside strings on the repair path only, and named."""

from __future__ import annotations

import pytest

from streamparse.arguments.relaxed_json import comments_outside_strings, loads_relaxed, strip_comments


def test_line_and_block_comments_are_removed_and_named() -> None:
    text = '{"a": 1, // first\n "b": \'x // y\', /* two\nlines */ "c": "/* z */"}'
    assert comments_outside_strings(text) == ["// first", "/* two\nlines */"]
    assert loads_relaxed(text) == ({"a": 1, "b": "x // y", "c": "/* z */"}, True)


def test_strict_json_never_takes_the_repair_path() -> None:
    assert loads_relaxed('{"url": "http://example.org//a"}') == ({"url": "http://example.org//a"}, False)


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1 // no line break at the end', '{"a": 1 '),
    ('{"a": 1 /* never closed', '{"a": 1  '),
    ('{"a": "unclosed // string', '{"a": "unclosed // string'),
    ('{"a": "esc \\" // still in"} // out', '{"a": "esc \\" // still in"} '),
    ("{'it''s': 1} // a", "{'it''s': 1} "),
])
def test_strip_comments_edges(text: str, expected: str) -> None:
    assert strip_comments(text) == expected


def test_a_line_comment_keeps_its_line_break() -> None:
    assert strip_comments("[1, // a\n2]") == "[1, \n2]"


def test_comment_with_brackets_is_removed_before_brackets_are_closed() -> None:
    assert loads_relaxed('{"a": [1, 2] // was [3\n}') == ({"a": [1, 2]}, True)
