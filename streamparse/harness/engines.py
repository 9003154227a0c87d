"""The serving engines' streaming tool parsers (vLLM, SGLang) as benchmark sessions, for every format both
streamparse and an engine parse.

Invariant: importing this module never imports vllm, sglang or torch; each comparator is loaded when asked
for, and a missing package (or a parser that will not load) is one line of notes, never an error.

``COMPARATORS`` is the table: per streamparse dialect, each engine parser of that format, by the name the
engine's ``--tool-call-parser`` takes. Each session drives one engine's parser through that engine's own
streaming API, on the deltas the harness gives every parser, the way the engine's serving layer drives it:

- vLLM: the class ``ToolParserManager`` resolves the name to, built with a tokenizer and the request's tools;
  ``adjust_request(request)``, then ``extract_tool_calls_streaming(previous_text, current_text, delta_text,
  previous_token_ids, current_token_ids, delta_token_ids, request)`` per delta, and at the end
  ``finish_streaming()`` (parser-engine parsers) and ``get_remaining_unstreamed_args()``, as
  ``vllm.parser.abstract_parser`` does. A classic parser gets ``current_text = previous_text + delta_text``,
  a parser-engine one (``engine_based_streaming``) the delta alone: vLLM's own ``StreamState.advance``.
- SGLang: ``FunctionCallParser(tools, name).parse_stream_chunk(delta)``, then ``parse_stream_end()`` and the
  remaining-arguments check of ``OpenAIServingChat._check_for_unstreamed_tool_args``.

What a session reports (``engines_sessions``): ``text`` is the content the engine returned; a call is
``(name, arguments)`` once complete: when its accumulated argument fragments form a JSON object (checked only
when a fragment ends with ``}``), when the engine starts its next call, or at ``close``, whichever comes first.
``raw()`` is the engine call alone (what the harness times); ``feed`` adds that bookkeeping.

Stand-ins, since no model is loaded: vLLM's parsers take a tokenizer (``engines_tokens.StandInTokenizer``: the
model family's special tokens, with their real ids where a parser keys on them) and a request (a real
``ChatCompletionRequest`` with the tools; it is cheap). Token ids are passed only to the parsers that find
their markers by id (``engines_tokens.KEYED_ON_IDS``); the others find them in the text. SGLang's detectors
take no tokenizer; tools are its ``Tool`` models. The engines' loggers are set to CRITICAL once loaded (``_quiet``).

Not compared, with the reason (``NOT_COMPARED``): vLLM's ``openai`` (gpt-oss) tool parser is a stub (vLLM parses
harmony from the real o200k tokenizer's token ids, ``HarmonyParser``, which needs the model's files), and two
vLLM parsers that do not stream (``phi4_mini_json``, ``cohere_command4``).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import types
from typing import Any, Callable, Iterable

from .baselines import SessionFactory
from .engines_sessions import Calls, SglangSession, SglangWhole, VllmSession, VllmWhole
from .engines_tokens import KEYED_ON_IDS, StandInTokenizer, whole_tokens

__all__ = ["engine_comparators", "engine_parsers", "engine_wholes", "engine_dialects", "StandInTokenizer", "INSTALL_HINT", "COMPARATORS",
           "NOT_COMPARED", "whole_tokens", "Calls"]

INSTALL_HINT = ("install the comparators (CPU only, about a minute): see bench/README.md, "
                "'Installing the engine comparators'")

# Every engine module is imported through this name, so tests can simulate a missing package.
_import: Callable[[str], Any] = importlib.import_module

# dialect -> (engine, the engine's parser name), in the order the tables show them; the session is "engine:name".
COMPARATORS: dict[str, tuple[tuple[str, str], ...]] = {
    "hermes": (("vllm", "hermes"), ("sglang", "qwen25"), ("sglang", "hermes")),
    "qwen3_coder": (("vllm", "qwen3_coder"), ("sglang", "qwen3_coder")),
    "glm45": (("vllm", "glm45"), ("sglang", "glm45"), ("sglang", "glm47")),
    "kimi_k2": (("vllm", "kimi_k2"), ("sglang", "kimi_k2")),
    "deepseek_v3": (("vllm", "deepseek_v3"), ("sglang", "deepseekv3")),
    "deepseek_v31": (("vllm", "deepseek_v31"), ("sglang", "deepseekv31")),
    "deepseek_v32": (("vllm", "deepseek_v32"), ("sglang", "deepseekv32")),
    "mistral": (("vllm", "mistral"), ("sglang", "mistral")),
    "llama3_json": (("vllm", "llama3_json"), ("sglang", "llama3")),
    "pythonic": (("vllm", "pythonic"), ("sglang", "pythonic")),
    "minimax_m2": (("vllm", "minimax_m2"), ("sglang", "minimax-m2")),
    "seed_oss": (("vllm", "seed_oss"),),
    "openai": (("sglang", "gpt-oss"),),
    "granite": (("vllm", "granite"),),
    "hunyuan": (("vllm", "hunyuan_a13b"), ("vllm", "jamba")),
    "xlam": (("vllm", "xlam"),),
    "lfm2": (("vllm", "lfm2"), ("sglang", "lfm2")),
    "cohere": (("sglang", "cohere_command4"),),
    "gemma4": (("vllm", "gemma4"), ("sglang", "gemma4")),
    "functiongemma": (("vllm", "functiongemma"),),
    "olmo3": (("vllm", "olmo3"),),
    "kimi_k3": (("vllm", "kimi_k3"), ("sglang", "kimi_k3")),
    "apertus": (("vllm", "apertus"), ("sglang", "apertus2509")),
    "internlm": (("vllm", "internlm"), ("sglang", "interns1")),
    "gigachat3": (("vllm", "gigachat3"), ("sglang", "gigachat3")),
}
NOT_COMPARED = {
    "vllm:openai": "a stub in vLLM: gpt-oss output is parsed by HarmonyParser from the real o200k_harmony token "
                   "ids, which needs the model's tokenizer files",
    "vllm:phi4_mini_json": "does not stream: its extract_tool_calls_streaming returns None for every delta",
    "vllm:cohere_command4": "does not stream: extract_tool_calls_streaming raises NotImplementedError",
}

_cache: dict[str, tuple[dict[str, SessionFactory], list[str]]] = {}
_loaded: dict[str, Any] = {}  # engine -> its modules (a SimpleNamespace), or the exception that stopped them


def engine_dialects() -> tuple[str, ...]:
    """The dialects some engine has a parser for, in table order."""
    return tuple(COMPARATORS)


def engine_comparators(dialect: str) -> tuple[dict[str, SessionFactory], list[str]]:
    """Sessions for the engines' parsers of ``dialect`` (e.g. ``"vllm:hermes"``), and a note per engine not
    available or parser that would not load."""
    if dialect not in COMPARATORS:
        return {}, []
    if dialect not in _cache:
        found: dict[str, SessionFactory] = {}
        notes: list[str] = []
        for engine, parser in COMPARATORS[dialect]:
            modules = _load(engine)
            if isinstance(modules, BaseException):
                note = f"{engine}: not compared ({type(modules).__name__}: {modules}); {INSTALL_HINT}"
                if note not in notes:
                    notes.append(note)
                continue
            try:
                found[f"{engine}:{parser}"] = _factory(engine, modules, parser, dialect)
            except Exception as exc:  # noqa: BLE001 - one parser that will not load is a note
                notes.append(f"{engine}:{parser}: not compared ({type(exc).__name__}: {str(exc)[:160]})")
        _cache[dialect] = (found, notes)
    found, notes = _cache[dialect]
    return dict(found), list(notes)


def engine_wholes(dialect: str) -> tuple[dict[str, Any], list[str]]:
    """The engines' parsers of ``dialect`` for the construction and whole-answer groups (``bench_groups``): each a
    ``VllmWhole`` or ``SglangWhole`` (prepare, build, extract, read), by the same names as ``engine_comparators``;
    and a note per engine not available or parser that would not load."""
    found: dict[str, Any] = {}
    notes: list[str] = []
    for engine, parser in COMPARATORS.get(dialect, ()):
        modules = _load(engine)
        if isinstance(modules, BaseException):
            note = f"{engine}: not compared ({type(modules).__name__}: {modules}); {INSTALL_HINT}"
            notes += [note] if note not in notes else []
            continue
        try:
            if engine == "vllm":
                found[f"vllm:{parser}"] = VllmWhole(modules.parser(parser), modules.request, StandInTokenizer(dialect))
            elif parser in modules.FunctionCallParser.ToolCallParserEnum:
                found[f"sglang:{parser}"] = SglangWhole(modules.FunctionCallParser, modules.Tool, parser)
            else:
                raise KeyError(f"SGLang has no parser {parser!r}")
        except Exception as exc:  # noqa: BLE001 - one parser that will not load is a note
            notes.append(f"{engine}:{parser}: not compared ({type(exc).__name__}: {str(exc)[:160]})")
    return found, notes


def engine_parsers(dialects: Iterable[str | None], log: Callable[[str], None]) -> dict[str, dict[str, SessionFactory]]:
    """The engines' sessions per dialect (``streamparse.harness.engines``), asked once each; every note logged once."""
    found: dict[str, dict[str, SessionFactory]] = {}
    notes: list[str] = []
    for dialect in dict.fromkeys(d for d in dialects if d in COMPARATORS):
        sessions, lines = engine_comparators(dialect)
        found[dialect] = dict(sessions)
        notes += [line for line in lines if line not in notes]
    for line in notes:
        log(f"# {line}")
    return found


