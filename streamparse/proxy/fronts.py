"""The API a proxy client speaks: OpenAI chat completions or Anthropic Messages.

The proxy's pipeline (``chat``) always talks OpenAI to the upstream and works on
OpenAI chunks and completions; a front decides only how the client sees them:
its error shape, its stream events, its whole-answer body.

Invariant: a front never loses what the pipeline says. Every chunk, comment,
end and error of a rewritten stream reaches the client's wire format, and every
error keeps its status and message.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

from starlette.responses import Response

from ..wire.anthropic import ChunkTranslator, encode_sse, error_body as anthropic_error, message_from_completion
from ..wire.sse import OpenAIWire, Output, Wire, dumps, encode_event

__all__ = ["Front", "OpenAIFront", "AnthropicFront", "OPENAI", "JSONBody"]


class JSONBody(Response):
    """A JSON response encoded with ``sse.dumps`` (orjson; the same bytes as the stream path)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content).encode()


class Front(Protocol):
    name: str  # "openai" or "anthropic": the metrics' front label
    relay_unparsed: bool  # an answer that needs no parsing may be relayed byte for byte

    def error_response(self, status: int, body: Mapping[str, Any]) -> Response:
        """``body`` is an OpenAI-style error (``{"error": {"message", "type", ...}}``)."""
        ...

    def wire(self) -> Wire: ...

    def completion_response(self, completion: Mapping[str, Any], status: int,
                            headers: Mapping[str, str] | None = None) -> Response: ...


class OpenAIFront:
    name = "openai"
    relay_unparsed = True

    def error_response(self, status: int, body: Mapping[str, Any]) -> Response:
        return JSONBody(dict(body), status_code=status)

    def wire(self) -> Wire:
        return OpenAIWire()

    def completion_response(self, completion: Mapping[str, Any], status: int,
                            headers: Mapping[str, str] | None = None) -> Response:
        return JSONBody(dict(completion), status_code=status, headers=dict(headers or {}))


OPENAI = OpenAIFront()


class AnthropicWire:
    """Rewritten OpenAI chunks -> Anthropic Messages stream events (``event: <type>`` frames)."""

    def __init__(self, model: str | None, stop_sequences: Sequence[str]):
        self.translator = ChunkTranslator(model=model, stop_sequences=stop_sequences)

    def encode(self, outputs: list[Output]) -> bytes:
        frames: list[bytes] = []
        for kind, value in outputs:
            if kind == "chunk":
                events = self.translator.feed(value)
            elif kind == "comment":
                frames.append(encode_event(comment=value))
                continue
            elif kind == "raw":  # an upstream event too deep to read has no Anthropic form
                frames.append(encode_event(comment="an upstream event too deep to read was left out"))
                continue
            elif kind == "done":
                events = self.translator.close()
            else:
                error = value.get("error") if isinstance(value, dict) else None
                message = error.get("message") if isinstance(error, dict) else None
                events = self.translator.fail(str(message or error or value))
            frames.extend(encode_sse(event) for event in events)
        return b"".join(frames)


class AnthropicFront:
    """One Anthropic Messages request: answers carry the model name and stop sequences it asked for."""

    name = "anthropic"
    relay_unparsed = False

    def __init__(self, model: str | None = None, stop_sequences: Sequence[str] = ()):
        self.model = model
        self.stop_sequences = tuple(stop_sequences)

    def error_response(self, status: int, body: Mapping[str, Any]) -> Response:
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return JSONBody(anthropic_error(status, str(message or f"error {status}")), status_code=status)

    def wire(self) -> Wire:
        return AnthropicWire(self.model, self.stop_sequences)

    def completion_response(self, completion: Mapping[str, Any], status: int,
                            headers: Mapping[str, str] | None = None) -> Response:
        message = message_from_completion(completion, model=self.model, stop_sequences=self.stop_sequences)
        return JSONBody(message, status_code=status, headers=dict(headers or {}))
