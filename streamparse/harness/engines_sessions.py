"""The serving engines' streaming tool parsers (vLLM, SGLang) driven as benchmark sessions.

Invariant: a session calls the engine's parser only through the engine's own streaming API, with what its
serving layer passes, and reports a call once, complete (see ``engines`` for both); it imports no engine
itself (the engine's classes come in ``modules``).
"""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["VllmSession", "SglangSession", "Calls", "VllmWhole", "SglangWhole"]

Pair = tuple[str, list[tuple[str, str]]]
RawApi = tuple[Callable[[str], Any], Callable[[], Any]]


# ----------------------------------------------------------------------------- sessions

class Calls:
    """Argument fragments accumulated per tool index; a call leaves once, when complete (see the module doc)."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._args: dict[int, list[str]] = {}
        self._open: list[int] = []  # indices not yet reported, in order of appearance

    def add(self, index: int, name: str | None, args: str | None) -> list[tuple[str, str]]:
        done: list[tuple[str, str]] = []
        if index not in self._args:
            done = self.finish()  # the engine moved on: every earlier call is complete
            self._names[index], self._args[index] = "", []
            self._open.append(index)
        if name:
            self._names[index] = name
        if args and index in self._open:
            parts = self._args[index]
            parts.append(args)
            if args.rstrip().endswith("}") and _is_json_object("".join(parts)):
                self._open.remove(index)
                done.append((self._names[index], "".join(parts)))
        return done

    def finish(self) -> list[tuple[str, str]]:
        done = [(self._names[i], "".join(self._args[i])) for i in self._open]
        self._open = []
        return done


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


class VllmSession:
    """One vLLM tool parser for one request (see the module doc for the calls and their arguments).

    Token ids: none are passed (``token_ids=False``, the default), so the parser engine finds every marker in
    the text. Cut every few characters, ``<tool_call>`` (one token for a Qwen model) arrives in pieces, which no
    real detokenizer produces; and once vLLM's parser engine has seen any token id, it takes ``<tool_call>``,
    ``</tool_call>``, ``<think>`` and ``</think>`` only from their token ids, and their text as prose. With
    ``token_ids=True`` each delta gets ``StandInTokenizer.encode(delta)``: the special token's id for a delta
    holding a whole one, one id per other piece; right for deltas cut at token boundaries.
    """

    def __init__(self, cls: Any, request: Any, tokenizer: Any, tools: Any, *, token_ids: bool = False):
        self._tokenizer = tokenizer
        self._request = request(model="stand-in", messages=[{"role": "user", "content": ""}],
                                tools=list(tools or []), stream=True)
        self._parser = cls(self._tokenizer, self._request.tools)
        self._request = self._parser.adjust_request(self._request)  # as vLLM's serving layer does
        self._engine_based = bool(getattr(cls, "engine_based_streaming", False))
        if self._engine_based:  # vLLM's Parser does this when no reasoning parser is configured
            self._parser.skip_reasoning_parsing = True
        self._extract = self._parser.extract_tool_calls_streaming
        self._text = ""
        self._ids: list[int] = []
        self._token_ids = token_ids
        self._calls = Calls()
        self._last_index: int | None = None  # of the last delta that carried tool calls

    def _raw_feed(self, delta: str) -> Any:
        if self._token_ids:
            return self._feed_with_ids(delta)
        if self._engine_based:
            return self._extract("", delta, delta, (), (), (), self._request)
        previous = self._text
        self._text = current = previous + delta
        return self._extract(previous, current, delta, (), (), (), self._request)

    def _feed_with_ids(self, delta: str) -> Any:
        ids = self._tokenizer.encode(delta)
        if self._engine_based:
            return self._extract("", delta, delta, [], ids, ids, self._request)
        previous, previous_ids = self._text, self._ids
        self._text, self._ids = previous + delta, previous_ids + ids
        return self._extract(previous, self._text, delta, previous_ids, self._ids, ids, self._request)

    def _raw_close(self) -> tuple[Any, str]:
        message = self._parser.finish_streaming() if self._engine_based else None
        return message, self._parser.get_remaining_unstreamed_args()

    def raw(self) -> RawApi:
        return self._raw_feed, self._raw_close

    def _read(self, message: Any) -> Pair:
        if message is None:
            self._last_index = None
            return "", []
        done: list[tuple[str, str]] = []
        self._last_index = None
        for call in message.tool_calls or ():
            function = call.function
            done += self._calls.add(call.index, function and function.name, function and function.arguments)
            self._last_index = call.index
        return message.content or "", done

    def feed(self, delta: str) -> Pair:
        return self._read(self._raw_feed(delta))

    def close(self) -> Pair:
        message, remaining = self._raw_close()
        text, done = self._read(message)
        if remaining and self._last_index is not None:  # vLLM appends these to the last delta's last call
            done += self._calls.add(self._last_index, None, remaining)
        return text, done + self._calls.finish()

    def held(self) -> int | None:
        return None  # not exposed by vLLM's parsers


class SglangSession:
    """One SGLang ``FunctionCallParser`` for one request (see the module doc)."""

    def __init__(self, function_call_parser: Any, tool: Any, parser: str, tools: Any):
        self._parser = function_call_parser([tool.model_validate(t) for t in tools or []], parser)
        self._detector = self._parser.detector
        self._calls = Calls()

    def _raw_feed(self, delta: str) -> Any:
        return self._parser.parse_stream_chunk(delta)

    def _raw_close(self) -> tuple[Any, tuple[int, str] | None]:
        return self._parser.parse_stream_end(), _unstreamed_args(self._detector)

    def raw(self) -> RawApi:
        return self._raw_feed, self._raw_close

    def _read(self, result: tuple[str, list[Any]]) -> Pair:
        text, items = result
        done: list[tuple[str, str]] = []
        for item in items:
            done += self._calls.add(item.tool_index, item.name, item.parameters)
        return text or "", done

    def feed(self, delta: str) -> Pair:
        return self._read(self._raw_feed(delta))

    def close(self) -> Pair:
        end, remaining = self._raw_close()
        text, done = self._read(end)
        if remaining is not None:
            done += self._calls.add(remaining[0], None, remaining[1])
        return text, done + self._calls.finish()

    def held(self) -> int | None:
        return len(self._detector._buffer) + len(getattr(self._detector, "_normal_text_buffer", ""))


def _unstreamed_args(detector: Any) -> tuple[int, str] | None:
    """What SGLang's chat serving sends after the last chunk (``_check_for_unstreamed_tool_args``): the last
    call's arguments as the detector parsed them, past what it streamed."""
    parsed = getattr(detector, "prev_tool_call_arr", None)
    streamed = getattr(detector, "streamed_args_for_tool", None)
    if not parsed or not streamed:
        return None
    index = len(parsed) - 1
    if index >= len(streamed):
        return None
    expected = parsed[index].get("arguments", {})
    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    actual = streamed[index]
    remaining = expected[len(actual):] if expected.startswith(actual) else ""
    return (index, remaining) if remaining else None


