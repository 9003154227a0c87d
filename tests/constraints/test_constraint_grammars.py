"""The GBNF grammars, run by a real engine (llguidance): what the renderer writes is accepted, wrong calls are not.

Every covered dialect, in the three ways llama.cpp gets it: the whole-answer grammar (free text
then calls), the lazy grammar behind its triggers, and the grammar of a required call.
"""

from __future__ import annotations

from typing import Any

import pytest
from constraint_cases import COVERED, INVALID, SCHEMAS, TOOLS, VALID
from grammar_engine import accepts, compiles, lazy_accepts

from streamparse.constraints import build_constraint, tags_for
from streamparse.dialects.render import render

_CACHE: dict[tuple[str, str, bool], Any] = {}


def constraint(dialect: str, choice: Any = None, parallel: bool = True, lazy: bool = False) -> Any:
    key = (dialect, repr(choice), parallel, lazy)
    if key not in _CACHE:
        _CACHE[key] = build_constraint(dialect, TOOLS, tool_choice=choice, parallel_tool_calls=parallel, lazy=lazy)
    return _CACHE[key]


def taught_line_start(dialect: str) -> bool:
    """The taught form opens with a bare bracket at a line start (lazy triggers then wait for a declared name)."""
    return tags_for(dialect, SCHEMAS, loose=False)[0].line_start


def name_in_trigger(dialect: str) -> bool:
    """The opener itself spells the name (``<NAME>``): a wrong name is then no call at all, but text."""
    return any(t.tool in t.trigger for t in tags_for(dialect, SCHEMAS, loose=False))


@pytest.mark.parametrize("dialect", COVERED)
def test_grammars_compile_in_the_engine(dialect: str) -> None:
    for choice in (None, "required", {"type": "function", "function": {"name": "search"}}):
        for parallel in (True, False):
            compiles(constraint(dialect, choice, parallel).grammar)
    compiles(constraint(dialect, lazy=True).grammar)


@pytest.mark.parametrize("dialect", COVERED)
def test_every_valid_call_the_renderer_writes_is_accepted(dialect: str) -> None:
    whole, required = constraint(dialect).grammar, constraint(dialect, "required").grammar
    lazy = constraint(dialect, lazy=True).request_fields()
    for name, args in VALID:
        call = render(dialect, name, args)
        assert accepts(whole, call), (name, args)
        assert accepts(whole, "Let me look that up.\n" + call), (name, args)
        assert lazy_accepts(lazy, "Let me look that up.\n" + call), (name, args)
        assert accepts(required, call), (name, args)
        assert accepts(constraint(dialect, parallel=False).grammar, call), (name, args)


@pytest.mark.parametrize("dialect", COVERED)
@pytest.mark.parametrize(("label", "name", "args"), INVALID, ids=[c[0] for c in INVALID])
def test_a_wrong_call_is_rejected(dialect: str, label: str, name: str, args: dict[str, Any]) -> None:
    call = render(dialect, name, args)
    assert not accepts(constraint(dialect, "required").grammar, call)
    if label == "wrong name" and name_in_trigger(dialect):
        return  # <get_wether> opens nothing: it is text, which an auto answer may hold
    assert not accepts(constraint(dialect).grammar, "Sure.\n" + call)
    if label != "wrong name" or not taught_line_start(dialect):
        assert not lazy_accepts(constraint(dialect, lazy=True).request_fields(), "Sure.\n" + call)


@pytest.mark.parametrize("dialect", COVERED)
def test_parallel_calls_follow_parallel_tool_calls(dialect: str) -> None:
    two = render(dialect, "get_weather", {"city": "Paris"}) + "\n" + render(dialect, "ping", {})
    assert accepts(constraint(dialect).grammar, two)
    assert accepts(constraint(dialect, "required").grammar, two)
    assert lazy_accepts(constraint(dialect, lazy=True).request_fields(), "On it.\n" + two)
    assert not accepts(constraint(dialect, parallel=False).grammar, two)
    assert not accepts(constraint(dialect, "required", parallel=False).grammar, two)
    assert not lazy_accepts(constraint(dialect, parallel=False, lazy=True).request_fields(), two)


@pytest.mark.parametrize("dialect", COVERED)
def test_required_means_a_call_and_auto_allows_none(dialect: str) -> None:
    prose = "No tool is needed: the answer is 4."
    assert accepts(constraint(dialect).grammar, prose)
    assert lazy_accepts(constraint(dialect, lazy=True).request_fields(), prose)
    assert not accepts(constraint(dialect, "required").grammar, prose)
    assert not accepts(constraint(dialect, {"type": "any"}).grammar, prose)
    assert constraint(dialect, "required").request_fields().get("grammar_lazy") is None


