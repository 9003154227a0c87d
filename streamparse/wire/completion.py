"""OpenAI ``chat.completion`` responses read whole: rewritten (``rewrite_completion``), and replayed as the
chunks a stream would have carried (``completion_to_chunks``).

Invariants: the input is never modified. A rewritten completion is a ``Completion``: the JSON dict a
client gets, which also remembers, per choice, the deltas in the order the model wrote them (``layouts``),
taken from the parser's events by the same code as a stream's chunks (``ChunkRewriter``). So the chunks
``completion_to_chunks`` replays, and the Anthropic blocks made from them, come in the order a stream's
do: ``[text, tool_use, text, tool_use]``, not the text joined before the calls. A layout is used only
while its choice's message is exactly as ``rewrite_completion`` left it; any other completion (a plain
dict, or one changed since) has one delta per choice: reasoning, text, then calls. The parser's diagnostics are
never put in the JSON: a ``Completion`` keeps them as wire objects (``diagnostics``), with the value of
the ``x-streamparse-diagnostics`` header that carries them (``diagnostics_header``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..core.events import Diagnostic, Event, ReasoningDelta, ToolCall
from ..core.chat_template import resolved_start
from .chunks import _Choice, _tool_call_dict, engine_split
from .diagnostics import header_value, wire_diagnostic
from .shapes import JSONObject, Tools, _is_object, _json_object, should_parse, tools_from

__all__ = ["Completion", "Layout", "rewrite_completion", "completion_to_chunks"]


@dataclass(frozen=True)
class Layout:
    """One choice's answer in the order it was written: ``deltas`` accumulate to ``message``."""

    message: dict[str, Any]  # the message as rewritten (a copy): the layout holds while the message equals it
    deltas: list[dict[str, Any]]  # upstream fields first, then text, reasoning and calls in order, native calls last


class Completion(dict[str, Any]):
    """A rewritten ``chat.completion``: a plain JSON dict (``json.dumps`` and orjson take it as it is) whose
    ``layouts`` (choice position -> ``Layout``) keep the order of text and calls that its
    ``message.content`` string and ``tool_calls`` list cannot. ``dict(completion)`` or a JSON round trip
    forgets them, and its ``diagnostics`` too: what the parser refused, repaired or coerced, as wire
    objects (``diagnostics.wire_diagnostic``; none when ``report_diagnostics=False``)."""

    layouts: dict[int, Layout]
    diagnostics: list[dict[str, Any]]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.layouts = {}
        self.diagnostics = []

    @property
    def diagnostics_header(self) -> str | None:
        """The value of the ``x-streamparse-diagnostics`` response header (compact JSON list, ASCII, size-capped),
        or None when there is nothing to say."""
        return header_value(self.diagnostics)


def rewrite_completion(completion: JSONObject, tools: Tools = None, *, request: Mapping[str, Any] | None = None,
                       parse_without_tools: bool = True, report_diagnostics: bool = True,
                       on_events: Callable[[list[Event]], Any] | None = None, **options: Any) -> Completion:
    """Rewrite a non-streaming ``chat.completion`` (a dict or an SDK ``ChatCompletion``) into a new dict.

    Each choice's ``message.content`` is parsed: the text left is the new content (None if blank), reasoning
    is appended to ``reasoning_content``, calls follow any native ``tool_calls`` and make the finish reason
    ``"tool_calls"``. An answer ``should_parse`` rejects comes back as it was (a copy). The parser's
    diagnostics go to ``result.diagnostics`` (unless ``report_diagnostics=False``); ``on_events`` sees each
    choice's parser events."""
    plain = _json_object(completion, "a chat.completion")
    result = Completion(copy.deepcopy(dict(plain)) if plain is completion else dict(plain))  # a dump is a copy
    if not should_parse(tools, request, parse_without_tools=parse_without_tools):
        return result
    tools = tools_from(tools, request)
    choices = result.get("choices")
    for position, choice in enumerate(choices if isinstance(choices, list) else ()):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or message.get("content") is None:
            continue
        if not isinstance(message["content"], str):
            raise ValueError(f"choices[{position}].message.content must be a string or null, "
                             f"not {type(message['content']).__name__}")
        layout, events = _rewrite_choice(choice, message, tools, options)
        result.layouts[position] = layout
        if on_events is not None:
            on_events(events)
        if report_diagnostics:
            index = choice.get("index", position)
            result.diagnostics += [wire_diagnostic(ev, index if isinstance(index, int) else position)
                                   for ev in events if isinstance(ev, Diagnostic)]
    return result