# ----------------------------------------------------------------------------- construction and whole answers

class VllmWhole:
    """vLLM's tool parser as its serving layer uses it per request (see ``bench_groups``): ``prepare`` builds the
    request with the tools (vLLM does that for every request, parser or not: outside the clock), ``build`` makes
    the parser for it (``cls(tokenizer, request.tools)`` and ``adjust_request``), ``extract`` is the non-streaming
    ``extract_tool_calls(text, request)``."""

    def __init__(self, cls: Any, request: Any, tokenizer: Any):
        self._cls, self._request, self._tokenizer = cls, request, tokenizer

    def prepare(self, tools: Any) -> Any:
        return self._request(model="stand-in", messages=[{"role": "user", "content": ""}], tools=list(tools or []))

    def build(self, request: Any) -> Any:
        parser = self._cls(self._tokenizer, request.tools)
        parser.adjust_request(request)
        return parser

    @staticmethod
    def extract(parser: Any, request: Any, text: str) -> Any:
        return parser.extract_tool_calls(text, request)

    @staticmethod
    def read(info: Any) -> Pair:
        calls = [(c.function.name, c.function.arguments) for c in info.tool_calls or ()] if info.tools_called else []
        return info.content or "", calls


class SglangWhole:
    """SGLang's ``FunctionCallParser`` per request: ``prepare`` validates the tools into its ``Tool`` models (its
    request parsing does), ``build`` makes the parser, ``extract`` is ``parse_non_stream(text)``."""

    def __init__(self, function_call_parser: Any, tool: Any, parser: str):
        self._fcp, self._tool, self._name = function_call_parser, tool, parser

    def prepare(self, tools: Any) -> Any:
        return [self._tool.model_validate(t) for t in tools or []]

    def build(self, tools: Any) -> Any:
        return self._fcp(tools, self._name)

    @staticmethod
    def extract(parser: Any, tools: Any, text: str) -> Any:
        return parser.parse_non_stream(text)

    @staticmethod
    def read(result: Any) -> Pair:
        text, items = result
        return text or "", [(item.name, item.parameters) for item in items]
