"""The parser's instance stays small enough for CPython's fast attribute reads, and a tag body's held tail
is the parser's held text at every step.

CPython keeps an instance's attributes in a table shared by every instance of the class (no per-instance
dict) while the class's attribute names fit its shared-key limit (30 in 3.11-3.13). Past it, an instance is
given a dict of its own and every ``self._x`` read in ``feed`` gets slower (measured: 5-10 % on every
workload, prose included). The check below is on names, not time: every path of the parser together sets
fewer than 30 names.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

from helpers import TOOLS, summary
from streamparse import StreamParser

SHARED_KEYS_MAX = 30

STREAMS = [
    "Hi\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis < Rome </par\n</parameter>\n</function>\n"
    "</tool_call>\nbye",
    'ok <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call> done',
    "<think>hmm <tool_call></think>text [get_weather(city='Paris')]",
    "x\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    "```json\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]\n```\n",
]
OPTIONS: list[dict[str, Any]] = [{}, {"stream_arguments": True}, {"start_in_reasoning": True, "calls_in_reasoning": True},
                                 {"dialects": ["qwen3_coder"]}, {"max_block_chars": 40}]


def test_every_path_of_the_parser_sets_fewer_names_than_the_shared_key_limit() -> None:
    names: set[str] = set()
    for options in OPTIONS:
        for text in STREAMS:
            for size in (1, 3, 7, len(text)):
                parser = StreamParser(TOOLS, **options)
                for i in range(0, len(text), size):
                    parser.feed(text[i : i + size])
                names.update(vars(parser))
                parser.close()
                names.update(vars(parser))
    assert len(names) < SHARED_KEYS_MAX, sorted(names)


def test_the_source_of_every_class_of_the_parser_assigns_fewer_names_than_the_limit() -> None:
    """The streams above may miss a name set only on a rare path (a limit, an error): count every
    ``self.X = …`` in the source of the parser's classes instead."""
    names: set[str] = set()
    for cls in StreamParser.__mro__:
        if cls is object:
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == "self":
                        names.add(leaf.attr)
    assert len(names) < SHARED_KEYS_MAX, sorted(names)


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
