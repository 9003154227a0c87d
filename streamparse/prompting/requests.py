"""Tool prompting: serving tool-using clients from a backend that ignores ``tools``.

The request's tools go into the system prompt as instructions in one dialect's markup,
earlier tool calls and results are written back as text, and the answer is parsed with
that dialect first.

Invariant: every call shown to the model (the instructions' examples, the history) is
written by ``streamparse.render.render``, so the prompt only ever teaches markup the
parser accepts (tested for every dialect in ``PROMPT_DIALECTS``). Pure: the only I/O is
reading the templates in ``templates/`` (package data of ``streamparse.prompting``), once per process.

Templates are ``string.Template`` text cut into sections by ``=== name ===`` lines (text
before the first header is a comment). ``_common.txt`` holds the frame (``prompt``) and the
shared wording; ``<dialect>.txt`` holds ``format`` and ``mistakes`` and may override any
common section.
"""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from ..arguments.schema import loads_relaxed
from ..dialects import resolve
from ..dialects.render import NAMED_ONLY_RENDERERS, RENDERERS, render
from .examples import example_arguments
from .markers import template_markers

__all__ = ["PROMPT_DIALECTS", "PromptError", "ToolChoice", "PromptedRequest", "instructions", "example_arguments",
           "render_tool_result", "render_history", "merge_system", "corrective_message", "prompt_request"]
Spec = tuple[str, str, dict[str, Any]]  # a tool: name, description, parameters schema

PROMPT_DIALECTS: tuple[str, ...] = (*RENDERERS, *NAMED_ONLY_RENDERERS)  # each has templates/<name>.txt (tested)
_REMOVED = ("tools", "tool_choice", "parallel_tool_calls", "functions", "function_call")
_MODES = ("auto", "none", "required", "named")
_CHOICE_MODES = {"auto": "auto", "none": "none", "required": "required", "any": "required"}  # OpenAI and Anthropic
_HEADER = re.compile(r"^=== ([\w.]+) ===[ \t]*$", re.M)
_TEXT_PARTS = ("text", "input_text", "output_text")
_PART_NAMES = {"image_url": "image", "input_audio": "audio"}  # other parts are shown as [their type]


class PromptError(ValueError):
    """A dialect that cannot be prompted, or a request piece that cannot be used (the message names it)."""


# --------------------------------------------------------------------------- tool_choice

@dataclass(frozen=True)
class ToolChoice:
    """What the client allows: ``auto``, ``none``, ``required`` (any tool) or ``named`` (that tool)."""

    mode: str = "auto"
    name: str | None = None
    parallel: bool = True

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise PromptError(f"tool_choice mode must be one of {_MODES}, not {self.mode!r}")
        if self.mode == "named" and not self.name:
            raise PromptError("tool_choice: a named choice needs the tool's name")

    @classmethod
    def from_request(cls, payload: Mapping[str, Any]) -> ToolChoice:
        """Read ``tool_choice`` (OpenAI or Anthropic form, or legacy ``function_call``) and the parallel flag."""
        legacy = payload.get("tool_choice") is None and "function_call" in payload
        field = "function_call" if legacy else "tool_choice"
        choice = payload.get(field, "auto") or "auto"
        parallel = payload.get("parallel_tool_calls") is not False
        shape: Mapping[str, Any] = choice if isinstance(choice, Mapping) else {"type": choice}
        if shape.get("disable_parallel_tool_use") is True:  # Anthropic
            parallel = False
        kind = shape.get("type")
        if isinstance(kind, str) and kind in _CHOICE_MODES:
            return cls(_CHOICE_MODES[kind], parallel=parallel)
        fn = shape.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else shape.get("name")
        if isinstance(choice, Mapping) and kind in ("function", "tool", None) and isinstance(name, str) and name:
            return cls("named", name, parallel)
        shown = json.dumps(choice, default=str)[:200]
        raise PromptError(f"{field} must be auto, none, required or name a tool, not {shown}")

    @property
    def must_call(self) -> bool:
        """The answer has to hold a call."""
        return self.mode in ("required", "named")


# --------------------------------------------------------------------------- templates and pieces

@functools.cache
def _sections(name: str) -> dict[str, str]:
    """The sections of ``templates/<name>.txt`` (read once)."""
    text = resources.files("streamparse.prompting").joinpath("templates").joinpath(f"{name}.txt").read_text(encoding="utf-8")
    parts = _HEADER.split(text)
    return {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}


@functools.cache
def _templates(dialect: str) -> dict[str, str]:
    """The common sections, overridden and completed by the dialect's."""
    return {**_sections("_common"), **_sections(dialect)}


def _canonical(dialect: str) -> str:
    try:
        names = resolve(dialect) if isinstance(dialect, str) else []
    except ValueError:
        names = []
    if len(names) != 1 or names[0] not in PROMPT_DIALECTS:
        raise PromptError(f"no tool prompt for dialect {dialect!r}; choose one of: {', '.join(PROMPT_DIALECTS)}")
    return names[0]


