"""One chat request through the proxy, shared by ``/v1/chat/completions``, ``/v1/messages`` and ``/v1/responses``.

A checked OpenAI chat request (the client's, or one translated by ``messages`` or ``responses``)
flows down one path: **plan** (``plan``: the upstream body, tool prompting, the parser options)
-> **upstream exchange** (``exchange``) -> **rewrite** (``rewrite``: calls parsed out of the text)
-> **respond** (the client's ``front``: OpenAI or Anthropic, stream or JSON).

With ``constrain`` (and ``tool_prompt``), the plan carries a decoding constraint for the backend's engine
(``engines``); the ``x-streamparse-constraint`` header says what became of it. The backend's chat template
(``chat_templates``: asked of the backend, or read from a path) and what it decides for the request's kwargs go
into the plan, where the operator's own settings win. A streamed request to a backend
known to be llama.cpp's server asks for its prompt progress (``plan``), which keeps the first-byte wait alive and
never reaches the client (``rewrite``); once the upstream's head has come (recent llama.cpp builds send it at
once, older ones with the first progress event), the client's stream gets its keep-alive pings while the answer
has not begun (``sse_out``).
An answer that needs no parsing goes on as it came (OpenAI front), once checked as the rewritten path would read
it: a whole body must be a JSON object (else a 502), each streamed event's data JSON (else an error event).

Invariants: what the client reads is masked as it will decode it (``masking``), streamed or whole;
a request whose ``tool_choice`` demands a call never ends in a silent ``stop``
without one: either one retry (``tool_prompt_retry``) or a diagnostic (the
``x-streamparse-diagnostic`` header, or an SSE comment before the end of a stream); a constraint never
fails a request: a 400 to a constrained request sends it once more without the constraint (logged, and
said in the header); at most two upstream requests per backend tried, plus that one, and backends are tried in
turn only while nothing has reached the client (``fallback``);
nothing here calls back into the layers above it.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import httpx
from starlette.requests import Request
from starlette.responses import Response

from ..wire.completion import Completion
from ..wire.diagnostics import DIAGNOSTICS_HEADER, comment_text
from ..wire.openai import completion_to_chunks
from ..wire.sse import ChatStreamRewriter, Output, error_body
from ..wire.validation import BadRequest
from .config import Backend, ProxyConfig
from .chat_templates import ChatTemplates
from .engines import Engines
from .access_log import record_of
from .exchange import Attempt, Upstream
from .fronts import Front
from .metrics import STARTED, StreamMeter
from .masking import MaskingWire, mask_json_bytes, mask_value
from .plan import ChatPlan, plan_chat
from .replies import CLIENT_GONE
from .rewrite import UnusableResponse, UpstreamEvents, check_completion, decode_completion, rewrite_sse, upstream_text
from .sse_out import Keepalive, SSEResponse
from .upstream import CREDENTIALS, Clock, Failure, Slot, forward_headers, upstream_url

__all__ = ["ChatPipeline", "DIAGNOSTIC_HEADER", "CONSTRAINT_HEADER", "set_header"]

log = logging.getLogger("streamparse.server")

SSE_PING_SECONDS = 15
DIAGNOSTIC_HEADER = "x-streamparse-diagnostic"
CONSTRAINT_HEADER = "x-streamparse-constraint"  # "<engine> <form> (<dialect>)", or "dropped (400 from upstream)"


def _has_call(completion: Mapping[str, Any]) -> bool:
    choices = completion.get("choices")
    return isinstance(choices, list) and any(
        isinstance(c, dict) and isinstance(c.get("message"), dict) and c["message"].get("tool_calls") for c in choices)


def _call_count(completion: Mapping[str, Any]) -> int:
    choices = completion.get("choices")
    return sum(len(c["message"].get("tool_calls") or ()) for c in choices if isinstance(c, dict)
               and isinstance(c.get("message"), dict)) if isinstance(choices, list) else 0


def _add_usage(first: Mapping[str, Any], second: dict[str, Any]) -> None:
    """Both answers were paid for: the client sees the sum."""
    a, b = first.get("usage"), second.get("usage")
    if isinstance(a, dict) and isinstance(b, dict):
        second["usage"] = {k: a.get(k, 0) + v if isinstance(v, int) and isinstance(a.get(k, 0), int) else v
                           for k, v in b.items()}


def _first_content(completion: Mapping[str, Any]) -> Any:
    choices = completion.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = first.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _utf8(raw: bytes) -> bytes:
    """A relayed body as UTF-8: invalid bytes become U+FFFD (and are logged), as everywhere else."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return upstream_text(raw).encode()
    return raw


def set_header(response: Response, name: str, value: str) -> None:
    """``name: value`` on ``response`` (or on the response a cleanup wrapper holds) before it is sent; a value
    already there is kept, and the new one follows it after ``"; "``."""
    inner = getattr(response, "response", response)
    if isinstance(inner, Response) and response.status_code != CLIENT_GONE:
        before = inner.headers.get(name)
        inner.headers[name] = f"{before}; {value}" if before else value


