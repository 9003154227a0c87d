"""Parser events, OpenAI chunks and completions -> OpenAI Responses stream events and response objects.

Invariant: a ``ResponseStream``'s events form one well-ordered Responses stream, as the openai SDK's
``responses.stream()`` accumulates it: ``response.created`` and ``response.in_progress``; then per output item
``response.output_item.added``, its content events (``content_part.added`` / ``output_text.delta``* /
``output_text.done`` / ``content_part.done`` for a message; the ``reasoning_text`` events for reasoning;
``function_call_arguments.delta``* / ``.done`` for a call; ``custom_tool_call_input.delta`` / ``.done`` for a
custom tool's call) and ``response.output_item.done``, output indexes from 0; a text or reasoning item is open
alone, call items may be open together (until text begins, or the end); then one of ``response.completed`` /
``response.incomplete`` / ``response.failed``, whose ``response`` has every item as its ``done`` event gave it
(and, failed, the open items as far as they were sent). Every event has the next ``sequence_number`` from 0;
call ids are unique within a response. ``response`` is what the events accumulate to, and what the non-streaming functions return for the same input. No item holds only
whitespace (such text waits for the item's first other character, and is dropped if none comes).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ...core.events import Event
from ..chunk_reader import ChunkReader, replay_completion, write_events, write_text
from ..shapes import JSONObject, Tools, _json_object
from .vocab import Offered, call_id, custom_input, fresh_id, incomplete_reason, search_arguments, usage_from

__all__ = ["ResponseStream", "ChunkTranslator", "response_from_completion", "response_from_text"]

class _TextKind(NamedTuple):
    """How an item of text or reasoning is written."""

    prefix: str  # of its id
    item: Callable[[], dict[str, Any]]  # a fresh skeleton of it
    part: Callable[[], dict[str, Any]]  # a fresh empty content part
    delta: str  # the event types of its text
    done: str
    logprobs: bool  # its text events carry ``logprobs`` (output_text's do)


_TEXT_KINDS = {
    "text": _TextKind("msg_", lambda: {"type": "message", "role": "assistant", "status": "in_progress", "content": []},
                      lambda: {"type": "output_text", "text": "", "annotations": [], "logprobs": []},
                      "response.output_text.delta", "response.output_text.done", True),
    "thinking": _TextKind("rs_", lambda: {"type": "reasoning", "summary": [], "content": [], "status": "in_progress"},
                          lambda: {"type": "reasoning_text", "text": ""},
                          "response.reasoning_text.delta", "response.reasoning_text.done", False),
}
_KIND_OF_ITEM = {"message": "text", "reasoning": "thinking"}
_CALL_PREFIXES = {"function_call": "fc_", "custom_tool_call": "ctc_", "tool_search_call": "tsc_"}


class ResponseStream:
    """Sans-I/O writer of one response's stream events (dicts with a ``type``).

    Each method returns the events to send (maybe none). ``start()`` is implied by any other method; after
    ``finish()`` or ``error()`` every method returns ``[]``. ``echo``: the request's settings, repeated in
    the response object; ``offered``: the client's tool behind each function name the backend was offered (a
    custom tool's calls leave as ``custom_tool_call`` items, a namespaced tool's with its ``namespace``).

    Call items stay open together until a text or reasoning item begins, or the end: a client runs a call
    when its item is done (Codex does), and an upstream may interleave the fragments of several calls.
    """

    def __init__(self, *, model: str, echo: Mapping[str, Any] | None = None,
                 offered: Mapping[str, Offered] | None = None, response_id: str | None = None):
        self._response: dict[str, Any] = {
            "id": response_id or fresh_id("resp_"), "object": "response", "created_at": int(time.time()),
            "status": "in_progress", "error": None, "incomplete_details": None, "model": model, "output": [],
            "usage": None, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], **(echo or {})}
        self._offered = offered or {}
        self._seq = 0
        self.started = self.finished = False
        self._text: int | None = None  # output index of the open text or reasoning item
        self._calls: list[int] = []  # output indexes of the open call items, oldest first
        self._pieces: list[str] = []  # the open text or reasoning item's text so far
        self._arguments: dict[int, list[str]] = {}  # a call item's output index -> its arguments so far
        self._ids: set[str] = set()  # call ids given out: unique within the response, as clients key on them
        self._blank_kind, self._blank = "", ""  # whitespace waiting to begin an item of that kind
        self._live: dict[int, int] = {}  # parser index of a started call -> its item's output index

    @property
    def response(self) -> dict[str, Any]:
        """The response object the events so far accumulate to (an open item's text and arguments are written
        into it when it is done)."""
        return self._response

    @property
    def last_call(self) -> int:
        """The output index of the newest call item (its key for ``call_arguments``)."""
        return len(self._response["output"]) - 1

    def _event(self, type_: str, **fields: Any) -> dict[str, Any]:
        event = {"type": type_, **fields, "sequence_number": self._seq}
        self._seq += 1
        return event

    def _snapshot(self) -> dict[str, Any]:
        return {**self._response, "output": [dict(item) for item in self._response["output"]]}

    def start(self) -> list[dict[str, Any]]:
        """``response.created`` then ``response.in_progress`` (once)."""
        if self.started:
            return []
        self.started = True
        return [self._event("response.created", response=self._snapshot()),
                self._event("response.in_progress", response=self._snapshot())]

    def _open_item(self, prefix: str, item: dict[str, Any], call: bool) -> list[dict[str, Any]]:
        """Add an item; a text item ends the open call items, any item ends the open text item."""
        out = self.start() + self._close_text() + ([] if call else self._close_calls())
        self._blank = ""  # whitespace held for an item that did not come
        item = {"id": fresh_id(prefix), **item}
        index = len(self._response["output"])
        self._response["output"].append(item)
        if call:
            self._calls.append(index)
            self._arguments[index] = []
        else:
            self._text = index
        return out + [self._event("response.output_item.added", output_index=index, item=dict(item))]

    def _close_text(self, status: str = "completed") -> list[dict[str, Any]]:
        index, self._text = self._text, None
        return [] if index is None else self._done(index, status)

    def _close_calls(self, status: str = "completed") -> list[dict[str, Any]]:
        indexes, self._calls = self._calls, []
        return [event for index in indexes for event in self._done(index, status)]

    def _written(self, index: int) -> dict[str, Any]:
        """Item ``index`` with what it holds so far written into it."""
        item: dict[str, Any] = self._response["output"][index]
        kind = item["type"]
        if kind in _KIND_OF_ITEM:
            item["content"] = [{**_TEXT_KINDS[_KIND_OF_ITEM[kind]].part(), "text": "".join(self._pieces)}]
        elif kind == "function_call":
            item["arguments"] = "".join(self._arguments[index])
        elif kind == "tool_search_call":  # its arguments are a JSON value, known once they are whole
            item["arguments"] = search_arguments("".join(self._arguments[index]))
        else:  # a custom tool's call: its input is known once its arguments are whole
            item["input"] = custom_input("".join(self._arguments[index]))
        return item

    def _done(self, index: int, status: str) -> list[dict[str, Any]]:
        item = self._written(index)
        kind = item["type"]
        out: list[dict[str, Any]] = []
        ids = {"item_id": item["id"], "output_index": index}
        if kind in _KIND_OF_ITEM:
            self._pieces = []
            how = _TEXT_KINDS[_KIND_OF_ITEM[kind]]
            part = item["content"][0]
            extra: dict[str, Any] = {"logprobs": []} if how.logprobs else {}
            out += [self._event(how.done, **ids, content_index=0, text=part["text"], **extra),
                    self._event("response.content_part.done", **ids, content_index=0, part=dict(part))]
        elif kind == "function_call":
            out.append(self._event("response.function_call_arguments.done", **ids, name=item["name"],
                                   arguments=item["arguments"]))
        elif kind == "custom_tool_call":
            if item["input"]:
                out.append(self._event("response.custom_tool_call_input.delta", **ids, delta=item["input"]))
            out.append(self._event("response.custom_tool_call_input.done", **ids, input=item["input"]))
        item["status"] = status
        return out + [self._event("response.output_item.done", output_index=index, item=dict(item))]

    def _delta(self, kind: str, s: str) -> list[dict[str, Any]]:
        """Text or reasoning: appended to the open item of that kind, else to a new one. Whitespace that would
        begin an item waits for the item's first other character: an item is never blank."""
        if not s or self.finished:
            return []
        how = _TEXT_KINDS[kind]
        output = self._response["output"]
        if self._text is not None and _KIND_OF_ITEM[output[self._text]["type"]] == kind:
            out = self.start()
        else:
            s = (self._blank if self._blank_kind == kind else "") + s
            self._blank_kind, self._blank = kind, s
            if s.isspace():
                return self.start()
            out = self._open_item(how.prefix, how.item(), call=False)
            out.append(self._event("response.content_part.added", item_id=output[-1]["id"],
                                   output_index=self._text, content_index=0, part=how.part()))
        self._pieces.append(s)
        index = len(output) - 1  # the open text item is the newest
        extra: dict[str, Any] = {"logprobs": []} if how.logprobs else {}
        out.append(self._event(how.delta, item_id=output[index]["id"], output_index=index, content_index=0,
                               delta=s, **extra))
        return out

    def text(self, s: str) -> list[dict[str, Any]]:
        """Text, as ``response.output_text.delta`` (opening a message item if the open item is another)."""
        return self._delta("text", s)

    def thinking(self, s: str) -> list[dict[str, Any]]:
        """Reasoning, as ``response.reasoning_text.delta`` in a reasoning item."""
        return self._delta("thinking", s)

    def tool_start(self, call: str, name: str) -> list[dict[str, Any]]:
        """Open a call item: ``function_call``; ``custom_tool_call`` for a custom tool; ``tool_search_call`` for
        the client's ``tool_search``. Its ``call_id`` is the upstream's, unless the response already has it."""
        if self.finished:
            return []
        ident = call_id(call)
        while ident in self._ids:
            ident = fresh_id("call_")
        self._ids.add(ident)
        tool = self._offered.get(name) or Offered(name)
        where = {"namespace": tool.namespace} if tool.namespace else {}
        item: dict[str, Any]
        if tool.kind == "custom":
            item = {"type": "custom_tool_call", "status": "in_progress", "call_id": ident, "name": tool.name,
                    **where, "input": ""}
        elif tool.kind == "tool_search":
            item = {"type": "tool_search_call", "status": "in_progress", "call_id": ident, "execution": "client",
                    "arguments": {}}
        else:
            item = {"type": "function_call", "status": "in_progress", "call_id": ident, "name": tool.name, **where,
                    "arguments": ""}
        return self._open_item(_CALL_PREFIXES[item["type"]], item, call=True)

    def call_arguments(self, index: int, fragment: str) -> list[dict[str, Any]]:
        """A piece of call item ``index``'s arguments: ``function_call_arguments.delta`` (a custom tool's input
        and a tool search's arguments are sent whole when the item is done)."""
        if not fragment or self.finished or index not in self._arguments:
            return []
        self._arguments[index].append(fragment)
        if index not in self._calls:  # a late fragment for an item already done: keep the response up to date
            self._written(index)
            return []
        item = self._response["output"][index]
        if item["type"] != "function_call":
            return []
        return [self._event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                            delta=fragment)]

    def end_call(self, index: int) -> list[dict[str, Any]]:
        """A call complete: its item done, if it is still open."""
        if index not in self._calls:
            return []
        self._calls.remove(index)
        return self._done(index, "completed")

    def tool_call(self, call: str, name: str, arguments: str) -> list[dict[str, Any]]:
        """A whole call: its item added, its arguments, and its item done."""
        out = self.tool_start(call, name)
        if out:
            index = self.last_call
            out += self.call_arguments(index, arguments) + self.end_call(index)
        return out

    def events(self, parser_events: Iterable[Event]) -> list[dict[str, Any]]:
        """Parser events -> stream events (``write_events``): with ``stream_arguments``, ``ToolCallStart`` opens
        the call's item, each ``ToolCallDelta`` is an arguments delta, and the ``ToolCall`` that ends it closes it."""
        return write_events(self, self._live, parser_events)

    def finish(self, finish_reason: str | None = None, *, matched_stop: str | None = None,
               usage: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The open items done; then ``response.completed``, or ``response.incomplete`` when the answer was cut
        (``length``: ``max_output_tokens``; ``content_filter``), its open items ``incomplete`` too."""
        if self.finished:
            return []
        reason = incomplete_reason(finish_reason)
        status = "incomplete" if reason else "completed"
        out = self.start() + self._close_text(status) + self._close_calls(status)
        self.finished = True
        self._response["usage"] = usage_from(usage)
        if reason:
            self._response.update(status="incomplete", incomplete_details={"reason": reason})
            return out + [self._event("response.incomplete", response=self._snapshot())]
        self._response["status"] = "completed"
        return out + [self._event("response.completed", response=self._snapshot())]

    def keepalive(self) -> list[dict[str, Any]]:
        """``response.in_progress`` again (Codex's idle timer waits for an event; a comment does not count); the
        stream's start if it has not begun; nothing once it has ended."""
        if self.finished:
            return []
        if not self.started:
            return self.start()
        return [self._event("response.in_progress", response={**self._response, "output": []})]

    def error(self, message: str, code: str = "server_error") -> list[dict[str, Any]]:
        """``response.failed`` (a failure after the response began); the items still open hold what was sent of
        them, marked ``incomplete``, with no ``done`` event."""
        if self.finished:
            return []
        out = self.start()
        self.finished = True
        for index in ([self._text] if self._text is not None else []) + self._calls:
            self._written(index)["status"] = "incomplete"
        self._response.update(status="failed", error={"code": code, "message": message})
        return out + [self._event("response.failed", response=self._snapshot())]


class ChunkTranslator(ChunkReader):
    """OpenAI ``chat.completion.chunk`` dicts (or SDK objects) -> Responses stream events, one chunk at a time.

    Only choice index 0 is used. A call's item stays open until the next item or the end, since a chunk does
    not say that a call is complete."""

    def __init__(self, *, model: str = "unknown", echo: Mapping[str, Any] | None = None,
                 offered: Mapping[str, Offered] | None = None, response_id: str | None = None):
        self.stream = ResponseStream(model=model, echo=echo, offered=offered, response_id=response_id)
        super().__init__(self.stream)

    def fail(self, message: str) -> list[dict[str, Any]]:
        """The upstream broke: ``response.failed`` ends the stream."""
        return self.stream.error(message)


def response_from_completion(completion: JSONObject, *, model: str | None = None,
                             echo: Mapping[str, Any] | None = None, offered: Mapping[str, Offered] | None = None,
                             response_id: str | None = None) -> dict[str, Any]:
    """A (rewritten) OpenAI ``chat.completion`` -> a Responses ``response`` object. It is what the stream of the
    same answer accumulates to, by construction: the completion is replayed as chunks through a
    ``ChunkTranslator``. Only choice index 0 is used."""
    data = _json_object(completion, "a chat.completion")
    name = model or (data.get("model") if isinstance(data.get("model"), str) else None) or "unknown"
    translator = ChunkTranslator(model=name, echo=echo, offered=offered, response_id=response_id)
    replay_completion(translator, data)
    return translator.stream.response


def response_from_text(text: str, tools: Tools = None, *, model: str = "streamparse",
                       **parser_options: Any) -> dict[str, Any]:
    """A whole answer's text, parsed -> a Responses ``response`` object (items in the order the text has them)."""
    stream = ResponseStream(model=model)
    write_text(stream, text, tools, **parser_options)
    return stream.response
