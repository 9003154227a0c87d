"""Writing calls in each dialect's markup: the inverse of parsing.

Invariant: ``parse(render(d, name, args))`` gives back ``(name, args)`` for every
dialect ``d`` (tested), and the returned offset is exactly where the call becomes
complete, i.e. where the parser emits it. The benchmark builds its workloads from
these, and tool prompting (for backends without tool support) writes history with them.
``RENDERERS`` holds the dialects auto mode reads; ``NAMED_ONLY_RENDERERS`` the named-only
ones (Functionary v3.2, ReAct), read back only when named (``dialects=[d]``), so they stay
out of the workloads that are parsed in auto mode. ``render`` writes either.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from . import DIALECTS
from .kv_family import KvCall
from .markers import markers
from .xml_family import XmlCall

__all__ = ["RENDERERS", "NAMED_ONLY_RENDERERS", "render"]

Rendered = tuple[str, int]  # (markup, offset just after the character that completes the call)


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _text_value(value: Any) -> str:
    return value if isinstance(value, str) else _js(value)


def _json_between(before: str, value: Any, after: str = "", *, complete_at_end: bool = False) -> Rendered:
    """``before + JSON + after``; the call completes at the end of the JSON value (or of everything)."""
    text = before + _js(value) + after
    return text, len(text) if complete_at_end else len(before) + len(_js(value))


def _closed_at(text: str, marker: str) -> Rendered:
    """The call completes at the first occurrence of ``marker`` (an item's closing tag)."""
    return text, text.index(marker) + len(marker)


def _settled_at_end(text: str) -> Rendered:
    """The call completes with the block's end marker (the text's end): only what follows a value's closer and
    the item's closer tells they are not quoted in the value (``core.tag_body``)."""
    return text, len(text)


def _python_literal(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_python_literal(k)}: {_python_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v) for v in value) + "]"
    return repr(value)


def _pythonic(name: str, args: dict[str, Any]) -> Rendered:
    text = f"[{name}(" + ", ".join(f"{k}={_python_literal(v)}" for k, v in args.items()) + ")]"
    return text, len(text)


_IDENT = re.compile(r"[A-Za-z_$][\w.\-$]*")


def _gemma_value(value: Any, quote: str) -> str:
    """A value in Gemma's argument syntax: strings between ``quote`` tokens, bare keys where they are identifiers."""
    if isinstance(value, str):
        return quote + value + quote
    if isinstance(value, bool) or value is None:
        return _js(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{k if _IDENT.fullmatch(k) else quote + k + quote}:{_gemma_value(v, quote)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v, quote) for v in value) + "]"
    return _js(value)


def _gemma(grammar: str) -> Callable[[str, dict[str, Any]], Rendered]:
    opener, call, closer, quote = markers(grammar, "_OPEN", "_CALL", "_CLOSE", "_QUOTE")
    return lambda n, a: _closed_at(f"{opener}{call}{n}{_gemma_value(a, quote)}{closer}", closer)


def _dsml(space: str, wrapper: str) -> Callable[[str, dict[str, Any]], Rendered]:
    """DeepSeek's DSML in one namespace of ``deepseek_v32.lark`` (GigaChat 3.5 writes the same under ``GCML``)."""
    opener, closer, invoke, invoke_end, param, param_end = markers("deepseek_v32", *(f"_{space}_{t}" for t in (
        wrapper, f"{wrapper}_END", "INVOKE", "INVOKE_END", "PARAMETER", "PARAMETER_END")))

    def render_call(name: str, args: dict[str, Any]) -> Rendered:
        params = "".join(f'{param} name="{k}" string="{str(isinstance(v, str)).lower()}">{_text_value(v)}{param_end}\n'
                         for k, v in args.items())
        return _settled_at_end(f'{opener}\n{invoke} name="{name}">\n{params}{invoke_end}\n{closer}')

    return render_call


_K3 = markers("kimi_k3", "_TOOLS", "_CALL", "_SEP", "_ARGUMENT", "_ARGUMENT_END", "_CALL_CLOSE", "_TOOLS_END")


