"""Every dialect: one call, several calls, text around, unicode, escaped quotes, nested values."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from helpers import assert_chunking_invariant, calls, content

Args = dict[str, Any]


def _xml_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def qwen3(name: str, args: Args) -> str:
    params = "".join(f"<parameter={k}>\n{_xml_value(v)}\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def js(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# --- Renderers written from the models' chat templates (not from streamparse/render.py).

def glm45(name: str, args: Args) -> str:
    """GLM-4.5/4.6 layout: name, then one ``<arg_key>``/``<arg_value>`` pair per line."""
    pairs = "".join(f"\n<arg_key>{k}</arg_key>\n<arg_value>{_xml_value(v)}</arg_value>" for k, v in args.items())
    return f"<tool_call>{name}{pairs}\n</tool_call>"


def glm47(name: str, args: Args) -> str:
    """GLM-4.7 layout: the same pairs with no newline anywhere."""
    pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>{_xml_value(v)}</arg_value>" for k, v in args.items())
    return f"<tool_call>{name}{pairs}</tool_call>"


def py_literal(v: Any) -> str:
    """A Python literal as a model writes it (True/False/None, repr strings)."""
    if v is None or isinstance(v, bool):
        return str(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(py_literal(x) for x in v) + "]"
    return repr(v)


def pythonic(name: str, args: Args) -> str:
    return f"[{name}(" + ", ".join(f"{k}={py_literal(v)}" for k, v in args.items()) + ")]"


DS_CALLS, DS_CALLS_END = "<\uff5ctool\u2581calls\u2581begin\uff5c>", "<\uff5ctool\u2581calls\u2581end\uff5c>"
DS_CALL, DS_CALL_END, DS_SEP = "<\uff5ctool\u2581call\u2581begin\uff5c>", "<\uff5ctool\u2581call\u2581end\uff5c>", "<\uff5ctool\u2581sep\uff5c>"


def deepseek_v3(name: str, args: Args) -> str:
    return f"{DS_CALLS}{DS_CALL}function{DS_SEP}{name}\n```json\n{js(args)}\n```{DS_CALL_END}{DS_CALLS_END}"


def deepseek_v31(name: str, args: Args) -> str:
    return f"{DS_CALLS}{DS_CALL}{name}{DS_SEP}{js(args)}{DS_CALL_END}{DS_CALLS_END}"


def kimi_k2(name: str, args: Args) -> str:
    return (f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>"
            f"{js(args)}<|tool_call_end|><|tool_calls_section_end|>")


def harmony_channel(name: str, args: Args) -> str:
    return f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{js(args)}<|call|>"


def harmony_role(name: str, args: Args) -> str:
    return f"<|start|>assistant to=functions.{name}<|channel|>commentary json<|message|>{js(args)}<|call|>"


def seed_oss(name: str, args: Args) -> str:
    params = "".join(f"<parameter={k}>{_xml_value(v)}</parameter>\n" for k, v in args.items())
    return f"<seed:tool_call>\n<function={name}>\n{params}</function>\n</seed:tool_call>"


def minimax_m2(name: str, args: Args) -> str:
    params = "".join(f'<parameter name="{k}">{_xml_value(v)}</parameter>\n' for k, v in args.items())
    return f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n</minimax:tool_call>'


def call_obj(name: str, args: Args) -> dict[str, Any]:
    return {"name": name, "arguments": args}


RENDER: dict[str, Callable[[str, Args], str]] = {
    "qwen3_xml": qwen3,
    "qwen3_xml_unwrapped": lambda n, a: qwen3(n, a)[len("<tool_call>\n") : -len("\n</tool_call>")],
    "hermes": lambda n, a: f"<tool_call>\n{js({'name': n, 'arguments': a})}\n</tool_call>",
    "hermes_parameters": lambda n, a: f"<tool_call>{js({'name': n, 'parameters': a})}</tool_call>",
    "hermes_string_arguments": lambda n, a: f"<tool_call>{js({'name': n, 'arguments': js(a)})}</tool_call>",
    "hermes_array": lambda n, a: f"<tool_call>\n{js([call_obj(n, a)])}\n</tool_call>",
    "tools_array": lambda n, a: f"<tools>[{js({'name': n, 'arguments': a})}]</tools>",
    "function_tag": lambda n, a: f"<function>{js({'name': n, 'parameters': a})}</function>",
    "function_tag_equals": lambda n, a: f"<function={n}>{js(a)}</function>",
    "function_tag_name_attr": lambda n, a: f'<function name="{n}">{js(a)}</function>',
    "angle_json": lambda n, a: f"<{js({'name': n, 'arguments': a})}>",
    "name_tag_function": lambda n, a: f"<{n}>{js(a)}</function>",
    "name_tag_self": lambda n, a: f"<{n}>{js(a)}</{n}>",
    "tool_call_upper": lambda n, a: f"<TOOL_CALL>\n{js({'name': n, 'input': a})}\n</TOOL_CALL>",
    "tool_call_mixed_case": lambda n, a: f"<Tool_CALL>{js({'name': n, 'input': a})}</TOOL_CALL>",
    "tool_calls_json": lambda n, a: js({"tool_calls": [{"name": n, "arguments": a}]}),
    "bare_json": lambda n, a: js({"name": n, "arguments": a}),
    "bare_json_fenced": lambda n, a: "```json\n" + js({"name": n, "arguments": a}) + "\n```",
    "bare_json_fenced_no_brace": lambda n, a: "```json\n" + js({"name": n, "arguments": a})[:-1] + "\n```",
    "mistral": lambda n, a: "[TOOL_CALLS]" + js([{"name": n, "arguments": a}]),
    "mistral_v11": lambda n, a: f"[TOOL_CALLS]{n}[ARGS]" + js(a),
    "mistral_v11_no_args_marker": lambda n, a: f"[TOOL_CALLS]{n}" + js(a),
    "hermes_fenced": lambda n, a: "```json\n" + f"<tool_call>{js({'name': n, 'arguments': a})}</tool_call>" + "\n```",
    "qwen3_fenced": lambda n, a: "```xml\n" + qwen3(n, a) + "\n```",
    "glm45": glm45,
    "glm47": glm47,
    "llama3_python_tag": lambda n, a: "<|python_tag|>" + js({"name": n, "parameters": a}),
    "llama3_bare_line_start": lambda n, a: js({"name": n, "parameters": a}),
    "pythonic": pythonic,
    "pythonic_llama4": lambda n, a: f"<|python_start|>{pythonic(n, a)}<|python_end|>",
    "deepseek_v3": deepseek_v3,
    "deepseek_v31": deepseek_v31,
    "kimi_k2": kimi_k2,
    "harmony_channel": harmony_channel,
    "harmony_role": harmony_role,
    "seed_oss": seed_oss,
    "minimax_m2": minimax_m2,
    "granite": lambda n, a: "<|tool_call|>" + js([call_obj(n, a)]),
    "granite_spaced": lambda n, a: "<|tool_call|> " + js([call_obj(n, a)]),
    "hunyuan": lambda n, a: "<tool_calls>" + js([call_obj(n, a)]) + "</tool_calls>",
    "phi4_mini": lambda n, a: "functools" + js([call_obj(n, a)]),
    "xlam": lambda n, a: js([call_obj(n, a)]),
    "xlam_fenced": lambda n, a: "```json\n" + js([call_obj(n, a)]) + "\n```",
}

# Several calls in ONE block, for the dialects whose block can hold more than one call.
Calls = list[tuple[str, Args]]


def _ds_v3_many(cs: Calls) -> str:
    items = "\n".join(f"{DS_CALL}function{DS_SEP}{n}\n```json\n{js(a)}\n```{DS_CALL_END}" for n, a in cs)
    return DS_CALLS + items + DS_CALLS_END


RENDER_SEVERAL: dict[str, Callable[[Calls], str]] = {
    "hermes_array": lambda cs: "<tool_call>" + js([call_obj(n, a) for n, a in cs]) + "</tool_call>",
    "hermes_two_objects": lambda cs: "<tool_call>\n" + "\n".join(js(call_obj(n, a)) for n, a in cs) + "\n</tool_call>",
    "tools_array": lambda cs: "<tools>" + js([call_obj(n, a) for n, a in cs]) + "</tools>",
    "mistral": lambda cs: "[TOOL_CALLS]" + js([call_obj(n, a) for n, a in cs]),
    "qwen3_one_block": lambda cs: "<tool_call>\n" + "".join(qwen3(n, a)[len("<tool_call>\n") : -len("</tool_call>")] for n, a in cs) + "</tool_call>",
    "llama3_semicolons": lambda cs: "<|python_tag|>" + "; ".join(js({"name": n, "parameters": a}) for n, a in cs),
    "pythonic": lambda cs: "[" + ", ".join(pythonic(n, a)[1:-1] for n, a in cs) + "]",
    "pythonic_llama4": lambda cs: "<|python_start|>[" + ", ".join(pythonic(n, a)[1:-1] for n, a in cs) + "]<|python_end|>",
    "deepseek_v3": _ds_v3_many,
    "deepseek_v3_adjacent": lambda cs: DS_CALLS + "".join(
        f"{DS_CALL}function{DS_SEP}{n}\n```json\n{js(a)}\n```{DS_CALL_END}" for n, a in cs) + DS_CALLS_END,
    "deepseek_v31": lambda cs: DS_CALLS + "".join(f"{DS_CALL}{n}{DS_SEP}{js(a)}{DS_CALL_END}" for n, a in cs) + DS_CALLS_END,
    "kimi_k2": lambda cs: "<|tool_calls_section_begin|>" + "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{js(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate(cs)) + "<|tool_calls_section_end|>",
    "harmony_messages": lambda cs: "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{js(a)}<|call|>" for n, a in cs),
    "seed_oss_one_block": lambda cs: "<seed:tool_call>\n" + "".join(
        seed_oss(n, a)[len("<seed:tool_call>\n") : -len("</seed:tool_call>")] for n, a in cs) + "</seed:tool_call>",
    "minimax_m2": lambda cs: "<minimax:tool_call>\n" + "".join(
        minimax_m2(n, a)[len("<minimax:tool_call>\n") : -len("</minimax:tool_call>")] for n, a in cs) + "</minimax:tool_call>",
    "glm47_adjacent": lambda cs: "".join(glm47(n, a) for n, a in cs),
    "granite": lambda cs: "<|tool_call|>" + js([call_obj(n, a) for n, a in cs]),
    "hunyuan": lambda cs: "<tool_calls>" + js([call_obj(n, a) for n, a in cs]) + "</tool_calls>",
    "phi4_mini": lambda cs: "functools" + js([call_obj(n, a) for n, a in cs]),
    "phi4_mini_pretty": lambda cs: "functools" + json.dumps([call_obj(n, a) for n, a in cs], indent=2, ensure_ascii=False),
    "xlam": lambda cs: js([call_obj(n, a) for n, a in cs]),
    "xlam_fenced": lambda cs: "```json\n" + js([call_obj(n, a) for n, a in cs]) + "\n```",
}

ARGUMENTS: dict[str, tuple[str, Args]] = {
    "simple": ("get_weather", {"city": "Paris"}),
    "unicode": ("get_weather", {"city": "São Paulo 東京 🌧 naïve"}),
    "escaped_quotes": ("get_weather", {"city": 'He said "hi" \\ and \'bye\'\n next line'}),
    "nested": ("configure", {"options": {"a": [1, {"b": None}], "s": "x"}, "items": [1, "two", True], "count": 3}),
    "typed": ("configure", {"count": 42, "ratio": 0.5, "enabled": False, "code": "007"}),
    "empty": ("configure", {}),  # `{}`, `f()`, GLM's `<tool_call>NAME</tool_call>`
    "dotted_name": ("server.method", {}),
}


@pytest.mark.parametrize("style", sorted(RENDER))
@pytest.mark.parametrize("case", sorted(ARGUMENTS))
def test_single_call(style: str, case: str) -> None:
    name, args = ARGUMENTS[case]
    text = RENDER[style](name, args)
    text_out, found = assert_chunking_invariant(text)
    assert found == [(name, args)]
    assert text_out.strip() == ""


@pytest.mark.parametrize("style", sorted(RENDER))
def test_several_calls_with_text_around(style: str) -> None:
    render = RENDER[style]
    first = ("get_weather", {"city": "Paris"})
    second = ("configure", {"count": 2, "options": {"deep": {"deeper": [1, 2]}}})
    text = "Before.\n" + render(*first) + "\nBetween.\n" + render(*second) + "\nAfter."
    text_out, found = assert_chunking_invariant(text)
    assert found == [first, second]
    assert text_out == "Before.\n\nBetween.\n\nAfter."


@pytest.mark.parametrize("style", sorted(RENDER_SEVERAL))
def test_several_calls_in_one_block(style: str) -> None:
    expected = [ARGUMENTS[c] for c in ("unicode", "nested", "escaped_quotes", "typed")]
    text = "Before.\n" + RENDER_SEVERAL[style](expected) + "\nAfter."
    text_out, found = assert_chunking_invariant(text)
    assert found == expected
    assert text_out == "Before.\n\nAfter."


def test_tools_array_several_elements_are_emitted_one_by_one() -> None:
    import streamparse as sp
    from helpers import TOOLS

    text = '<tools>[{"name": "get_weather", "arguments": {"city": "A"}}, {"name": "get_weather", "arguments": {"city": "B"}}]</tools>'
    parser = sp.StreamParser(TOOLS)
    first_end = text.index("}}") + 2
    events = parser.feed(text[:first_end])
    assert [e.name for e in events if e.type == "tool_call"] == ["get_weather"]
    events = parser.feed(text[first_end:]) + parser.close()
    assert [json.loads(e.arguments)["city"] for e in events if e.type == "tool_call"] == ["B"]
    assert "".join(e.text for e in events if e.type == "text") == ""


def test_mistral_array_of_two() -> None:
    text = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "A"}}, {"name": "search_recipes", "arguments": {"query": "q"}}] ok'
    assert calls(text) == [("get_weather", {"city": "A"}), ("search_recipes", {"query": "q"})]
    assert content(text) == " ok"


def test_bare_tool_calls_with_dotted_names() -> None:
    text = 'Calling.\n{"tool_calls": [{"name": "server.method", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "X"}}]}'
    assert calls(text) == [("server.method", {}), ("get_weather", {"city": "X"})]
    assert content(text) == "Calling.\n"


def test_bare_tool_calls_with_an_unknown_name_stays_text() -> None:
    text = '{"tool_calls": [{"name": "server.method", "arguments": {}}, {"name": "nope", "arguments": {}}]}'
    assert calls(text) == []
    assert content(text) == text


@pytest.mark.parametrize("label", ["json", "python", "", "xml", "tool_code"])
def test_bare_call_in_any_fence(label: str) -> None:
    text = f"Here:\n```{label}\n" + '{"name": "get_weather", "parameters": {"city": "Lima"}}\n```\nDone.'
    assert calls(text) == [("get_weather", {"city": "Lima"})]
    assert content(text) == "Here:\n\nDone."


def test_fence_around_ordinary_code_stays_text() -> None:
    text = "Code:\n```json\n{\"a\": 1, \"name\": \"get_weather\"}\n```\n```python\nprint('<tool_call>')\n```\n"
    assert assert_chunking_invariant(text) == (text, [])


def test_fence_around_a_non_call_block_stays_text() -> None:
    text = '```json\n{"name": "not_a_tool", "arguments": {}}\n```\n'
    assert assert_chunking_invariant(text) == (text, [])


def test_qwen3_lenient_value_endings_and_xml_characters() -> None:
    text = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\na.html\n"
        "<parameter=content>\n<p>a < b && c > d</p>\n\n</function>\n</tool_call>"
    )
    assert calls(text) == [("write_file", {"path": "a.html", "content": "<p>a < b && c > d</p>\n"})]


def test_qwen3_value_keeps_inner_newlines_and_only_one_layout_newline_is_removed() -> None:
    text = "<function=write_file><parameter=path>p</parameter><parameter=content>\n\nline1\nline2\n\n</parameter></function>"
    assert calls(text) == [("write_file", {"path": "p", "content": "\nline1\nline2\n"})]


def test_qwen3_values_typed_by_schema() -> None:
    text = qwen3("configure", {"count": "17", "ratio": "2.5", "enabled": "True", "nothing": "null",
                               "options": '{"k": [1, 2]}', "items": "[1, 'a']", "code": "00123"})
    assert calls(text) == [("configure", {"count": 17, "ratio": 2.5, "enabled": True, "nothing": None,
                                          "options": {"k": [1, 2]}, "items": [1, "a"], "code": "00123"})]


def test_qwen3_without_schema_values_are_strings() -> None:
    text = qwen3("anything", {"n": "5", "flag": "true"})
    assert calls(text, tools=None) == [("anything", {"n": "5", "flag": "true"})]


def test_qwen3_several_functions_in_one_tool_call() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>A</parameter>\n</function>\n<function=get_weather>\n<parameter=city>B</parameter>\n</function>\n</tool_call>after"
    text_out, found = assert_chunking_invariant(text)
    assert found == [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]
    assert text_out == "after"


def test_qwen3_closed_by_tool_call_without_function_close() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nA\n</parameter>\n</tool_call>x"
    assert assert_chunking_invariant(text) == ("x", [("get_weather", {"city": "A"})])
