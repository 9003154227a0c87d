"""List blocks (``[f(a=1), g(b=2)]``) under the vLLM structural tag and SGLang's fields, run by xgrammar.

The parser reads one list block as several calls, so with parallel calls allowed the constraint
lets a list hold several calls to the declared tools; with ``parallel_tool_calls`` false it holds
exactly one. Skipped without xgrammar (see xgrammar_engine).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from constraint_cases import LIST_DIALECTS, TOOLS, list_block
from xgrammar_engine import accepts, from_ebnf, from_vllm_fields

import streamparse as sp
from streamparse.constraints import build_constraint
from streamparse.dialects.render import render
from streamparse.prompting.requests import prompt_request

_CACHE: dict[tuple[str, str, bool], Any] = {}

TWO = [("ping", {}), ("get_weather", {"city": "Rome", "unit": "celsius"})]


def vllm(dialect: str, choice: Any = None, parallel: bool = True) -> Any:
    key = (dialect, repr(choice), parallel)
    if key not in _CACHE:
        fields = build_constraint(dialect, TOOLS, backend="vllm", tool_choice=choice,
                                  parallel_tool_calls=parallel).request_fields()
        _CACHE[key] = from_vllm_fields(fields)
    return _CACHE[key]


def test_every_list_dialect_is_covered_here() -> None:
    assert {"pythonic", "mistral", "xlam", "tools_array", "lfm2", "apertus"} <= set(LIST_DIALECTS)


@pytest.mark.parametrize("dialect", LIST_DIALECTS)
def test_a_list_of_two_calls_is_accepted_only_when_parallel(dialect: str) -> None:
    two = list_block(dialect, TWO)
    assert accepts(vllm(dialect), "Checking both.\n" + two)
    assert accepts(vllm(dialect, "required"), two)
    assert not accepts(vllm(dialect, parallel=False), "Checking both.\n" + two)
    assert not accepts(vllm(dialect, "required", parallel=False), two)
    one = list_block(dialect, TWO[:1])
    assert one == render(dialect, *TWO[0])
    assert accepts(vllm(dialect, parallel=False), "Checking.\n" + one)
    assert accepts(vllm(dialect, "required", parallel=False), one)


@pytest.mark.parametrize("dialect", LIST_DIALECTS)
def test_a_list_holds_any_number_of_calls_to_any_declared_tool(dialect: str) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [("get_weather", {"city": "Oslo"}), ("configure", {"count": 2, "enabled": False}),
             ("get_weather", {"city": "Lima", "unit": "fahrenheit"}), ("ping", {})]
    block = list_block(dialect, calls)
    assert accepts(vllm(dialect), block)
    assert accepts(vllm(dialect), block + "\n" + list_block(dialect, TWO))
    if build_constraint(dialect, TOOLS, backend="vllm").form == "structural_tag":  # the whole-answer grammar
        # (sent when the tag is too big) keeps the text after the calls to one line
        assert accepts(vllm(dialect), "First this.\n" + block + "\nThen that.\n" + list_block(dialect, TWO))


@pytest.mark.parametrize("dialect", LIST_DIALECTS)
def test_a_wrong_call_inside_a_list_is_rejected(dialect: str) -> None:
    wrong_name = list_block(dialect, [("ping", {}), ("get_wether", {"city": "Rome"})])
    wrong_value = list_block(dialect, [("ping", {}), ("get_weather", {"city": "Rome", "unit": "kelvin"})])
    missing = list_block(dialect, [("ping", {}), ("get_weather", {"unit": "celsius"})])
    for text in (wrong_name, wrong_value, missing):
        assert not accepts(vllm(dialect), "So:\n" + text), text
        assert not accepts(vllm(dialect, "required"), text), text
    assert not accepts(vllm(dialect, "required"), list_block(dialect, [("get_wether", {}), ("ping", {})]))


@pytest.mark.parametrize("dialect", LIST_DIALECTS)
def test_a_named_tool_choice_holds_only_that_tool_in_the_list(dialect: str) -> None:
    named = vllm(dialect, {"type": "function", "function": {"name": "get_weather"}})
    assert accepts(named, list_block(dialect, [("get_weather", {"city": "a"}), ("get_weather", {"city": "b"})]))
    assert not accepts(named, list_block(dialect, [("get_weather", {"city": "a"}), ("ping", {})]))


@pytest.mark.parametrize("dialect", LIST_DIALECTS)
def test_an_accepted_list_parses_back_to_its_calls(dialect: str) -> None:
    text = "Checking both.\n" + list_block(dialect, TWO)
    assert accepts(vllm(dialect), text)
    options = prompt_request({"messages": [], "tools": TOOLS}, dialect).parser_options()
    result = sp.parse(text, TOOLS, **options)
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == TWO


def test_a_list_whose_trigger_is_its_opener_holds_each_schema_once() -> None:
    """Where the trigger stands inside the list's opener (``[TOOL_CALLS]``), the list is one tag
    holding every tool; a line-start form (pythonic's ``[name(``) needs one tag per first tool."""
    tag = build_constraint("mistral", TOOLS, backend="vllm").request_fields()["response_format"]
    assert json.dumps(tag).count('"json_schema": {') == len(TOOLS)
    assert [t["begin"] for t in tag["format"]["tags"] if t["begin"] != "<think>"] == ["[TOOL_CALLS]["]


@pytest.mark.parametrize("dialect", LIST_DIALECTS)
def test_sglang_gets_a_grammar_that_holds_lists(dialect: str) -> None:
    """SGLang's legacy structures end where a call ends, so a list dialect gets the EBNF instead."""
    fields = build_constraint(dialect, TOOLS, backend="sglang").request_fields()
    assert set(fields) == {"ebnf"}
    two = list_block(dialect, TWO)
    assert accepts(from_ebnf(fields["ebnf"]), "Checking both.\n" + two)
    single = build_constraint(dialect, TOOLS, backend="sglang", parallel_tool_calls=False).request_fields()
    assert not accepts(from_ebnf(single["ebnf"]), "Checking both.\n" + two)
