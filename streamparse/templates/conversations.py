"""The conversations a chat template is asked to render, and how they are handed to it.

Invariant: every render goes through ``sandbox.render`` with fresh copies of the messages and tools (a template
that changes them changes nothing here), the request's kwargs, and ``tools`` as the OpenAI list. A ``Style`` says
what this template needs besides: arguments as JSON text instead of an object (transformers passes objects,
some templates concatenate them as text), and a sandbox that lets the template change its own lists (llama.cpp's
minja allows it; transformers' immutable sandbox does not).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Sequence

from .sandbox import LIMITS, BudgetExceeded, Limits, TemplateError, render

__all__ = ["Style", "STYLES", "Renderer", "ProbeCall", "PROBE_TOOLS", "PROBE_TURNS", "USER", "tool_call", "tools_for", "BASE_TOOLS",
           "assistant_calls", "tool_result", "render_chat", "find_style"]

USER = "Find what the user asked for."  # a user turn's text: plain words, so no template reads it as markup


def _tool(name: str, description: str, properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(required)}}}


def _prop(kind: str, description: str, **more: Any) -> dict[str, Any]:
    return {"type": kind, "description": description, **more}


PROBE_TOOLS: tuple[dict[str, Any], ...] = (
    _tool("get_weather", "Current weather for a city.",
          {"city": _prop("string", "City name"), "days": _prop("integer", "Days to forecast")}, ["city"]),
    _tool("search_notes", "Search the user's notes.",
          {"query": _prop("string", "Words to look for"), "limit": _prop("integer", "Most results"),
           "exact": _prop("boolean", "Match the words exactly"), "score": _prop("number", "Least score")},
          ["query"]),
    _tool("create_event", "Create a calendar event.",
          {"title": _prop("string", "Title"),
           "attendees": _prop("array", "Who comes", items={"type": "string"}),
           "place": _prop("object", "Where", properties={"room": {"type": "string"}, "floor": {"type": "integer"}})},
          ["title"]),
    _tool("list_alarms", "List the alarms that are set.", {}, []),
)


@dataclass(frozen=True)
class ProbeCall:
    """One call a probe turn makes."""

    name: str
    arguments: Mapping[str, Any]


# Turns of tool calls that differ in names, argument sets, value types and counts (the ids are Mistral's nine
# characters, which its templates require).
PROBE_TURNS: tuple[tuple[ProbeCall, ...], ...] = (
    (ProbeCall("get_weather", {"city": "Paris", "days": 3}),),
    (ProbeCall("search_notes", {"query": "quarterly report draft", "limit": 5, "exact": True, "score": 0.5}),),
    (ProbeCall("create_event", {"title": "Team sync", "attendees": ["Ana", "Bo"],
                                "place": {"room": "B-12", "floor": 2}}),),
    (ProbeCall("list_alarms", {}),),
    (ProbeCall("get_weather", {"city": "Oslo"}), ProbeCall("search_notes", {"query": "umbrella", "exact": False})),
)


def tools_for(calls: Sequence[ProbeCall]) -> tuple[dict[str, Any], ...]:
    """The probe tools these calls use (a template that cannot describe one tool still renders the others' calls)."""
    names = {c.name for c in calls}
    return tuple(t for t in PROBE_TOOLS if t["function"]["name"] in names)


# The tools a conversation is rendered with when no other are said: those of the first probe turn.
BASE_TOOLS = tools_for(PROBE_TURNS[0])


def _call_id(n: int) -> str:
    return f"call{n:05d}"


def tool_call(call: ProbeCall, n: int = 1, *, string_arguments: bool = False) -> dict[str, Any]:
    arguments: Any = json.dumps(dict(call.arguments), ensure_ascii=False) if string_arguments else dict(call.arguments)
    return {"id": _call_id(n), "type": "function", "function": {"name": call.name, "arguments": arguments}}


def assistant_calls(calls: Sequence[ProbeCall], *, string_arguments: bool = False, content: str = "",
                    reasoning: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content,
                               "tool_calls": [tool_call(c, n + 1, string_arguments=string_arguments)
                                              for n, c in enumerate(calls)]}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return message


def tool_result(call: ProbeCall, n: int, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": _call_id(n), "name": call.name, "content": content}


@dataclass(frozen=True)
class Style:
    """What a template needs besides transformers' defaults to render a call. (The context always holds
    llama.cpp's extras too: ``datetime`` and ``date_string``.)"""

    string_arguments: bool = False  # call arguments as JSON text
    mutable: bool = False  # the template changes its own lists (``.append``): llama.cpp's minja allows it

    def describe(self) -> str:
        said = [text for on, text in ((self.string_arguments, "arguments as JSON text"),
                                      (self.mutable, "lists it may change, as llama.cpp's minja allows")) if on]
        return ", ".join(said) or "transformers' defaults"


STYLES = (Style(), Style(string_arguments=True), Style(mutable=True), Style(string_arguments=True, mutable=True))


@dataclass
class Renderer:
    """Renders conversations with one template, its kwargs and one ``Style``; ``now`` is fixed for all its renders
    (a template that writes today's date writes the same one every time)."""

    source: str
    kwargs: Mapping[str, Any]
    style: Style = Style()
    limits: Limits = LIMITS
    now: datetime = field(default_factory=datetime.now)

    def __call__(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool,
                 tools: Sequence[Mapping[str, Any]] | None = BASE_TOOLS) -> str:
        messages = copy.deepcopy(list(messages))
        if self.style.string_arguments:
            for message in messages:
                for tc in message.get("tool_calls") or ():
                    fn = tc.get("function") or {}
                    if not isinstance(fn.get("arguments"), str):
                        fn["arguments"] = json.dumps(fn.get("arguments"), ensure_ascii=False)
        context: dict[str, Any] = {"bos_token": "", "eos_token": "", "datetime": self.now.strftime("%b %d %Y"),
                                   "date_string": self.now.strftime("%d %b %Y"), **self.kwargs,
                                   "messages": messages, "add_generation_prompt": add_generation_prompt,
                                   "tools": copy.deepcopy(list(tools)) if tools else None}
        return render(self.source, context, limits=self.limits, now=self.now, mutable=self.style.mutable)

    def with_style(self, style: Style) -> "Renderer":
        return Renderer(self.source, self.kwargs, style, self.limits, self.now)

    def turn(self, message: Mapping[str, Any], *, system: str | None = None,
             tools: Sequence[Mapping[str, Any]] | None = BASE_TOOLS) -> str:
        """The conversation [system?, user, ``message``], rendered as history (no generation prompt)."""
        return self(_opening(system) + [message], add_generation_prompt=False, tools=tools)

    def prompt(self, *, system: str | None = None, tools: Sequence[Mapping[str, Any]] | None = BASE_TOOLS) -> str:
        """The conversation [system?, user] and the generation prompt: what the model reads before answering."""
        return self(_opening(system), add_generation_prompt=True, tools=tools)


def _opening(system: str | None) -> list[dict[str, Any]]:
    return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": USER}]


def render_chat(source: str, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Mapping[str, Any]] | None = None,
                kwargs: Mapping[str, Any] | None = None, add_generation_prompt: bool = False) -> str:
    """A conversation (earlier tool calls and results included) as the template writes it, in the sandbox: what
    tool prompting can show a model of its own format. Calls' arguments are handed over as the template takes
    them (an object, else JSON text), and a template that changes its own lists is let. Raises TemplateError."""
    base = Renderer(source, dict(kwargs or {}))
    found, _ = find_style(base)
    style = found.style if found is not None else Style()
    return base.with_style(style)(messages, add_generation_prompt=add_generation_prompt, tools=tools)


def find_style(renderer: Renderer) -> tuple[Renderer | None, str]:
    """The first style in which the template renders a probe call turn with the call's name and arguments:
    (its renderer, "") or (None, why none did). A render that runs out of its budget raises ``BudgetExceeded``:
    no other style is tried."""
    turn = assistant_calls(PROBE_TURNS[0])
    reasons = []
    for style in STYLES:
        candidate = renderer.with_style(style)
        try:
            text = candidate.turn(turn, tools=tools_for(PROBE_TURNS[0]))
        except BudgetExceeded:  # as costly in every style: tried no further, the caller says so
            raise
        except TemplateError as exc:
            reasons.append(str(exc))
            continue
        if "get_weather" in text and "Paris" in text:
            return candidate, ""
        reasons.append("the template writes no tool call in an assistant turn that has one")
    last = reasons[-1] if reasons else "no style tried"
    first = reasons[0]
    return None, first if first == last else f"{first}; with other styles: {last}"
