"""Tool prompting: the prompt teaches markup the parser accepts, history survives the trip, requests are rewritten."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from budget import examples
import streamparse as sp
from streamparse.dialects import DIALECTS
from streamparse.prompting.requests import PROMPT_DIALECTS, PromptError, ToolChoice, corrective_message, example_arguments, instructions, merge_system, prompt_request, render_history, render_tool_result
from streamparse.dialects.render import render

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1},
    },
    "required": ["city", "unit", "days"],
}
SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "number"},
        "exact": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}
FILTER = {"type": "object", "properties": {"where": {"type": "object", "properties": {"field": {"type": "string"},
                                                                                        "above": {"type": "integer"}}}},
          "required": ["where"]}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.",
                                      "parameters": WEATHER}},
    {"name": "search_web", "description": "Search the web.", "parameters": SEARCH},  # bare
    {"name": "filter_rows", "description": "Keep matching rows.", "input_schema": FILTER},  # Anthropic
    {"type": "function", "function": {"name": "list_files", "description": "List the files."}},  # no parameters
]
SCHEMAS = {"get_weather": WEATHER, "search_web": SEARCH, "filter_rows": FILTER, "list_files": None}
REQUIRED = ("hermes", "qwen3_coder", "glm45", "tools_array", "function_tag", "mistral", "llama3_json", "pythonic",
            "xlam", "tool_calls_json", "granite", "hunyuan", "seed_oss", "minimax_m2", "kimi_k2", "deepseek_v31",
            "phi4_mini", "name_tag")


def got(result: sp.ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.parsed_arguments) for c in result.tool_calls]


# --------------------------------------------------------------------------- templates

def test_every_required_dialect_is_promptable_and_has_its_file() -> None:
    assert set(REQUIRED) <= set(PROMPT_DIALECTS) <= set(DIALECTS)
    files = {p.name for p in resources.files("streamparse.prompting").joinpath("templates").iterdir() if p.name.endswith(".txt")}
    assert files == {f"{d}.txt" for d in PROMPT_DIALECTS} | {"_common.txt"}


# --------------------------------------------------------------------------- instructions

@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_instructions_list_every_tool(dialect: str) -> None:
    text = instructions(TOOLS, dialect)
    assert text is not None
    for tool in TOOLS:
        fn = tool.get("function", tool)
        assert f"## {fn['name']}" in text
        assert fn["description"] in text
        schema = fn.get("parameters", fn.get("input_schema"))
        if schema is not None:
            assert json.dumps(schema, ensure_ascii=False) in text
    assert not re.search(r"\$\w", text), "a placeholder was left unfilled"
    assert '<tool_response id="..." name="...">' in text and "Never write one yourself" in text
    assert text.rstrip().endswith("no available tool can do it.")  # the last word is when not to call


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_the_example_taught_is_what_the_parser_reads(dialect: str) -> None:
    text = instructions(TOOLS, dialect)
    assert text is not None
    first = render(dialect, "get_weather", example_arguments(WEATHER))
    assert first in text
    assert got(sp.parse(first, TOOLS, dialects=[dialect])) == [("get_weather", example_arguments(WEATHER))]
    calls = got(sp.parse(text[text.index(first):], TOOLS, dialects=[dialect]))
    assert calls[:1] == [("get_weather", example_arguments(WEATHER))]
    # the several-calls example: the same tool again, with other values (never a second tool's made-up call,
    # which a small model copied into its answer)
    assert len(calls) == 3 and calls[1] == calls[0] and calls[2][0] == "get_weather" and calls[2] != calls[0]
    several = first + "\n" + render(dialect, "search_web", example_arguments(SEARCH))  # "one after the other"
    assert got(sp.parse("Sure.\n" + several, TOOLS, dialects=[dialect])) == [
        ("get_weather", example_arguments(WEATHER)), ("search_web", example_arguments(SEARCH))]


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
@pytest.mark.parametrize("name", list(SCHEMAS))
def test_each_tools_example_parses_in_every_dialect(dialect: str, name: str) -> None:
    text = instructions(TOOLS, dialect, ToolChoice("named", name))
    assert text is not None
    args = example_arguments(SCHEMAS[name])
    example = render(dialect, name, args)
    assert example in text
    assert got(sp.parse(example, TOOLS, dialects=[dialect])) == [(name, args)]


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_corrective_message_shows_a_parseable_call(dialect: str) -> None:
    named = corrective_message(ToolChoice("named", "search_web"), dialect, TOOLS)
    assert '"search_web"' in named
    example = render(dialect, "search_web", example_arguments(SEARCH))
    assert example in named
    assert got(sp.parse(example, TOOLS, dialects=[dialect])) == [("search_web", example_arguments(SEARCH))]
    bare = corrective_message(ToolChoice("required"), dialect)
    assert "required" in bare and render(dialect, "tool_name", {"argument": "value"}) in bare


def test_tool_choice_shapes_the_instructions() -> None:
    assert instructions(TOOLS, "hermes", ToolChoice("none")) is None
    assert instructions([], "hermes") is None and instructions(None, "hermes") is None
    auto = instructions(TOOLS, "hermes")
    assert auto and "only when it does what the user asks" in auto and "call nothing" in auto
    required = instructions(TOOLS, "hermes", ToolChoice("required"))
    assert required and "must call at least one" in required
    named = instructions(TOOLS, "hermes", ToolChoice("named", "search_web"))
    assert named and 'must call the tool "search_web"' in named
    assert "search_web" in named and all(n not in named for n in ("get_weather", "filter_rows", "list_files"))
    single = instructions(TOOLS, "hermes", ToolChoice(parallel=False))
    assert single and "at most one call per reply" in single and "several things" not in single
    assert auto and "make one call for each of them" in auto and "at most one" not in auto
    with pytest.raises(PromptError, match="not in tools"):
        instructions(TOOLS, "hermes", ToolChoice("named", "nope"))


def test_bad_dialects_and_tools_raise_prompt_error() -> None:
    with pytest.raises(PromptError, match="hermes"):
        instructions(TOOLS, "no_such_dialect")
    with pytest.raises(PromptError):
        prompt_request({"messages": []}, "no_such_dialect")
    with pytest.raises(PromptError, match=r"tools\[0\]"):
        instructions([{"description": "nameless"}], "hermes")
    with pytest.raises(PromptError, match="tools"):
        instructions("get_weather", "hermes")  # type: ignore[arg-type]
    assert instructions(TOOLS, "qwen") == instructions(TOOLS, "hermes")  # aliases resolve


# --------------------------------------------------------------------------- ToolChoice

@pytest.mark.parametrize("payload, expected", [
    ({}, ToolChoice("auto")),
    ({"tool_choice": "auto"}, ToolChoice("auto")),
    ({"tool_choice": "none"}, ToolChoice("none")),
    ({"tool_choice": "required"}, ToolChoice("required")),
    ({"tool_choice": {"type": "function", "function": {"name": "f"}}}, ToolChoice("named", "f")),
    ({"tool_choice": {"type": "function", "name": "f"}}, ToolChoice("named", "f")),
    ({"tool_choice": "auto", "parallel_tool_calls": False}, ToolChoice("auto", parallel=False)),
    ({"parallel_tool_calls": True}, ToolChoice("auto")),
    ({"tool_choice": {"type": "auto"}}, ToolChoice("auto")),
    ({"tool_choice": {"type": "any"}}, ToolChoice("required")),
    ({"tool_choice": {"type": "none"}}, ToolChoice("none")),
    ({"tool_choice": {"type": "tool", "name": "f"}}, ToolChoice("named", "f")),
    ({"tool_choice": {"type": "any", "disable_parallel_tool_use": True}}, ToolChoice("required", parallel=False)),
    ({"tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": True}},
     ToolChoice("named", "f", parallel=False)),
    ({"function_call": "none"}, ToolChoice("none")),
    ({"function_call": {"name": "f"}}, ToolChoice("named", "f")),
])
def test_tool_choice_from_request(payload: dict[str, Any], expected: ToolChoice) -> None:
    choice = ToolChoice.from_request(payload)
    assert choice == expected
    assert choice.must_call == (expected.mode in ("required", "named"))


@pytest.mark.parametrize("bad", ["sometimes", 3, {"type": "function"}, {"type": "magic"}, {"type": "tool", "name": ""}])
def test_unusable_tool_choice_names_the_field(bad: Any) -> None:
    with pytest.raises(PromptError, match="tool_choice"):
        ToolChoice.from_request({"tool_choice": bad})


# --------------------------------------------------------------------------- history

def assistant(*calls: tuple[str, str, Any], content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}} for cid, name, args in calls]}


@pytest.mark.parametrize("dialect", PROMPT_DIALECTS)
def test_history_calls_round_trip(dialect: str) -> None:
    a1 = {"city": "Paris", "unit": "celsius", "days": 3}
    a2 = {"query": 'say "hi" <b>\nnow', "limit": 2.5, "exact": False, "tags": ["x", "y"]}
    a3 = {"where": {"field": "age", "above": 30}}
    messages = [{"role": "user", "content": "go"},
                assistant(("c1", "get_weather", json.dumps(a1)), ("c2", "search_web", json.dumps(a2)),
                          ("c3", "filter_rows", json.dumps(a3)), ("c4", "list_files", ""), content="Let me look.")]
    prompted = prompt_request({"messages": messages, "tools": TOOLS}, dialect)
    rendered = prompted.payload["messages"][-1]
    assert rendered["role"] == "assistant" and "tool_calls" not in rendered
    assert rendered["content"].startswith("Let me look.\n")
    result = sp.parse(rendered["content"], TOOLS, dialects=prompted.dialects)
    assert got(result) == [("get_weather", a1), ("search_web", a2), ("filter_rows", a3), ("list_files", {})]
    assert result.content.strip() == "Let me look."


@pytest.mark.parametrize("raw, expected", [
    ("{'city': 'Paris', 'days': 2,}", {"city": "Paris", "days": 2}),  # repaired
    ('{"city": "Paris"', {"city": "Paris"}),  # unclosed
    ("[1, 2]", {"arguments": "[1, 2]"}),  # JSON, but not an object
    ("not json at all {{", {"arguments": "not json at all {{"}),
    ("", {}),
    (None, {}),
    ({"city": "Rome"}, {"city": "Rome"}),  # already an object
])
def test_broken_arguments_never_raise(raw: Any, expected: dict[str, Any]) -> None:
    out = render_history([assistant(("c1", "get_weather", raw))], "hermes")
    assert out[0]["content"] == render("hermes", "get_weather", expected)
    assert got(sp.parse(out[0]["content"], dialects=["hermes"])) == [("get_weather", expected)]


@settings(max_examples=60, deadline=None)
@given(raw=st.text(max_size=40), dialect=st.sampled_from(PROMPT_DIALECTS))
def test_any_arguments_text_renders(raw: str, dialect: str) -> None:
    out = render_history([assistant(("c1", "get_weather", raw))], dialect)
    assert out[0]["role"] == "assistant" and isinstance(out[0]["content"], str)


def test_arguments_that_break_the_relaxed_reader_are_kept() -> None:
    for raw in ["{a: 1" + "0" * 5000 + "}", "[" * 50_000]:
        out = render_history([assistant(("c1", "get_weather", raw))], "hermes")
        assert json.dumps(raw)[1:40] in out[0]["content"]


def test_tool_results_become_one_user_message() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather and news?"},
        assistant(("call_a", "get_weather", '{"city": "Oslo"}'), ("call_b", "search_web", '{"query": "news"}')),
        {"role": "tool", "tool_call_id": "call_a", "content": "12 C"},
        {"role": "tool", "tool_call_id": "call_b", "name": "search_web",
         "content": [{"type": "text", "text": "headline"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "user", "content": "and tomorrow?"},
        assistant(("call_c", "get_weather", '{"city": "Oslo", "days": 2}')),
        {"role": "tool", "tool_call_id": "call_c", "content": {"high": 14}},
    ]
    before = copy.deepcopy(messages)
    out = render_history(messages, "hermes")
    assert messages == before
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant", "user"]
    merged = out[3]["content"]
    first = render_tool_result("call_a", "get_weather", "12 C")  # name looked up by id
    second = render_tool_result("call_b", "search_web", "headline\n[image]")
    assert merged == first + "\n\n" + second + "\n\nand tomorrow?"
    assert out[5]["content"] == '<tool_response id="call_c" name="get_weather">\n{"high": 14}\n</tool_response>'
    assert all("tool_calls" not in m for m in out)


def test_results_merge_into_a_following_list_content_user_message() -> None:
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:x"}}]
    out = render_history([assistant(("c1", "list_files", "{}")),
                          {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
                          {"role": "user", "content": parts, "name": "ann"}], "qwen3_coder")
    assert [m["role"] for m in out] == ["assistant", "user"]
    assert out[1]["content"] == [{"type": "text", "text": render_tool_result("c1", "list_files", "a.txt")}, *parts]
    assert out[1]["name"] == "ann"


def test_results_before_an_assistant_message_and_legacy_function_role() -> None:
    messages = [{"role": "assistant", "content": None, "function_call": {"name": "list_files", "arguments": "{}"}},
                {"role": "function", "name": "list_files", "content": "a.txt"},
                {"role": "assistant", "content": "There is a.txt."}]
    out = render_history(messages, "glm45")
    assert [m["role"] for m in out] == ["assistant", "user", "assistant"]
    assert "function_call" not in out[0] and got(sp.parse(out[0]["content"], TOOLS, dialects=["glm45"])) == [
        ("list_files", {})]
    assert out[1]["content"] == '<tool_response name="list_files">\na.txt\n</tool_response>'
    assert out[2] == messages[2] and out[2] is not messages[2]


def test_tool_result_text_forms() -> None:
    head = render_tool_result('x" onload="1\nz', "a<b>", "ok").split("\n", 1)[0]
    assert re.fullmatch(r'<tool_response id="[^"\n]*" name="[^"\n]*">', head)
    assert render_tool_result(None, None, None) == "<tool_response>\n\n</tool_response>"
    assert render_tool_result("c", "f", [1, 2]) == '<tool_response id="c" name="f">\n[1, 2]\n</tool_response>'
    assert "\n[image]\n" in render_tool_result("c", "f", [{"type": "image", "source": {}}])
    assert "</b> <raw> ok" in render_tool_result("c", "f", "</b> <raw> ok")  # content is not escaped


# --------------------------------------------------------------------------- system message

def test_merge_system_keeps_the_clients_system_message() -> None:
    base = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    before = copy.deepcopy(base)
    assert merge_system(base, "TOOLS")[0] == {"role": "system", "content": "Be brief.\n\nTOOLS"}
    assert base == before
    parts = [{"role": "system", "content": [{"type": "text", "text": "A"}]}]
    assert merge_system(parts, "T")[0]["content"] == [{"type": "text", "text": "A"}, {"type": "text", "text": "T"}]
    dev = [{"role": "user", "content": "hi"}, {"role": "developer", "content": "D"}]
    assert merge_system(dev, "T") == [{"role": "user", "content": "hi"}, {"role": "developer", "content": "D\n\nT"}]
    assert merge_system([{"role": "user", "content": "hi"}], "T") == [
        {"role": "system", "content": "T"}, {"role": "user", "content": "hi"}]


# --------------------------------------------------------------------------- the request

def test_prompt_request_rewrites_the_payload() -> None:
    payload = {"model": "m", "stream": True, "temperature": 0.2, "tools": TOOLS, "tool_choice": "required",
               "parallel_tool_calls": False, "messages": [{"role": "system", "content": "Be brief."},
                                                          {"role": "user", "content": "hi"}]}
    before = copy.deepcopy(payload)
    prompted = prompt_request(payload, "qwen3_xml")
    assert payload == before
    up = prompted.payload
    assert not {"tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"} & set(up)
    assert (up["model"], up["stream"], up["temperature"]) == ("m", True, 0.2)
    system = up["messages"][0]["content"]
    assert system.startswith("Be brief.\n\n") and all(n in system for n in SCHEMAS) and "must call" in system
    assert prompted.dialect == "qwen3_coder" and prompted.dialects[0] == "qwen3_coder"
    assert sorted(prompted.dialects) == sorted(d for d in DIALECTS if not DIALECTS[d].named_only)  # auto mode's
    assert prompted.tools == TOOLS and prompted.parse and prompted.choice == ToolChoice("required", parallel=False)
    options = prompted.parser_options()
    assert options == {"dialects": prompted.dialects, "max_calls": 1}
    two = render("qwen3_coder", "list_files", {}) + "\n" + render("qwen3_coder", "list_files", {})
    assert len(sp.parse(two, prompted.tools, **options).tool_calls) == 1


def test_prompt_request_others_and_modes() -> None:
    messages = [{"role": "user", "content": "hi"}]
    prompted = prompt_request({"messages": messages, "tools": TOOLS}, "mistral", others=["hermes", "mistral", "xlam"])
    assert prompted.dialects == ["mistral", "hermes", "xlam"]
    assert "max_calls" not in prompted.parser_options()
    none = prompt_request({"messages": messages, "tools": TOOLS, "tool_choice": "none"}, "hermes")
    assert not none.parse and none.payload["messages"] == messages and "tools" not in none.payload
    bare = prompt_request({"messages": messages}, "hermes")
    assert not bare.parse and bare.tools == [] and bare.payload == {"messages": messages}
    legacy = prompt_request({"messages": messages, "functions": [TOOLS[1]], "function_call": {"name": "search_web"}},
                            "hermes")
    assert legacy.tools == [TOOLS[1]] and legacy.choice == ToolChoice("named", "search_web")
    assert "functions" not in legacy.payload and "search_web" in legacy.payload["messages"][0]["content"]
    with pytest.raises(PromptError, match="messages"):
        prompt_request({"tools": TOOLS}, "hermes")


def test_history_is_rendered_even_when_tools_are_off() -> None:
    messages = [{"role": "user", "content": "hi"}, assistant(("c1", "list_files", "{}")),
                {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}]
    prompted = prompt_request({"messages": messages, "tools": TOOLS, "tool_choice": "none"}, "hermes")
    assert [m["role"] for m in prompted.payload["messages"]] == ["user", "assistant", "user"]
    assert "<tool_call>" in prompted.payload["messages"][1]["content"]


# --------------------------------------------------------------------------- example arguments

def test_example_arguments_typed_values() -> None:
    assert example_arguments({"properties": {"s": {"type": "string"}, "i": {"type": "integer"},
                                             "n": {"type": "number"}, "b": {"type": "boolean"}}}) == {
        "s": "example s", "i": 1, "n": 1.5, "b": True}
    assert example_arguments({"properties": {
        "a": {"type": "array", "items": {"type": "integer"}},
        "o": {"type": "object", "properties": {"x": {"type": "null"}}},
        "e": {"enum": ["red", "blue"]},
        "d": {"type": "string", "default": "dflt"}}}) == {"a": [1], "o": {"x": None}, "e": "red", "d": "dflt"}
    assert example_arguments({"properties": {"t": {"type": ["null", "integer"]}, "u": {"anyOf": [{"type": "null"},
                                                                                            {"type": "boolean"}]},
                                             "r": {"$ref": "#/$defs/when"}, "x": {"examples": [7]}},
                              "$defs": {"when": {"type": "string", "format": "date"}}}) == {
        "t": 1, "u": True, "r": "2025-01-01", "x": 7}
    assert example_arguments({"properties": {"a": {}, "b": {}, "c": {}}, "required": ["b"]}) == {"b": "example b"}
    assert len(example_arguments({"properties": {f"k{i}": {"type": "string"} for i in range(10)}})) <= 4
    assert example_arguments(None) == {} and example_arguments({"type": "string"}) == {}
    looped = {"properties": {"self": {"$ref": "#"}}, "$ref": "#"}
    assert isinstance(example_arguments(looped), dict)


_KEYWORDS = ["type", "properties", "required", "items", "enum", "default", "examples", "anyOf", "oneOf", "allOf",
             "$ref", "const", "format", "minimum", "$defs"]
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
                     | st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null", "#",
                                        "#/properties/a", "#/$defs/x", "date"]),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                     max_leaves=8)
_SCHEMAS = st.recursive(
    st.dictionaries(st.sampled_from(_KEYWORDS), _JSON, max_size=4),
    lambda inner: st.dictionaries(st.sampled_from(_KEYWORDS), inner | st.lists(inner, max_size=3)
                                  | st.dictionaries(st.sampled_from(["a", "b", "x"]), inner, max_size=3) | _JSON,
                                  max_size=5),
    max_leaves=20)


@settings(max_examples=examples(150), deadline=None)
@given(schema=_SCHEMAS)
def test_example_arguments_never_raise(schema: dict[str, Any]) -> None:
    value = example_arguments(schema)
    assert isinstance(value, dict)
    json.dumps(value)
