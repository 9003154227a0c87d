"""``--tool-call-parser streamparse``: vLLM's ``ToolParser`` interface over one ``StreamParser`` per request.

Invariant: every answer is read by ``StreamParser`` exactly as the library reads it, streamed or whole: the
streamed path feeds each delta alone (``engine_based_streaming``: vLLM passes the delta and calls
``finish_streaming()`` at the end) and returns the text, and each call whole, in the delta that completes it;
the whole path reads the answer with a parser of the same setup. What streamparse reads as reasoning reaches
the client as text here (vLLM's tool-parser interface has no reasoning field for a whole answer); with
``--reasoning-parser streamparse`` the reasoning never reaches this parser.

Set up per request from the tokenizer's chat template and the request's ``chat_template_kwargs``
(``configure.engine_setup``; ``STREAMPARSE_DIALECTS`` wins). ``adjust_request`` keeps special tokens in the
text (markers often are special tokens). ``supports_required_and_named`` is False: for
``tool_choice="required"`` or a named tool vLLM then reads the model's own format through this parser instead
of forcing a JSON answer (vLLM's default path, which reads JSON, not the model's markup).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..core import StreamParser, ToolCall
from .configure import EngineSetup, engine_setup, function_tools
from .reading import Pieces, pieces
from .vllm import chat_template_of, vllm_api

__all__ = ["StreamparseToolParser"]

_api = vllm_api()
_ToolParser: Any = _api.ToolParser  # vLLM's class, found at run time


class StreamparseToolParser(_ToolParser):  # type: ignore[misc]  # (a class mypy cannot see)
    """vLLM's tool parser interface over ``StreamParser``; one instance per request, as vLLM makes them."""

    engine_based_streaming = True
    supports_required_and_named = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools)
        # vLLM sets this True when no reasoning parser is configured: the answer then arrives with its reasoning
        self.skip_reasoning_parsing = False
        self._template = chat_template_of(tokenizer)
        self._kwargs: dict[str, Any] | None = kwargs.get("chat_template_kwargs")
        self._stream: StreamParser | None = None

    # ------------------------------------------------------------------ vLLM's interface

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if request.tools and hasattr(request, "skip_special_tokens"):
            request.skip_special_tokens = False  # markers are often special tokens: keep them in the text
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        parser = self._new_parser(request)
        read = pieces(parser.read_whole(model_output), reasoning_as_text=True)
        calls = [_api.ToolCall(id=c.id, type="function", function=_api.FunctionCall(name=c.name, arguments=c.arguments))
                 for c in read.calls]
        return _api.ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls,
                                                 content=read.text or None)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Any:
        if self._stream is None:
            self._stream = self._new_parser(request)
        if not delta_text:
            return None
        return self._message(pieces(self._stream.feed(delta_text), reasoning_as_text=True))

    def finish_streaming(self) -> Any:
        """The end of the stream (vLLM calls it once the engine is done): held text and open blocks."""
        if self._stream is None:
            return None
        return self._message(pieces(self._stream.close(), reasoning_as_text=True))

    # ------------------------------------------------------------------ helpers

    def setup(self, request: Any = None) -> EngineSetup:
        """This request's setup: explicit settings, else the chat template with the request's kwargs."""
        kwargs = getattr(request, "chat_template_kwargs", None) or self._kwargs
        return engine_setup(self._template, kwargs)

    def _new_parser(self, request: Any) -> StreamParser:
        tools = function_tools(getattr(request, "tools", None) or self.tools)
        # the answer reaches this parser with its reasoning only when no reasoning parser took it out
        options = self.setup(request).parser_options(reasoning=self.skip_reasoning_parsing)
        return StreamParser(tools, **options)

    def _message(self, read: Pieces) -> Any:
        if not read.text and not read.calls:
            return None
        return _api.DeltaMessage(content=read.text or None, tool_calls=[_delta_call(c) for c in read.calls])


def _delta_call(call: ToolCall) -> Any:
    return _api.DeltaToolCall(index=call.index, id=call.id, type="function",
                              function=_api.DeltaFunctionCall(name=call.name, arguments=call.arguments))
