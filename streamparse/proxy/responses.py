"""The OpenAI Responses API in front of any chat-completions backend.

``POST /v1/responses`` reads the request (``wire.responses.request``: input items, instructions, tools,
tool choice, output format), continues a stored conversation when it names ``previous_response_id`` and finds
the items its ``item_reference`` items name (``response_store``), runs the shared chat pipeline (``pipeline``:
tool prompting, parsing, retries, limits, masking) and answers as the Responses API does (``ResponsesFront``: a
``response`` object, or its typed stream events). ``GET /v1/responses/{id}``, ``GET
/v1/responses/{id}/input_items`` and ``DELETE /v1/responses/{id}`` are served from the store. Codex, the OpenAI
Agents SDK and the Vercel AI SDK speak this API by default.

Invariants: every answer, errors included, is in the Responses shape (errors as OpenAI's
``{"error": {"message", "type", "param", "code"}}``; a failure after the stream began as
``response.failed``); streamed or whole, the same upstream answer gives the same output items; what is stored
belongs to the request's owner (``owners``), and a request finds only its own owner's: another owner's id is
answered exactly as an unknown one; an answer is stored only when the request did not say ``store: false``,
only once it has ended (completed or incomplete), and before its last bytes leave (a client that chains at
once finds it); a store that does not answer gives the request that needs it a 503, and costs an answer that
only wanted storing nothing but a log line and a metric; an id quoted in an error is cut short
(``shown_id``); what the request asked for that no backend here can run (hosted tools) is said in
``x-streamparse-diagnostic`` (and, streamed, in a comment before the first event).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from ..wire.responses import (ChunkTranslator, ResponsesRequest, chat_messages, input_items, referenced_ids,
                              response_from_completion, to_chat_request)
from ..wire.sse import Wire
from ..wire.validation import BadRequest, check_chat_request, shown_id
from .config import ProxyConfig
from .fronts import JSONBody, OpenAIFront, TranslatingWire
from .metrics import Metrics
from .owners import Owners
from .pipeline import DIAGNOSTIC_HEADER, ChatPipeline, set_header
from .redis_store import RedisStore
from .replies import Replies
from .response_store import Answer, MemoryStore, ResponseStore, Stored, StoreUnavailable

__all__ = ["ResponsesAPI", "ResponsesFront", "open_store", "store_warnings"]

log = logging.getLogger("streamparse.server")

_LIST_LIMIT = 100  # GET …/input_items: the most items one page holds (default 20), as OpenAI's API


def open_store(config: ProxyConfig) -> ResponseStore:
    """The store ``responses_store`` names: this process's memory, or Redis."""
    if config.responses_store == "memory":
        return MemoryStore(config.responses_store_size, config.responses_store_ttl, config.responses_store_chars)
    return RedisStore(config.responses_store, config.responses_store_size, config.responses_store_ttl,
                      config.responses_store_chars, config.responses_store_timeout)


def store_warnings(config: ProxyConfig) -> list[str]:
    """What ``serve`` says at start about the Responses store: a memory store that ``--workers`` split, or a
    shared store that does not answer (the proxy starts either way: only chained requests need it)."""
    if config.responses_store == "memory":
        if config.workers > 1:
            return [f"--workers {config.workers} with the memory responses store: each worker keeps its own, so a "
                    "previous_response_id or item_reference that reaches another worker is not found. Chains need "
                    "sticky sessions or a shared store (--responses-store redis://HOST:6379/0)"]
        return []

    async def ping() -> str | None:
        store = open_store(config)
        try:
            await store.ping()
            return None
        except StoreUnavailable as exc:
            return f"{exc} ({store.location}); chained /v1/responses requests get a 503 until it answers"
        finally:
            await store.aclose()

    import asyncio

    said = asyncio.run(ping())
    return [said] if said else []


