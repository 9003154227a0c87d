"""The proxy's chat pipeline, shared by ``/v1/chat/completions`` and ``/v1/messages``.

One OpenAI chat request in (the client's, or an Anthropic request translated by
``anthropic.request``), one upstream exchange, the answer rewritten by the
OpenAI adapter and written in the client's shape by its front (``fronts``).

For a backend with ``tool_prompt`` (it ignores ``tools``), ``prompting`` turns
the request into one such a backend can read, and the answer is parsed with
the prompted dialect first.

Invariants: a request whose ``tool_choice`` demands a call never ends in a silent
``stop`` without one: either one retry (``tool_prompt_retry``) or a diagnostic
(the ``x-streamparse-diagnostic`` header, or an SSE comment before the end of a
stream); at most two upstream requests per client request.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping

import anyio
import anyio.to_thread
import httpx
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response

from .config import Backend
from .fronts import OPENAI, Front
from ..wire.openai import completion_to_chunks, rewrite_completion, should_parse
from ..prompting.requests import ToolChoice, corrective_message, prompt_request
from ..wire.sse import ChatStreamRewriter, Output, error_body
from .upstream import Clock, Failure, Slot, UpstreamTimeout, next_piece, upstream_url
from ..wire.validation import BadRequest, check_chat_request

if TYPE_CHECKING:
    from .app import Proxy

__all__ = ["ChatPlan", "plan_chat", "ChatPipeline", "DIAGNOSTIC_HEADER"]

log = logging.getLogger("streamparse.server")

OFFLOAD_BYTES = 64 * 1024  # a piece (or a held block) this large is decoded in a worker thread
SSE_PING_SECONDS = 15
DIAGNOSTIC_HEADER = "x-streamparse-diagnostic"


class UnusableResponse(ValueError):
    """The upstream's whole-body answer is not a chat completion we can read."""


@dataclass
class ChatPlan:
    """What goes upstream for one chat request, and how its answer is read."""

    upstream: dict[str, Any]  # the upstream request body
    tools: list[Any] | None  # what the answer is parsed against
    options: dict[str, Any] | None  # parser options; None: the answer needs no parsing
    unmet: str | None  # said when the answer holds no call although the request demanded one
    retry: str | None  # the corrective message for one retry (tool_prompt_retry), else None


def plan_chat(payload: Mapping[str, Any], backend: Backend) -> ChatPlan:
    """The upstream request and parsing for ``payload`` on ``backend``."""
    if backend.tool_prompt:
        prompted = prompt_request(payload, backend.tool_prompt, others=backend.dialects)
        upstream, tools, choice = prompted.payload, prompted.tools, prompted.choice
        options = {**backend.parser_options(), **prompted.parser_options()} if prompted.parse else None
    else:
        upstream, tools, choice = dict(payload), None, ToolChoice.from_request(payload)
        parse = should_parse(None, payload, parse_without_tools=backend.parse_without_tools)
        options = backend.parser_options() if parse else None
    if "model" in payload:
        upstream["model"] = backend.upstream_model(payload["model"])
    unmet = retry = None
    if choice.must_call and options is not None:
        wanted = f"a call to {choice.name!r}" if choice.mode == "named" else "a tool call"
        unmet = f"no_tool_call: tool_choice demanded {wanted}, and the model answered without one"
        if backend.tool_prompt and backend.tool_prompt_retry:
            retry = corrective_message(choice, backend.tool_prompt, tools or payload.get("tools"))
    return ChatPlan(upstream, tools, options, unmet, retry)


def _has_call(completion: Mapping[str, Any]) -> bool:
    choices = completion.get("choices")
    return isinstance(choices, list) and any(
        isinstance(c, dict) and isinstance(c.get("message"), dict) and c["message"].get("tool_calls") for c in choices)


