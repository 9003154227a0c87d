"""Shared samples: each dialect's renderer, the argument cases, and hypothesis strategies for prose,
markup look-alikes and rendered calls. Used by the dialect, property and stream-argument tests.

Invariant: data and strategies only, no tests; every renderer writes a block its dialect reads.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from hypothesis import strategies as st

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


def gemma_value(v: Any, quote: str) -> str:
    """A value as Gemma 4 / FunctionGemma write it: strings between quote tokens, bare identifier keys."""
    if isinstance(v, str):
        return f"{quote}{v}{quote}"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{gemma_value(x, quote)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(gemma_value(x, quote) for x in v) + "]"
    return json.dumps(v)


GEMMA_QUOTE = '<|"|>'


def gemma4(name: str, args: Args) -> str:
    return f"<|tool_call>call:{name}{gemma_value(args, GEMMA_QUOTE)}<tool_call|>"


def functiongemma(name: str, args: Args) -> str:
    return f"<start_function_call>call:{name}{gemma_value(args, '<escape>')}<end_function_call>"


def dsml_invoke(name: str, args: Args) -> str:
    params = "".join(f'<\uff5cDSML\uff5cparameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
                     f"{_xml_value(v)}</\uff5cDSML\uff5cparameter>\n" for k, v in args.items())
    return f'<\uff5cDSML\uff5cinvoke name="{name}">\n{params}</\uff5cDSML\uff5cinvoke>\n'


def dsml(calls: list[tuple[str, Args]], wrapper: str = "function_calls") -> str:
    body = "".join(dsml_invoke(n, a) for n, a in calls)
    return f"<\uff5cDSML\uff5c{wrapper}>\n{body}</\uff5cDSML\uff5c{wrapper}>"


def olmo3(calls: list[tuple[str, Args]]) -> str:
    return "<function_calls>\n" + "\n".join(pythonic(n, a)[1:-1] for n, a in calls) + "\n</function_calls>"


def kimi_k3_call(name: str, args: Args, index: int = 1) -> str:
    params = "".join(f'<|open|>argument key="{k}" type="{"string" if isinstance(v, str) else "object"}"<|sep|>'
                     f"{_xml_value(v)}<|close|>argument<|sep|>" for k, v in args.items())
    return f'<|open|>call tool="{name}" index="{index}"<|sep|>{params}<|close|>call<|sep|>'


def kimi_k3(calls: list[tuple[str, Args]]) -> str:
    body = "\n".join(kimi_k3_call(n, a, i + 1) for i, (n, a) in enumerate(calls))
    return f"<|open|>tools<|sep|>\n{body}\n<|close|>tools<|sep|>"


def cohere_action(i: int, name: str, args: Args) -> dict[str, Any]:
    return {"tool_call_id": str(i), "tool_name": name, "parameters": args}


def minicpm5_value(v: Any) -> str:
    """MiniCPM5's template: a string holding <, & or a newline goes in CDATA; other values as JSON."""
    text = v if isinstance(v, str) else js(v)
    return f"<![CDATA[{text}]]>" if isinstance(v, str) and any(c in v for c in "<&\n") else text


def solar_open(calls: list[tuple[str, Args]]) -> str:
    return "<|tool_calls|>" + "".join(f"<|tool_call:begin|>call_{i}<|tool_call:name|>{n}<|tool_call:args|>{js(a)}"
                                      "<|tool_call:end|>" for i, (n, a) in enumerate(calls)) + "<|calls|>"


def atem(calls: list[tuple[str, Args]]) -> str:
    """Muse Glimmer: one message per call, <|eom|> between them (the turn's <|eot|> after the last is a stop token
    servers strip: the tests with drop spans have their own cases)."""
    def one(n: str, a: Args) -> str:
        params = "".join(f'<atem:parameter name="{k}">{_xml_value(v)}</atem:parameter>\n' for k, v in a.items())
        return (f"<|start|>assistant to={n}<|message|><atem:function_calls>\n<atem:invoke name=\"{n}\">\n{params}"
                "</atem:invoke>\n</atem:function_calls>")
    return "<|eom|>".join(one(n, a) for n, a in calls)


def k2_horizon(calls: list[tuple[str, Args]]) -> str:
    """K2 Horizon's IFM xml flavour, written without newlines as vLLM's tests write it."""
    return "<ifm|tool_calls>" + "\n".join(
        f"<ifm|tool_call>{n}" + "".join(f"<ifm|arg_key>{k}</ifm|arg_key><ifm|arg_value>{_xml_value(v)}</ifm|arg_value>"
                                        for k, v in a.items()) + "</ifm|tool_call>" for n, a in calls) + "</ifm|tool_calls>"


