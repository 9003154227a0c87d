"""Rewriting an upstream answer: a whole completion decoded and rewritten, or an SSE stream rewritten
event by event, with tool calls parsed out of the text; and the checks an answer relayed untouched passes
(``check_completion``, ``UpstreamEvents``), so a broken upstream is the same error rewritten or not.

Invariants: a stream ends once, with ``[DONE]`` or an error event in the client's wire format,
never with a hang or a traceback; upstream text is read the same way streamed or whole (invalid
UTF-8 as U+FFFD, logged; surrogate escapes joined or replaced, never an error); every byte read passes the redactor before it is parsed; a
decode that could take more than a few milliseconds runs in a worker thread, so one huge
block does not stall the other streams; past the drain deadline (``drain``) a stream stops reading
and ends as a broken upstream would, then ``[DONE]``. The prompt progress the proxy asked llama.cpp for
(``plan``: ``return_progress``) never reaches a client: it only keeps the first-byte wait alive (``Clock.life``).
An answer relayed untouched goes on byte for byte when it is well formed: a whole body that is a JSON object,
a stream whose every event's data is JSON or ``[DONE]`` (checked, never re-encoded).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from time import perf_counter
from typing import Any, AsyncIterator, Mapping

import anyio
import anyio.to_thread
import httpx
import orjson

from ..wire.openai import rewrite_completion
from ..wire.sse import ChatStreamRewriter, dumps, error_body
from ..wire.surrogates import SURROGATE_ESCAPE, clean_value
from .drain import DRAIN_CODE, DRAIN_MESSAGE, Drain
from .metrics import StreamMeter
from .plan import ChatPlan
from .redaction import Redactor
from .body import ended, pieces as body_pieces
from .upstream import Clock, UpstreamTimeout

__all__ = ["UnusableResponse", "decode_completion", "check_completion", "rewrite_sse", "drained_end", "upstream_text",
           "UpstreamEvents", "OFFLOAD_BYTES"]

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
            raise _unusable(raw, exc) from None

    return await anyio.to_thread.run_sync(work) if len(raw) > OFFLOAD_BYTES else work()


def _unusable(raw: bytes, exc: BaseException) -> UnusableResponse:
    text = raw.decode("utf-8", "replace")[:2000]
    what = f"{type(exc).__name__}: {exc}"[:300]
    return UnusableResponse(f"upstream sent an unusable response ({what}): {text!r}")


def _loads(data: bytes) -> Any:
    """JSON as the rewriter reads it: orjson, else Python's json (NaN, integers past 64 bits, lone surrogate
    escapes; invalid UTF-8 as U+FFFD); ValueError if not JSON, RecursionError if too deep to read."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data.decode("utf-8", "replace"))


async def check_completion(raw: bytes) -> None:
    """A whole upstream answer relayed untouched must be a JSON object, as a rewritten one must:
    ``UnusableResponse`` if it is not (checked in a worker thread when it is large)."""
    def work() -> None:
        try:
            value = _loads(raw)
        except RecursionError:  # valid, only too deep for Python to read: passed on as it came
            return
        except ValueError as exc:
            raise _unusable(raw, exc) from None
        if not isinstance(value, dict):
            raise _unusable(raw, TypeError(f"a JSON {type(value).__name__}, not an object"))

    await anyio.to_thread.run_sync(work) if len(raw) > OFFLOAD_BYTES else work()


_PROGRESS = b'"prompt_progress"'
_END = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")  # an event's end: a line end, then an empty line


def _data(block: bytes) -> bytes | None:
    """The data of one SSE event (its ``data`` lines, joined by newlines); None when it has none (comments)."""
    if block.startswith(b"data: ") and b"\n" not in block and b"\r" not in block:  # (the usual event)
        return block[6:]
    values = []
    for line in block.splitlines():  # (bytes: at \n, \r\n and \r only, as SSE cuts lines)
        if line.startswith(b"data:"):
            value = line[5:]
            values.append(value[1:] if value.startswith(b" ") else value)
        elif line == b"data":
            values.append(b"")
    return b"\n".join(values) if values else None


def _says_nothing(chunk: dict[str, Any]) -> bool:
    """A chunk (its progress taken out) that says nothing a client needs: no usage, and choices with no delta but
    a role (llama.cpp puts ``{"role": "assistant", "content": null}`` in each progress chunk), no finish."""
    choices = chunk.get("choices", [])
    if chunk.get("usage") is not None or not isinstance(choices, list):
        return False
    for choice in choices:
        if not isinstance(choice, dict) or choice.get("finish_reason") is not None:
            return False
        delta = choice.get("delta", {})
        if (choice.get("logprobs") is not None or not isinstance(delta, dict)
                or any(v is not None for k, v in delta.items() if k != "role")):
            return False
    return True


