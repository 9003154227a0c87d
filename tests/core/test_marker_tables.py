"""A parser's marker table (core/scanner.py) is built without reading the tools' names: what depends on them is
made on first use, shared by every table of the same names, and equal to what the names give; parsers read the
same whichever way their tools were read (every schema at once, or each on first use)."""

from __future__ import annotations

import itertools
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamparse.arguments as args_mod
from streamparse import StreamParser
from streamparse.arguments import ToolSchemas, read_tools, tool_schemas
from streamparse.core.scanner import MarkerTable, table_for
from streamparse.harness.workloads import build_workload, split

_NAMES = st.lists(st.sampled_from(["f", "F", "get_weather", "Get_Weather", "ns.tool", "İx", "a-b", "x" * 40]),
                  max_size=6)


def _tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


def _by_the_rule(table: MarkerTable, names: list[str]) -> tuple[dict[str, str], int, frozenset[str]]:
    """What a table's name-dependent values are, from the names: lowercase -> the last distinct name so spelled,
    the longest marker (a {name} opener's with the longest lowercase name), every prefix of every lowercase name."""
    lowered = {n.lower(): n for n in dict.fromkeys(names)}
    longest = max((len(n) for n in lowered), default=0)
    most = max([table.longest_literal] + [len(b) + len(a) + longest for b, a, _ in table.templates])
    return lowered, most, frozenset(n[:k] for n in lowered for k in range(len(n) + 1))


@settings(max_examples=150, deadline=None)
@given(_NAMES, st.sampled_from([None, ["hermes"], ["pythonic", "qwen3_coder"]]))
def test_the_values_made_on_first_use_are_the_names_own(names: list[str], dialects: list[str] | None) -> None:
    for schemas in (read_tools(_tools(names)) or None, tool_schemas(_tools(names)) or None):
        table = table_for(schemas, dialects)
        if names:  # (a table with no names is shared by every parser: made once)
            assert not {"tool_names", "max_marker", "tool_prefixes"} & set(vars(table))  # built: none made yet
        assert (table.tool_names, table.max_marker, table.tool_prefixes) == _by_the_rule(table, names)
        assert table.reads_calls == (table.pinned or bool(names))


def test_tables_of_the_same_names_share_one_reading_and_the_compiled_set() -> None:
    names = ["get_weather", "search"]
    first, second = table_for(ToolSchemas(_tools(names))), table_for(tool_schemas(_tools(list(names))))
    assert first is not second  # one table per parser: building it reads and hashes no name
    for attr in ("literals", "templates", "prose_gate", "trigger", "prefixes", "prompt_reasoning"):
        assert getattr(first, attr) is getattr(second, attr)  # the compiled part: shared
    assert first.tool_names is second.tool_names and first.tool_prefixes is second.tool_prefixes


def test_tables_without_tools_are_one_table() -> None:
    assert table_for(None) is table_for(None) is table_for({}) is table_for(ToolSchemas([]))
    assert table_for(None, ["hermes"]) is table_for({}, ["hermes"])
    assert table_for(None).tool_names == {} and not table_for(None).reads_calls


_DIALECTS = ["hermes", "qwen3_coder", "pythonic", "llama3_json", "kimi_k2", "minimax_m2", "mistral", "openai",
             "glm45", "deepseek_v31"]


def _events(text: str, tools: list[dict[str, Any]], chunk: int, dialects: list[str] | None) -> list[Any]:
    ids = itertools.count()
    parser = StreamParser(tools, dialects=dialects, id_factory=lambda: f"call_{next(ids)}")
    events: list[Any] = []
    for delta in split(text, chunk):
        events += parser.feed(delta)
    return events + parser.close()


@pytest.mark.parametrize("dialect", _DIALECTS)
def test_parsers_read_the_same_with_either_reading_of_their_tools(dialect: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    workload = build_workload(f"mixed:{dialect}")
    readings: dict[str, Callable[[Any], Any]] = {"every schema at once": tool_schemas, "on first use": read_tools}
    read: dict[str, list[Any]] = {}
    for label, reading in readings.items():
        with monkeypatch.context() as m:  # the parser reads its tools by whichever name, this way
            m.setattr(args_mod, "tool_schemas", reading)
            m.setattr(args_mod, "read_tools", reading)
            read[label] = [_events(workload.text, workload.tools, chunk, dialects)
                           for chunk in (4, 7) for dialects in (None, [dialect])]
    assert read["on first use"] == read["every schema at once"]
    assert any(type(e).__name__ == "ToolCall" for e in read["on first use"][0])