M3 = "]<]minimax[>["


def m3_value(v: Any) -> str:
    """MiniMax-M3's template: objects as tags named after their keys, arrays as <item> tags (None written as null,
    as a model may: the template leaves a None out)."""
    if isinstance(v, dict):
        return "".join(f"{M3}<{k}>{m3_value(x)}{M3}</{k}>" for k, x in v.items())
    if isinstance(v, list):
        return "".join(f"{M3}<item>{m3_value(x)}{M3}</item>" for x in v)
    return _xml_value(v)


def minimax_m3(calls: list[tuple[str, Args]]) -> str:
    return f"{M3}<tool_call>\n" + "".join(f'{M3}<invoke name="{n}">{m3_value(a)}{M3}</invoke>\n' for n, a in calls) + (
        f"{M3}</tool_call>")


def plamo3(calls: list[tuple[str, Args]]) -> str:
    def tag(word: str) -> str:
        return f"<|plamo:{word}:plamo|>"
    return tag("begin_tool_requests") + "".join(
        f"{tag('begin_tool_request')}{tag('begin_tool_name')}{n}{tag('end_tool_name')}{tag('begin_tool_arguments')}"
        f"<|plamo:constrain|>json<|plamo:msg|>{js(a)}{tag('end_tool_arguments')}{tag('end_tool_request')}"
        for n, a in calls) + tag("end_tool_requests")


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
    "phi4_mini_closed": lambda n, a: "functools" + js([call_obj(n, a)]) + "<|/tool_call|>",
    "granite_closed": lambda n, a: "<|tool_call|>" + js([call_obj(n, a)]) + "<|/tool_call|>",
    "tool_calls_python_quotes": lambda n, a: repr({"tool_calls": [{"name": n, "arguments": a}]}),
    "generic": lambda n, a: js({"tool_call": {"name": n, "arguments": a}}),
    "generic_with_id": lambda n, a: js({"tool_call": {"id": "call_1", "name": n, "arguments": a}}),
    "nemotron": lambda n, a: "<TOOLCALL>" + js([call_obj(n, a)]) + "</TOOLCALL>",
    "nemotron_object": lambda n, a: "<TOOLCALL>" + js(call_obj(n, a)) + "</TOOLCALL>",
    "lfm2": lambda n, a: f"<|tool_call_start|>{pythonic(n, a)}<|tool_call_end|>",
    "cohere": lambda n, a: "<|START_ACTION|>" + json.dumps([cohere_action(0, n, a)], indent=4, ensure_ascii=False)
                           + "<|END_ACTION|>",
    "gemma4": gemma4,
    "functiongemma": functiongemma,
    "deepseek_v32": lambda n, a: dsml([(n, a)]),
    "deepseek_v4": lambda n, a: dsml([(n, a)], "tool_calls"),
    "olmo3": lambda n, a: olmo3([(n, a)]),
    "kimi_k3": lambda n, a: kimi_k3([(n, a)]),
    "apertus": lambda n, a: "<|tools_prefix|>" + js([{n: a}]) + "<|tools_suffix|>",
    "internlm": lambda n, a: "<|action_start|><|plugin|>\n" + js({"name": n, "parameters": a}) + "<|action_end|>",
    "gigachat3": lambda n, a: "<|message_sep|>function call<|role_sep|>\n" + js({"name": n, "arguments": a}),
    "gigachat3_inline": lambda n, a: "<|function_call|>" + js({"name": n, "arguments": a}),
    # issue 42: written as each model's own chat template writes one call (llama.cpp models/templates/)
    "minicpm5": lambda n, a: f'<function name="{n}">' + "".join(
        f'<param name="{k}">{minicpm5_value(v)}</param>' for k, v in a.items()) + "</function>",
    "hy3": lambda n, a: f"<tool_calls:opensource>\n<tool_call:opensource>{n}<tool_sep:opensource>\n" + "".join(
        f"<arg_key:opensource>{k}</arg_key:opensource>\n<arg_value:opensource>{_xml_value(v)}</arg_value:opensource>\n"
        for k, v in a.items()) + "</tool_call:opensource>\n</tool_calls:opensource>",
    "solar_open": lambda n, a: solar_open([(n, a)]),
    "solar_open_unwrapped": lambda n, a: f"<|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>{n}<|tool_call:args|>{js(a)}"
                                         "<|tool_call:end|>",
    "atem": lambda n, a: atem([(n, a)]),
    "gigachat35": lambda n, a: dsml([(n, a)], "tool_calls").replace("｜DSML｜", "｜GCML｜"),
    "granite_20b_fc": lambda n, a: "<function_call> " + js({"name": n, "arguments": a}),
    "dots": lambda n, a: "<dots_function_call>\n" + minimax_m2(n, a)[len("<minimax:tool_call>\n"):-len(
        "</minimax:tool_call>")] + "</dots_function_call>",
    "dots_json": lambda n, a: "<dots_function_call>" + js({"name": n, "parameters": a}) + "</dots_function_call>",
    "longcat": lambda n, a: "<longcat_tool_call>\n" + js(call_obj(n, a)) + "\n</longcat_tool_call>",
    "longcat_xml": lambda n, a: f"<longcat_tool_call>{n}\n" + "".join(
        f"<longcat_arg_key>{k}</longcat_arg_key>\n<longcat_arg_value>{_xml_value(v)}</longcat_arg_value>\n"
        for k, v in a.items()) + "</longcat_tool_call>",
    "k2_horizon": lambda n, a: k2_horizon([(n, a)]),
    "plamo3": lambda n, a: plamo3([(n, a)]),
    "minimax_m3": lambda n, a: minimax_m3([(n, a)]),
    "minimax_m3_first_marker_stripped": lambda n, a: minimax_m3([(n, a)])[len("]<]minimax[>["):],
    "plamo3_unconstrained": lambda n, a: plamo3([(n, a)]).replace("<|plamo:constrain|>json", ""),
    "command_r": lambda n, a: "Action:\n```json\n" + json.dumps([{"tool_name": n, "parameters": a}], indent=4,
                                                                ensure_ascii=False) + "```",
    "command_r_fence_line": lambda n, a: "Action:\n```json\n" + js([{"tool_name": n, "parameters": a}]) + "\n```",
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
    "nemotron": lambda cs: "<TOOLCALL>" + js([call_obj(n, a) for n, a in cs]) + "</TOOLCALL>",
    "lfm2": lambda cs: "<|tool_call_start|>[" + ", ".join(pythonic(n, a)[1:-1] for n, a in cs) + "]<|tool_call_end|>",
    "cohere": lambda cs: "<|START_ACTION|>" + js([cohere_action(i, n, a) for i, (n, a) in enumerate(cs)]) + "<|END_ACTION|>",
    "gemma4_adjacent": lambda cs: "".join(gemma4(n, a) for n, a in cs),
    "functiongemma_adjacent": lambda cs: "".join(functiongemma(n, a) for n, a in cs),
    "deepseek_v32": dsml,
    "deepseek_v4": lambda cs: dsml(cs, "tool_calls"),
    "olmo3": olmo3,
    "kimi_k3": kimi_k3,
    "apertus": lambda cs: "<|tools_prefix|>" + js([{n: a} for n, a in cs]) + "<|tools_suffix|>",
    "solar_open": lambda cs: solar_open(cs),
    "atem": lambda cs: atem(cs),
    "gigachat35": lambda cs: dsml(cs, "tool_calls").replace("｜DSML｜", "｜GCML｜"),
    "k2_horizon": k2_horizon,
    "plamo3": lambda cs: plamo3(cs),
    "minimax_m3": minimax_m3,
    "command_r": lambda cs: "Action:\n```json\n" + js([{"tool_name": n, "parameters": a} for n, a in cs]) + "```",
    "longcat_back_to_back": lambda cs: "<longcat_tool_call>" + "\n".join(js(call_obj(n, a)) for n, a in cs)
                                       + "</longcat_tool_call>",
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