class ResponsesFront(OpenAIFront):
    """One Responses request: its answer repeats the request's settings, and is kept for its owner when it ends
    (``settle`` stores it; ``StoredFirst`` calls it before the answer's bytes go out)."""

    name = "responses"
    relay_unparsed = False

    def __init__(self, request: ResponsesRequest | None = None, model: str | None = None, *,
                 keep: "Keeping | None" = None):
        self.request = request
        self.model = model
        self.keeping = keep if request is not None and request.store else None
        self.pending: Answer | None = None  # ended, not yet stored

    def _translator(self) -> ChunkTranslator:
        req = self.request
        return ChunkTranslator(model=self.model or "unknown", echo=req.echo if req else None,
                               offered=req.offered if req else None)

    def _keep(self, response: dict[str, Any]) -> None:
        """An answer that ended is to be stored. One whose items cannot be read back as a conversation (an
        upstream's call with no name) is not, and the log says why."""
        if self.keeping is None or self.request is None or response.get("status") not in ("completed", "incomplete"):
            return
        try:
            answer = chat_messages(response["output"]).messages  # output items are input items too
        except BadRequest as exc:
            log.warning("responses: answer %s not stored: %s", response.get("id"), exc)
            return
        keeping = self.keeping
        self.pending = Answer(response, keeping.input_items, self.request.history[len(keeping.earlier):] + answer,
                              keeping.previous_id, keeping.earlier)

    async def settle(self) -> None:
        """Store what ended (once); a store that fails costs a log line and a metric, never the answer."""
        answer, self.pending = self.pending, None
        if answer is None or self.keeping is None:
            return
        try:
            await self.keeping.store.put(self.keeping.owner, answer)
        except StoreUnavailable as exc:
            log.warning("responses: answer %s not stored: %s (%s)", answer.response_id, exc, self.keeping.store.location)
            self.keeping.metrics.store_error("put")

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


class Keeping:
    """Where and for whom one request's answer is kept, and what it continued."""

    def __init__(self, store: ResponseStore, owner: str, metrics: Metrics, input_items: list[dict[str, Any]],
                 previous_id: str | None = None, earlier: list[dict[str, Any]] | None = None):
        self.store = store
        self.owner = owner
        self.metrics = metrics
        self.input_items = input_items
        self.previous_id = previous_id
        self.earlier = earlier or []


class StoredFirst(Response):
    """``response``, with its front's ended answer stored before each piece of body goes out (so before the
    piece that ends the answer), and in any case once it is over."""

    def __init__(self, response: Response, front: ResponsesFront):  # noqa: super not called (a wrapper)
        self.response = response  # (``pipeline.set_header`` reaches the headers through it)
        self.front = front
        self.status_code = response.status_code
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def stored_then_sent(message: Message) -> None:
            if message["type"] == "http.response.body" and self.front.pending is not None:
                await self.front.settle()
            await send(message)

        try:
            await self.response(scope, receive, stored_then_sent)
        finally:
            await self.front.settle()


