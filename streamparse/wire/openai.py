"""OpenAI wire format: rewrite ``chat.completion.chunk`` streams and ``chat.completion`` responses.

:class:`ChunkRewriter` is the sans-I/O piece (chunk dicts in, chunk dicts out);
``rewrite_stream`` / ``rewrite_stream_sync`` wrap it around async / sync
iterators, and ``rewrite_completion`` handles non-streaming responses. Only
``content`` is owned by the parser: every other field (role, reasoning,
logprobs, usage, native ``tool_calls``) passes through untouched.

Input is JSON-shaped: dicts, or openai SDK objects (``ChatCompletionChunk``,
``ChatCompletion``, any pydantic v2 model), read as the fields they were given,
i.e. the JSON the server sent. Output is always plain dicts, ready for
``json.dumps`` (``ChatCompletionChunk.model_validate(chunk)`` makes an SDK object
of one). ``should_parse`` is the one rule for whether to parse a response at all.
"""

from __future__ import annotations

import copy
from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Literal, Mapping, Protocol, Sequence, Union

from ..core.events import Event, ReasoningDelta, TextDelta, ToolCall, ToolCallDelta, ToolCallStart
from ..core.parser import StreamParser

__all__ = ["ChunkRewriter", "rewrite_stream", "rewrite_stream_sync", "rewrite_completion", "completion_to_chunks",
           "tools_from", "should_parse"]

Tools = Sequence[Mapping[str, Any]] | None


class Model(Protocol):
    """A pydantic v2 model, such as the openai SDK's ``ChatCompletionChunk`` and ``ChatCompletion``."""

    def model_dump(self, *, mode: Literal["json", "python"] | str = ..., by_alias: bool | None = ...,
                   exclude_unset: bool = ...) -> dict[str, Any]: ...


JSONObject = Union[Mapping[str, Any], Model]


def _is_object(value: Any) -> bool:
    """A JSON object: a dict (checked first: ``isinstance(x, Mapping)`` alone is slow) or another Mapping."""
    return isinstance(value, dict) or isinstance(value, Mapping)


