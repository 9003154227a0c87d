"""One bounded exchange with an upstream: the request built, sent within the backend's slots and
deadlines, and its body read, relayed or handed to a streaming response; a backend that fails before its
first byte gives way to the next of the request's backends (``fallback``).

Invariants: every upstream request is bounded in time, size and number (``upstream``) and is
cancelled when its client goes away; its response is closed and its slot released exactly once,
however the exchange ends; nothing read from it reaches a client unredacted; past the drain deadline
(``drain``) a request still waiting gets a 503 and a relayed stream its proper end, never a cut; a request
goes on to another backend only while its client has received nothing (``fallback``).
"""

from __future__ import annotations

import asyncio
import codecs
import json
from dataclasses import dataclass
from functools import partial
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..wire.sse import dumps, encode_items, error_item
from ..wire.validation import BadRequest
from .body import limit_waits, pieces as body_pieces
from .config import Backend
from .access_log import record_of
from .drain import DRAIN_CODE, DRAIN_MESSAGE, Drain
from .fallback import failure_reason, skipped, status_reason
from .metrics import Metrics, StreamMeter
from .fronts import OPENAI, Front
from .masking import MaskedSSE, mask_json_bytes, mask_value
from .redaction import StreamRedactor
from .replies import CLIENT_GONE, Replies
from .rewrite import UpstreamEvents
from .transport import BackendPools
from .upstream import (Clock, Failure, Slot, Slots, UpstreamTimeout, forward_headers, next_piece, not_found_hint,
                       only_comments)

__all__ = ["Upstream", "Answer", "Attempt", "Attempts", "Resend", "ResponseTooLarge", "ERROR_BODY_BYTES"]

ERROR_BODY_BYTES = 64 * 1024  # how much of an upstream error body is read and relayed

# Builds the client's answer from an open upstream response; it owns the response and the slot.
Answer = Callable[[httpx.Response, Slot, Clock], Awaitable[Response]]
# From the body of an upstream 400, the request to send instead (once).
Resend = Callable[[bytes], httpx.Request]


@dataclass
class Attempt:
    """One backend's try at a request: what to send, how to answer from an open response, what to send instead of
    a 400 (``resend``), and what to do to the final response when this try gave it (``after``)."""

    backend: Backend
    req: httpx.Request
    answer: Answer
    resend: Resend | None = None
    after: Callable[[Response], None] | None = None


# A backend -> its attempt at the request, or the response to send instead (a refusal).
Attempts = Callable[[Backend], Awaitable["Attempt | Response"]]


class _Stopped(Exception):
    """The drain deadline passed while a relayed stream was between reads."""


class ResponseTooLarge(Exception):
    """The upstream body passed ``max_response_bytes``."""


