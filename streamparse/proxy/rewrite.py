"""Rewriting an upstream answer: a whole completion decoded and rewritten, or an SSE stream rewritten
event by event, with tool calls parsed out of the text.

Invariants: a stream ends once, with ``[DONE]`` or an error event in the client's wire format,
never with a hang or a traceback; upstream text is read the same way streamed or whole (invalid
UTF-8 as U+FFFD, logged; surrogate escapes joined or replaced, never an error); every byte read passes the redactor before it is parsed; a
decode that could take more than a few milliseconds runs in a worker thread, so one huge
block does not stall the other streams; past the drain deadline (``drain``) a stream stops reading
and ends as a broken upstream would, then ``[DONE]``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from time import perf_counter
from typing import Any, AsyncIterator, Mapping

import anyio
import anyio.to_thread
import httpx

from ..wire.openai import rewrite_completion
from ..wire.sse import ChatStreamRewriter, error_body
from ..wire.surrogates import SURROGATE_ESCAPE, clean_value
from .drain import DRAIN_CODE, DRAIN_MESSAGE, Drain
from .metrics import StreamMeter
from .plan import ChatPlan
from .redaction import Redactor
from .coalesce import ended, pieces as body_pieces
from .upstream import Clock, UpstreamTimeout

__all__ = ["UnusableResponse", "decode_completion", "rewrite_sse", "drained_end", "upstream_text", "OFFLOAD_BYTES"]

log = logging.getLogger("streamparse.server")
OFFLOAD_BYTES = 64 * 1024  # a piece (or a held block) this large is decoded in a worker thread


class UnusableResponse(ValueError):
    """The upstream's whole-body answer is not a chat completion we can read."""


def upstream_text(raw: bytes) -> str:
    """An upstream body as text: invalid UTF-8 becomes U+FFFD (and is logged), as in a stream."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.warning("upstream sent invalid UTF-8 (%s); replaced by U+FFFD", exc.reason)
        return raw.decode("utf-8", "replace")


async def decode_completion(raw: bytes, request: Mapping[str, Any], plan: ChatPlan) -> dict[str, Any]:
    """A whole upstream completion, rewritten (in a worker thread when it is large)."""
    def work() -> dict[str, Any]:
        try:
            data = json.loads(upstream_text(raw))
            if SURROGATE_ESCAPE.search(raw):  # pairs were joined by json; lone halves become U+FFFD
                data = clean_value(data)
            return rewrite_completion(data, plan.tools, **plan.rewriter_options(request))
        except (ValueError, AttributeError, TypeError, RecursionError) as exc:
            text = raw.decode("utf-8", "replace")[:2000]
            what = f"{type(exc).__name__}: {exc}"[:300]
            raise UnusableResponse(f"upstream sent an unusable response ({what}): {text!r}") from None

    return await anyio.to_thread.run_sync(work) if len(raw) > OFFLOAD_BYTES else work()


async def rewrite_sse(resp: httpx.Response, clock: Clock, rewriter: ChatStreamRewriter, redactor: Redactor,
                      drain: Drain | None = None, meter: StreamMeter | None = None) -> AsyncIterator[bytes]:
    """Upstream SSE -> rewritten SSE, one write per upstream read (events that arrive together
    leave together). Cancelled when the client goes away; the upstream closes with it. Past the
    ``drain`` deadline the stream ends properly: held text, an error event, the end of the stream.
    ``meter`` counts the stream (in flight, first byte, a sample of reads, upstream failures)."""
    redact = redactor.stream() if redactor else None  # (no secrets: nothing to look for per read)
    pieces = body_pieces(resp)
    guard = (drain or _NO_DRAIN).guard()
    if meter is not None:
        meter.open()
    started = 0.0
    try:
        while not guard.stopped:
            guard.reading = True
            try:  # (upstream.next_piece, inlined: one coroutine less per read)
                raw = await pieces.__anext__()
            except StopAsyncIteration:
                guard.reading = False
                break
            except httpx.ReadTimeout:
                raise UpstreamTimeout(clock.why()) from None
            guard.reading = False
            if clock.budget() <= 0:
                raise UpstreamTimeout(clock.why())
            timed = meter is not None and meter.sample()
            if timed:
                started = perf_counter()
            piece = redact.feed(raw) if redact is not None else raw
            data = rewriter.feed_lone(piece)  # (the usual paced read, in one step)
            if data is None:
                decoded = rewriter.read(piece)
                if len(raw) > OFFLOAD_BYTES or rewriter.may_be_slow(decoded):
                    data = await anyio.to_thread.run_sync(rewriter.write, decoded)
                else:
                    data = rewriter.write(decoded)
            if rewriter.saw_data:
                clock.data()
            if timed:
                meter.worked(started)  # type: ignore[union-attr]
            if data:
                if meter is not None and not meter.first_sent:
                    meter.sent()
                yield data
            if rewriter.finished:
                if rewriter.upstream_done:  # its [DONE]: closing reads the rest, and its connection is kept
                    ended(resp)  # (a stream that failed is closed at once: the upstream may still be writing)
                return
        else:
            raise _Drained

        def end() -> bytes:
            return (rewriter.feed_bytes(redact.close()) if redact is not None else b"") + rewriter.end_bytes()

        data = await anyio.to_thread.run_sync(end) if rewriter.may_be_slow() else end()
    except UpstreamTimeout as exc:
        log.warning("upstream %s: %s", resp.request.url.host, exc)
        _failed(meter, "timeout")
        data = rewriter.fail_bytes(str(exc))
    except httpx.HTTPError as exc:
        _failed(meter, "broken")
        data = rewriter.fail_bytes(redactor.text(f"upstream stream broke: {type(exc).__name__}: {exc}"))
    except (_Drained, asyncio.CancelledError) as exc:
        if isinstance(exc, asyncio.CancelledError) and not guard.owns(exc):
            raise  # the client went away (or the server's backstop): nothing more to send
        data = drained_end(rewriter)
    except Exception as exc:  # a bug of ours must end the stream clearly, not hang it
        log.exception("rewriting the upstream stream failed")
        message = redactor.text(f"streamparse failed: {type(exc).__name__}: {exc}")
        data = rewriter.wire.encode([("error", error_body(message, type_="server_error"))])
    finally:
        (drain or _NO_DRAIN).release(guard)
        if meter is not None:
            meter.close()
    if data:
        yield data


def _failed(meter: StreamMeter | None, kind: str) -> None:
    if meter is not None and meter.backend:
        meter.metrics.upstream_error(meter.backend, kind)


class _Drained(Exception):
    """The drain deadline passed while the stream was between reads."""


_NO_DRAIN = Drain(float("inf"))  # a stream outside an app (tests, embedders): never drained


def drained_end(rewriter: ChatStreamRewriter) -> bytes:
    """The end of a stream the drain stopped: what the parser held, an error event, then (OpenAI) ``[DONE]``."""
    outputs = rewriter.fail(DRAIN_MESSAGE)
    if outputs and outputs[-1][0] == "error":
        outputs[-1] = ("error", error_body(DRAIN_MESSAGE, type_="server_error", code=DRAIN_CODE))
    return rewriter.wire.encode(outputs + [("done", None)])