def _specs(tools: Any) -> list[Spec]:
    """``(name, description, parameters schema)`` of OpenAI, bare or Anthropic tool dicts."""
    if tools is None:
        return []
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise PromptError(f"tools must be a list, not {type(tools).__name__}")
    specs = []
    for i, tool in enumerate(tools):
        fn = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise PromptError(f"tools[{i}] needs a name")
        schema = fn.get("parameters", fn.get("input_schema"))
        description = fn.get("description")
        specs.append((fn["name"], description if isinstance(description, str) else "",
                      dict(schema) if isinstance(schema, Mapping) else {"type": "object", "properties": {}}))
    return specs


def _tool_list(specs: Sequence[Spec]) -> str:
    return "\n\n".join(f"## {name}\n{description.strip() or '(no description)'}\nParameters (JSON schema): "
                       + json.dumps(schema, ensure_ascii=False, default=str) for name, description, schema in specs)


# --------------------------------------------------------------------------- instructions

def instructions(tools: Sequence[Mapping[str, Any]] | None, dialect: str,
                 choice: ToolChoice | None = None) -> str | None:
    """The system-prompt text teaching ``dialect``'s call format; None when there is nothing to call."""
    dialect = _canonical(dialect)
    choice = choice or ToolChoice()
    specs = _specs(tools)
    if choice.mode == "none" or not specs:
        return None
    if choice.mode == "named":
        specs = [s for s in specs if s[0] == choice.name]
        if not specs:
            raise PromptError(f"tool_choice names {choice.name!r}, which is not in tools")
    first = specs[0]
    example = render(dialect, first[0], example_arguments(first[2]))
    # Several calls: the same tool twice, with other values (a second tool's call with made-up values is
    # what a small model copied into its answer, in a measured BFCL run).
    several = example + "\n" + render(dialect, first[0], example_arguments(first[2], variant=1))
    t = _templates(dialect)
    leaves = {**template_markers(dialect), "tools": _tool_list(specs), "example": example,
              "several_example": several, "name": first[0], "result_example": render_tool_result(
                  "call_1", first[0], "(what the tool returned)"), "result_head": _RESULT_HEAD, "json_rule": t["json"]}
    sections = {"lead": "lead." + ("must" if choice.must_call else "auto"),
                "choice_rule": "choice." + (choice.mode if choice.must_call else "auto"), "format": "format",
                "parallel_rule": "parallel." + ("yes" if choice.parallel else "no"), "mistakes": "mistakes",
                "rules": "rules", "result_format": "results"}
    filled = {key: Template(t[section]).substitute(leaves) for key, section in sections.items()}
    return Template(t["prompt"]).substitute(leaves, **filled).strip()


def corrective_message(choice: ToolChoice, dialect: str, tools: Sequence[Mapping[str, Any]] | None = None) -> str:
    """The user message for one retry after an answer without the mandatory call (example from ``tools`` if given)."""
    dialect = _canonical(dialect)
    specs = [s for s in _specs(tools) if choice.mode != "named" or s[0] == choice.name]
    name = choice.name if choice.mode == "named" else (specs[0][0] if specs else "tool_name")
    args = example_arguments(specs[0][2]) if specs else {"argument": "value"}
    template = _templates(dialect)["retry.named" if choice.mode == "named" else "retry.required"]
    return Template(template).substitute(template_markers(dialect), name=name,
                                         example=render(dialect, str(name), args)).strip()


# --------------------------------------------------------------------------- example arguments

# --------------------------------------------------------------------------- history

def _attr(value: Any) -> str:
    return html.escape(str(value), quote=True).replace("\n", "&#10;").replace("\r", "&#13;")