@pytest.mark.parametrize("dialect", COVERED)
def test_a_named_tool_is_the_only_one(dialect: str) -> None:
    named = constraint(dialect, {"type": "function", "function": {"name": "search"}}).grammar
    anthropic = constraint(dialect, {"type": "tool", "name": "search"}).grammar
    good = render(dialect, "search", {"query": "q", "filters": {"tags": []}})
    other = render(dialect, "get_weather", {"city": "Paris"})
    for grammar in (named, anthropic):
        assert accepts(grammar, good)
        assert not accepts(grammar, other)
        assert not accepts(grammar, "Just text.")


@pytest.mark.parametrize("dialect", COVERED)
def test_reasoning_stays_free(dialect: str) -> None:
    opener = tags_for(dialect, SCHEMAS)[0].begin
    think = f"<think>Maybe I write {opener} and stop there. {{\"name\": [oops</think>\n"
    call = render(dialect, "ping", {})
    assert accepts(constraint(dialect).grammar, think + "Plain answer.")
    assert accepts(constraint(dialect).grammar, think + call)
    assert accepts(constraint(dialect, "required").grammar, think + call)
    lazy = constraint(dialect, lazy=True).request_fields()
    assert lazy_accepts(lazy, think + "Plain answer.")
    assert lazy_accepts(lazy, think + call)


@pytest.mark.parametrize("dialect", COVERED)
def test_after_the_last_call_the_end_or_one_line_that_holds_no_call(dialect: str) -> None:
    """A model that wants a closing sentence may write it: without that way out it can only write
    another call, and a small model then writes calls until it is cut off. The line can hold no call
    of any dialect, in any case or indentation, so nothing unchecked reaches the parser."""
    call, again = render(dialect, "ping", {}), render(dialect, "get_weather", {"city": "Oslo"})
    wrong = render(dialect, "get_weather", {"unit": "kelvin"})
    named = {"type": "function", "function": {"name": "ping"}}
    for grammar in (constraint(dialect).grammar, constraint(dialect, "required").grammar,
                    constraint(dialect, named).grammar, constraint(dialect, parallel=False).grammar):
        assert accepts(grammar, call + "\n")
        assert accepts(grammar, call + "\nDone, that was the call.")
        assert not accepts(grammar, call + "\nDone.\nAnd a second line.")
        for sneaked in (wrong, " " + wrong, wrong.upper(), "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}",
                        "<|python_start|>[get_weather(unit='kelvin')]", again):
            assert not accepts(grammar, call + "\nDone. " + sneaked), sneaked
            assert not accepts(grammar, call + "\nDone.\n" + sneaked), sneaked
    assert accepts(constraint(dialect).grammar, call + "\n" + again)
    assert not accepts(constraint(dialect, parallel=False).grammar, call + "\n" + again)
    assert not accepts(constraint(dialect, named).grammar, call + "\n" + again)


@pytest.mark.parametrize("dialect", [d for d in COVERED if d not in ("hermes", "llama3_json")])
def test_calls_a_model_fenced_may_close_their_fence(dialect: str) -> None:
    """A small model opens ```json in free text, then writes its calls. Unable to close the fence, it
    wrote calls on until it was cut off (seen on BFCL: 5 copies of one call). The fence closes, and
    only the one line of text may follow it. (In hermes and llama3_json a fenced call is a form of its
    own, fence included: test_small_model_forms_are_triggers_too.)"""
    call, wrong = render(dialect, "ping", {}), render(dialect, "get_weather", {"unit": "kelvin"})
    for grammar in (constraint(dialect).grammar, constraint(dialect, parallel=False).grammar):
        assert accepts(grammar, "Here is the call:\n```json\n" + call + "\n```")
        assert accepts(grammar, "```json\n" + call + "\n```\nThat is all.")
        assert not accepts(grammar, "```json\n" + call + "\n```\n```json\n" + wrong + "\n```")
        assert not accepts(grammar, "```json\n" + call + "\n```" + wrong)


@pytest.mark.parametrize(("dialect", "several"), [
    ("pythonic", "[ping(), get_weather(city='Oslo')]"),
    ("pythonic", "[get_weather(city='a'),\n get_weather(city='b', unit='celsius')]"),
    ("xlam", '[{"name": "ping", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "x"}}]'),
    ("mistral", '[TOOL_CALLS][{"name": "ping", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "x"}}]'),
    ("tools_array", '<tools>[{"name": "ping", "arguments": {}},{"name": "get_weather", "arguments": {"city": "x"}}]</tools>'),
])
def test_a_list_block_holds_several_calls_when_parallel(dialect: str, several: str) -> None:
    """The parser reads a list block as several calls, so the grammar lets a model write one (a
    model made to close its list after one call writes the next list, or stops short)."""
    assert accepts(constraint(dialect).grammar, several)
    assert accepts(constraint(dialect, "required").grammar, several)
    assert not accepts(constraint(dialect, parallel=False).grammar, several)
    assert not accepts(constraint(dialect).grammar, several.replace("get_weather", "get_wether"))