def _rewrite_choice(choice: dict[str, Any], message: dict[str, Any], tools: Tools,
                    options: Mapping[str, Any]) -> tuple[Layout, list[Event]]:
    """Parse one message's content in place; return its layout and the parser's events."""
    head = {k: v for k, v in message.items() if k not in ("content", "tool_calls") and v is not None}
    native = message["tool_calls"] if isinstance(message.get("tool_calls"), list) else []
    if engine_split(message) and resolved_start(options, tools):  # the engine closed the prompt's reasoning
        options = {**options, "start_in_reasoning": False}
    state = _Choice(tools, options)
    state.next_index = len(native)  # parsed calls are numbered after the native ones
    events = state.parser.read_whole(message["content"], truncated=choice.get("finish_reason") == "length")
    pieces = state.segments(events)
    # the text is what the pieces carry: a run of only whitespace between calls is no content (chunks.py)
    text = "".join(piece.get("content") or "" for piece in pieces)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    calls = [e for e in events if isinstance(e, ToolCall)]
    message["content"] = text or None
    if reasoning:
        message["reasoning_content"] = (message.get("reasoning_content") or "") + reasoning
    if calls:
        message["tool_calls"] = list(native) + [
            {k: v for k, v in _tool_call_dict(c, len(native) + n).items() if k != "index"} for n, c in enumerate(calls)]
        if choice.get("finish_reason") in ("stop", None, "tool_calls"):
            choice["finish_reason"] = "tool_calls"
    deltas = ([head] if head else []) + pieces + ([_indexed(native)] if native else [])
    return Layout(copy.deepcopy(message), deltas), events


def _indexed(tool_calls: list[Any]) -> dict[str, Any]:
    """A message's ``tool_calls`` as a delta's: each with its ``index``."""
    return {"tool_calls": [{"index": n, **call} for n, call in enumerate(tool_calls) if _is_object(call)]}


def _whole_delta(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message as one delta: its fields but nulls, calls indexed."""
    delta = {k: v for k, v in message.items() if v is not None and k != "tool_calls"}
    if isinstance(message.get("tool_calls"), list) and message["tool_calls"]:
        delta.update(_indexed(message["tool_calls"]))
    return delta


def completion_to_chunks(completion: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A (rewritten) ``chat.completion`` as the chunks a stream would have carried, for an upstream that
    answers a streaming request with a plain JSON body.

    Per choice: its layout's deltas in order (a ``Completion`` whose message is unchanged), else one
    delta; the choice's ``finish_reason`` and other fields (``logprobs``, vLLM's ``stop_reason``) ride on its
    last chunk, the ``usage`` on the last chunk of all (or on a chunk of its own when there is no choice)."""
    layouts = completion.layouts if isinstance(completion, Completion) else {}
    base = {k: v for k, v in completion.items() if k not in ("choices", "usage", "object")}
    chunks: list[dict[str, Any]] = []
    choices = completion.get("choices")
    for position, choice in enumerate(choices if isinstance(choices, list) else ()):
        if not _is_object(choice):
            continue
        message = choice["message"] if _is_object(choice.get("message")) else {}
        layout = layouts.get(position)
        deltas = copy.deepcopy(layout.deltas) if layout is not None and layout.message == message else []
        deltas = deltas or [_whole_delta(message)]
        extra = {k: v for k, v in choice.items() if k not in ("index", "message", "finish_reason")}
        index = choice.get("index", position)
        for n, delta in enumerate(deltas):
            last = n == len(deltas) - 1
            new_choice = {"index": index, "delta": delta, **(extra if last else {}),
                          "finish_reason": choice.get("finish_reason") if last else None}
            chunks.append({**base, "object": "chat.completion.chunk", "choices": [new_choice]})
    if "usage" in completion:
        if chunks:
            chunks[-1]["usage"] = completion["usage"]
        else:
            chunks.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]})
    return chunks