class ResponsesAPI:
    """``/v1/responses``: ``POST`` translates in, then the shared chat pipeline; ``GET`` and ``DELETE`` read
    the store."""

    def __init__(self, replies: Replies, chat: ChatPipeline, store: ResponseStore, owners: Owners):
        self.replies = replies
        self.chat = chat
        self.store = store
        self.owners = owners
        self.metrics = chat.upstream.metrics

    def _miss(self, what: str) -> str:
        """The end of every miss's message: which store was asked, and what works instead."""
        where = self.store.description
        if self.store.shared:
            return (f"{what} is not in {where} for this API key (answers expire, the oldest go when the store is "
                    "full, and answers asked with store: false are not kept)")
        return (f"{what} is not in {where} for this API key (each proxy process keeps its own: with --workers or "
                "several replicas, run them with --responses-store redis://… so they share one; answers expire, "
                "and answers asked with store: false are not kept)")

    def _refuse(self, status: int, message: str, param: str | None, code: str | None = None) -> Response:
        """An ``invalid_request_error`` in the Responses shape."""
        return self.replies.error(status, message, type_="invalid_request_error", code=code, param=param,
                                  front=ResponsesFront())

    def _unavailable(self, exc: StoreUnavailable) -> Response:
        self.metrics.store_error("read")
        log.warning("responses: %s (%s)", exc, self.store.location)
        return self.replies.error(503, f"the responses store is unavailable: {exc}; send the whole conversation "
                                  "as input, with store: false, to go on without it", type_="server_error",
                                  code="store_unavailable", front=ResponsesFront())

    async def create(self, request: Request) -> Response:
        """``POST /v1/responses``, streaming or not."""
        body = await self.replies.read_json(request, ResponsesFront())
        if isinstance(body, Response):
            return body
        owner = self.owners.of(request.scope["headers"])
        previous_id = body.get("previous_response_id")
        try:
            previous = await self._previous(owner, previous_id)
            if isinstance(previous, Response):
                return previous
            named = referenced_ids(body.get("input"))
            found = await self.store.items(owner, list(named))
        except StoreUnavailable as exc:
            return self._unavailable(exc)
        missing = next((item_id for item_id in named if item_id not in found), None)
        if missing is not None:
            at = f"input[{named[missing]}]"
            return self._refuse(400, self._miss(f"{at}: item_reference {shown_id(missing)}") + "; send the item "
                                "itself", at, "item_not_found")
        earlier = previous.messages if previous is not None else []
        try:
            read = to_chat_request(body, earlier, found.get)
            check_chat_request(read.chat)
        except BadRequest as exc:
            return self.replies.refuse(exc, ResponsesFront())
        for note in read.notes:
            log.debug("responses: %s", note)
        keep = Keeping(self.store, owner, self.metrics, input_items(body["input"], found.get),
                       previous_id if previous is not None else None, earlier)
        front = ResponsesFront(read, body["model"], keep=keep)
        response = await self.chat.run(request, read.chat, front)
        if read.notes:
            set_header(response, DIAGNOSTIC_HEADER, "; ".join(read.notes))
        if front.keeping is None:
            return response
        return StoredFirst(response, front)

    async def _previous(self, owner: str, previous_id: Any) -> Stored | Response | None:
        """The stored answer ``previous_response_id`` names (with its conversation), or the 400 of a miss."""
        if previous_id is None:
            return None
        stored = await self.store.get(owner, previous_id, conversation=True) if isinstance(previous_id, str) else None
        if stored is not None:
            return stored
        return self._refuse(400, self._miss(f"previous_response_id {shown_id(previous_id)}") + "; send the whole "
                            "conversation as input instead", "previous_response_id", "previous_response_not_found")

    async def _stored(self, request: Request) -> Stored | Response:
        """The caller's stored answer the path names; else the 404 of a miss, or the 503 of a store that failed."""
        response_id = request.path_params["response_id"]
        try:
            stored = await self.store.get(self.owners.of(request.scope["headers"]), response_id)
        except StoreUnavailable as exc:
            return self._unavailable(exc)
        return stored if stored is not None else self._not_found(response_id)

    def _not_found(self, response_id: str) -> Response:
        return self._refuse(404, self._miss(f"response {shown_id(response_id)}"), "response_id")

    async def retrieve(self, request: Request) -> Response:
        """``GET /v1/responses/{id}``: the stored response object."""
        if request.query_params.get("stream") in ("true", "1"):
            return self._refuse(400, "stream: replaying a stored response as events is not supported here; ask "
                                "without stream", "stream")
        stored = await self._stored(request)
        return JSONBody(stored.response) if isinstance(stored, Stored) else stored

    async def input_items(self, request: Request) -> Response:
        """``GET /v1/responses/{id}/input_items``: a page of the request's input items (``limit``, ``order``,
        ``after``, ``before``), as OpenAI's API lists them."""
        query = request.query_params
        try:
            limit = int(query.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= _LIST_LIMIT:
            return self._refuse(400, f"limit must be an integer from 1 to {_LIST_LIMIT}", "limit")
        order = query.get("order", "desc")
        if order not in ("asc", "desc"):
            return self._refuse(400, "order must be 'asc' or 'desc'", "order")
        stored = await self._stored(request)
        if not isinstance(stored, Stored):
            return stored
        items = stored.input_items if order == "asc" else stored.input_items[::-1]
        ids = [item.get("id") for item in items]
        start = ids.index(query["after"]) + 1 if query.get("after") in ids else 0
        end = ids.index(query["before"]) if query.get("before") in ids else len(items)
        page = items[start:end][:limit]
        return JSONBody({"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                         "last_id": page[-1]["id"] if page else None, "has_more": start + len(page) < end})

    async def delete(self, request: Request) -> Response:
        """``DELETE /v1/responses/{id}``: forget the stored response and its items."""
        response_id = request.path_params["response_id"]
        try:
            deleted = await self.store.delete(self.owners.of(request.scope["headers"]), response_id)
        except StoreUnavailable as exc:
            return self._unavailable(exc)
        if not deleted:
            return self._not_found(response_id)
        return JSONBody({"id": response_id, "object": "response", "deleted": True})