@pytest.mark.parametrize("dialect", ["hermes", "llama3_json"])
def test_small_model_forms_are_triggers_too(dialect: str) -> None:
    key = "arguments" if dialect == "hermes" else "parameters"
    body = '{"name": "get_weather", "%s": {"city": "Paris", "unit": "celsius"}}' % key
    lazy = constraint(dialect, lazy=True).request_fields()
    for text in ("```json\n" + body + "\n```", body, "Here you go:\n" + body):
        assert accepts(constraint(dialect).grammar, text), text
        assert lazy_accepts(lazy, text), text
    wrong = body.replace("celsius", "kelvin")
    assert not accepts(constraint(dialect).grammar, "```json\n" + wrong + "\n```")
    assert not accepts(constraint(dialect).grammar, "Here:\n" + wrong)
    assert not lazy_accepts(lazy, "```json\n" + wrong + "\n```")
    assert accepts(constraint(dialect).grammar, 'A brace mid-line {"name": "x"} is prose.')
    assert not accepts(constraint(dialect).grammar, 'Line start:\n{"name": "get_wether", "%s": {}}' % key)


@pytest.mark.parametrize("dialect", ["hermes", "llama3_json", "mistral", "xlam"])
def test_json_may_be_spaced_as_the_model_likes(dialect: str) -> None:
    call = render(dialect, "get_weather", {"city": "Paris"})
    pretty = call.replace('{"name": ', '{\n  "name": ').replace(', "', ',\n  "').replace("}}", "}\n}")
    assert pretty != call
    assert accepts(constraint(dialect).grammar, "Checking.\n" + pretty)
    assert lazy_accepts(constraint(dialect, lazy=True).request_fields(), "Checking.\n" + pretty)
    wrong = pretty.replace("get_weather", "get_wether")
    assert not accepts(constraint(dialect).grammar, "Checking.\n" + wrong)


ODD_VALUES = ['say "hi"', "back\\slash", "caret^[x]-y", "new\nline", "tab\tend", "日本 😀", "</tool_call>", "{\"name\""]


@pytest.mark.parametrize("dialect", ["hermes", "pythonic", "qwen3_coder", "name_tag", "kimi_k2"])
def test_odd_names_and_enum_values_are_escaped(dialect: str) -> None:
    schema = {"type": "object", "properties": {"v": {"enum": ODD_VALUES}, "w": {"type": "string"}}, "required": ["v"]}
    tools = [{"name": "svc.get-item_2", "input_schema": schema}]
    constraint = build_constraint(dialect, tools, tool_choice="required")
    assert constraint is not None
    compiles(constraint.grammar)
    for value in ODD_VALUES:
        if dialect == "qwen3_coder" and value != value.strip():
            continue  # raw XML text: surrounding layout is not part of the value
        call = render(dialect, "svc.get-item_2", {"v": value, "w": value})
        assert accepts(constraint.grammar, call), value
    assert not accepts(constraint.grammar, render(dialect, "svc.get-item_2", {"v": "caret^[x]-z"}))


@pytest.mark.parametrize("dialect", ["hermes", "pythonic", "qwen3_coder", "mistral"])
def test_recursive_references_resolve_in_each_tool(dialect: str) -> None:
    node = {"type": "object", "properties": {"label": {"type": "string"},
                                             "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["label"]}
    tree = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/node"}}, "required": ["tree"], "$defs": {"node": node}}
    flat = {"type": "object", "properties": {"tree": {"$ref": "#/$defs/node"}}, "$defs": {"node": {"type": "integer"}}}
    grammar = build_constraint(dialect, [{"name": "plant", "input_schema": tree}, {"name": "count", "input_schema": flat}],
                               tool_choice="required").grammar
    good = {"tree": {"label": "a", "kids": [{"label": "b", "kids": []}, {"label": "c"}]}}
    assert accepts(grammar, render(dialect, "plant", good))
    assert accepts(grammar, render(dialect, "count", {"tree": 3}))
    assert not accepts(grammar, render(dialect, "plant", {"tree": {"label": "a", "kids": [{"kids": []}]}}))
    assert not accepts(grammar, render(dialect, "count", {"tree": {"label": "a"}}))