def _kimi_k3(name: str, args: dict[str, Any]) -> Rendered:
    tools, call, sep, argument, argument_end, call_end, tools_end = _K3

    def arg(k: str, v: Any) -> str:
        kind = "string" if isinstance(v, str) else "json"
        return f'{argument} key="{_attr(k)}" type="{kind}"{sep}{_text_value(v)}{argument_end}\n'

    body = "".join(arg(k, v) for k, v in args.items())
    return _settled_at_end(f'{tools}\n{call} tool="{_attr(name)}" index="0"{sep}\n{body}{call_end}\n{tools_end}')


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


def _olmo3(name: str, args: dict[str, Any]) -> Rendered:
    opener, closer = markers("olmo3", "_CALLS", "_CALLS_END")
    text = f"{opener}\n{_pythonic(name, args)[0][1:-1]}\n{closer}"
    return text, len(text)


def _family(dialect: str) -> Callable[[str, dict[str, Any]], Rendered]:
    """An XML-parameter family member's renderer, from its declared markup and wrapper (``xml_family``). The call
    completes with the block's end: only what follows a value's closer and the call's closer tells they are not
    quoted in the value (``core.tag_body``); a bare call with no value completes at its own closer."""
    declared = DIALECTS[dialect]
    markup = declared.markup
    assert isinstance(markup, XmlCall)
    wrap = (declared.nest or ("", ""))

    def render_call(name: str, args: dict[str, Any]) -> Rendered:
        text = markup.render(name, args, wrap)
        return _settled_at_end(text) if args else _closed_at(text, markup.call_close)

    return render_call


def _kv(dialect: str) -> Callable[[str, dict[str, Any]], Rendered]:
    """A key/value family member's renderer, from its declared markup (``kv_family``): a call completes at its
    own closer, or with the wrapper's end when it holds values (what follows a value's closer tells it is one)."""
    declared = DIALECTS[dialect]
    markup = declared.kv
    assert isinstance(markup, KvCall)
    wrap = (declared.openers[0].text, declared.end[0])

    def render_call(name: str, args: dict[str, Any]) -> Rendered:
        text = markup.render(name, args, wrap)
        if markup.item_tags is None:
            return _closed_at(text, wrap[1])
        return _settled_at_end(text) if args else _closed_at(text, markup.item_tags[1])

    return render_call


_M3 = "]<]minimax[>["