PROSE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
# Pieces that look like the start (or end) of markup, but never complete a valid call:
# no "name" key, no <function=, no provided tool's tag.
LOOKALIKES = st.sampled_from([
    "<", ">", "{", "}", "[", "]", "`", "```", "```json\n", "\n", " ", '"', "'", "\\",
    "<tool_call>", "</tool_call>", "<TOOL_CALL>", "<tools>", "</tools>", "<function>", "</function>",
    "<think>", "</think>", "<b>", "</b>", "<|im_end|>", "[TOOL_CALLS]", "<{", '{"tool_calls": ', '{"key": 1}',
    '{"arguments": {}}', "<tool_", "</tool_ca", "<thi", "<search", "a < b", "x > y", "é", "東京", "🌧",
])
RENDERED = st.builds(
    lambda style, case: (RENDER[style](*ARGUMENTS[case]), ARGUMENTS[case]),
    st.sampled_from(sorted(RENDER)),
    st.sampled_from(sorted(ARGUMENTS)),
)
CALL_BLOCKS = RENDERED.map(lambda rendered: rendered[0])

MIXED_TEXT = st.lists(
    st.one_of(PROSE, LOOKALIKES, CALL_BLOCKS.map(lambda b: "\n" + b + "\n")), max_size=12
).map("".join)


def cuts_for(text: str) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=40, unique=True)
