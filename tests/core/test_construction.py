"""What a parser makes when: built, it has read its tools' names only; the calls' reader, the span reader and the
optional closers' reader are made when a block, a span or closers first come, and reading is the same as if they
had been there from the start (one call count across blocks, schemas typing the calls, unknown names reported)."""

from __future__ import annotations

from typing import Any

import pytest

import streamparse.core.parser as parser_module

from helpers import TOOLS, summary
from streamparse import Diagnostic, StreamParser, ToolCall
from streamparse.arguments.tools import ToolSchemas, read_tools

HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": "3"}}\n</tool_call>'
TYPED_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}


def _made(parser: StreamParser) -> tuple[bool, bool, bool]:
    return parser._items is not None, parser._spans is not None, parser._after is not None


def test_a_parser_built_and_fed_prose_has_made_no_reader_of_blocks_spans_or_closers() -> None:
    parser = StreamParser(TOOLS)
    assert _made(parser) == (False, False, False)
    assert summary(parser.read_whole("Just prose, over\ntwo lines.")) == ("Just prose, over\ntwo lines.", [])
    assert _made(parser) == (False, False, False)


def test_each_reader_is_made_when_its_state_first_comes() -> None:
    parser = StreamParser(TOOLS)
    parser.feed("<think>a plan</think>")
    assert _made(parser) == (False, True, False)
    parser.feed("ok <function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>")
    assert _made(parser) == (True, True, True)  # the body ended without its closer: </tool_call> may follow
    assert summary(parser.feed("\n</tool_call> bye") + parser.close()) == (" bye", [])  # (the call left before)


def test_a_prompt_that_opened_reasoning_makes_the_span_reader_at_once() -> None:
    parser = StreamParser(TOOLS, start_in_reasoning=True)
    assert _made(parser) == (False, True, False)
    events = parser.read_whole("thinking</think>done")
    assert [type(e).__name__ for e in events] == ["ReasoningDelta", "TextDelta"]


def test_the_call_limit_counts_across_blocks_from_the_first_block_on() -> None:
    events = StreamParser(TOOLS, max_calls=1).read_whole(f"{HERMES_CALL}\nand\n{HERMES_CALL}")
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1


def test_ids_come_from_the_factory_given_at_construction() -> None:
    ids = iter(["first", "second"])
    events = StreamParser(TOOLS, id_factory=lambda: next(ids)).read_whole(f"{HERMES_CALL}\n{HERMES_CALL}")
    assert [e.id for e in events if isinstance(e, ToolCall)] == ["first", "second"]


@pytest.mark.parametrize("tools", [[TYPED_TOOL], ToolSchemas([TYPED_TOOL]), (TYPED_TOOL,)])
def test_a_schema_read_on_first_use_types_the_call(tools: Any) -> None:
    _, calls = summary(StreamParser(tools).read_whole(HERMES_CALL))
    assert calls == [("get_weather", {"city": "Paris", "days": 3})]


def test_tools_read_once_serve_every_parser_built_from_them() -> None:
    schemas = read_tools([TYPED_TOOL])
    assert read_tools(schemas) is schemas
    for _ in range(3):
        _, calls = summary(StreamParser(schemas).read_whole(HERMES_CALL))
        assert calls == [("get_weather", {"city": "Paris", "days": 3})]


def test_an_undeclared_name_is_reported_by_a_parser_whose_schemas_are_unread() -> None:
    events = StreamParser([TYPED_TOOL]).read_whole(HERMES_CALL.replace("get_weather", "get_time"))
    assert not [e for e in events if isinstance(e, ToolCall)]
    assert "unknown_tool" in [e.code for e in events if isinstance(e, Diagnostic)]


@pytest.mark.parametrize("tools", [[{"type": "function", "function": {"parameters": {}}}], [{"name": 3}], ["tool"]])
def test_a_tool_with_no_name_is_an_error_at_construction(tools: Any) -> None:
    with pytest.raises(ValueError, match="a tool needs a name"):
        StreamParser(tools)


def test_no_tools_and_an_empty_list_build_the_same_parser() -> None:
    for tools in (None, [], ToolSchemas([]), read_tools([])):
        assert StreamParser(tools)._schemas is None


def test_the_mid_line_reporter_is_made_at_the_first_bracket_read_mid_line_where_names_are_declared() -> None:
    parser = StreamParser(TOOLS)
    parser.feed("Say a ")
    assert parser._mid is None
    events = parser.feed("list: [get_weather(city='x')] ok") + parser.close()
    assert parser._mid is not None
    assert [e.code for e in events if isinstance(e, Diagnostic)] == ["mid_line"]
    none = StreamParser(None)
    none.read_whole("Say a list: [get_weather(city='x')] ok")
    assert none._mid is None  # no names: nothing to report


@pytest.mark.parametrize("tools", [[TYPED_TOOL], ToolSchemas([TYPED_TOOL])])
def test_a_chat_template_is_read_with_the_tools_as_given(tools: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    decide = parser_module.decide_setup

    def watched(listed: Any, *rest: Any) -> Any:
        seen.append(listed)
        return decide(listed, *rest)

    monkeypatch.setattr(parser_module, "decide_setup", watched)
    StreamParser(tools, chat_template="{{ messages }}", generation_prompt="")
    assert list(seen[0]) == [TYPED_TOOL]  # the tools' dicts, read already or not (then trial readings of its own)
