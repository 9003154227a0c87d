"""The OpenAI Responses API in front of any chat-completions backend.

``POST /v1/responses`` reads the request (``wire.responses.request``: input items, instructions, tools,
tool choice, output format), continues a stored conversation when it names ``previous_response_id``
(``response_store``), runs the shared chat pipeline (``pipeline``: tool prompting, parsing, retries,
limits, masking) and answers as the Responses API does (``ResponsesFront``: a ``response`` object, or its
typed stream events). Codex, the OpenAI Agents SDK and the Vercel AI SDK speak this API by default.

Invariants: every answer, errors included, is in the Responses shape (errors as OpenAI's
``{"error": {"message", "type", "param", "code"}}``; a failure after the stream began as
``response.failed``); streamed or whole, the same upstream answer gives the same output items; an answer is
stored only when the request did not say ``store: false``, and only once it has ended (completed or
incomplete); what the request asked for that no backend here can run (hosted tools) is said in
``x-streamparse-diagnostic`` (and, streamed, in a comment before the first event).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from starlette.requests import Request
from starlette.responses import Response

from ..wire.responses import ChunkTranslator, ResponsesRequest, chat_messages, response_from_completion, to_chat_request
from ..wire.sse import Wire
from ..wire.validation import BadRequest, check_chat_request
from .config import ProxyConfig
from .fronts import JSONBody, OpenAIFront, TranslatingWire
from .pipeline import DIAGNOSTIC_HEADER, ChatPipeline, set_header
from .replies import Replies
from .response_store import ResponseStore

__all__ = ["ResponsesAPI", "ResponsesFront"]

log = logging.getLogger("streamparse.server")


class ResponsesFront(OpenAIFront):
    """One Responses request: its answer repeats the request's settings, and is stored when it ends."""

    name = "responses"
    relay_unparsed = False

    def __init__(self, request: ResponsesRequest | None = None, store: ResponseStore | None = None,
                 model: str | None = None):
        self.request = request
        self.store = store if request is not None and request.store else None
        self.model = model

    def _translator(self) -> ChunkTranslator:
        req = self.request
        return ChunkTranslator(model=self.model or "unknown", echo=req.echo if req else None,
                               offered=req.offered if req else None)

    def _keep(self, response: dict[str, Any]) -> None:
        """Store an answer that ended, for ``previous_response_id``. One whose items cannot be read back as a
        conversation (an upstream's call with no name) is not stored, and the log says why."""
        if self.store is None or self.request is None or response.get("status") not in ("completed", "incomplete"):
            return
        try:
            answer = chat_messages(response["output"]).messages  # output items are input items too
        except BadRequest as exc:
            log.warning("responses: answer %s not stored: %s", response.get("id"), exc)
            return
        self.store.put(response["id"], self.request.history + answer, response)

    def wire(self) -> Wire:
        translator = self._translator()
        notes = self.request.notes if self.request else []
        return TranslatingWire(translator, comments=notes, on_end=lambda: self._keep(translator.stream.response))

    def completion_response(self, completion: Mapping[str, Any], status: int,
                            headers: Mapping[str, str] | None = None) -> Response:
        req = self.request
        response = response_from_completion(completion, model=self.model, echo=req.echo if req else None,
                                            offered=req.offered if req else None)
        self._keep(response)
        return JSONBody(response, status_code=status, headers=dict(headers or {}))


class ResponsesAPI:
    """``POST /v1/responses``: translate in, then the shared chat pipeline."""

    def __init__(self, config: ProxyConfig, replies: Replies, chat: ChatPipeline):
        self.replies = replies
        self.chat = chat
        self.store = ResponseStore(config.responses_store_size, config.responses_store_ttl,
                                   config.responses_store_chars)

    def _previous(self, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The stored conversation ``previous_response_id`` names (``BadRequest`` when there is none)."""
        previous = body.get("previous_response_id")
        if previous is None:
            return []
        stored = self.store.get(previous) if isinstance(previous, str) else None
        if stored is None:
            raise BadRequest(f"previous_response_id: no stored response {previous!r} in this proxy (answers are "
                             "kept in each process for responses_store_ttl seconds, at most responses_store_size "
                             "of them, and only when the request did not say store: false); send the whole "
                             "conversation as input instead", param="previous_response_id")
        return stored.messages

    async def create(self, request: Request) -> Response:
        """``POST /v1/responses``, streaming or not."""
        body = await self.replies.read_json(request, ResponsesFront())
        if isinstance(body, Response):
            return body
        try:
            read = to_chat_request(body, self._previous(body), self.store.item)
            check_chat_request(read.chat)
        except BadRequest as exc:
            return self.replies.refuse(exc, ResponsesFront())
        for note in read.notes:
            log.debug("responses: %s", note)
        front = ResponsesFront(read, self.store, body["model"])
        response = await self.chat.run(request, read.chat, front)
        if read.notes:
            set_header(response, DIAGNOSTIC_HEADER, "; ".join(read.notes))
        return response
