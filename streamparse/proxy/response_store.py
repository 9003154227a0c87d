"""The answers ``POST /v1/responses`` keeps, so a later request can continue one by ``previous_response_id``.

Invariant: the store holds at most ``size`` answers, none older than ``ttl`` seconds (an expired one is never
returned, and is dropped when met or when the store is full); it lives in this process only: with
``--workers N`` each worker has its own, so a client that chains responses must reach the same worker (or send
the whole history, as Codex does with ``store: false``). What is kept is the conversation as chat messages
(without the instructions, which OpenAI does not carry over either) and the response object; the messages an
answer shares with the one it continues are the same objects, so a long chain costs one reference per message
per answer, not a copy.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["ResponseStore", "Stored"]


@dataclass(frozen=True)
class Stored:
    messages: list[dict[str, Any]]  # the conversation up to and including this answer, as chat messages
    response: dict[str, Any]  # the response object, as the client received it
    expires: float


class ResponseStore:
    """A bounded, expiring map from response id to :class:`Stored`."""

    def __init__(self, size: int, ttl: float, clock: Callable[[], float] = time.monotonic):
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._items: OrderedDict[str, Stored] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, response_id: str) -> Stored | None:
        """The stored answer, or None when it is unknown or expired."""
        found = self._items.get(response_id)
        if found is not None and found.expires <= self._clock():
            del self._items[response_id]
            return None
        return found

    def put(self, response_id: str, messages: list[dict[str, Any]], response: dict[str, Any]) -> None:
        """Keep an answer; the oldest (or any expired) ones go to make room."""
        now = self._clock()
        self._items[response_id] = Stored(messages, response, now + self.ttl)
        self._items.move_to_end(response_id)
        while self._items:
            oldest_id, oldest = next(iter(self._items.items()))
            if len(self._items) <= self.size and oldest.expires > now:
                break
            del self._items[oldest_id]