class _Cleanup(Response):
    """A response that runs its cleanups after the wrapped response ends, however it ends."""

    def __init__(self, response: Response, *cleanups: Callable[[], Awaitable[None] | None]):  # noqa: super not called
        self.response = response
        self.cleanups = cleanups
        self.status_code = response.status_code
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.response(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                for cleanup in self.cleanups:
                    result = cleanup()
                    if result is not None:
                        await result


async def _until_disconnect(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


class Upstream:
    """The shared httpx client, the in-flight slots and the deadlines of one proxy's backends."""

    def __init__(self, replies: Replies, backends: list[Backend], max_response_bytes: int,
                 client: httpx.AsyncClient | None = None, *, keep_credentials: bool = True,
                 drain: Drain | None = None, metrics: Metrics | None = None):
        self.replies = replies
        self.drain = drain or Drain(float("inf"))
        self.metrics = metrics or Metrics()
        self.keep_credentials = keep_credentials  # False: the client's credentials are the proxy's own key
        self.redactor = replies.redactor
        self.max_response_bytes = max_response_bytes
        self.slots = Slots()
        self._own_client = client is None  # (else: the caller's client, its pool and its transport)
        self.client = client or httpx.AsyncClient(timeout=None, transport=BackendPools(
            (b.upstream, b.max_connections) for b in backends))

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    def build(self, backend: Backend, method: str, url: str, request: Request,
              headers: Mapping[str, str] | None = None, **body: Any) -> httpx.Request:
        """The upstream request; ``headers``: the client headers to forward, if not the request's own."""
        wait = min(backend.first_byte_timeout, backend.total_timeout)  # the longest wait for the head (and body)
        timeout = httpx.Timeout(wait, connect=backend.connect_timeout, pool=backend.connect_timeout)
        forwarded = forward_headers(request.headers if headers is None else headers, backend,
                                    keep_credentials=self.keep_credentials)
        forwarded.pop("accept-encoding", None)  # httpx asks for (and decodes) what it can read
        return self.client.build_request(method, url, headers=forwarded, timeout=timeout, **body)

    async def open(self, backend: Backend, req: httpx.Request) -> tuple[httpx.Response, Slot, Clock]:
        """Send ``req`` within the backend's slots and deadlines; the caller closes the response."""
        slot = self.slots.take(backend)
        clock = Clock(backend)
        try:
            with anyio.fail_after(backend.total_timeout):
                resp = await self.client.send(req, stream=True)
        except (TimeoutError, httpx.ReadTimeout):  # no head within total_timeout, or within first_byte_timeout
            slot.release()
            raise UpstreamTimeout(clock.why()) from None
        except BaseException:
            slot.release()
            raise
        # Once the answer has begun, a wait for more of it lasts read_timeout, not first_byte_timeout.
        clock.on_answer = partial(limit_waits, resp, min(backend.read_timeout, backend.total_timeout))
        return resp, slot, clock

    async def exchange(self, request: Request, backends: Sequence[Backend], attempt: Attempts,
                       front: Front = OPENAI) -> Response:
        """Answer from the first of ``backends`` that does not fail before its first byte (``fallback``).

        ``attempt(backend)`` makes that backend's ``Attempt`` (or the response to send instead: a refusal); its
        ``answer`` owns the upstream response and the slot: it releases them, or hands them to the streaming
        response it returns. Each try is cancelled if the client goes away first.
        """
        guard = self.drain.guard()
        guard.reading = True  # the whole exchange waits on the upstream: the drain may stop it anywhere
        record = record_of(request.scope)
        try:
            for n, backend in enumerate(backends):
                if guard.stopped:
                    return self._drained(front)
                request.state.streamparse_backend = backend.name  # the metrics' backend label
                if record is not None:
                    record.backend = backend.name
                made = await attempt(backend)
                if isinstance(made, Response):
                    return made
                response, why = await self._exchange(request, made, front)
                if why is None or n == len(backends) - 1:
                    if n:
                        self.metrics.fallback_answers.labels(backend.name, backends[0].name).inc()
                    if made.after is not None:
                        made.after(response)
                    return response
                skipped(self.metrics, record, backend, backends[n + 1], why)
            raise ValueError("no backend to try")  # (a chain has at least its first backend)
        except asyncio.CancelledError as exc:
            if not guard.owns(exc):
                raise
            return self._drained(front)
        finally:
            self.drain.release(guard)

    def _drained(self, front: Front) -> Response:
        return self.replies.error(503, DRAIN_MESSAGE, type_="overloaded_error", code=DRAIN_CODE, front=front)

    async def _exchange(self, request: Request, attempt: Attempt, front: Front) -> tuple[Response, str | None]:
        """One backend's try: the response, and why another backend may answer instead (None: this is the answer)."""
        replies = self.replies
        backend, req, resend = attempt.backend, attempt.req, attempt.resend
        result: Response | None = None
        why: str | None = None
        async with anyio.create_task_group() as tg:
            async def watch() -> None:
                await _until_disconnect(request)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            while result is None:
                try:
                    resp, slot, clock = await self.open(backend, req)
                except BadRequest as exc:
                    result = replies.refuse(exc, front)
                    why = "full" if exc.status == 503 else None
                except (httpx.HTTPError, UpstreamTimeout) as exc:
                    why = failure_reason(exc)
                    self.metrics.upstream_error(backend.name, "timeout" if why == "timeout" else "unreachable")
                    result = replies.connect_failure(exc, backend, front)
                else:
                    try:
                        if resp.status_code == 400 and resend is not None:  # refused: sent once more instead
                            req = resend(await self.error_body(resp, clock))
                            resend = None
                            await self.finish(resp, slot)
                        elif resp.status_code >= 400:
                            self.metrics.upstream_error(backend.name, "status")
                            why = status_reason(resp.status_code)
                            result = await self.error_reply(resp, backend, clock, front)
                            await self.finish(resp, slot)
                        else:
                            result = await attempt.answer(resp, slot, clock)
                    except BaseException:
                        with anyio.CancelScope(shield=True):
                            await self.finish(resp, slot)
                        raise
            tg.cancel_scope.cancel()
        return (result, why) if result is not None else (Response(status_code=CLIENT_GONE), None)

    async def error_reply(self, resp: httpx.Response, backend: Backend, clock: Clock,
                          front: Front = OPENAI) -> Response:
        """An upstream 4xx/5xx, its message kept (and redacted), in the client's error shape."""
        raw = await self.error_body(resp, clock)
        hint = not_found_hint(backend) if resp.status_code == 404 else ""
        try:
            data = mask_value(self.redactor, json.loads(self.redactor.data(raw)))[0]  # as the client will read it
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            if hint and isinstance(data["error"].get("message"), str):
                data["error"]["message"] += hint
            return front.error_response(resp.status_code, data)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return self.replies.error(resp.status_code, data["error"] + hint, code=resp.status_code, front=front)
        text = (raw.decode("utf-8", "replace") if data is None else dumps(data)).strip()[:2000] or resp.reason_phrase
        return self.replies.error(resp.status_code, f"upstream returned {resp.status_code}: {text}{hint}",
                                  code=resp.status_code, front=front)

    async def error_body(self, resp: httpx.Response, clock: Clock) -> bytes:
        """The first ``ERROR_BODY_BYTES`` of an error's body (empty when it cannot be read)."""
        try:
            return await self.read_all(resp, clock, ERROR_BODY_BYTES)
        except (ResponseTooLarge, UpstreamTimeout, httpx.HTTPError):
            return b""

    @staticmethod
    async def finish(resp: httpx.Response, slot: Slot) -> None:
        slot.release()
        await resp.aclose()

    def cleanup(self, response: Response, resp: httpx.Response, slot: Slot) -> Response:
        """``response`` (streaming from ``resp``) that closes ``resp`` and frees ``slot`` when it ends."""
        return _Cleanup(response, lambda: self.finish(resp, slot))

    async def read_whole(self, resp: httpx.Response, slot: Slot, clock: Clock, backend: Backend) -> bytes:
        """The whole upstream body (redacted), then the exchange is finished; Failure if it cannot be had."""
        try:
            return self.redactor.data(await self.read_all(resp, clock, self.max_response_bytes))
        except (ResponseTooLarge, UpstreamTimeout, httpx.HTTPError) as exc:
            self.metrics.upstream_error(backend.name, "timeout" if isinstance(exc, UpstreamTimeout) else "broken")
            raise Failure(504 if isinstance(exc, UpstreamTimeout) else 502,
                          f"upstream {backend.display}: {exc or type(exc).__name__}") from None
        finally:
            await self.finish(resp, slot)

    async def read_all(self, resp: httpx.Response, clock: Clock, limit: int) -> bytes:
        parts: list[bytes] = []
        size = 0
        pieces = body_pieces(resp)
        while (piece := await next_piece(pieces, clock)) is not None:
            size += len(piece)
            if size > limit:
                raise ResponseTooLarge(f"the upstream response is larger than the limit of {limit} bytes")
            parts.append(piece)
            clock.data()
        return b"".join(parts)

    def _unfit(self, message: str, redact: MaskedSSE | StreamRedactor) -> bytes:
        """The end of a relayed stream whose upstream sent an event that cannot go on (the rewriter's error)."""
        return redact.close() + encode_items([error_item(self.redactor.text(message))])

    async def relay(self, resp: httpx.Response, clock: Clock, *, sse: bool, json_body: bool = False,
                    meter: StreamMeter | None = None, events: UpstreamEvents | None = None) -> AsyncIterator[bytes]:
        """The upstream body unchanged (but redacted), within the deadlines; for SSE, a timeout
        ends the stream with an error event, otherwise the body is cut short (the client sees it).
        SSE is text: invalid UTF-8 in it becomes U+FFFD, as on every other path.

        With ``events`` (a chat answer relayed untouched), SSE goes on whole events at a time, checked and
        cleared of the prompt progress the proxy asked for (``UpstreamEvents``): an event that is not JSON ends
        the stream with an error event, as on the rewritten path. Without it (any other path), bytes go on as
        they come. With secrets to keep, what the client will decode is masked: SSE event by event
        (``MaskedSSE``), a JSON body whole (read up to ``max_response_bytes``), anything else as bytes. Past the
        drain deadline an SSE relay ends with an error event and ``[DONE]`` (the event it was in closed first)."""
        if self.redactor and json_body and not sse:
            yield mask_json_bytes(self.redactor, await self.read_all(resp, clock, self.max_response_bytes))
            return
        redact: MaskedSSE | StreamRedactor = MaskedSSE(self.redactor) if self.redactor and sse else self.redactor.stream()
        text = codecs.getincrementaldecoder("utf-8")("replace") if sse else None  # SSE is UTF-8 text
        pieces = body_pieces(resp)
        guard = self.drain.guard() if sse else None
        boundary = True  # what was sent so far ends between two SSE events
        if meter is not None:
            meter.open()
        try:
            while guard is None or not guard.stopped:
                if guard:
                    guard.reading = True
                raw = await next_piece(pieces, clock)
                if guard:
                    guard.reading = False
                if raw is None:
                    break
                piece = text.decode(raw).encode() if text else raw
                if events is not None:
                    piece = events.feed(piece)
                    if events.data:
                        clock.data()
                    elif events.life:
                        clock.life()
                elif not (sse and only_comments(raw)):
                    clock.data()
                out = redact.feed(piece)
                if out:
                    boundary = out.endswith((b"\n\n", b"\r\r", b"\r\n\r\n"))
                    if meter is not None and not meter.first_sent:
                        meter.sent()
                yield out
                if events is not None and events.failed is not None:
                    yield self._unfit(events.failed, redact)
                    return
            else:
                raise _Stopped
            rest = text.decode(b"", final=True).encode() if text else b""
            if events is not None:
                rest = events.feed(rest) + events.close() if rest else events.close()
                if events.failed is not None:
                    yield redact.feed(rest) + self._unfit(events.failed, redact)
                    return
            yield redact.feed(rest) + redact.close() if rest else redact.close()
        except (UpstreamTimeout, httpx.HTTPError) as exc:
            if not sse:
                raise
            if meter is not None and meter.backend:
                meter.metrics.upstream_error(meter.backend, "timeout" if isinstance(exc, UpstreamTimeout) else "broken")
            message = self.redactor.text(f"upstream stream broke: {type(exc).__name__}: {exc}")
            yield encode_items([error_item(message)])
        except (_Stopped, asyncio.CancelledError) as exc:
            if isinstance(exc, asyncio.CancelledError) and (guard is None or not guard.owns(exc)):
                raise
            # The drain ended a relayed stream: close the event it was in, then an error event and [DONE].
            yield (b"" if boundary else b"\n\n") + encode_items(
                [error_item(DRAIN_MESSAGE, type_="server_error", code=DRAIN_CODE), ("done", "[DONE]")])
        finally:
            if guard:
                self.drain.release(guard)
            if meter is not None:
                meter.close()
