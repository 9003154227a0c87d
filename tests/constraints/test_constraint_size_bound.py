"""The vLLM fields stay bounded as tools are added: over ``VLLM_TAG_LIMIT`` of structural tag, vLLM
gets the whole-answer grammar (``structured_outputs.grammar``) when that is smaller.

Invariant checked: for 50 tools every dialect's vLLM fields fit in the limit, the list dialects whose
tag grows with the square of the tool count (pythonic, xlam, phi4_mini, with parallel calls) grow
linearly instead, the grammar sent in their place compiles in xgrammar and holds the same calls,
and small tool sets keep the structural tag. The xgrammar tests are skipped without xgrammar.
"""

from __future__ import annotations

import json
from typing import Any

import hypothesis.strategies as st
import pytest
from constraint_cases import COVERED, SCHEMAS, TOOLS, list_block
from hypothesis import given

import streamparse as sp
from streamparse.arguments.schema import tool_schemas
from streamparse.constraints import build_constraint, tags_for
from streamparse.constraints.build import VLLM_TAG_LIMIT
from streamparse.constraints.structural import json_size, structural_tag
from streamparse.prompting.requests import prompt_request

QUADRATIC = ["pythonic", "xlam", "phi4_mini"]  # a line-start list form: every tool after each first call
CHOICES: list[Any] = [None, "required", {"type": "function", "function": {"name": "get_weather_48"}}]


def many_tools(count: int) -> list[dict[str, Any]]:
    """``count`` tools cycling through the shared schemas, named ``<schema name>_<index>``."""
    table = list(SCHEMAS.items())
    return [{"type": "function", "function": {"name": f"{table[i % len(table)][0]}_{i}",
                                              "parameters": table[i % len(table)][1]}} for i in range(count)]


def form(dialect: str, tools: list[dict[str, Any]], **options: Any) -> str:
    constraint = build_constraint(dialect, tools, **options)
    assert constraint is not None
    return constraint.form


def vllm_size(dialect: str, tools: list[dict[str, Any]], **options: Any) -> int:
    constraint = build_constraint(dialect, tools, backend="vllm", **options)
    assert constraint is not None
    return len(json.dumps(constraint.request_fields()))


@pytest.mark.parametrize("dialect", COVERED)
def test_fifty_tools_fit_in_the_bound_for_every_dialect(dialect: str) -> None:
    tools = many_tools(50)
    for choice in CHOICES:
        for parallel in (True, False):
            assert vllm_size(dialect, tools, tool_choice=choice, parallel_tool_calls=parallel) <= VLLM_TAG_LIMIT


@pytest.mark.parametrize("dialect", QUADRATIC)
def test_the_quadratic_list_forms_switch_to_the_grammar_and_grow_linearly(dialect: str) -> None:
    fifty, hundred = many_tools(50), many_tools(100)
    schemas = tool_schemas(fifty) or {}
    tag = structural_tag(tags_for(dialect, schemas), schemas, required=False, parallel=True)
    assert json_size({"response_format": tag}) > 4 * VLLM_TAG_LIMIT  # what was sent before the bound
    constraint = build_constraint(dialect, fifty, backend="vllm")
    assert constraint is not None and constraint.form == "grammar"
    assert set(constraint.request_fields()) == {"structured_outputs"}
    assert constraint.request_fields()["structured_outputs"] == {"grammar": constraint.grammar}
    assert "structural tag would take" in constraint.description and str(VLLM_TAG_LIMIT) in constraint.description
    # linear: twice the tools, about twice the bytes (the tag was about four times)
    assert vllm_size(dialect, hundred) < 2.2 * vllm_size(dialect, fifty)


def test_the_grammar_is_sent_only_when_it_is_smaller() -> None:
    """qwen3_coder's tag is small per tool and its grammar large: over the limit it keeps the tag."""
    tools = many_tools(100)
    constraint = build_constraint("qwen3_coder", tools, backend="vllm")
    assert constraint is not None and constraint.form == "structural_tag"
    assert len(json.dumps(constraint.request_fields())) > VLLM_TAG_LIMIT
    assert len(json.dumps(build_constraint("qwen3_coder", tools, backend="sglang").request_fields())) > \
        len(json.dumps(constraint.request_fields()))


