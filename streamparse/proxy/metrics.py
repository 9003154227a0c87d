"""The proxy's Prometheus metrics, served at ``GET /metrics`` in the text exposition format.

- ``streamparse_requests_total{route, front, backend, status}``: every HTTP request, once its answer began;
- ``streamparse_streams_in_flight{front}``: streamed answers being sent now;
- ``streamparse_tool_calls_total{dialect}`` and ``streamparse_diagnostics_total{code}``: what the parser found
  in streamed answers (a whole answer's calls count with ``dialect="unknown"``);
- ``streamparse_backend_skips_total{backend, reason}``: a backend that failed before the first byte, and the
  request went on to its fallback (``connect``, ``timeout``, ``broken``, ``full``, ``status_503``, ...);
  ``streamparse_fallback_answers_total{backend, primary}``: requests a fallback answered for the backend first tried;
- ``streamparse_upstream_errors_total{backend, kind}`` (``unreachable``, ``status``, ``broken``, ``bad_response``)
  and ``streamparse_upstream_timeouts_total{backend}``;
- ``streamparse_responses_store_errors_total{operation}``: the Responses store did not answer (``read``: the
  request got a 503; ``put``: an answer was served but not kept);
- ``streamparse_time_to_first_byte_seconds{front}``: request arrival to the first byte of a streamed answer;
- ``streamparse_added_latency_seconds``: the proxy's own work on one upstream read of a stream (framing,
  parsing, rewriting, masking), measured on one read in ``SAMPLE_EVERY`` (and every stream's first).

With ``--workers`` the numbers are the sum over the worker processes: prometheus-client's multiprocess mode,
on when ``$PROMETHEUS_MULTIPROC_DIR`` is set (``streamparse serve`` sets it to a new temporary directory
when it is not; a directory you set yourself must be emptied before each start).

Invariants: counting never fails a request (a metric is a side effect); per upstream read the cost is an
integer test, plus two clock reads and an observation on a sampled read (see the README's figures); the
parser's events are tapped without changing what the client receives.
"""

from __future__ import annotations

import os
from time import perf_counter
from typing import Awaitable, Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess, values

from starlette.requests import Request
from starlette.responses import Response

from ..core.events import Diagnostic, Event, ToolCall
from .access_log import Record, route_label

__all__ = ["Metrics", "StreamMeter", "MULTIPROC_ENV", "STARTED", "counted", "CONTENT_TYPE", "SAMPLE_EVERY", "route_label"]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
STARTED = "streamparse.started"  # the request scope's key for perf_counter() at its arrival
CONTENT_TYPE = CONTENT_TYPE_LATEST
SAMPLE_EVERY = 16  # one upstream read in this many is timed for the added-latency histogram

_TTFB_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_ADDED_BUCKETS = (0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25)


