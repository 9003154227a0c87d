"""The API a proxy client speaks: OpenAI chat completions or Anthropic Messages (the Responses front, in
``responses``, is built from the pieces here).

The proxy's pipeline (``chat``) always talks OpenAI to the upstream and works on
OpenAI chunks and completions; a front decides only how the client sees them:
its error shape, its stream events, its whole-answer body.

Invariant: a front never loses what the pipeline says. Every chunk, comment,
end and error of a rewritten stream reaches the client's wire format, and every
error keeps its status and message.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Mapping, Protocol, Sequence

from starlette.responses import Response

from ..wire.anthropic import ChunkTranslator, error_body as anthropic_error, message_from_completion
from ..wire.sse import OpenAIWire, Output, Wire, dumps, encode_event

__all__ = ["Front", "OpenAIFront", "AnthropicFront", "OPENAI", "JSONBody", "Translator", "TranslatingWire"]

log = logging.getLogger("streamparse.server")


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


class Translator(Protocol):
    """OpenAI chunks -> another API's stream events (``wire.anthropic.ChunkTranslator``, ...)."""

    def feed(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]: ...

    def close(self) -> list[dict[str, Any]]: ...

    def fail(self, message: str) -> list[dict[str, Any]]: ...

    def keepalive(self) -> list[dict[str, Any]]:
        """The API's own keep-alive events (the stream's start, if it has not begun); none once it has ended."""
        ...


def _typed_frame(event: Mapping[str, Any]) -> bytes:
    """``event: <type>`` and the event's compact JSON, as Anthropic and the Responses API send them."""
    return encode_event(dumps(event), event=event["type"])


class TranslatingWire:
    """Rewritten OpenAI chunks -> another API's typed stream events (``event: <type>`` frames), through a
    ``Translator``; ``comments`` go first, and ``on_end`` runs once the stream has ended well.

    It is also the stream's ``Keepalive``: the translator's keep-alive events, written only while every piece
    encoded so far has been sent (``encode`` may run in a worker thread, and its events are numbered), else
    nothing (the response pings with a comment instead)."""

    def __init__(self, translator: Translator, comments: Sequence[str] = (),
                 on_end: Callable[[], None] | None = None):
        self.translator = translator
        self.comments = list(comments)
        self.on_end = on_end
        self._lock = threading.Lock()
        self._unsent = False  # a piece encoded has not been sent yet

    def sent(self) -> None:
        self._unsent = False

    def frame(self) -> bytes:
        if self._unsent or not self._lock.acquire(blocking=False):
            return b""
        try:
            if self._unsent:  # an encode finished between the first look and the lock
                return b""
            return self._comments() + b"".join(_typed_frame(event) for event in self.translator.keepalive())
        finally:
            self._lock.release()

    def _comments(self) -> bytes:
        """The comments still to go first, once."""
        frames, self.comments = [encode_event(comment=c) for c in self.comments], []
        return b"".join(frames)

    def encode(self, outputs: list[Output]) -> bytes:
        with self._lock:
            data = self._encode(outputs)
            self._unsent = self._unsent or bool(data)
        return data

    def _encode(self, outputs: list[Output]) -> bytes:
        frames = [self._comments()]
        ended = False
        for kind, value in outputs:
            if kind == "chunk":
                events = self.translator.feed(value)
            elif kind == "comment":
                frames.append(encode_event(comment=value))
                continue
            elif kind == "raw":  # an upstream event too deep to read has no form in these APIs
                frames.append(encode_event(comment="an upstream event too deep to read was left out"))
                continue
            elif kind == "done":
                events = self.translator.close()
                ended = True
            else:
                error = value.get("error") if isinstance(value, dict) else None
                message = error.get("message") if isinstance(error, dict) else None
                events = self.translator.fail(str(message or error or value))
            frames.extend(_typed_frame(event) for event in events)
        if ended and self.on_end is not None:
            try:
                self.on_end()
            except Exception:  # what runs after the end never takes the end from the client
                log.exception("after the end of a stream")
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
        return TranslatingWire(ChunkTranslator(model=self.model, stop_sequences=self.stop_sequences))

    def completion_response(self, completion: Mapping[str, Any], status: int,
                            headers: Mapping[str, str] | None = None) -> Response:
        message = message_from_completion(completion, model=self.model, stop_sequences=self.stop_sequences)
        return JSONBody(message, status_code=status, headers=dict(headers or {}))
