"""The Anthropic Messages API in front of any OpenAI-compatible backend.

``POST /v1/messages`` translates the request (``wire.anthropic.request``), runs the
shared chat pipeline (``pipeline``: tool prompting, parsing, retries, limits) and
answers as Anthropic does (``fronts.AnthropicFront``: message JSON, or its
stream events). ``POST /v1/messages/count_tokens`` answers with an estimate of
the prompt the planned upstream request carries. Both take the query string
the SDK's beta client and Claude Code add (``?beta=true``) and the
``anthropic-beta`` header, and need neither.

Invariants: every answer, errors included, is in Anthropic's shape
(``{"type": "error", "error": {"type", "message"}}`` with the matching status);
the client's ``x-api-key`` reaches an upstream only as the bearer token it
would have sent an OpenAI server, and only when the backend has no key of its own;
``anthropic-*`` headers are not forwarded; the tools the request offered that the
model is not shown (server tools, deferred tools not loaded) are said in
``x-streamparse-diagnostic`` (and, streamed, in a comment before the first event).
"""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

from starlette.requests import Request
from starlette.responses import Response

from ..wire.anthropic import ChunkTranslator
from ..wire.anthropic.request import estimate_input_tokens, to_chat_request
from ..wire.sse import Wire
from ..wire.validation import BadRequest, check_chat_request
from .config import ProxyConfig
from .fronts import AnthropicFront, JSONBody, TranslatingWire
from .pipeline import DIAGNOSTIC_HEADER, ChatPipeline, set_header
from .plan import plan_chat
from .replies import Replies
from .upstream import client_key

__all__ = ["MessagesAPI", "upstream_headers", "ESTIMATE_HEADER"]

ESTIMATE_HEADER = "x-streamparse-estimate"

log = logging.getLogger("streamparse.server")


class _NotedFront(AnthropicFront):
    """An Anthropic request whose stream opens with comments: ``notes``, what the request offered that was left
    out (the list ``to_chat_request`` fills)."""

    def __init__(self, model: str | None, stop_sequences: Sequence[str], notes: list[str]):
        super().__init__(model, stop_sequences)
        self.notes = notes

    def wire(self) -> Wire:
        return TranslatingWire(ChunkTranslator(model=self.model, stop_sequences=self.stop_sequences),
                               comments=self.notes)


def upstream_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """An Anthropic client's headers as an OpenAI client would send them: the key it presents (read as ``auth``
    reads it: a Bearer token first, else ``x-api-key``) as ``Authorization: Bearer``."""
    out = {k: v for k, v in headers.items() if not k.lower().startswith("anthropic-") and k.lower() != "x-api-key"}
    key = client_key(headers)
    if key:
        out = {k: v for k, v in out.items() if k.lower() != "authorization"}
        out["authorization"] = f"Bearer {key}"
    return out


class MessagesAPI:
    """The Anthropic routes: translate in, then the shared chat pipeline."""

    def __init__(self, config: ProxyConfig, replies: Replies, chat: ChatPipeline):
        self.config = config
        self.replies = replies
        self.chat = chat

    async def create(self, request: Request) -> Response:
        """``POST /v1/messages``, streaming or not."""
        body = await self.replies.read_json(request, AnthropicFront())
        if isinstance(body, Response):
            return body
        stops = body.get("stop_sequences")
        model = body.get("model") if isinstance(body.get("model"), str) else None
        notes: list[str] = []
        front = _NotedFront(model, stops if isinstance(stops, list) else (), notes)
        try:
            payload = to_chat_request(body, notes=notes)
            check_chat_request(payload)
        except BadRequest as exc:
            return self.replies.refuse(exc, front)
        for note in notes:
            log.debug("messages: %s", note)
        response = await self.chat.run(request, payload, front, upstream_headers(request.headers))
        if notes:
            set_header(response, DIAGNOSTIC_HEADER, "; ".join(notes))
        return response

    async def count_tokens(self, request: Request) -> Response:
        """``POST /v1/messages/count_tokens``: an estimate (see ``estimate_input_tokens``) of the prompt the
        backend would see (as ``plan_chat`` writes it: prompted tool instructions included); the
        ``x-streamparse-estimate`` header says so."""
        front = AnthropicFront()
        body = await self.replies.read_json(request, front)
        if isinstance(body, Response):
            return body
        try:
            payload = to_chat_request(body, need_max_tokens=False)
            check_chat_request(payload)
        except BadRequest as exc:
            return self.replies.refuse(exc, front)
        backend = self.config.backend_for(payload.get("model"))
        try:  # what that backend sees: system messages folded, tools as instructions and history as text
            upstream = plan_chat(payload, backend).upstream
        except ValueError as exc:  # a request the tool prompt cannot be written for
            return self.replies.refuse(BadRequest(str(exc)), front)
        tokens = estimate_input_tokens(upstream)
        return JSONBody({"input_tokens": tokens}, headers={ESTIMATE_HEADER: "characters/4; not a tokenizer count"})
