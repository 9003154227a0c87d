"""The serving engines' own streaming tool parsers (vLLM, SGLang) as benchmark sessions.

Invariant: importing this module never imports vllm, sglang or torch; each comparator
is loaded when asked for, and a missing package is one line of notes, never an error.

Each session drives one engine's parser through that engine's own streaming API, on the deltas
the harness gives every parser, the way the engine's serving layer drives it:

- vLLM: ``ToolParser.extract_tool_calls_streaming(previous_text, current_text, delta_text,
  previous_token_ids, current_token_ids, delta_token_ids, request)``, then at the end
  ``finish_streaming()`` (parser-engine parsers) and ``get_remaining_unstreamed_args()``, as
  ``vllm.parser.abstract_parser`` does. A classic parser (``hermes``) gets
  ``current_text = previous_text + delta_text``, a parser-engine one (``qwen3_coder``) gets the delta
  alone as ``current_text``: the same as vLLM's own ``StreamState.advance``.
- SGLang: ``FunctionCallParser(tools, name).parse_stream_chunk(delta)``, then ``parse_stream_end()``
  and the remaining-arguments check of ``OpenAIServingChat._check_for_unstreamed_tool_args``.

What a session reports: ``text`` is the content the engine returned; a call is ``(name, arguments)``
once complete: when its accumulated argument fragments form a JSON object (checked only when a
fragment ends with ``}``), when the engine starts its next call, or at ``close``, whichever comes first.
``raw()`` is the engine call alone (what the harness times); ``feed`` adds that bookkeeping.

Stand-ins, since no model is loaded: vLLM's parsers take a tokenizer (``StandInTokenizer``: Qwen's
special tokens with their real ids, see there) and a request (a real ``ChatCompletionRequest`` with
the tools; it is cheap). SGLang's detectors for these formats take no tokenizer; tools are its
``Tool`` models. Token ids: see ``StandInTokenizer`` and ``_VllmSession``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
import types
from typing import Any, Callable

from .baselines import SessionFactory

__all__ = ["engine_comparators", "StandInTokenizer", "INSTALL_HINT"]

INSTALL_HINT = ("install the comparators (CPU only, about a minute): see bench/README.md, "
                "'Installing the engine comparators'")

Pair = tuple[str, list[tuple[str, str]]]
RawApi = tuple[Callable[[str], Any], Callable[[], Any]]

# Every engine module is imported through this name, so tests can simulate a missing package.
_import: Callable[[str], Any] = importlib.import_module

_SESSIONS = {  # dialect -> (engine, session name, parser name in that engine)
    "hermes": (("vllm", "vllm:hermes", "hermes"), ("sglang", "sglang:qwen25", "qwen25"),
               ("sglang", "sglang:hermes", "hermes")),
    "qwen3_coder": (("vllm", "vllm:qwen3_coder", "qwen3_coder"), ("sglang", "sglang:qwen3_coder", "qwen3_coder")),
}
_cache: dict[str, tuple[dict[str, SessionFactory], list[str]]] = {}
_loaded: dict[str, Any] = {}  # engine -> its modules (a SimpleNamespace), or the exception that stopped them


def engine_comparators(dialect: str) -> tuple[dict[str, SessionFactory], list[str]]:
    """Sessions for the engines' parsers of ``dialect`` (e.g. ``"vllm:hermes"``), and a note per engine not available."""
    if dialect not in _SESSIONS:
        return {}, []
    if dialect not in _cache:
        found: dict[str, SessionFactory] = {}
        notes: list[str] = []
        for engine, name, parser in _SESSIONS[dialect]:
            modules = _load(engine)
            if isinstance(modules, BaseException):
                note = f"{engine}: not compared ({type(modules).__name__}: {modules}); {INSTALL_HINT}"
                if note not in notes:
                    notes.append(note)
                continue
            found[name] = _factory(engine, modules, parser)
        _cache[dialect] = (found, notes)
    found, notes = _cache[dialect]
    return dict(found), list(notes)


def _load(engine: str) -> Any:
    if engine not in _loaded:
        try:
            _loaded[engine] = _load_vllm() if engine == "vllm" else _load_sglang()
        except Exception as exc:  # noqa: BLE001 - a missing or broken engine is a note, never an error
            _loaded[engine] = exc
    return _loaded[engine]


def _load_vllm() -> types.SimpleNamespace:
    """vLLM's ``hermes`` parser class, and ``qwen3_coder``'s: ``Qwen3EngineToolParser`` is the adapter that
    ``make_adapters(Qwen3Parser)`` builds (plus a structural-tag name used only for constrained decoding); it is
    built here from ``vllm.parser.qwen3`` because its own module imports every model's parser (mistral_common, …)."""
    hermes = _import("vllm.tool_parsers.hermes_tool_parser")
    qwen3 = _import("vllm.parser.qwen3")
    adapters = _import("vllm.parser.engine.adapters")
    protocol = _import("vllm.entrypoints.openai.chat_completion.protocol")
    _, qwen3_tool_parser = adapters.make_adapters(qwen3.Qwen3Parser)
    return types.SimpleNamespace(parsers={"hermes": hermes.Hermes2ProToolParser, "qwen3_coder": qwen3_tool_parser},
                                 request=protocol.ChatCompletionRequest, tokenizer=StandInTokenizer())


