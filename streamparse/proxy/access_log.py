"""Request ids and the request log: one record per HTTP request, and (``log_format = "json"``) one JSON line.

- ``RequestLog``, the outermost ASGI layer: a request's id is its ``x-request-id`` header when the client sent a
  usable one (1 to 200 visible ASCII characters), else a new one (32 secure random hex digits, ``core.ids``). The request goes on with exactly that
  header (so every upstream request it causes carries it) and every answer carries it, streamed or not, errors
  and the proxy's own refusals (401, 408, 413, CORS) too.
- The ``Record`` of a request is filled as it goes: the front and route (from the path), the backend that answered
  and the backends skipped before it (``exchange``), the tool calls and diagnostic codes the parser reported
  (``metrics.StreamMeter`` for streams, ``pipeline`` for whole answers), the status, the time to the first body
  byte sent and the total time (measured here, around the whole app).
- In json mode the record becomes one line on the ``streamparse.access`` logger when the answer has ended (or the
  client went away: status 499); ``log_config`` gives uvicorn the logging setup in which every line is JSON
  (``JSONFormatter``) and uvicorn's own text access log is off.

Invariants: one record, and at most one line, per HTTP request, written after its last byte; the id a client
sees is the id the upstream saw and the log names; a bug below this layer still gets its id and a 500 in OpenAI's
shape, never a bare traceback; no request body or header other than the id is logged.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import time
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..core.ids import fresh_id
from ..wire.sse import dumps, error_body

__all__ = ["RequestLog", "Record", "RECORD", "record_of", "JSONFormatter", "log_config", "route_label", "REQUEST_ID",
           "ACCESS_LOGGER", "REPLAY_LOGGER"]

RECORD = "streamparse.record"  # the request scope's key for its Record
REQUEST_ID = "x-request-id"
ACCESS_LOGGER = "streamparse.access"
REPLAY_LOGGER = "streamparse.replay"  # the demo's replay upstream (``harness.replay``), in the proxy's process
_USABLE_ID = re.compile(rb"[\x21-\x7e]{1,200}")
_ROUTES = ("/v1/chat/completions", "/v1/messages/count_tokens", "/v1/messages", "/v1/responses", "/v1/models",
           "/healthz", "/readyz", "/metrics")
_FRONTS = {"/v1/chat/completions": "chat", "/v1/messages": "messages", "/v1/messages/count_tokens": "messages",
           "/v1/responses": "responses"}
log = logging.getLogger(ACCESS_LOGGER)


def route_label(path: str) -> str:
    """A request path as a bounded label: one of the proxy's routes, else ``/v1/*`` or ``other``."""
    if path in _ROUTES:
        return path
    return "/v1/*" if path.startswith("/v1/") else "other"


@dataclass
class Record:
    """What one request did (see the module docstring)."""

    request_id: str
    method: str = ""
    path: str = ""
    client: str | None = None
    backend: str = ""
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"backend": name, "reason": why}, in order
    status: int = 0
    stream: bool = False
    tool_calls: int = 0
    diagnostics: list[str] = field(default_factory=list)
    started: float = field(default_factory=perf_counter)
    first_byte: float | None = None
    ended: float | None = None

    def diagnostic(self, code: str) -> None:
        self.diagnostics.append(code)

    def fields(self) -> dict[str, Any]:
        """The JSON line's fields."""
        end = self.ended if self.ended is not None else perf_counter()
        route = route_label(self.path)
        return {"request_id": self.request_id, "method": self.method, "path": self.path, "route": route,
                "front": _FRONTS.get(route), "backend": self.backend or None, "fallback_from": self.skipped,
                "status": self.status or 499, "stream": self.stream,
                "ttfb_s": None if self.first_byte is None else round(self.first_byte - self.started, 6),
                "total_s": round(end - self.started, 6), "tool_calls": self.tool_calls,
                "diagnostics": self.diagnostics, "client": self.client}


def record_of(scope: Scope) -> Record | None:
    """The request's record (None outside ``RequestLog``: an app served without it, in tests or embedded)."""
    record = scope.get(RECORD)
    return record if isinstance(record, Record) else None


