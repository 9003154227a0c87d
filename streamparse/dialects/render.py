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
from .markup import marker, markers
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


_M3, _M3_ITEM = markers("minimax_m3", "_NS", "_ITEM")


def _m3_value(value: Any) -> str:
    """A value as MiniMax-M3's template writes it: objects as tags named after their keys, arrays as item tags,
    None left out, strings raw, numbers and booleans as JSON."""
    if isinstance(value, dict):
        return "".join(f"{_M3}<{k}>{_m3_value(v)}{_M3}</{k}>" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "".join(f"{_M3}<{_M3_ITEM}>{_m3_value(v)}{_M3}</{_M3_ITEM}>" for v in value if v is not None)
    return _text_value(value)


def _minimax_m3(name: str, args: dict[str, Any]) -> Rendered:
    calls, invoke, invoke_end, calls_end = markers("minimax_m3", "_CALLS", "_INVOKE", "_INVOKE_END", "_CALLS_END")
    return _closed_at(f'{calls}\n{invoke} name="{name}">{_m3_value(args)}{invoke_end}\n{calls_end}', invoke_end)


def _plamo3(name: str, args: dict[str, Any]) -> Rendered:
    """PLaMo 3: every tag in the ``<|plamo:…:plamo|>`` namespace, no whitespace between them."""
    requests, request, name_open, name_close, arguments, constrain, message, arguments_end, request_end, requests_end = (
        markers("plamo3", "_REQUESTS", "_BEGIN", "_NAME_OPEN", "_NAME_CLOSE", "_ARGS_OPEN", "_CONSTRAIN_JSON", "_MSG",
                "_END_ARGUMENTS", "_END", "_REQUESTS_END"))
    text = (f"{requests}{request}{name_open}{name}{name_close}{arguments}{constrain}{message}{_js(args)}{arguments_end}"
            f"{request_end}{requests_end}")
    return _closed_at(text, request_end)


def _llama31_builtin(name: str, args: dict[str, Any]) -> Rendered:
    """``TOOL.call(k=v, …)``: values as JSON, which both Python's literals and llama.cpp's reader (JSON) accept."""
    tag, call, end = markers("llama31_builtin", "_TAG", "_CALL_METHOD", "_END_OF_MESSAGE")
    text = f"{tag}{name}{call}(" + ", ".join(f"{k}={_js(v)}" for k, v in args.items()) + f"){end}"
    return text, len(text)


def _lfm2(name: str, args: dict[str, Any]) -> Rendered:
    opener, closer = markers("lfm2", "_OPEN", "_CLOSE")
    call = _pythonic(name, args)[0]
    return opener + call + closer, len(opener + call)


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
    section, call, functions, arguments, call_end, section_end = markers(
        "kimi_k2", "_SECTION_BEGIN", "_BEGIN", "_FUNCTIONS", "_ARGS_BEGIN", "_END", "_SECTION_END")
    return _closed_at(f"{section}{call}{functions}{name}:0{arguments}{_js(args)}{call_end}{section_end}", call_end)


def _harmony(name: str, args: dict[str, Any]) -> Rendered:
    header, functions, constrain, message, call = markers(
        "openai", "_COMMENTARY_TO", "_FUNCTIONS", "_CONSTRAIN_JSON", "_MESSAGE", "_CALL")
    return _json_between(f"{header}{functions}{name} {constrain}{message}", args, call, complete_at_end=True)


def _solar_open(name: str, args: dict[str, Any]) -> Rendered:
    calls, call, name_tag, args_tag, call_end, calls_end = markers(
        "solar_open", "_CALLS", "_BEGIN", "_NAME_TAG", "_ARGS_TAG", "_END", "_CALLS_END")
    return _closed_at(f"{calls}{call}0{name_tag}{name}{args_tag}{_js(args)}{call_end}{calls_end}", call_end)


def _tool_use(name: str, args: dict[str, Any]) -> Rendered:
    opener, name_open, name_close, arguments, arguments_end, closer = markers(
        "tool_use", "_OPEN", "_NAME", "_NAME_END", "_ARGUMENTS", "_ARGUMENTS_END", "_CLOSE")
    return _closed_at(f"{opener}\n{name_open}{name}{name_close}\n{arguments}{_js(args)}{arguments_end}\n{closer}", closer)


def _json_block(before: str, after: str, value: Callable[[str, dict[str, Any]], Any]) -> Callable[
        [str, dict[str, Any]], Rendered]:
    """A JSON value between two fixed texts (a format's markers and the layout around them)."""
    return lambda n, a: _json_between(before, value(n, a), after)


def _call(arguments: str = "arguments") -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    """A call object whose arguments are under ``arguments``."""
    return lambda n, a: {"name": n, arguments: a}


def _between(grammar: str, opener: str, closer: str, inside: tuple[str, str] = ("", "")) -> tuple[str, str]:
    """``grammar``'s markers ``opener`` and ``closer`` (a terminal's name each; "": none), with ``inside`` written
    just within them."""
    return ((marker(grammar, opener) if opener else "") + inside[0], inside[1] + (marker(grammar, closer) if closer else ""))


_LIST = ("[", "]")
_LINES = ("\n", "\n")
_PYTHON_TAG = marker("llama3_json", "_TAG")
_MISTRAL_V11 = markers("mistral_v11", "_OPEN", "_ARGS")
_NAME_TAG_CLOSE = marker("name_tag", "_FUNCTION_CLOSE")
_FUNCTIONARY = marker("functionary_v32", "_OPEN")
_REACT = markers("react", "_ACTION_LABEL", "_INPUT_LABEL")

RENDERERS: dict[str, Callable[[str, dict[str, Any]], Rendered]] = {
    "hermes": _json_block(*_between("hermes", "_OPEN", "_CLOSE", _LINES), _call()),
    "qwen3_coder": _family("qwen3_coder"),
    "glm45": _kv("glm45"),
    "tools_array": _json_block(*_between("tools_array", "_OPEN", "_CLOSE", _LIST), _call()),
    "function_tag": _json_block(*_between("function_tag", "_OPEN", "_CLOSE"), _call("parameters")),
    "angle_json": lambda n, a: _json_between("<", {"name": n, "arguments": a}, ">"),
    "name_tag": lambda n, a: _json_between(f"<{n}>", a, _NAME_TAG_CLOSE),
    "tool_calls_json": lambda n, a: _json_between("", {"tool_calls": [{"name": n, "arguments": a}]}),
    "llama3_json": _json_block(_PYTHON_TAG, "", _call("parameters")),
    "xlam": lambda n, a: _json_between("[", {"name": n, "arguments": a}, "]"),
    "pythonic": _pythonic,
    "mistral": _json_block(*_between("mistral", "_OPEN", "", _LIST), _call()),
    "mistral_v11": lambda n, a: _json_between(f"{_MISTRAL_V11[0]}{n}{_MISTRAL_V11[1]}", a),
    "deepseek_v3": _deepseek("deepseek_v3"),
    "deepseek_v31": _deepseek("deepseek_v31"),
    "kimi_k2": _kimi_k2,
    "openai": _harmony,
    "seed_oss": _family("seed_oss"),
    "minimax_m2": _family("minimax_m2"),
    "granite": _json_block(*_between("granite", "_OPEN", "", _LIST), _call()),
    "hunyuan": _json_block(*_between("hunyuan", "_OPEN", "_CLOSE", _LIST), _call()),
    "phi4_mini": _json_block(*_between("phi4_mini", "_OPEN", "", _LIST), _call()),
    "generic": lambda n, a: _json_between("", {"tool_call": {"name": n, "arguments": a}}),
    "nemotron": _json_block(*_between("nemotron", "_OPEN", "_CLOSE", _LIST), _call()),
    "lfm2": _lfm2,
    "cohere": _json_block(*_between("cohere", "_OPEN", "_CLOSE", _LIST),
                          lambda n, a: {"tool_call_id": "0", "tool_name": n, "parameters": a}),
    "gemma4": _gemma("gemma4"),
    "functiongemma": _gemma("functiongemma"),
    "deepseek_v32": _dsml("V32", "FUNCTION_CALLS"),
    "olmo3": _olmo3,
    "kimi_k3": _kimi_k3,
    "apertus": _json_block(*_between("apertus", "_OPEN", "_CLOSE", _LIST), lambda n, a: {n: a}),
    "internlm": _json_block("".join(markers("internlm", "_ACTION_START", "_PLUGIN")) + "\n", marker("internlm", "_CLOSE"),
                            _call("parameters")),
    "gigachat3": _json_block("".join(markers("gigachat3", "_MESSAGE_SEP", "_FUNCTION_CALL")) + "\n", "", _call()),
    "claude_xml": _family("claude_xml"),
    "minicpm5": _family("minicpm5"),
    "atem": _family("atem"),
    "hy3": _kv("hy3"),
    "longcat_xml": _kv("longcat_xml"),
    "longcat": _json_block(*_between("longcat", "_OPEN", "_CLOSE", _LINES), _call()),
    "k2_horizon": _kv("k2_horizon"),
    "plamo3": _plamo3,
    "minimax_m3": _minimax_m3,
    "command_r": _json_block("\n".join(markers("command_r", "_ACTION", "_FENCE")) + "\n[",
                             "]" + marker("command_r", "_FENCE_CLOSE"), lambda n, a: {"tool_name": n, "parameters": a}),
    "gigachat35": _dsml("GCML", "TOOL_CALLS"),
    "granite_20b_fc": _json_block(marker("granite_20b_fc", "_OPEN") + " ", "", _call()),
    "dots": _family("dots"),
    "dots_json": _json_block(*_between("dots_json", "_OPEN", "_CLOSE", _LINES), _call()),
    "solar_open": _solar_open,
    "tool_use": _tool_use,
    "llama31_builtin": _llama31_builtin,
}

NAMED_ONLY_RENDERERS: dict[str, Callable[[str, dict[str, Any]], Rendered]] = {
    "functionary_v32": lambda n, a: _json_between(f"{_FUNCTIONARY}{n}\n", a),
    "react": lambda n, a: _json_between(f"{_REACT[0]} {n}\n{_REACT[1]} ", a),
}


def render(dialect: str, name: str, arguments: dict[str, Any]) -> str:
    """One call written in ``dialect``'s markup."""
    return (RENDERERS.get(dialect) or NAMED_ONLY_RENDERERS[dialect])(name, arguments)[0]