def _json_object(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` as a JSON object: a dict (checked first: the common case costs one ``isinstance``) or other
    Mapping as it is; a pydantic model (an openai SDK object) as the JSON it was built from: API field names,
    only the fields it was given (``exclude_unset``: a field the server left out stays out, a null stays null)."""
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json", by_alias=True, exclude_unset=True)
    if not _is_object(value):
        raise ValueError(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


def tools_from(tools: Tools, request: Mapping[str, Any] | None) -> Tools:
    """The tools to parse with: given explicitly, else the request body's ``tools``."""
    if tools is None and request is not None:
        found = request.get("tools")
        return found if isinstance(found, list) else None
    return tools


def should_parse(tools: Tools, request: Mapping[str, Any] | None, *, parse_without_tools: bool = False) -> bool:
    """Whether to parse a response at all. Not when the request says ``tool_choice: "none"`` (no tool may be
    called); otherwise when there are tools (given, else the request's), or when ``parse_without_tools`` asks
    for explicitly tagged blocks to be parsed anyway."""
    if request is not None and request.get("tool_choice") == "none":
        return False
    return bool(tools_from(tools, request)) or parse_without_tools


def _tool_call_dict(call: ToolCall, index: int) -> dict[str, Any]:
    return {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


class _Choice:
    """Per-choice state: its own parser and call numbering (after any native calls).

    With ``stream_arguments``, a call goes out in pieces under one wire index: its start (id, type, name,
    ``"arguments": ""``), then each arguments fragment alone (``{"index", "function": {"arguments"}}``); the
    final ``ToolCall`` adds nothing. Each such piece is a chunk of its own."""

    __slots__ = ("parser", "next_index", "ours", "finished", "live")

    def __init__(self, tools: Tools, options: Mapping[str, Any]):
        self.parser = StreamParser(tools, **options)
        self.next_index = 0  # next tool_calls index to hand out
        self.ours = 0  # calls this choice got from the parser
        self.finished = False
        self.live: dict[int, int] = {}  # parser index of a started call -> its wire index

    def note_native(self, tool_calls: Any) -> None:
        for tc in tool_calls if isinstance(tool_calls, list) else ():
            if _is_object(tc) and isinstance(tc.get("index"), int):
                self.next_index = max(self.next_index, tc["index"] + 1)

    def _take_index(self) -> int:
        index = self.next_index
        self.next_index += 1
        self.ours += 1
        return index

    def segments(self, events: list[Event]) -> list[dict[str, Any]]:
        """Events -> ordered delta pieces: runs of text, of reasoning, of whole calls; streamed call pieces alone."""
        pieces: list[dict[str, Any]] = []
        value: Any
        alone = False  # the last piece is a streamed call piece: nothing joins it
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
                pieces.append({"tool_calls": [{"index": index, "id": ev.id, "type": "function",
                                               "function": {"name": ev.name, "arguments": ""}}]})
                alone = True
                continue
            elif isinstance(ev, ToolCallDelta):
                index = self.live.get(ev.index, -1)
                if index >= 0 and ev.arguments_fragment:
                    pieces.append({"tool_calls": [{"index": index, "function": {"arguments": ev.arguments_fragment}}]})
                    alone = True
                continue
            else:
                continue  # diagnostics are not part of the wire format
            if pieces and not alone and key in pieces[-1] and len(pieces[-1]) == 1:
                if key == "tool_calls":
                    pieces[-1][key].append(value)
                else:
                    pieces[-1][key] += value
            else:
                pieces.append({key: [value] if key == "tool_calls" else value})
            alone = False
        return pieces


class ChunkRewriter:
    """Rewrites a stream of ``chat.completion.chunk`` objects (dicts or SDK objects), one chunk at a time.

    ``feed(chunk)`` returns the chunks to send on (zero, one or several);
    ``close()`` returns what is still held when the upstream ends without a
    finish chunk. Each choice index has its own parser.
    """

    def __init__(self, tools: Tools = None, *, request: Mapping[str, Any] | None = None, **parser_options: Any):
        self._tools = tools_from(tools, request)
        self._options = parser_options
        self._choices: dict[int, _Choice] = {}
        self._template: dict[str, Any] | None = None

    @property
    def calls(self) -> int:
        """Tool calls sent on so far, parsed and native, over all choices."""
        return sum(state.next_index for state in self._choices.values())

    def _choice(self, index: int) -> _Choice:
        state = self._choices.get(index)
        if state is None:
            state = self._choices[index] = _Choice(self._tools, self._options)
        return state

    def feed(self, chunk: JSONObject) -> list[dict[str, Any]]:
        data = _json_object(chunk, "a chat.completion.chunk")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            return [dict(data)]  # usage-only chunk, or something we do not own: untouched
        self._template = {k: v for k, v in data.items() if k not in ("choices", "usage")}
        out: list[dict[str, Any]] = []
        for position, choice in enumerate(choices):
            out.extend(self._rewrite_choice(self._template, position, choice))
        if "usage" in data:
            if out:
                out[-1]["usage"] = data["usage"]
            else:
                out.append({**self._template, "choices": [], "usage": data["usage"]})
        return out

    def _rewrite_choice(self, template: dict[str, Any], position: int, choice: Any) -> list[dict[str, Any]]:
        """One upstream choice -> the chunks it becomes (``template``: the chunk's fields but choices and usage)."""
        if not _is_object(choice):
            raise ValueError(f"choices[{position}] must be a JSON object")
        index = choice.get("index", position)
        delta = choice.get("delta")
        if not isinstance(index, int) or not _is_object(delta):
            return [{**template, "choices": [dict(choice)]}]  # not ours to understand: untouched
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"choices[{position}].delta.content must be a string or null, not {type(content).__name__}")
        state = self._choice(index)
        state.note_native(delta.get("tool_calls"))
        events = state.parser.feed(content) if content else []
        finish = choice.get("finish_reason")
        if finish is not None and not state.finished:
            events += state.parser.close()
            state.finished = True
        pieces = state.segments(events)
        # Everything but content rides on the first piece; finish_reason on the last.
        passthrough = {k: v for k, v in delta.items() if k != "content"}
        if pieces:
            pieces[0] = _merge_first(passthrough, pieces[0])
        elif passthrough or finish is not None or choice.get("logprobs") is not None:
            pieces = [passthrough]
        else:
            return []  # the content was held back: no empty chunk
        extra = {k: v for k, v in choice.items() if k not in ("index", "delta", "finish_reason")}
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

    def close(self) -> list[dict[str, Any]]:
        """Upstream ended: release what each unfinished choice still holds."""
        out: list[dict[str, Any]] = []
        template = self._template or {"object": "chat.completion.chunk"}
        for index, state in sorted(self._choices.items()):
            if state.finished:
                continue
            state.finished = True
            for piece in state.segments(state.parser.close()):
                out.append({**template, "choices": [{"index": index, "delta": piece, "finish_reason": None}]})
        return out


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


def rewrite_stream_sync(
    chunks: Iterable[JSONObject], tools: Tools = None, *, request: Mapping[str, Any] | None = None, **options: Any
) -> Iterator[dict[str, Any]]:
    """Rewrite a sync iterable of chunks (dicts or SDK objects, e.g. an openai ``Stream``) into chunk dicts."""
    rewriter = ChunkRewriter(tools, request=request, **options)
    for chunk in chunks:
        yield from rewriter.feed(chunk)
    yield from rewriter.close()


async def rewrite_stream(
    chunks: AsyncIterable[JSONObject], tools: Tools = None, *, request: Mapping[str, Any] | None = None, **options: Any
) -> AsyncIterator[dict[str, Any]]:
    """Rewrite an async iterable of chunks (dicts or SDK objects, e.g. an openai ``AsyncStream``) into chunk
    dicts (any anyio backend: asyncio or trio)."""
    rewriter = ChunkRewriter(tools, request=request, **options)
    async for chunk in chunks:
        for out in rewriter.feed(chunk):
            yield out
    for out in rewriter.close():
        yield out


def rewrite_completion(
    completion: JSONObject, tools: Tools = None, *, request: Mapping[str, Any] | None = None, **options: Any
) -> dict[str, Any]:
    """Rewrite a non-streaming ``chat.completion`` (a dict or an SDK ``ChatCompletion``) into a new dict;
    the input is not modified."""
    plain = _json_object(completion, "a chat.completion")
    tools = tools_from(tools, request)
    result = copy.deepcopy(dict(plain)) if plain is completion else dict(plain)  # a dump is already a copy
    choices = result.get("choices")
    if not isinstance(choices, list):
        return result
    for position, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if content is None:
            continue
        if not isinstance(content, str):
            raise ValueError(f"choices[{position}].message.content must be a string or null, not {type(content).__name__}")
        parser = StreamParser(tools, **options)
        events = parser.feed(content) + parser.close()
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
        calls = [e for e in events if isinstance(e, ToolCall)]
        message["content"] = text if text.strip() else None
        if reasoning:
            message["reasoning_content"] = (message.get("reasoning_content") or "") + reasoning
        if calls:
            native = list(message.get("tool_calls") or [])
            message["tool_calls"] = native + [
                {k: v for k, v in _tool_call_dict(c, len(native) + n).items() if k != "index"} for n, c in enumerate(calls)
            ]
            if choice.get("finish_reason") in ("stop", None, "tool_calls"):
                choice["finish_reason"] = "tool_calls"
    return result


def completion_to_chunks(completion: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A (rewritten) ``chat.completion`` as the chunks a stream would have carried: one per choice.

    For an upstream that answers a streaming request with a plain JSON body.
    """
    base = {k: v for k, v in completion.items() if k not in ("choices", "usage", "object")}
    chunks = []
    for position, choice in enumerate(completion.get("choices") or []):
        message = dict(choice.get("message") or {})
        delta = {k: v for k, v in message.items() if v is not None and k != "tool_calls"}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": n, **call} for n, call in enumerate(message["tool_calls"])]
        chunks.append({**base, "object": "chat.completion.chunk", "choices": [
            {"index": choice.get("index", position), "delta": delta, "finish_reason": choice.get("finish_reason")}]})
    if "usage" in completion and chunks:
        chunks[-1]["usage"] = completion["usage"]
    return chunks