def _request_id(headers: list[tuple[bytes, bytes]]) -> str:
    for name, value in headers:
        if name.lower() == b"x-request-id" and _USABLE_ID.fullmatch(value.strip()):
            return value.strip().decode("ascii")
    return fresh_id(random_bytes=16)


class RequestLog:
    """Request ids in and out, each request's ``Record``, and its JSON line when ``json_lines``."""

    def __init__(self, app: ASGIApp, json_lines: bool = False):
        self.app = app
        self.json_lines = json_lines

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = list(scope.get("headers", []))
        rid = _request_id(headers)
        raw_id = rid.encode()
        client = scope.get("client")
        record = Record(rid, scope.get("method", ""), scope.get("path", ""), client[0] if client else None)
        scope = {**scope, "headers": [(k, v) for k, v in headers if k.lower() != b"x-request-id"]
                 + [(b"x-request-id", raw_id)], RECORD: record}

        async def logged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
                out = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                record.stream = any(k.lower() == b"content-type" and v.startswith(b"text/event-stream") for k, v in out)
                message = {**message, "headers": [*out, (b"x-request-id", raw_id)]}
            elif message["type"] == "http.response.body" and record.first_byte is None and message.get("body"):
                record.first_byte = perf_counter()
            await send(message)

        try:
            await self.app(scope, receive, logged_send)
        except Exception:
            if record.status:
                raise
            logging.getLogger("streamparse.server").exception("request %s failed", rid)
            body = dumps(error_body(f"streamparse failed (request {rid})", type_="server_error")).encode()
            await logged_send({"type": "http.response.start", "status": 500, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await logged_send({"type": "http.response.body", "body": body})
        finally:
            record.ended = perf_counter()
            if self.json_lines:
                log.info("%s %s %s", record.method, record.path, record.status or 499, extra={"request": record.fields()})


class JSONFormatter(logging.Formatter):
    """Every log record as one JSON line: time (UTC), level, logger, message, and a request's fields when it has
    them (``RequestLog``'s lines)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        fields = getattr(record, "request", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def log_config(log_format: str, log_level: str = "info", label: str | None = None) -> dict[str, Any]:
    """uvicorn's ``log_config``. Text: uvicorn's own, with the proxy's lines (``streamparse``: what a backend's
    template decided, a backend found) beside uvicorn's at ``log_level`` (the request lines stay uvicorn's); with
    ``label``, each line of this server marked ``[label]`` and the replay upstream's lines (``streamparse.replay``)
    marked ``[replay]`` (the demo runs both in one process). For ``json``, a setup where every line is JSON (the
    logger names tell the servers apart), request lines on stdout (always: they are what json mode is for) and the
    rest on stderr, at ``log_level``."""
    level = "DEBUG" if log_level == "trace" else log_level.upper()
    if log_format != "json":
        from uvicorn.config import LOGGING_CONFIG

        config = copy.deepcopy(LOGGING_CONFIG)
        config["loggers"]["streamparse"] = {"handlers": ["default"], "level": level}
        config["loggers"][ACCESS_LOGGER] = {"handlers": [], "propagate": False}  # (uvicorn's lines say the requests)
        if label is None:
            return dict(config)
        for formatter in config["formatters"].values():
            formatter["fmt"] = formatter["fmt"].replace("%(levelprefix)s ", f"%(levelprefix)s [{label}] ", 1)
        config["formatters"]["replay"] = {**config["formatters"]["default"],
                                          "fmt": "%(levelprefix)s [replay] %(message)s"}
        config["handlers"]["replay"] = {**config["handlers"]["access"], "formatter": "replay"}
        config["loggers"][REPLAY_LOGGER] = {"handlers": ["replay"], "level": "INFO", "propagate": False}
        return dict(config)
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JSONFormatter"}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
            "stdout": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"}},
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"level": "INFO"},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            "streamparse": {"handlers": ["stderr"], "level": level, "propagate": False},
            ACCESS_LOGGER: {"handlers": ["stdout"], "level": "INFO", "propagate": False},
            REPLAY_LOGGER: {"handlers": ["stdout"], "level": "INFO", "propagate": False}},
    }
