"""Fallback across backends: when a backend fails before the first byte, the request goes on to the next one.

A request's backends are the one its model routes to, then that backend's ``fallback`` list, in order
(``ProxyConfig.chain``; at most ``[server] fallback_attempts`` in all; the list is not followed further: a fallback's
own fallbacks are not added). ``Upstream.exchange`` tries them in turn. It moves on when the try failed before the
upstream's answer began: a connect error, a timeout before the response head, a connection lost before it, the
backend's ``max_connections`` full, or a status of 429 or 5xx. Any other status (4xx: the request's own fault) is
the answer. Once an upstream has answered (a 2xx head), the answer is that backend's, whatever happens next: a
stream that breaks ends with an error event, a body that cannot be read with a 502 or 504; nothing has been sent
twice and nothing is retried. The last backend's failure is the client's answer.

Each skip is counted (``streamparse_backend_skips_total{backend, reason}``), logged, and named in the request's
record (``fallback_from`` in the JSON log line); the requests label the backend that answered.

Invariants: pure decisions and bookkeeping: no I/O, no exception escapes; a reason is one of a bounded set of words
(``connect``, ``timeout``, ``broken``, ``full``, ``status_NNN``), so it can label a metric.
"""

from __future__ import annotations

import logging

import httpx

from .access_log import Record
from .config import Backend
from .metrics import Metrics
from .upstream import UpstreamTimeout

__all__ = ["failure_reason", "status_reason", "skipped", "RETRY_STATUSES"]

log = logging.getLogger("streamparse.server")
RETRY_STATUSES = frozenset({429, *range(500, 600)})  # statuses that send a request on to the next backend


def failure_reason(exc: Exception) -> str:
    """Why a try failed before the upstream's answer began: ``timeout``, ``connect`` or ``broken``."""
    if isinstance(exc, (httpx.TimeoutException, UpstreamTimeout)):
        return "timeout"
    if isinstance(exc, httpx.ConnectError):
        return "connect"
    return "broken"  # the connection was lost before the response head (RemoteProtocolError, ReadError, ...)


def status_reason(status: int) -> str | None:
    """An upstream error status that lets the next backend answer (``status_503``), else None."""
    return f"status_{status}" if status in RETRY_STATUSES else None


def skipped(metrics: Metrics, record: Record | None, backend: Backend, following: Backend, reason: str) -> None:
    """``backend`` failed (``reason``) and ``following`` is tried next: counted, logged, recorded."""
    metrics.skips.labels(backend.name, reason).inc()
    if record is not None:
        record.skipped.append({"backend": backend.name, "reason": reason})
    log.info("backend %r failed before its first byte (%s): trying %r", backend.name, reason, following.name)