def _load(engine: str) -> Any:
    if engine not in _loaded:
        try:
            _loaded[engine] = _load_vllm() if engine == "vllm" else _load_sglang()
        except Exception as exc:  # noqa: BLE001 - a missing or broken engine is a note, never an error
            _loaded[engine] = exc
    return _loaded[engine]


def _quiet(engine: str) -> None:
    """The engine's own log, down to CRITICAL: several parsers log a traceback for every delta they cannot place
    (vLLM's olmo3, apertus, internlm2 on a second call), which would flood the benchmark's output and bill the
    engine for formatting it."""
    logging.getLogger(engine).setLevel(logging.CRITICAL)


def _load_vllm() -> types.SimpleNamespace:
    """vLLM's parser registry (each parser's module is imported when first asked for) and its request model."""
    manager = _import("vllm.tool_parsers").ToolParserManager
    _quiet("vllm")
    protocol = _import("vllm.entrypoints.openai.chat_completion.protocol")
    return types.SimpleNamespace(parser=manager.get_tool_parser, request=protocol.ChatCompletionRequest)


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
    _quiet("sglang")
    return types.SimpleNamespace(FunctionCallParser=parser.FunctionCallParser, Tool=protocol.Tool)


def _factory(engine: str, modules: Any, parser: str, dialect: str) -> SessionFactory:
    """A session factory for one parser; the parser's class is resolved (and its module imported) here."""
    if engine == "vllm":
        cls = modules.parser(parser)
        tokenizer = StandInTokenizer(dialect)
        ids = dialect in KEYED_ON_IDS
        return lambda tools: VllmSession(cls, modules.request, tokenizer, tools, token_ids=ids)
    if parser not in modules.FunctionCallParser.ToolCallParserEnum:
        raise KeyError(f"SGLang has no parser {parser!r}")
    return lambda tools: SglangSession(modules.FunctionCallParser, modules.Tool, parser, tools)