def _load_sglang() -> types.SimpleNamespace:
    """SGLang's ``FunctionCallParser`` (which holds the detectors) and its ``Tool`` model.

    ``sglang/__init__.py`` imports SGLang's whole runtime (triton, the frontend language, Hugging Face patches);
    the function-call detectors need none of it and live in ``sglang.srt``, whose packages have empty
    ``__init__`` files. So, unless ``sglang`` is already imported, the package is registered without running
    its ``__init__`` (the detectors' code is SGLang's, unchanged); ``import sglang`` later in the same process
    then gets that bare package."""
    added = False
    if "sglang" not in sys.modules:
        spec = importlib.util.find_spec("sglang")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError("No module named 'sglang'", name="sglang")
        package = types.ModuleType("sglang")
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        package.__file__ = spec.origin
        sys.modules["sglang"] = package
        added = True
    try:
        parser = _import("sglang.srt.function_call.function_call_parser")
        protocol = _import("sglang.srt.entrypoints.openai.protocol")
    except BaseException:
        if added:
            sys.modules.pop("sglang", None)
        raise
    return types.SimpleNamespace(FunctionCallParser=parser.FunctionCallParser, Tool=protocol.Tool)


def _factory(engine: str, modules: Any, parser: str) -> SessionFactory:
    if engine == "vllm":
        return lambda tools: _VllmSession(modules, parser, tools)
    return lambda tools: _SglangSession(modules, parser, tools)


# ----------------------------------------------------------------------------- stand-ins

class StandInTokenizer:
    """The part of a Hugging Face tokenizer that vLLM's tool parsers read, for a Qwen2.5 / Qwen3 model.

    ``get_vocab()`` holds Qwen's chat, tool and thinking tokens with their real ids (``<tool_call>`` is 151657);
    ``all_special_tokens`` are the three chat tokens Qwen marks special (the parser engine drops their text).
    Other text is not really tokenized: ``encode`` cuts it at those tokens and gives every other piece one id,
    from ``FIRST_PIECE_ID`` up, the same id each time the same piece comes back, so that
    ``decode(encode(text)) == text``, which is what the parser engine relies on (it decodes each id to place a
    special token in the delta's text). vLLM's ``hermes`` parser only checks that a tokenizer was given.
    """

    SPECIAL = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
    ADDED = {"<tool_call>": 151657, "</tool_call>": 151658, "<tool_response>": 151665, "</tool_response>": 151666,
             "<think>": 151667, "</think>": 151668}
    FIRST_PIECE_ID = 200_000

    def __init__(self) -> None:
        self._vocab = {**self.SPECIAL, **self.ADDED}
        self._pieces: dict[str, int] = {}
        self._text = {i: t for t, i in self._vocab.items()}
        self._cut = re.compile("(" + "|".join(map(re.escape, self._vocab)) + ")")
        self.all_special_tokens = list(self.SPECIAL)
        self.all_special_ids = list(self.SPECIAL.values())
        self.eos_token, self.eos_token_id = "<|im_end|>", self.SPECIAL["<|im_end|>"]

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def __len__(self) -> int:
        return self.FIRST_PIECE_ID + len(self._pieces)

    def _piece_id(self, piece: str) -> int:
        found = self._pieces.get(piece)
        if found is None:
            found = self._pieces[piece] = self.FIRST_PIECE_ID + len(self._pieces)
            self._text[found] = piece
        return found

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self._vocab.get(piece) or self._piece_id(piece) for piece in self._cut.split(text) if piece]

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        ids = [ids] if isinstance(ids, int) else ids
        return "".join(self._text[i] for i in ids if not (skip_special_tokens and i in self.all_special_ids))

    def convert_tokens_to_ids(self, tokens: Any) -> Any:
        if isinstance(tokens, str):
            return self._vocab.get(tokens) or self._piece_id(tokens)
        return [self.convert_tokens_to_ids(t) for t in tokens]

    def convert_ids_to_tokens(self, ids: Any) -> Any:
        return self._text[ids] if isinstance(ids, int) else [self._text[i] for i in ids]


# ----------------------------------------------------------------------------- sessions

class _Calls:
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


class _VllmSession:
    """One vLLM tool parser for one request (see the module doc for the calls and their arguments).

    Token ids: none are passed (``token_ids=False``, the default), so the parser engine finds every marker in
    the text. Cut every few characters, ``<tool_call>`` (one token for a Qwen model) arrives in pieces, which no
    real detokenizer produces; and once vLLM's parser engine has seen any token id, it takes ``<tool_call>``,
    ``</tool_call>``, ``<think>`` and ``</think>`` only from their token ids, and their text as prose. With
    ``token_ids=True`` each delta gets ``StandInTokenizer.encode(delta)``: the special token's id for a delta
    holding a whole one, one id per other piece; right for deltas cut at token boundaries.
    """

    def __init__(self, modules: Any, parser: str, tools: Any, *, token_ids: bool = False):
        self._tokenizer = modules.tokenizer
        self._request = modules.request(model="stand-in", messages=[{"role": "user", "content": ""}],
                                        tools=list(tools or []), stream=True)
        cls = modules.parsers[parser]
        self._parser = cls(self._tokenizer, self._request.tools)
        self._engine_based = bool(getattr(cls, "engine_based_streaming", False))
        if self._engine_based:  # vLLM's Parser does this when no reasoning parser is configured
            self._parser.skip_reasoning_parsing = True
        self._extract = self._parser.extract_tool_calls_streaming
        self._text = ""
        self._ids: list[int] = []
        self._token_ids = token_ids
        self._calls = _Calls()
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


class _SglangSession:
    """One SGLang ``FunctionCallParser`` for one request (see the module doc)."""

    def __init__(self, modules: Any, parser: str, tools: Any):
        self._parser = modules.FunctionCallParser([modules.Tool.model_validate(t) for t in tools or []], parser)
        self._detector = self._parser.detector
        self._calls = _Calls()

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
