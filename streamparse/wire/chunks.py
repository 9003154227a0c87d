"""OpenAI ``chat.completion.chunk`` streams, rewritten one chunk at a time (sans-I/O).

Invariants: only ``delta.content`` is owned by the parser; every other field (role, reasoning, logprobs,
usage, native ``tool_calls``) passes through untouched, and so does the whole stream when
``streamparse.wire.shapes.should_parse`` says the answer is not to be parsed. Each choice index has
its own parser and call numbering; a chunk that only fed held-back text produces no chunk. Diagnostics never
enter a chunk: they wait, as wire objects (``diagnostics.wire_diagnostic``), for ``take_diagnostics``, which a
transport writes beside the chunks (an SSE comment); ``on_events`` sees every parser event as it is made.
``feed_plain`` says None only for a chunk ``feed`` would give back equal to itself (so it may leave as it came).
A parser told the prompt opened reasoning (``start_in_reasoning``) is started afresh without it when, before any
content, the upstream sends reasoning of its own (``reasoning_content`` / ``reasoning``): its engine split the
reasoning out, so the content is the answer (``engine_split``). The same holds for a whole completion.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..core.events import Diagnostic, Event, ReasoningDelta, TextDelta, ToolCall, ToolCallDelta, ToolCallStart
from ..core.chat_template import resolved_start
from ..core.parser import StreamParser
from .diagnostics import wire_diagnostic
from .plain_runs import with_text
from .shapes import JSONObject, Tools, _is_object, _json_object, should_parse, tools_from

__all__ = ["ChunkRewriter"]


def _tool_call_dict(call: ToolCall, index: int) -> dict[str, Any]:
    return {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


class _Choice:
    """Per-choice state: its own parser and call numbering (after any native calls).

    With ``stream_arguments``, a call goes out in pieces under one wire index: its start (id, type, name,
    ``"arguments": ""``), then each arguments fragment alone (``{"index", "function": {"arguments"}}``); the
    final ``ToolCall`` adds nothing. Each such piece is a chunk of its own."""

    __slots__ = ("parser", "next_index", "ours", "finished", "live", "native", "blank", "opened")

    def __init__(self, tools: Tools, options: Mapping[str, Any]):
        self.parser = StreamParser(tools, **options)
        # started inside reasoning (as said, or as the chat template or generation prompt says) and no content read
        # yet: what a parser started afresh without it takes
        self.opened: tuple[Tools, Mapping[str, Any]] | None = (tools, options) if resolved_start(options, tools) \
            else None
        self.next_index = 0  # next tool_calls index to hand out
        self.ours = 0  # calls this choice got from the parser
        self.finished = False
        self.live: dict[int, int] = {}  # parser index of a started call -> its wire index
        self.native: dict[int, int] = {}  # upstream index of a native call -> its wire index
        self.blank: str | None = ""  # a run of text that is whitespace so far (held until other text comes,
        # dropped at a call); None once the run has other text, so its whitespace then passes at once

    def seen(self, delta: Mapping[str, Any], content: Any) -> None:
        """Before a delta's content is fed (only while ``opened``): reasoning the upstream split out itself means
        the prompt's reasoning was closed by its engine, and the parser starts afresh outside it."""
        if engine_split(delta):
            tools, options = self.opened or (None, {})
            self.parser = StreamParser(tools, **{**options, "start_in_reasoning": False})
            self.opened = None
        elif content:
            self.opened = None

    def native_calls(self, tool_calls: Any) -> Any:
        """An upstream delta's native ``tool_calls``, each under its wire index: the upstream's own while no
        parsed call took it (the usual case: unchanged), else the next free one, so a native call that comes
        after parsed ones never shares their index."""
        if not isinstance(tool_calls, list):
            return tool_calls
        out = []
        for tc in tool_calls:
            if _is_object(tc) and isinstance(tc.get("index"), int):
                upstream = tc["index"]
                if upstream not in self.native:
                    self.native[upstream] = upstream if upstream >= self.next_index and not self.ours else self.next_index
                    self.next_index = max(self.next_index, self.native[upstream]) + 1
                if self.native[upstream] != upstream:
                    tc = {**tc, "index": self.native[upstream]}
            out.append(tc)
        return out

    def _take_index(self) -> int:
        index = self.next_index
        self.next_index += 1
        self.ours += 1
        return index

    def segments(self, events: list[Event]) -> list[dict[str, Any]]:
        """Events -> ordered delta pieces: runs of text, of reasoning, of whole calls; streamed call pieces alone.
        Linear in the events: a run's values are gathered in a list and joined once."""
        runs: list[tuple[str, list[Any]]] = []  # (key, values); key "" for a streamed call piece (alone)
        value: Any
        for ev in events:
            if isinstance(ev, TextDelta):
                key, value = "content", ev.text
            elif isinstance(ev, ReasoningDelta):
                key, value = "reasoning_content", ev.text
            elif isinstance(ev, ToolCall):
                if self.live.pop(ev.index, None) is not None:
                    continue  # its arguments were all sent
                key, value = "tool_calls", _tool_call_dict(ev, self._take_index())
            elif isinstance(ev, ToolCallStart):
                index = self.live[ev.index] = self._take_index()
                runs.append(("", [{"tool_calls": [{"index": index, "id": ev.id, "type": "function",
                                                   "function": {"name": ev.name, "arguments": ""}}]}]))
                continue
            elif isinstance(ev, ToolCallDelta):
                index = self.live.get(ev.index, -1)
                if index >= 0 and ev.arguments_fragment:
                    runs.append(("", [{"tool_calls": [{"index": index,
                                                       "function": {"arguments": ev.arguments_fragment}}]}]))
                continue
            else:
                continue  # diagnostics are not part of the wire format
            if runs and runs[-1][0] == key:
                runs[-1][1].append(value)
            else:
                runs.append((key, [value]))
        pieces: list[dict[str, Any]] = []
        for key, values in runs:
            if key == "content":
                # Text between calls (or before the first, or after the last) that is only whitespace is
                # layout, not content, streamed or not (completion.py; Anthropic never opens a blank block):
                # whitespace waits for the run's first other character, and is dropped when a call comes.
                text = "".join(values) if self.blank is None else self.blank + "".join(values)
                if self.blank is None or text.strip():
                    self.blank = None
                    pieces.append({key: text})
                else:
                    self.blank = text
                continue
            self.blank = ""
            pieces.append(values[0] if not key else {key: values if key == "tool_calls" else "".join(values)})
        return pieces