def _add_usage(first: Mapping[str, Any], second: dict[str, Any]) -> None:
    """Both answers were paid for: the client sees the sum."""
    a, b = first.get("usage"), second.get("usage")
    if isinstance(a, dict) and isinstance(b, dict):
        second["usage"] = {k: a.get(k, 0) + v if isinstance(v, int) and isinstance(a.get(k, 0), int) else v
                           for k, v in b.items()}


class ChatPipeline:
    """The chat handlers of one proxy (its config, client, slots and redactor)."""

    def __init__(self, proxy: Proxy):
        self.proxy = proxy

    async def completions(self, request: Request) -> Response:
        """``POST /v1/chat/completions``."""
        payload = await self.proxy.read_json(request)
        if isinstance(payload, Response):
            return payload
        try:
            check_chat_request(payload)
        except BadRequest as exc:
            return self.proxy.refuse(exc)
        return await self.run(request, payload, OPENAI)

    async def run(self, request: Request, payload: Mapping[str, Any], front: Front,
                  headers: Mapping[str, str] | None = None) -> Response:
        """Forward one checked chat request and answer in ``front``'s shape (``headers``: what to forward
        instead of the request's own)."""
        proxy = self.proxy
        backend = proxy.config.backend_for(payload.get("model"))
        try:
            plan = plan_chat(payload, backend)
        except ValueError as exc:  # a request the prompt cannot be written for
            return proxy.refuse(BadRequest(str(exc)), front)
        stream = payload.get("stream") is True
        if plan.retry is not None:  # the answer is checked whole before anything is sent
            plan.upstream.pop("stream_options", None)
            plan.upstream["stream"] = False
        url = upstream_url(backend, "/chat/completions")

        async def answer(resp: httpx.Response, slot: Slot, clock: Clock) -> Response:
            is_sse = resp.headers.get("content-type", "").startswith("text/event-stream")
            if stream and is_sse:
                if plan.options is None and front.relay_unparsed:
                    body = proxy.relay(resp, clock, sse=True)
                else:
                    rewriter = ChatStreamRewriter(plan.tools, request=payload, wire=front.wire(), unmet=plan.unmet,
                                                  max_event_chars=proxy.config.max_event_bytes,
                                                  **(plan.options or {"dialects": []}))
                    body = self.rewrite_sse(resp, clock, rewriter)
                return proxy.cleanup(EventSourceResponse(body, ping=SSE_PING_SECONDS, sep="\n"), resp, slot)
            try:
                raw = await proxy.read_whole(resp, slot, clock, backend)
                if not stream and plan.options is None and front.relay_unparsed:
                    return Response(raw, status_code=resp.status_code, media_type="application/json")
                completion = await self.decode(raw, payload, plan)
                if plan.retry is not None and not _has_call(completion):
                    completion = await self.retry(request, backend, url, payload, plan, completion, front, headers)
            except Failure as failure:
                return proxy.error(failure.status, str(failure), code=failure.code, front=front)
            except UnusableResponse as exc:
                return self.unusable(str(exc), stream, front)
            except _Refused as refused:
                return refused.response
            extra = {DIAGNOSTIC_HEADER: plan.unmet} if plan.unmet and not _has_call(completion) else {}
            if stream:  # asked to stream, the answer came whole: send it as a stream anyway
                outputs: list[Output] = [("chunk", c) for c in completion_to_chunks(completion)]
                outputs += [("comment", plan.unmet)] if extra else []
                return EventSourceResponse(iter([front.wire().encode(outputs + [("done", None)])]), sep="\n",
                                           headers=extra)
            return front.completion_response(completion, resp.status_code, extra)

        req = proxy.build(backend, "POST", url, request, headers=headers, json=plan.upstream)
        return await proxy.exchange(request, backend, req, answer, front)

    def unusable(self, message: str, stream: bool, front: Front) -> Response:
        if stream:
            data = front.wire().encode([("error", error_body(message, code="upstream_bad_response"))])
            return EventSourceResponse(iter([data]), sep="\n")
        return self.proxy.error(502, message, code="upstream_bad_response", front=front)

    async def retry(self, request: Request, backend: Backend, url: str, payload: Mapping[str, Any], plan: ChatPlan,
                    first: dict[str, Any], front: Front, headers: Mapping[str, str] | None) -> dict[str, Any]:
        """The one retry: the first answer and a corrective message appended; its answer is final."""
        choices = first.get("choices")
        message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        said = message.get("content") if isinstance(message, dict) else None
        body = dict(plan.upstream)
        body["messages"] = [*plan.upstream["messages"], {"role": "assistant", "content": said or "(no answer)"},
                            {"role": "user", "content": plan.retry}]
        log.info("tool_choice demanded a call and the answer had none: retrying once")
        proxy = self.proxy
        resp, slot, clock = await proxy.open(backend, proxy.build(backend, "POST", url, request, headers=headers,
                                                                    json=body))
        try:
            if resp.status_code >= 400:
                raise _Refused(await proxy.upstream_error(resp, backend, clock, front))
        except BaseException:
            await proxy.finish(resp, slot)
            raise
        raw = await proxy.read_whole(resp, slot, clock, backend)
        second = await self.decode(raw, payload, plan)
        _add_usage(first, second)
        return second

    async def decode(self, raw: bytes, request: Mapping[str, Any], plan: ChatPlan) -> dict[str, Any]:
        """A whole upstream completion, rewritten (in a worker thread when it is large)."""
        def work() -> dict[str, Any]:
            try:
                return rewrite_completion(json.loads(raw), plan.tools, request=request,
                                          **(plan.options or {"dialects": []}))
            except (ValueError, AttributeError, TypeError, RecursionError) as exc:
                text = raw.decode("utf-8", "replace")[:2000]
                what = f"{type(exc).__name__}: {exc}"[:300]
                raise UnusableResponse(f"upstream sent an unusable response ({what}): {text!r}") from None

        return await anyio.to_thread.run_sync(work) if len(raw) > OFFLOAD_BYTES else work()

    async def rewrite_sse(self, resp: httpx.Response, clock: Clock, rewriter: ChatStreamRewriter
                          ) -> AsyncIterator[bytes]:
        """Upstream SSE -> rewritten SSE, one write per upstream read (events that arrive together
        leave together). Cancelled when the client goes away; the upstream closes with it."""
        redactor = self.proxy.redactor
        redact = redactor.stream()
        pieces = resp.aiter_bytes()
        try:
            while (raw := await next_piece(pieces, clock)) is not None:
                decoded = rewriter.read(redact.feed(raw))
                if len(raw) > OFFLOAD_BYTES or rewriter.may_be_slow(decoded):
                    data = await anyio.to_thread.run_sync(rewriter.write, decoded)
                else:
                    data = rewriter.write(decoded)
                if rewriter.saw_data:
                    clock.data()
                if data:
                    yield data
                if rewriter.finished:
                    return

            def end() -> bytes:
                return rewriter.feed_bytes(redact.close()) + rewriter.end_bytes()

            data = await anyio.to_thread.run_sync(end) if rewriter.may_be_slow() else end()
        except UpstreamTimeout as exc:
            log.warning("upstream %s: %s", resp.request.url.host, exc)
            data = rewriter.fail_bytes(str(exc))
        except httpx.HTTPError as exc:
            data = rewriter.fail_bytes(redactor.text(f"upstream stream broke: {type(exc).__name__}: {exc}"))
        except Exception as exc:  # a bug of ours must end the stream clearly, not hang it
            log.exception("rewriting the upstream stream failed")
            message = redactor.text(f"streamparse failed: {type(exc).__name__}: {exc}")
            data = rewriter.wire.encode([("error", error_body(message, type_="server_error"))])
        if data:
            yield data


class _Refused(Exception):
    """The retry's upstream answered with an error: that error is the answer."""

    def __init__(self, response: Response):
        self.response = response
