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
``anthropic-*`` headers are not forwarded.
"""

from __future__ import annotations

from typing import Mapping

from starlette.requests import Request
from starlette.responses import Response

from ..wire.anthropic.request import estimate_input_tokens, to_chat_request
from ..wire.validation import BadRequest, check_chat_request
from .config import ProxyConfig
from .fronts import AnthropicFront, JSONBody
from .pipeline import ChatPipeline
from .plan import plan_chat
from .replies import Replies

__all__ = ["MessagesAPI", "upstream_headers", "ESTIMATE_HEADER"]

ESTIMATE_HEADER = "x-streamparse-estimate"


def upstream_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """An Anthropic client's headers as an OpenAI client would send them."""
    out = {k: v for k, v in headers.items() if not k.lower().startswith("anthropic-") and k.lower() != "x-api-key"}
    key = headers.get("x-api-key")
    if key and not any(k.lower() == "authorization" for k in out):
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
        front = AnthropicFront(body.get("model") if isinstance(body.get("model"), str) else None,
                               stops if isinstance(stops, list) else ())
        try:
            payload = to_chat_request(body)
            check_chat_request(payload)
        except BadRequest as exc:
            return self.replies.refuse(exc, front)
        return await self.chat.run(request, payload, front, upstream_headers(request.headers))

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