class UpstreamEvents:
    """An upstream chat stream made fit to send on, event by event, each event's bytes as they came.

    ``feed`` returns the complete events among what has arrived; an event still arriving is held until its end
    (at most ``limit`` bytes), so a client never gets part of an event that turns out to be bad. With ``check``,
    each event's data must be JSON or ``[DONE]`` (as the rewriter reads it: orjson, then Python's json), checked
    and never re-encoded. With ``progress`` (the proxy asked llama.cpp for ``return_progress``), an event that
    carries ``prompt_progress`` is left out, or, when it says more than that, sent without it (re-encoded).
    After each feed, ``data`` tells whether it held any other data event, ``life`` whether it held only progress
    or part of an event. A bad event ends the stream: what came before it is returned, ``failed`` says why, and
    every later feed returns nothing.
    """

    __slots__ = ("check", "progress", "limit", "held", "data", "life", "failed")

    def __init__(self, *, check: bool = True, progress: bool = False, limit: int | None = None):
        self.check = check
        self.progress = progress
        self.limit = limit
        self.held = b""  # the start of an event whose end has not arrived
        self.data = self.life = False
        self.failed: str | None = None

    def feed(self, piece: bytes) -> bytes:
        self.data = self.life = False
        if self.failed is not None:
            return b""
        if (not self.held and piece.startswith(b"data: ") and piece.find(b"\n", 6) == len(piece) - 2
                and piece.endswith(b"\n\n") and b"\r" not in piece):  # one event of one line: a paced read
            return self._event(piece, piece[6:-2])
        before = len(self.held)
        buf = self.held + piece if before else piece
        start = max(before - 3, 0)  # an event's end cut between the held bytes and this piece is found too
        if b"\r" in buf:
            ends = [m.end() for m in _END.finditer(buf, start)]
            if ends and ends[-1] == len(buf) and buf.endswith(b"\r"):
                ends.pop()  # (the \n of a \r\n may be on its way: the event it ends waits for it)
            cut = ends[-1] if ends else 0
        else:
            found = buf.rfind(b"\n\n", start)
            cut = found + 2 if found >= 0 else 0
        self.held = buf[cut:]
        if self.limit is not None and len(self.held) > self.limit:
            self.held = b""
            self.failed = f"an upstream SSE event is longer than the limit of {self.limit} bytes"
            return b""
        self.life = bool(self.held) and not self.held.startswith(b":")
        return self._events(buf[:cut]) if cut else b""

    def close(self) -> bytes:
        """The end of the body: its last event, if its blank line never came (as the rewriter still reads it)."""
        rest, self.held = self.held, b""
        return self._events(rest) if rest and self.failed is None else b""

    def _events(self, complete: bytes) -> bytes:
        """``complete`` (whole events), but the progress; up to the first bad event."""
        kept: list[bytes] | None = None  # (None: every event so far is kept as it came)
        pos = 0
        for end in self._ends(complete):
            block = complete[pos:end]
            instead = self._event(block, _data(block))
            if self.failed is not None:
                return b"".join(kept) if kept is not None else complete[:pos]
            if instead is not block and kept is None:
                kept = [complete[:pos]]
            if kept is not None and instead:
                kept.append(instead)
            pos = end
        return complete if kept is None else b"".join(kept)

    @staticmethod
    def _ends(complete: bytes) -> list[int]:
        """Where each event of ``complete`` ends (its blank line included); the last one at its end."""
        if b"\r" in complete:
            ends = [m.end() for m in _END.finditer(complete)]
        else:
            ends = []
            pos = complete.find(b"\n\n")
            while pos >= 0:
                ends.append(pos + 2)
                pos = complete.find(b"\n\n", pos + 2)
        return ends if ends and ends[-1] == len(complete) else ends + [len(complete)]

    def _event(self, block: bytes, data: bytes | None) -> bytes:
        """``block`` (whose data is ``data``) itself, what to send instead (progress taken out: maybe nothing), or
        (``failed`` set) nothing."""
        if data is None:  # comments
            return block
        if b"[DONE]" in data and data.strip() == b"[DONE]":
            self.data = True
            return block
        progress = self.progress and _PROGRESS in data
        if not (self.check or progress):
            self.data = True
            return block
        try:
            value = _loads(data)
        except RecursionError:  # valid, only too deep for Python to read: passed on as it came
            value = None
        except ValueError:
            if self.check:
                self.failed = "upstream sent invalid JSON in its stream: " + repr(data[:200].decode("utf-8", "replace"))
                return b""
            self.data = True  # (not JSON: the rewriter says so)
            return block
        if not (progress and isinstance(value, dict) and "prompt_progress" in value):
            self.data = True
            return block
        self.life = True
        rest = {k: v for k, v in value.items() if k != "prompt_progress"}
        if _says_nothing(rest):
            return b""
        self.data = True
        return b"data: " + dumps(rest).encode() + b"\n\n"


async def rewrite_sse(resp: httpx.Response, clock: Clock, rewriter: ChatStreamRewriter, redactor: Redactor,
                      drain: Drain | None = None, meter: StreamMeter | None = None,
                      progress: UpstreamEvents | None = None) -> AsyncIterator[bytes]:
    """Upstream SSE -> rewritten SSE, one write per upstream read (events that arrive together
    leave together). Cancelled when the client goes away; the upstream closes with it. Past the
    ``drain`` deadline the stream ends properly: held text, an error event, the end of the stream.
    ``meter`` counts the stream (in flight, first byte, a sample of reads, upstream failures).
    ``progress`` (when the proxy asked for llama.cpp's prompt progress) takes it out before the rewriter reads."""
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
            if progress is not None:
                raw = progress.feed(raw)
                if progress.failed is not None:
                    yield rewriter.fail_bytes(progress.failed)
                    return
                if not raw:  # prompt progress only (or part of an event): the answer has not begun
                    if progress.life:
                        clock.life()
                    continue
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
            elif progress is not None and progress.life:
                clock.life()
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
            rest = progress.close() if progress is not None else b""
            if redact is not None:
                rest = redact.feed(rest) + redact.close() if rest else redact.close()
            return (rewriter.feed_bytes(rest) if rest else b"") + rewriter.end_bytes()

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