def _content_text(content: Any) -> str:
    """A message content as text: strings as they are, content parts joined, other JSON dumped."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, Mapping) and isinstance(p.get("type"), str) for p in content):
        return "\n".join(p["text"] if p["type"] in _TEXT_PARTS and isinstance(p.get("text"), str)
                         else "[" + _PART_NAMES.get(p["type"], p["type"]) + "]" for p in content)
    return json.dumps(content, ensure_ascii=False, default=str)


def render_tool_result(call_id: str | None, name: str | None, content: Any) -> str:
    """One tool result as text: ``<tool_response id="…" name="…">``, the content, ``</tool_response>``."""
    attrs = "".join(f' {k}="{_attr(v)}"' for k, v in (("id", call_id), ("name", name)) if v is not None)
    return f"<tool_response{attrs}>\n{_content_text(content)}\n</tool_response>"


# How the prompt names a result's opening tag: render_tool_result's own, with placeholder values.
_RESULT_HEAD = render_tool_result("...", "...", "").partition("\n")[0]


def _arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as an object: JSON, repaired JSON, or ``{"arguments": raw}``."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            value = loads_relaxed(raw)[0]
        except Exception:  # noqa: BLE001 - whatever cannot be read is kept verbatim below
            value = None
        if isinstance(value, dict):
            return value
    return {"arguments": raw}


def _calls(message: Mapping[str, Any]) -> list[tuple[str, str | None, dict[str, Any]]]:
    """``(name, id, arguments)`` of an assistant message's ``tool_calls`` and legacy ``function_call``."""
    found = []
    raw = message.get("tool_calls")
    entries = [c for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []
    if isinstance(message.get("function_call"), Mapping):
        entries.append({"function": message["function_call"]})
    for call in entries:
        fn: Any = call.get("function") if isinstance(call.get("function"), Mapping) else call
        if isinstance(fn.get("name"), str) and fn["name"]:
            call_id = call.get("id")
            found.append((fn["name"], call_id if isinstance(call_id, str) else None, _arguments(fn.get("arguments"))))
    return found


def _with_results(message: Mapping[str, Any] | None, results: list[str]) -> dict[str, Any]:
    """A user message with ``results`` put before its content (or a new one)."""
    text = "\n\n".join(results)
    content = message.get("content") if message is not None else None
    merged = ([{"type": "text", "text": text}, *content] if isinstance(content, list)
              else "\n\n".join(filter(None, [text, _content_text(content)])))
    return {**(message or {"role": "user"}), "content": merged}


def render_history(messages: Sequence[Mapping[str, Any]], dialect: str) -> list[dict[str, Any]]:
    """OpenAI messages as a tool-less backend reads them: calls as markup, results as user text."""
    dialect = _canonical(dialect)
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    results: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise PromptError(f"messages[{i}] must be an object")
        role = message.get("role")
        if role in ("tool", "function"):
            call_id = message.get("tool_call_id")
            call_id = call_id if isinstance(call_id, str) else None
            name = message.get("name") if isinstance(message.get("name"), str) else names.get(call_id or "")
            results.append(render_tool_result(call_id, name, message.get("content")))
            continue
        if results:
            out.append(_with_results(message if role == "user" else None, results))
            results = []
            if role == "user":
                continue
        if role == "assistant" and ("tool_calls" in message or "function_call" in message):
            calls = _calls(message)
            names.update((cid, name) for name, cid, _ in calls if cid)
            text = _content_text(message.get("content")).rstrip()
            markup = "\n".join(render(dialect, name, args) for name, _, args in calls)
            rest = {k: v for k, v in message.items() if k not in ("tool_calls", "function_call")}
            out.append({**rest, "content": "\n".join(filter(None, [text, markup]))})
        else:
            out.append(dict(message))
    if results:
        out.append(_with_results(None, results))
    return out


def merge_system(messages: Sequence[Mapping[str, Any]], text: str) -> list[dict[str, Any]]:
    """``text`` appended to the client's first system/developer message, or a new system message first."""
    out = [dict(m) for m in messages]
    for message in out:
        if message.get("role") in ("system", "developer"):
            content = message.get("content")
            message["content"] = ([*content, {"type": "text", "text": text}] if isinstance(content, list)
                                  else "\n\n".join(filter(None, [_content_text(content), text])))
            return out
    return [{"role": "system", "content": text}, *out]


# --------------------------------------------------------------------------- the request

@dataclass
class PromptedRequest:
    """The upstream request with tools turned into instructions, and how to parse its answer."""

    payload: dict[str, Any]
    tools: list[dict[str, Any]]
    choice: ToolChoice
    dialect: str
    dialects: list[str]

    def parser_options(self) -> dict[str, Any]:
        """Keyword arguments for ``StreamParser`` / ``parse`` (besides the tools)."""
        return {"dialects": list(self.dialects), **({} if self.choice.parallel else {"max_calls": 1})}

    @property
    def parse(self) -> bool:
        """Whether the answer is parsed for calls (not for ``none`` or without tools)."""
        return bool(self.tools) and self.choice.mode != "none"


def prompt_request(payload: Mapping[str, Any], dialect: str, *, others: Sequence[str] | None = None) -> PromptedRequest:
    """Turn an OpenAI chat request with tools into one for a backend without tool support."""
    dialect = _canonical(dialect)
    try:
        # others not given: auto mode's dialects (a named-only one is read only as the prompted dialect, or when named)
        rest = [d for d in resolve(list(others) if others is not None else None) if d != dialect]
    except (ValueError, TypeError) as exc:
        raise PromptError(f"others: {exc}") from None
    tools = payload.get("tools") if payload.get("tools") is not None else payload.get("functions")
    specs = _specs(tools)
    choice = ToolChoice.from_request(payload)
    messages = payload.get("messages")
    if not isinstance(messages, list):
        raise PromptError("messages must be a list")
    text = instructions(tools, dialect, choice)
    history = render_history(messages, dialect)
    upstream = {k: v for k, v in payload.items() if k not in _REMOVED}
    upstream["messages"] = merge_system(history, text) if text else history
    client_tools = [dict(t) for t in tools or ()] if specs else []
    return PromptedRequest(upstream, client_tools, choice, dialect, [dialect, *rest])