def _m3_value(value: Any) -> str:
    """A value as MiniMax-M3's template writes it: objects as tags named after their keys, arrays as ``<item>`` tags,
    None left out, strings raw, numbers and booleans as JSON."""
    if isinstance(value, dict):
        return "".join(f"{_M3}<{k}>{_m3_value(v)}{_M3}</{k}>" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "".join(f"{_M3}<item>{_m3_value(v)}{_M3}</item>" for v in value if v is not None)
    return _text_value(value)


def _minimax_m3(name: str, args: dict[str, Any]) -> Rendered:
    text = (f'{_M3}<tool_call>\n{_M3}<invoke name="{name}">{_m3_value(args)}{_M3}</invoke>\n{_M3}</tool_call>')
    return _closed_at(text, f"{_M3}</invoke>")


def _plamo3(name: str, args: dict[str, Any]) -> Rendered:
    """PLaMo 3: every tag in the ``<|plamo:…:plamo|>`` namespace, no whitespace between them."""
    def tag(word: str) -> str:
        return f"<|plamo:{word}:plamo|>"

    text = (f"{tag('begin_tool_requests')}{tag('begin_tool_request')}{tag('begin_tool_name')}{name}{tag('end_tool_name')}"
            f"{tag('begin_tool_arguments')}<|plamo:constrain|>json<|plamo:msg|>{_js(args)}{tag('end_tool_arguments')}"
            f"{tag('end_tool_request')}{tag('end_tool_requests')}")
    return _closed_at(text, tag("end_tool_request"))


def _llama31_builtin(name: str, args: dict[str, Any]) -> Rendered:
    """``TOOL.call(k=v, …)``: values as JSON, which both Python's literals and llama.cpp's reader (JSON) accept."""
    text = f"<|python_tag|>{name}.call(" + ", ".join(f"{k}={_js(v)}" for k, v in args.items()) + ")<|eom_id|>"
    return text, len(text)


def _lfm2(name: str, args: dict[str, Any]) -> Rendered:
    call = _pythonic(name, args)[0]
    return "<|tool_call_start|>" + call + "<|tool_call_end|>", len("<|tool_call_start|>" + call)


def _deepseek(grammar: str) -> Callable[[str, dict[str, Any]], Rendered]:
    """DeepSeek V3 (``function``, the separator, the name, the arguments in a JSON fence) or V3.1 (the name, the
    separator, the arguments)."""
    section, call, sep, call_end, section_end = markers(grammar, "_CALLS_BEGIN", "_BEGIN", "_SEP", "_END", "_CALLS_END")
    if grammar == "deepseek_v3":
        kind, fence, fence_end = markers(grammar, "_TYPE", "_JSON_FENCE", "_FENCE_CLOSE")
        return lambda n, a: _closed_at(
            f"{section}{call}{kind}{sep}{n}\n{fence}\n{_js(a)}\n{fence_end}{call_end}{section_end}", call_end)
    return lambda n, a: _closed_at(f"{section}{call}{n}{sep}{_js(a)}{call_end}{section_end}", call_end)


def _kimi_k2(name: str, args: dict[str, Any]) -> Rendered:
    section, call, arguments, call_end, section_end = markers(
        "kimi_k2", "_SECTION_BEGIN", "_BEGIN", "_ARGS_BEGIN", "_END", "_SECTION_END")
    return _closed_at(f"{section}{call}functions.{name}:0{arguments}{_js(args)}{call_end}{section_end}", call_end)


def _harmony(name: str, args: dict[str, Any]) -> Rendered:
    header, functions, constrain, message, call = markers(
        "openai", "_COMMENTARY_TO", "_FUNCTIONS", "_CONSTRAIN_JSON", "_MESSAGE", "_CALL")
    return _json_between(f"{header}{functions}{name} {constrain}{message}", args, call, complete_at_end=True)


_HERMES = markers("hermes", "_OPEN", "_CLOSE")
_MISTRAL = markers("mistral", "_OPEN")[0]
_MISTRAL_V11 = markers("mistral_v11", "_OPEN", "_ARGS")
_PYTHON_TAG = markers("llama3_json", "_TAG")[0]

RENDERERS: dict[str, Callable[[str, dict[str, Any]], Rendered]] = {
    "hermes": lambda n, a: _json_between(f"{_HERMES[0]}\n", {"name": n, "arguments": a}, f"\n{_HERMES[1]}"),
    "qwen3_coder": _family("qwen3_coder"),
    "glm45": _kv("glm45"),
    "tools_array": lambda n, a: _json_between("<tools>[", {"name": n, "arguments": a}, "]</tools>"),
    "function_tag": lambda n, a: _json_between("<function>", {"name": n, "parameters": a}, "</function>"),
    "angle_json": lambda n, a: _json_between("<", {"name": n, "arguments": a}, ">"),
    "name_tag": lambda n, a: _json_between(f"<{n}>", a, "</function>"),
    "tool_calls_json": lambda n, a: _json_between("", {"tool_calls": [{"name": n, "arguments": a}]}),
    "llama3_json": lambda n, a: _json_between(_PYTHON_TAG, {"name": n, "parameters": a}),
    "xlam": lambda n, a: _json_between("[", {"name": n, "arguments": a}, "]"),
    "pythonic": _pythonic,
    "mistral": lambda n, a: _json_between(f"{_MISTRAL}[", {"name": n, "arguments": a}, "]"),
    "mistral_v11": lambda n, a: _json_between(f"{_MISTRAL_V11[0]}{n}{_MISTRAL_V11[1]}", a),
    "deepseek_v3": _deepseek("deepseek_v3"),
    "deepseek_v31": _deepseek("deepseek_v31"),
    "kimi_k2": _kimi_k2,
    "openai": _harmony,
    "seed_oss": _family("seed_oss"),
    "minimax_m2": _family("minimax_m2"),
    "granite": lambda n, a: _json_between("<|tool_call|>[", {"name": n, "arguments": a}, "]"),
    "hunyuan": lambda n, a: _json_between("<tool_calls>[", {"name": n, "arguments": a}, "]</tool_calls>"),
    "phi4_mini": lambda n, a: _json_between("functools[", {"name": n, "arguments": a}, "]"),
    "generic": lambda n, a: _json_between("", {"tool_call": {"name": n, "arguments": a}}),
    "nemotron": lambda n, a: _json_between("<TOOLCALL>[", {"name": n, "arguments": a}, "]</TOOLCALL>"),
    "lfm2": _lfm2,
    "cohere": lambda n, a: _json_between("<|START_ACTION|>[", {"tool_call_id": "0", "tool_name": n, "parameters": a},
                                         "]<|END_ACTION|>"),
    "gemma4": _gemma("gemma4"),
    "functiongemma": _gemma("functiongemma"),
    "deepseek_v32": _dsml("V32", "FUNCTION_CALLS"),
    "olmo3": _olmo3,
    "kimi_k3": _kimi_k3,
    "apertus": lambda n, a: _json_between("<|tools_prefix|>[", {n: a}, "]<|tools_suffix|>"),
    "internlm": lambda n, a: _json_between("<|action_start|><|plugin|>\n", {"name": n, "parameters": a}, "<|action_end|>"),
    "gigachat3": lambda n, a: _json_between("<|message_sep|>function call<|role_sep|>\n", {"name": n, "arguments": a}),
    "claude_xml": _family("claude_xml"),
    "minicpm5": _family("minicpm5"),
    "atem": _family("atem"),
    "hy3": _kv("hy3"),
    "longcat_xml": _kv("longcat_xml"),
    "longcat": lambda n, a: _json_between("<longcat_tool_call>\n", {"name": n, "arguments": a}, "\n</longcat_tool_call>"),
    "k2_horizon": _kv("k2_horizon"),
    "plamo3": _plamo3,
    "minimax_m3": _minimax_m3,
    "command_r": lambda n, a: _json_between("Action:\n```json\n[", {"tool_name": n, "parameters": a}, "]```"),
    "gigachat35": _dsml("GCML", "TOOL_CALLS"),
    "granite_20b_fc": lambda n, a: _json_between("<function_call> ", {"name": n, "arguments": a}),
    "dots": _family("dots"),
    "dots_json": lambda n, a: _json_between("<dots_function_call>\n", {"name": n, "arguments": a}, "\n</dots_function_call>"),
    "solar_open": lambda n, a: _closed_at(f"<|tool_calls|><|tool_call:begin|>0<|tool_call:name|>{n}<|tool_call:args|>"
                                          f"{_js(a)}<|tool_call:end|><|calls|>", "<|tool_call:end|>"),
    "tool_use": lambda n, a: _closed_at(f"<tool_use>\n<name>{n}</name>\n<arguments>{_js(a)}</arguments>\n</tool_use>",
                                        "</tool_use>"),
    "llama31_builtin": _llama31_builtin,
}

NAMED_ONLY_RENDERERS: dict[str, Callable[[str, dict[str, Any]], Rendered]] = {
    "functionary_v32": lambda n, a: _json_between(f">>>{n}\n", a),
    "react": lambda n, a: _json_between(f"Action: {n}\nAction Input: ", a),
}


def render(dialect: str, name: str, arguments: dict[str, Any]) -> str:
    """One call written in ``dialect``'s markup."""
    return (RENDERERS.get(dialect) or NAMED_ONLY_RENDERERS[dialect])(name, arguments)[0]