@pytest.mark.parametrize("dialect", COVERED)
def test_small_tool_sets_keep_the_structural_tag(dialect: str) -> None:
    tools = [t for t in TOOLS if t["function"]["name"] in ("ping", "get_weather")]
    schemas = tool_schemas(tools) or {}
    for choice in (None, "required"):
        for parallel in (True, False):
            constraint = build_constraint(dialect, tools, backend="vllm", tool_choice=choice,
                                          parallel_tool_calls=parallel)
            assert constraint is not None and constraint.form == "structural_tag" and constraint.grammar == ""
            expected = structural_tag(tags_for(dialect, schemas), schemas, required=choice is not None,
                                      parallel=parallel)
            assert constraint.request_fields() == {"response_format": expected}
    if dialect not in QUADRATIC:  # the shared six tools too, and one tool in any dialect
        assert form(dialect, TOOLS, backend="vllm") == "structural_tag"
    assert form(dialect, TOOLS[:1], backend="vllm") == "structural_tag"


def test_the_other_backends_say_their_form() -> None:
    forms = {(backend, lazy): form("hermes", TOOLS, backend=backend, lazy=lazy)
             for backend in ("llamacpp", "sglang") for lazy in (False, True)}
    assert forms == {("llamacpp", False): "gbnf", ("llamacpp", True): "gbnf_lazy",
                     ("sglang", False): "legacy_structural_tag", ("sglang", True): "legacy_structural_tag"}
    assert form("pythonic", TOOLS, backend="sglang") == "ebnf"


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                     max_leaves=20)


@given(_JSON)
def test_json_size_is_the_length_json_dumps_writes(value: Any) -> None:
    assert json_size(value) == len(json.dumps(value))


def test_json_size_counts_a_shared_part_each_time_it_stands() -> None:
    shared = {"k": ["é", 1.5, None, {"x": True}]}
    value = {"a": [shared, shared, (shared,)], "b": shared, 3: "non-string key"}
    assert json_size(value) == len(json.dumps(value))
    fields = build_constraint("pythonic", TOOLS, backend="vllm", parallel_tool_calls=False).request_fields()
    assert json_size(fields) == len(json.dumps(fields))


# xgrammar: the grammar sent in place of the tag holds the same calls

def _grammar(dialect: str, tools: list[dict[str, Any]], **options: Any) -> Any:
    from xgrammar_engine import from_vllm_fields

    return from_vllm_fields(build_constraint(dialect, tools, backend="vllm", **options).request_fields())


@pytest.mark.parametrize("dialect", QUADRATIC)
def test_the_fifty_tool_grammar_compiles_in_xgrammar_and_holds_the_calls(dialect: str) -> None:
    accepts = pytest.importorskip("xgrammar_engine").accepts
    tools = many_tools(50)
    calls = [("ping_4", {}), ("get_weather_48", {"city": "Rome", "unit": "celsius"}),
             ("configure_2", {"count": 3, "enabled": True})]
    auto, required = _grammar(dialect, tools), _grammar(dialect, tools, tool_choice="required")
    single = _grammar(dialect, tools, parallel_tool_calls=False)
    block = list_block(dialect, calls)
    assert accepts(auto, "Checking three things.\n" + block)
    assert accepts(auto, "No call needed.")
    assert accepts(required, block)
    assert not accepts(required, "No call needed.")
    assert accepts(single, list_block(dialect, calls[:1]))
    assert not accepts(single, block)
    for wrong in ([("ping_4", {}), ("get_wether_48", {"city": "Rome"})],  # a name not declared
                  [("ping_5", {})],  # a declared schema under a name that is not
                  [("get_weather_48", {"city": "Rome", "unit": "kelvin"})],
                  [("configure_2", {"count": "three", "enabled": True})]):
        assert not accepts(required, list_block(dialect, wrong)), wrong
        assert not accepts(auto, "So:\n" + list_block(dialect, wrong)), wrong


def test_an_accepted_fifty_tool_list_parses_back_to_its_calls() -> None:
    accepts = pytest.importorskip("xgrammar_engine").accepts
    tools = many_tools(50)
    calls = [("search_45", {"query": "q", "filters": {"tags": ["a"]}}), ("note_43", {"text": "x"})]
    text = "Both.\n" + list_block("pythonic", calls)
    assert accepts(_grammar("pythonic", tools), text)
    result = sp.parse(text, tools, **prompt_request({"messages": [], "tools": tools}, "pythonic").parser_options())
    assert [(c.name, json.loads(c.arguments)) for c in result.tool_calls] == calls
