"""Graceful drain: on SIGTERM or Ctrl-C, in-flight answers get ``drain_timeout`` seconds to finish, then
each one still running is ended properly.

uvicorn stops accepting at once (its listening sockets close) and waits for open connections; the app
notices through ``watch_server`` (it polls the uvicorn server's ``should_exit``), or is told by its
runner (``Drain.begin``). From then on ``/readyz`` answers 503. When ``drain_timeout`` has passed:

- a stream being rewritten or relayed stops reading its upstream and ends as a broken upstream would:
  held text flushed, an error event (code ``server_shutting_down``), then ``data: [DONE]`` (OpenAI); on
  the Anthropic wire the ``error`` event is the end, as the Messages API ends a failed stream;
- a request still waiting for its upstream (headers, or a whole body) gets a 503 in its front's shape.

How a waiting answer is stopped: each one holds a ``Guard``. While it awaits its upstream (and only
then) ``guard.reading`` is true, and at the deadline the drain cancels that task (asyncio); the guard
owns that cancellation (``Guard.owns``) and the answer turns it into its proper end. An answer busy
elsewhere (sending to its client) sees ``guard.stopped`` when it comes back for more. The per-chunk
cost is two attribute writes and one read.

Invariants: once the deadline passed no answer reads its upstream again; an answer is never cut
without its end (unless the client itself goes away, or uvicorn's own backstop,
``drain_timeout`` + ``BACKSTOP_SECONDS``, cancels one that will not stop); before the deadline
nothing is touched.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Any

import anyio

__all__ = ["Drain", "Guard", "watch_server", "DRAIN_CODE", "DRAIN_MESSAGE", "BACKSTOP_SECONDS"]

log = logging.getLogger("streamparse.server")

DRAIN_CODE = "server_shutting_down"
DRAIN_MESSAGE = "streamparse is shutting down: the answer did not finish within drain_timeout"
BACKSTOP_SECONDS = 5.0  # uvicorn cancels what is left this long after the drain deadline


class Guard:
    """One answer in flight: ``reading`` while it awaits its upstream; ``stopped`` once the drain ended it."""

    __slots__ = ("reading", "stopped", "_task", "_cancelled")

    def __init__(self, task: "asyncio.Task[Any] | None"):
        self.reading = False
        self.stopped = False
        self._task = task
        self._cancelled = False

    def stop(self) -> None:
        self.stopped = True
        if self.reading and self._task is not None and not self._cancelled:
            self._cancelled = True
            self._task.cancel(msg=DRAIN_CODE)

    def owns(self, exc: BaseException) -> bool:
        """Was this cancellation the drain's (and nothing else's)? If so it is taken back: the answer ends itself."""
        if not (self._cancelled and isinstance(exc, asyncio.CancelledError)):
            return False
        self._cancelled = False
        task = self._task
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+
        return uncancel is None or uncancel() == 0


class Drain:
    """The drain state of one app: in-flight answers' guards, and whether (and since when) it is draining."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.draining = False
        self.expired = False
        self._guards: set[Guard] = set()

    def guard(self) -> Guard:
        """A guard for the answer running in this task (registered until ``release``)."""
        try:
            task: asyncio.Task[Any] | None = asyncio.current_task()
        except RuntimeError:  # not asyncio (trio): the answer still stops between reads
            task = None
        guard = Guard(task)
        if self.expired:
            guard.stopped = True
        self._guards.add(guard)
        return guard

    def release(self, guard: Guard) -> None:
        self._guards.discard(guard)

    @property
    def in_flight(self) -> int:
        return len(self._guards)

    def begin(self, timeout: float | None = None) -> None:
        """Start draining (once): in ``timeout`` (default: ``drain_timeout``) seconds, stop what is left."""
        if self.draining:
            return
        self.draining = True
        wait = self.timeout if timeout is None else timeout
        log.info("draining: %d answer(s) in flight get up to %.0f s to finish", len(self._guards), wait)
        try:
            asyncio.get_running_loop().call_later(wait, self.expire)
        except RuntimeError:  # no asyncio loop in this thread: the caller expires it
            pass

    def expire(self) -> None:
        """The deadline: every answer still in flight is ended properly."""
        self.expired = True
        if self._guards:
            log.warning("drain_timeout passed: ending %d answer(s) still in flight", len(self._guards))
        for guard in list(self._guards):
            guard.stop()


def _uvicorn_server() -> Any:
    """The uvicorn ``Server`` running this process, found through its signal handler (None if not)."""
    handler = signal.getsignal(signal.SIGTERM)
    server = getattr(handler, "__self__", None)
    return server if hasattr(server, "should_exit") else None


async def watch_server(drain: Drain, poll: float = 0.2) -> None:
    """Begin ``drain`` when the uvicorn server this app runs under is told to exit (for the app's lifespan).

    A server in a thread installs no signal handler: its runner calls ``Drain.begin`` itself."""
    server = _uvicorn_server()
    if server is None:
        return
    while not server.should_exit:
        await anyio.sleep(poll)
    drain.begin()