class _Refused(Exception):
    """The retry's upstream answered with an error: that error is the answer."""

    def __init__(self, response: Response):
        self.response = response


class ChatPipeline:
    """Plan -> upstream exchange -> rewrite -> respond, for the chat requests of one proxy."""

    def __init__(self, config: ProxyConfig, upstream: Upstream):
        self.config = config
        self.upstream = upstream
        self.replies = upstream.replies
        self.engines = Engines(upstream.client)
        self.templates = ChatTemplates(upstream.client, config.backends, clean=upstream.redactor.text)

    async def run(self, request: Request, payload: Mapping[str, Any], front: Front,
                  headers: Mapping[str, str] | None = None) -> Response:
        """Forward one checked chat request and answer in ``front``'s shape (``headers``: what to forward
        instead of the request's own): to the backend its model routes to, else to that one's fallbacks."""
        async def attempt(backend: Backend) -> Attempt | Response:
            return await self.attempt(request, payload, front, headers, backend)

        backends = self.config.chain(self.config.backend_for(payload.get("model")))
        return await self.upstream.exchange(request, backends, attempt, front)

    async def attempt(self, request: Request, payload: Mapping[str, Any], front: Front,
                      headers: Mapping[str, str] | None, backend: Backend) -> Attempt | Response:
        """The request planned for ``backend`` (or the refusal to send instead)."""
        engine = setup = None
        if backend.constrain != "off" or backend.chat_template != "off":
            probe = self._credentials(request, headers, backend)  # what the proxy's own asks present
            if backend.constrain != "off":
                engine = await self.engines.engine(backend, probe)
            if backend.chat_template != "off" and (found := await self.templates.for_request(backend, payload, probe)):
                setup = await self.templates.setup_for(found, payload.get("tools"))
        try:
            plan = plan_chat(payload, backend, engine, progress=self.engines.llamacpp(backend), template=setup)
        except ValueError as exc:  # a request the prompt cannot be written for
            return self.replies.refuse(BadRequest(str(exc)), front)
        if engine is not None and plan.constraint is None:
            log.debug("backend %r: no constraint for this request: %s", backend.name, plan.why_unconstrained)
        url = upstream_url(backend, "/chat/completions")
        stream = payload.get("stream") is True
        upstream = self.upstream
        record = record_of(request.scope)

        async def answer(resp: httpx.Response, slot: Slot, clock: Clock) -> Response:
            self.engines.saw(backend, resp.headers)
            if stream and resp.headers.get("content-type", "").startswith("text/event-stream"):
                meter = upstream.metrics.stream(front.name, request.scope.get(STARTED), backend.name, record)
                return upstream.cleanup(self.stream_response(resp, clock, payload, plan, front, meter), resp, slot)
            try:
                raw = await upstream.read_whole(resp, slot, clock, backend)
                if not stream and plan.relayable and front.relay_unparsed:
                    await check_completion(raw)  # as the rewritten path would read it: a JSON object
                    return Response(_utf8(mask_json_bytes(upstream.redactor, raw)), status_code=resp.status_code,
                                    media_type="application/json")
                completion = await decode_completion(raw, payload, plan)
                if plan.retry is not None and not _has_call(completion):
                    completion = await self.retry(request, url, payload, plan, completion, front, headers, backend)
                # a whole answer: no dialect at hand
                upstream.metrics.calls("unknown", _call_count(completion), record)
                if record is not None and isinstance(completion, Completion):
                    record.diagnostics += [str(d.get("code")) for d in completion.diagnostics]
                if upstream.redactor:  # as the client will read it: decoded strings (escapes spell secrets too)
                    mask_value(upstream.redactor, completion)
            except Failure as failure:
                return self.replies.error(failure.status, str(failure), code=failure.code, front=front)
            except UnusableResponse as exc:
                return self.unusable(str(exc), stream, front)
            except _Refused as refused:
                return refused.response
            return self.whole_response(completion, resp.status_code, stream, plan, front)

        try:
            req = upstream.build(backend, "POST", url, request, headers=headers, json=plan.upstream)
        except (ValueError, TypeError) as exc:  # a checked request should always encode; never a 500 if not
            return self.replies.refuse(BadRequest(f"request cannot be forwarded as JSON: {exc}"), front)
        if plan.constraint is None:
            return Attempt(backend, req, answer)
        said = f"{plan.constraint.backend} {plan.constraint.form} ({plan.constraint.dialect})"
        log.debug("backend %r: %s", backend.name, plan.constraint.description)

        def resend(refusal: bytes) -> httpx.Request:
            nonlocal said
            log.warning("backend %r refused the %s constraint (400: %s); sent again without it", backend.name,
                        plan.constraint.backend if plan.constraint else "?", upstream.redactor.text(
                            refusal.decode("utf-8", "replace").strip()[:300]))
            plan.drop_constraint()
            said = "dropped (400 from upstream)"
            return upstream.build(backend, "POST", url, request, headers=headers, json=plan.upstream)

        return Attempt(backend, req, answer, resend, lambda response: set_header(response, CONSTRAINT_HEADER, said))

    def _credentials(self, request: Request, headers: Mapping[str, str] | None, backend: Backend) -> dict[str, str]:
        """The credentials this request forwards to ``backend``: what an engine probe presents."""
        sent = forward_headers(request.headers if headers is None else headers, backend,
                               keep_credentials=self.upstream.keep_credentials)
        return {k: v for k, v in sent.items() if k.lower() in CREDENTIALS}

    def stream_response(self, resp: httpx.Response, clock: Clock, payload: Mapping[str, Any], plan: ChatPlan,
                        front: Front, meter: StreamMeter | None = None) -> Response:
        """The upstream stream, rewritten (or relayed, when nothing needs parsing), as the client's stream."""
        limit = self.config.max_event_bytes
        if plan.relayable and front.relay_unparsed:
            events = UpstreamEvents(check=True, progress=plan.progress, limit=limit)
            body = self.upstream.relay(resp, clock, sse=True, meter=meter, events=events)
        else:
            redactor = self.upstream.redactor
            inner = front.wire()
            keepalive = inner if isinstance(inner, Keepalive) else None
            wire = MaskingWire(inner, redactor) if redactor else inner
            rewriter = ChatStreamRewriter(plan.tools, wire=wire, unmet=plan.unmet,
                                          max_event_chars=self.config.max_event_bytes,
                                          on_events=meter.events if meter is not None else None,
                                          **plan.rewriter_options(payload))
            progress = UpstreamEvents(check=False, progress=True, limit=limit) if plan.progress else None
            body = rewrite_sse(resp, clock, rewriter, self.upstream.redactor, self.upstream.drain, meter, progress)
            return SSEResponse(body, ping=SSE_PING_SECONDS, keepalive=keepalive)
        return SSEResponse(body, ping=SSE_PING_SECONDS)

    def whole_response(self, completion: dict[str, Any], status: int, stream: bool, plan: ChatPlan,
                       front: Front) -> Response:
        """A whole answer in the client's shape; sent as a stream when the client asked for one. What the parser
        refused, repaired or coerced goes in a header (or, streamed, in comment lines), masked like the body."""
        unmet = plan.unmet if plan.unmet and not _has_call(completion) else None
        extra = {DIAGNOSTIC_HEADER: unmet} if unmet else {}
        redactor = self.upstream.redactor
        masked = redactor.text if redactor else str
        header = completion.diagnostics_header if isinstance(completion, Completion) else None
        notes: list[dict[str, Any]] = completion.diagnostics if header and isinstance(completion, Completion) else []
        if header:
            extra[DIAGNOSTICS_HEADER] = masked(header)
        if stream:
            outputs: list[Output] = [("comment", masked(comment_text(d))) for d in notes]
            outputs += [("chunk", c) for c in completion_to_chunks(completion)]
            outputs += [("comment", unmet)] if unmet else []
            return SSEResponse([front.wire().encode(outputs + [("done", None)])], headers=extra)
        return front.completion_response(completion, status, extra)

    def unusable(self, message: str, stream: bool, front: Front) -> Response:
        if stream:
            data = front.wire().encode([("error", error_body(message, code="upstream_bad_response"))])
            return SSEResponse([data])
        return self.replies.error(502, message, code="upstream_bad_response", front=front)

    async def retry(self, request: Request, url: str, payload: Mapping[str, Any], plan: ChatPlan,
                    first: dict[str, Any], front: Front, headers: Mapping[str, str] | None,
                    backend: Backend) -> dict[str, Any]:
        """The one retry: the first answer and a corrective message appended; its answer is final."""
        said = _first_content(first)
        body = dict(plan.upstream)
        body["messages"] = [*plan.upstream["messages"], {"role": "assistant", "content": said or "(no answer)"},
                            {"role": "user", "content": plan.retry}]
        log.info("tool_choice demanded a call and the answer had none: retrying once")
        upstream = self.upstream
        resp, slot, clock = await upstream.open(backend, upstream.build(backend, "POST", url, request,
                                                                        headers=headers, json=body))
        try:
            if resp.status_code >= 400:
                raise _Refused(await upstream.error_reply(resp, backend, clock, front))
        except BaseException:
            await upstream.finish(resp, slot)
            raise
        raw = await upstream.read_whole(resp, slot, clock, backend)
        second = await decode_completion(raw, payload, plan)
        _add_usage(first, second)
        return second