class ChunkRewriter:
    """Rewrites a stream of ``chat.completion.chunk`` objects (dicts or SDK objects), one chunk at a time.

    ``feed(chunk)`` returns the chunks to send on (zero, one or several);
    ``close()`` returns what is still held when the upstream ends without a
    finish chunk. Each choice index has its own parser. ``tools`` (default: the
    ``request``'s) gate and type the parsing; an answer ``should_parse`` rejects
    (``tool_choice: "none"``, or no tools and not ``parse_without_tools``) passes
    through untouched, as dicts.

    ``report_diagnostics`` (default on): the parser's diagnostics wait for ``take_diagnostics``, as wire
    objects (the payload itself never carries them). ``on_events``: called with each choice's parser events
    (calls, diagnostics, text...) as they are made, e.g. to count them.
    """

    def __init__(self, tools: Tools = None, *, request: Mapping[str, Any] | None = None,
                 parse_without_tools: bool = True, report_diagnostics: bool = True,
                 on_events: Callable[[list[Event]], Any] | None = None, **parser_options: Any):
        self.parsing = should_parse(tools, request, parse_without_tools=parse_without_tools)
        self.report_diagnostics = report_diagnostics
        self.on_events = on_events
        self._diagnostics: list[dict[str, Any]] = []  # waiting for take_diagnostics
        self._tools = tools_from(tools, request)
        self._options = parser_options
        self._choices: dict[int, _Choice] = {}
        self._native: dict[int, int] = {}  # not parsing: choice index -> native calls seen (for ``calls``)
        self._last: Mapping[str, Any] | None = None  # the last chunk with choices: its envelope ends the stream

    @property
    def calls(self) -> int:
        """Tool calls sent on so far, parsed and native, over all choices."""
        return sum(state.next_index for state in self._choices.values()) + sum(self._native.values())

    def take_diagnostics(self) -> list[dict[str, Any]]:
        """The diagnostics made since the last call, as wire objects (none when ``report_diagnostics`` is off)."""
        out, self._diagnostics = self._diagnostics, []
        return out

    def _seen(self, index: int, events: list[Event]) -> list[Event]:
        """The events of choice ``index``'s parser: shown to ``on_events``, their diagnostics kept for the client."""
        if events:
            if self.on_events is not None:
                self.on_events(events)
            if self.report_diagnostics:
                self._diagnostics += [wire_diagnostic(ev, index) for ev in events if isinstance(ev, Diagnostic)]
        return events

    def _choice(self, index: int) -> _Choice:
        state = self._choices.get(index)
        if state is None:
            state = self._choices[index] = _Choice(self._tools, self._options)
        return state

    def feed(self, chunk: JSONObject) -> list[dict[str, Any]]:
        """One upstream chunk -> the chunks to send on."""
        data = _json_object(chunk, "a chat.completion.chunk")
        choices = data.get("choices")
        if not self.parsing:
            self._note_native(choices)
            return [dict(data)]
        if not isinstance(choices, list) or not choices:
            return [dict(data)]  # usage-only chunk, or something we do not own: untouched
        self._last = data
        out: list[dict[str, Any]] = []
        for position, choice in enumerate(choices):
            out.extend(self._rewrite_choice(data, position, choice))
        return _with_usage(data, out)

    def feed_plain(self, chunk: JSONObject) -> list[dict[str, Any]] | None:
        """``feed``, or None when the chunk is to go on exactly as it came: one choice whose delta's text the
        parser released whole and unchanged (no held marker, no call, no diagnostic, no whitespace held or
        dropped), with no native calls to renumber and no finish. The chunks ``feed`` would have made from such
        a chunk hold the same fields with the same values (``content`` equal to the upstream's), so a
        transport may pass on the upstream's own encoding of it."""
        if not self.parsing or type(chunk) is not dict:
            return self.feed(chunk)
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1:
            return self.feed(chunk)
        choice = choices[0]
        if type(choice) is not dict or choice.get("finish_reason", 0) is not None:
            return self.feed(chunk)  # (a finish, or no finish_reason field: feed adds one)
        delta, index = choice.get("delta"), choice.get("index")
        if type(delta) is not dict or type(index) is not int or "tool_calls" in delta:
            return self.feed(chunk)
        content = delta.get("content")
        if type(content) is not str or not content:
            return self.feed(chunk)
        return self.feed_text(chunk, index, content)

    def feed_text(self, base: dict[str, Any], index: int, content: str) -> list[dict[str, Any]] | None:
        """``feed_plain`` of ``base`` saying ``content`` instead of its own text (``base``: a chunk that passes
        ``feed_plain``'s checks, of choice ``index``, such as a frame's chunk from ``plain_runs``); no chunk is
        built unless one is to be sent."""
        state = self._choices.get(index) if self.parsing else None
        if state is None:
            if not self.parsing:
                return self.feed(with_text(base, content))
            state = self._choice(index)
        if state.finished:
            return self.feed(with_text(base, content))
        self._last = base  # (its envelope: what close() needs)
        if state.opened is not None:
            state.seen(base["choices"][0]["delta"], content)
        events = state.parser.feed(content)
        if _released_whole(state, events, content):
            if self.on_events is not None:  # (one TextDelta: no diagnostic to keep)
                self.on_events(events)
            return None
        choice = base["choices"][0]  # (its content is not read: only the parser's events say text)
        return _with_usage(base, self._choice_chunks(base, index, choice, choice["delta"], state, None, events))

    def _note_native(self, choices: Any) -> None:
        """Not parsing: count the native calls passed on (their highest index + 1, per choice)."""
        for position, choice in enumerate(choices if isinstance(choices, list) else ()):
            if not _is_object(choice):
                continue
            delta = choice.get("delta")
            tool_calls = delta.get("tool_calls") if _is_object(delta) else None
            for tc in tool_calls if isinstance(tool_calls, list) else ():
                if _is_object(tc) and isinstance(tc.get("index"), int):
                    key = choice.get("index", position)
                    self._native[key] = max(self._native.get(key, 0), tc["index"] + 1)

    def _rewrite_choice(self, data: Mapping[str, Any], position: int, choice: Any) -> list[dict[str, Any]]:
        """One choice of the upstream chunk ``data`` -> the chunks it becomes."""
        if not _is_object(choice):
            raise ValueError(f"choices[{position}] must be a JSON object")
        index = choice.get("index", position)
        delta = choice.get("delta")
        if not isinstance(index, int) or not _is_object(delta):
            return [{**_envelope(data), "choices": [dict(choice)]}]  # not ours to understand: untouched
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"choices[{position}].delta.content must be a string or null, not {type(content).__name__}")
        state = self._choice(index)
        if state.opened is not None:
            state.seen(delta, content)
        native = state.native_calls(delta.get("tool_calls"))
        if content and state.finished:  # text after its choice's finish (the parser is closed): text as it came
            events: list[Event] = [TextDelta(content)]
        else:
            events = state.parser.feed(content) if content else []
        return self._choice_chunks(data, index, choice, delta, state, native, events)

    def _choice_chunks(self, data: Mapping[str, Any], index: int, choice: Mapping[str, Any],
                       delta: Mapping[str, Any], state: _Choice, native: Any, events: list[Event]
                       ) -> list[dict[str, Any]]:
        """The chunks of one choice of the upstream chunk ``data`` whose content the parser has read (``events``;
        the delta's own ``content`` is not read)."""
        finish = choice.get("finish_reason")
        if finish is not None and not state.finished:
            events += state.parser.close(truncated=finish == "length")
            state.finished = True
        pieces = state.segments(self._seen(index, events)) if events else []  # (held text: nothing to see)
        # Everything but content rides on the first piece; finish_reason on the last.
        passthrough = {k: (native if k == "tool_calls" else v) for k, v in delta.items() if k != "content"}
        if pieces:
            pieces[0] = _merge_first(passthrough, pieces[0])
        elif passthrough or finish is not None or choice.get("logprobs") is not None:
            pieces = [passthrough]
        else:
            return []  # the content was held back: no empty chunk
        extra = {k: v for k, v in choice.items() if k not in ("index", "delta", "finish_reason")}
        template = _envelope(data)
        out = []
        for n, piece in enumerate(pieces):
            new_choice: dict[str, Any] = {"index": index, "delta": piece}
            if n == 0:
                new_choice.update(extra)
            new_choice["finish_reason"] = None
            if n == len(pieces) - 1:
                new_choice["finish_reason"] = _finish_reason(finish, state)
            out.append({**template, "choices": [new_choice]})
        return out

    def may_be_slow(self, chunk: Mapping[str, Any] | None = None) -> bool:
        """Could feeding ``chunk`` (None: closing) decode a large block? (See ``StreamParser.may_be_slow``.)"""
        if chunk is None:
            return any(state.parser.may_be_slow() for state in self._choices.values())
        choices = chunk.get("choices") if _is_object(chunk) else None
        for choice in choices if isinstance(choices, list) else ():
            state = self._choices.get(choice.get("index", -1)) if _is_object(choice) else None
            delta: Any = choice.get("delta") if state is not None else None
            content = delta.get("content") if _is_object(delta) else None
            if state is not None and (state.parser.may_be_slow(content if isinstance(content, str) else "")
                                      or (choice.get("finish_reason") and state.parser.may_be_slow())):
                return True
        return False

    def may_be_slow_text(self, index: int, content: str) -> bool:
        """``may_be_slow`` of a plain chunk of choice ``index`` saying ``content``, without building it."""
        state = self._choices.get(index)
        return state is not None and state.parser.may_be_slow(content)

    def close(self) -> list[dict[str, Any]]:
        """Upstream ended: release what each unfinished choice still holds."""
        out: list[dict[str, Any]] = []
        last = self._last
        template = _envelope(last) if last is not None else {"object": "chat.completion.chunk"}
        for index, state in sorted(self._choices.items()):
            if state.finished:
                continue
            state.finished = True
            for piece in state.segments(self._seen(index, state.parser.close())):
                out.append({**template, "choices": [{"index": index, "delta": piece, "finish_reason": None}]})
        return out


