"""SGLang's ``--tool-call-parser streamparse``: a detector in ``FunctionCallParser``'s parser table.

Invariant: the detector reads every answer with ``StreamParser`` as the library does: streamed, each chunk alone
(SGLang's detectors take deltas: ``parse_streaming_increment``) and ``finish`` at the end; whole, with a parser of
the same setup (``detect_and_parse``). Text comes back as ``normal_text``, each call whole in the chunk that
completes it; reasoning the parser reads reaches the client as text (run SGLang's ``--reasoning-parser`` to take
it out before). The prior-call bookkeeping SGLang's server reads at the end of a stream
(``prev_tool_call_arr``, ``streamed_args_for_tool``) is kept, so it never re-sends arguments.

Registration: SGLang has no public flag for outside parsers; it loads ``sglang.srt.plugins`` entry points before
it parses its arguments, and ``register`` adds ``streamparse`` to ``FunctionCallParser.ToolCallParserEnum`` (and
to the parser-name list the argument parser offers). That table is not a stable SGLang API: supported is
``SUPPORTED``; ``register`` logs, never raises, where it is not found.

SGLang gives a detector no request: the setup comes from the tokenizer's chat template with its default kwargs
(``STREAMPARSE_DIALECTS`` wins), and the answer is taken to start in prose.
"""

from __future__ import annotations

import importlib
import json
import logging
from typing import Any

from ..core import StreamParser, ToolCall
from .configure import EngineSetup, engine_setup, function_tools
from .reading import Pieces, pieces
from .vllm import chat_template_of

__all__ = ["NAME", "SUPPORTED", "register", "detector_class"]

NAME = "streamparse"
SUPPORTED = "SGLang 0.5 (tested with 0.5.23)"
log = logging.getLogger("streamparse.integrations")

_TABLE = "sglang.srt.function_call.function_call_parser"
_NAMES = "sglang.srt.function_call.parser_names"
_BASE = "sglang.srt.function_call.base_format_detector"
_TYPES = "sglang.srt.function_call.core_types"
_detector: Any = None


def register() -> None:
    """The ``sglang.srt.plugins`` entry point: ``streamparse`` in SGLang's tool-call parser table."""
    try:
        table = importlib.import_module(_TABLE).FunctionCallParser.ToolCallParserEnum
        table[NAME] = detector_class()
        names = importlib.import_module(_NAMES).TOOL_CALL_PARSER_NAMES
        if NAME not in names:
            names.append(NAME)
    except Exception as exc:  # noqa: BLE001 - SGLang runs every installed plug-in: one that cannot load must not stop it
        log.error("streamparse: not registered with SGLang (%s: %s); supported: %s", type(exc).__name__, exc, SUPPORTED)


def detector_class() -> Any:
    """``StreamparseDetector``, a subclass of SGLang's ``BaseFormatDetector`` (made once, when asked for)."""
    global _detector
    if _detector is None:
        try:
            base = importlib.import_module(_BASE).BaseFormatDetector
            types = importlib.import_module(_TYPES)
        except ImportError as exc:
            raise ImportError(f"streamparse's SGLang detector needs {SUPPORTED}: {exc}") from exc
        _detector = _make(base, types.StreamingParseResult, types.ToolCallItem, types.StructureInfo)
    return _detector


def _make(base: Any, result_type: Any, item_type: Any, structure_type: Any) -> Any:

    class StreamparseDetector(base):  # type: ignore[misc]  # SGLang's class, found at run time
        """SGLang's detector interface over ``StreamParser``; SGLang makes one per request and choice."""

        def __init__(self, tokenizer: Any = None) -> None:
            super().__init__()
            self._setup: EngineSetup = engine_setup(chat_template_of(tokenizer) if tokenizer is not None else None)
            self._stream: StreamParser | None = None

        @classmethod
        def parses_without_tools(cls) -> bool:
            return True  # marker formats are read with no tools declared, as the library reads them

        def supports_structural_tag(self) -> bool:
            return False  # no constraint is built here: tool_choice "required" keeps SGLang's JSON path

        def has_tool_call(self, text: str) -> bool:
            """Does the text hold a call? (SGLang asks with no tools: read as the library reads without them)"""
            return bool(self._read_whole(text, None).calls)

        def detect_and_parse(self, text: str, tools: list[Any]) -> Any:
            read = self._read_whole(text, tools)
            where = {t.function.name: i for i, t in enumerate(tools or ())}
            calls = [item_type(tool_index=where.get(c.name, -1), name=c.name, parameters=c.arguments)
                     for c in read.calls]
            return result_type(normal_text=read.text, calls=calls)

        def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> Any:
            if self._stream is None:
                self._stream = self._parser(tools)
            return self._result(pieces(self._stream.feed(new_text), reasoning_as_text=True))

        def finish(self, tools: list[Any]) -> Any:
            if self._stream is None:
                return result_type()
            return self._result(pieces(self._stream.close(), reasoning_as_text=True))

        def structure_info(self) -> Any:
            """Begin, end and trigger of one call to a tool, from the one dialect this detector is set to."""
            from ..constraints.forms import tags_for

            dialects = self._setup.names or ()
            if len(dialects) != 1:
                raise NotImplementedError("streamparse builds a call's structure only for one dialect "
                                          "(set STREAMPARSE_DIALECTS, or a chat template that names one)")

            def info(name: str) -> Any:
                tag = tags_for(dialects[0], {name: {}}, loose=False)[0]
                return structure_type(begin=tag.begin, end=tag.end, trigger=tag.trigger)
            return info

        def _parser(self, tools: list[Any] | None) -> StreamParser:
            return StreamParser(function_tools(tools), **self._setup.parser_options(reasoning=False))

        def _read_whole(self, text: str, tools: list[Any] | None) -> Pieces:
            return pieces(self._parser(tools).read_whole(text), reasoning_as_text=True)

        def _result(self, read: Pieces) -> Any:
            for call in read.calls:
                self._keep(call)
            return result_type(normal_text=read.text,
                               calls=[item_type(tool_index=c.index, name=c.name, parameters=c.arguments)
                                      for c in read.calls])

        def _keep(self, call: ToolCall) -> None:
            self.current_tool_id = call.index
            self.prev_tool_call_arr.append({"name": call.name, "arguments": json.loads(call.arguments)})
            self.streamed_args_for_tool.append(call.arguments)

    return StreamparseDetector