class Metrics:
    """The metrics of one proxy app (its own registry; in multiprocess mode the files are shared)."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        # The mode prometheus-client chose when it was imported (from $PROMETHEUS_MULTIPROC_DIR then).
        self.multiprocess = values.ValueClass is not values.MutexValue
        self.requests = Counter("streamparse_requests", "HTTP requests answered, by route, front, backend and status",
                                ["route", "front", "backend", "status"], registry=r)
        self.in_flight = Gauge("streamparse_streams_in_flight", "Streamed answers being sent now", ["front"],
                               registry=r, multiprocess_mode="livesum")
        self.tool_calls = Counter("streamparse_tool_calls", "Tool calls sent to clients, by the dialect they were "
                                  "written in", ["dialect"], registry=r)
        self.diagnostics = Counter("streamparse_diagnostics", "Parser diagnostics, by code", ["code"], registry=r)
        self.upstream_errors = Counter("streamparse_upstream_errors", "Upstream failures, by backend and kind",
                                       ["backend", "kind"], registry=r)
        self.skips = Counter("streamparse_backend_skips", "Backends that failed before the first byte, the request "
                             "going on to a fallback, by backend and reason", ["backend", "reason"], registry=r)
        self.fallback_answers = Counter("streamparse_fallback_answers", "Requests a fallback backend answered, by "
                                        "that backend and the one first tried", ["backend", "primary"], registry=r)
        self.upstream_timeouts = Counter("streamparse_upstream_timeouts", "Upstream timeouts (connect, read, "
                                         "total), by backend", ["backend"], registry=r)
        self.store_errors = Counter("streamparse_responses_store_errors", "Responses store operations that failed, "
                                    "by operation (read: a 503 was sent; put: an answer was not kept)",
                                    ["operation"], registry=r)
        self.ttfb = Histogram("streamparse_time_to_first_byte_seconds", "Request arrival to the first byte of a "
                              "streamed answer", ["front"], buckets=_TTFB_BUCKETS, registry=r)
        self.added = Histogram("streamparse_added_latency_seconds", "The proxy's own work on one upstream read of "
                               f"a stream (one read in {SAMPLE_EVERY} is timed)", buckets=_ADDED_BUCKETS, registry=r)

    def exposition(self) -> bytes:
        """The text format: this process's metrics, or every worker's summed (multiprocess mode)."""
        if not self.multiprocess:
            return generate_latest(self.registry)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)

    def request(self, route: str, front: str, backend: str, status: int) -> None:
        self.requests.labels(route, front, backend, str(status)).inc()

    def upstream_error(self, backend: str, kind: str) -> None:
        if kind == "timeout":
            self.upstream_timeouts.labels(backend).inc()
        else:
            self.upstream_errors.labels(backend, kind).inc()

    def store_error(self, operation: str) -> None:
        self.store_errors.labels(operation).inc()

    def calls(self, dialect: str, n: int = 1, record: Record | None = None) -> None:
        if n:
            self.tool_calls.labels(dialect or "unknown").inc(n)
            if record is not None:
                record.tool_calls += n

    def stream(self, front: str, started: float | None, backend: str = "", record: Record | None = None) -> "StreamMeter":
        return StreamMeter(self, front, started, backend, record)

    def process_exit(self) -> None:
        """This worker is stopping: its live gauges leave the sums."""
        if self.multiprocess:
            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


class StreamMeter:
    """One streamed answer's metrics: in flight while open, its first byte, its sampled reads, its events."""

    __slots__ = ("metrics", "front", "backend", "started", "reads", "first_sent", "_open", "record")

    def __init__(self, metrics: Metrics, front: str, started: float | None, backend: str = "",
                 record: Record | None = None):
        self.metrics = metrics
        self.record = record  # the request's log record: its calls and diagnostics are counted there too
        self.front = front
        self.backend = backend
        self.started = started  # perf_counter() at the request's arrival (None: unknown)
        self.reads = -1
        self.first_sent = False
        self._open = False

    def open(self) -> None:
        self._open = True
        self.metrics.in_flight.labels(self.front).inc()

    def close(self) -> None:
        if self._open:
            self._open = False
            self.metrics.in_flight.labels(self.front).dec()

    def sample(self) -> bool:
        """Time this upstream read? (The first, then one in ``SAMPLE_EVERY``.)"""
        self.reads += 1
        return self.reads % SAMPLE_EVERY == 0

    def worked(self, since: float) -> None:
        self.metrics.added.observe(perf_counter() - since)

    def sent(self) -> None:
        """The first bytes of the answer leave now."""
        self.first_sent = True
        if self.started is not None:
            self.metrics.ttfb.labels(self.front).observe(perf_counter() - self.started)

    def events(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ToolCall):
                self.metrics.calls(event.dialect, 1, self.record)
            elif isinstance(event, Diagnostic):
                self.metrics.diagnostics.labels(event.code).inc()
                if self.record is not None:
                    self.record.diagnostic(event.code)


Endpoint = Callable[[Request], Awaitable[Response]]


def counted(metrics: Metrics, endpoint: Endpoint, front: str = "openai") -> Endpoint:
    """``endpoint`` with its requests counted (and its arrival time put in the scope, for the first-byte histogram).
    No cost per chunk: the count is taken when the endpoint returns its response."""

    async def handler(request: Request) -> Response:
        request.scope[STARTED] = perf_counter()
        response = await endpoint(request)
        backend = getattr(request.state, "streamparse_backend", "")
        metrics.request(route_label(request.url.path), front, backend, response.status_code)
        return response

    return handler