def engine_split(message: Mapping[str, Any]) -> bool:
    """Does a message or delta carry reasoning the upstream split out itself (a reasoning parser in its engine)?"""
    return any(isinstance(message.get(key), str) and message[key] for key in ("reasoning_content", "reasoning"))


def _envelope(data: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's fields but its choices and usage (what each chunk made from it carries)."""
    return {k: v for k, v in data.items() if k not in ("choices", "usage")}


def _with_usage(data: Mapping[str, Any], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``out``, the chunks made from ``data``: its usage (a plain chunk's null one too) rides on the last of
    them, or on one of its own."""
    if "usage" in data:
        if out:
            out[-1]["usage"] = data["usage"]
        else:
            out.append({**_envelope(data), "choices": [], "usage": data["usage"]})
    return out


def _released_whole(state: _Choice, events: list[Event], content: str) -> bool:
    """The parser gave ``content`` back whole as text, and no whitespace was held or is to be (then the run has
    other text now, as ``segments`` would note)."""
    if (len(events) == 1 and type(events[0]) is TextDelta and events[0].text == content
            and (state.blank is None or (not state.blank and not content.isspace()))):
        state.blank = None
        return True
    return False


def _merge_first(passthrough: Mapping[str, Any], piece: dict[str, Any]) -> dict[str, Any]:
    """The upstream's other delta fields joined with our first piece (native calls and reasoning first)."""
    merged = dict(passthrough)
    for key, value in piece.items():
        if key == "tool_calls" and merged.get(key):
            merged[key] = list(merged[key]) + value
        elif key == "reasoning_content" and merged.get(key):
            merged[key] = merged[key] + value
        else:
            merged[key] = value
    return merged


def _finish_reason(upstream: Any, state: _Choice) -> Any:
    if upstream in ("stop", "tool_calls", "function_call") and state.ours:
        return "tool_calls"
    return upstream
