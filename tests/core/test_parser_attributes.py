"""The parser's state is one record: every name of it is declared in ``StreamParser.__slots__`` (the components it
holds keep their own), so a name set on no path of the declaration is an error, not a new attribute. And a tag
body's held tail is the parser's held text at every step."""

from __future__ import annotations

from helpers import TOOLS, summary
from streamparse import StreamParser


def test_the_parsers_state_is_the_names_its_slots_declare() -> None:
    parser = StreamParser(TOOLS, stream_arguments=True, start_in_reasoning=True)
    assert not hasattr(parser, "__dict__")
    # a path that makes every component and sets every name: a name not declared would raise AttributeError
    parser.read_whole("plan</think>Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                      "</function>\n</tool_call>\n[get_weather(city='Oslo')] and [get_weather(")
    assert not hasattr(parser, "__dict__")


def test_a_held_tag_prefix_is_the_parsers_held_text_until_the_body_reads_it() -> None:
    parser = StreamParser(TOOLS)
    parser.feed("Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis")
    assert parser.feed(" </fu") == [] and parser._held == "</fu"  # the body's tail, held for the slow path too
    assert parser.feed("n <") == [] and parser._held == "<"  # read again in front of the delta: a new tail
    assert parser.feed("b") == [] and parser._held == ""  # not a tag: the value's text
    assert parser.feed("\n</parameter>\n</func") == [] and parser._held == "</func"
    events = parser.feed("tion>\n</tool_call>") + parser.close()  # a whole tag: the slow path reads it
    assert summary(events) == ("", [("get_weather", {"city": "Paris </fun <b"})])  # (the prose before the block left in the first feed)


def test_a_held_prefix_between_items_is_read_in_front_of_the_next_delta() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>\nend"
    parser = StreamParser(TOOLS, dialects=["qwen3_coder"])
    cut = text.index("</tool_call>") + 3
    events = parser.feed(text[:cut])
    assert parser._held == "</t"
    events += parser.feed(text[cut:cut + 2]) + parser.feed(text[cut + 2:]) + parser.close()
    assert summary(events) == ("\nend", [("get_weather", {"city": "Oslo"})])
