"""The answers ``POST /v1/responses`` keeps, so a later request can continue one by ``previous_response_id``.

Invariant: the store holds at most ``size`` answers, of at most ``max_chars`` characters of JSON in all (each
answer counted whole: its conversation and its response object), none older than ``ttl`` seconds (an expired
one is never returned, and is dropped when met or when the store is full; the oldest go first to make room, and
an answer larger than the whole budget is not kept); it lives in this process only: with
``--workers N`` each worker has its own, so a client that chains responses must reach the same worker (or send
the whole history, as Codex does with ``store: false``). What is kept is the conversation as chat messages
(without the instructions, which OpenAI does not carry over either) and the response object, whose output
items ``item`` finds by id (and only while their answer is kept). The messages an answer shares with the one it
continues are the same objects; the budget still counts them in each answer, so it holds however they are shared.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from ..wire.sse import dumps

__all__ = ["ResponseStore", "Stored"]


@dataclass(frozen=True)
class Stored:
    messages: list[dict[str, Any]]  # the conversation up to and including this answer, as chat messages
    response: dict[str, Any]  # the response object, as the client received it
    expires: float
    chars: int  # what it is counted as against the budget


class ResponseStore:
    """A bounded, expiring map from response id to :class:`Stored`, and from each stored output item's id to the
    item (an ``item_reference`` names one; the Vercel AI SDK sends them for its earlier steps)."""

    def __init__(self, size: int, ttl: float, max_chars: int = 256 << 20, clock: Callable[[], float] = time.monotonic):
        self.size = size
        self.ttl = ttl
        self.max_chars = max_chars
        self.chars = 0  # held now, as counted
        self._clock = clock
        self._answers: OrderedDict[str, Stored] = OrderedDict()
        self._owners: dict[str, str] = {}  # output item id -> the id of the response that holds it

    def __len__(self) -> int:
        return len(self._answers)

    def get(self, response_id: str) -> Stored | None:
        """The stored answer, or None when it is unknown or expired."""
        found = self._answers.get(response_id)
        if found is not None and found.expires <= self._clock():
            self._drop(response_id)
            return None
        return found

    def item(self, item_id: str) -> dict[str, Any] | None:
        """A stored answer's output item, or None when it is unknown or its answer expired."""
        owner = self._owners.get(item_id)
        stored = self.get(owner) if owner is not None else None
        return next((i for i in stored.response["output"] if i.get("id") == item_id), None) if stored else None

    def put(self, response_id: str, messages: list[dict[str, Any]], response: dict[str, Any]) -> None:
        """Keep an answer; the oldest (or any expired) ones go to make room."""
        now = self._clock()
        if response_id in self._answers:
            self._drop(response_id)
        chars = len(dumps(messages)) + len(dumps(response))
        if chars > self.max_chars:
            return
        self._answers[response_id] = Stored(messages, response, now + self.ttl, chars)
        self.chars += chars
        self._owners.update((item["id"], response_id) for item in response.get("output", ()) if "id" in item)
        while self._answers:
            oldest_id, oldest = next(iter(self._answers.items()))
            if len(self._answers) <= self.size and self.chars <= self.max_chars and oldest.expires > now:
                break
            self._drop(oldest_id)

    def _drop(self, response_id: str) -> None:
        stored = self._answers.pop(response_id)
        self.chars -= stored.chars
        for item in stored.response.get("output", ()):
            if self._owners.get(item.get("id")) == response_id:
                del self._owners[item["id"]]
