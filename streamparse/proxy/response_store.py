"""What ``POST /v1/responses`` keeps, so a later request can continue it (``previous_response_id``), name its items
(``item_reference``), or read and delete it (``GET`` / ``DELETE /v1/responses/{id}``, ``GET …/input_items``).

Invariants, for every store:
- everything is kept under an owner (``owners``: who authenticated the request that stored it), and is found only
  by that owner: another owner's id is a miss, by the same path as an unknown one;
- at most ``size`` answers of at most ``max_chars`` characters of JSON in all, none older than ``ttl`` seconds (an
  expired one is never returned); the oldest go first to make room; an answer larger than the whole budget is
  not kept;
- a store that cannot answer raises :class:`StoreUnavailable` within its timeout, never hangs.

``MemoryStore`` (here) lives in one process: with ``--workers N`` each worker has its own. ``RedisStore``
(``redis_store``) is one store for every worker and replica. What is kept of an answer: the conversation as chat
messages (without the instructions, which OpenAI does not carry over either), the request's input items, and the
response object; items are found by id while their answer is kept.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

from ..wire.sse import dumps

__all__ = ["Answer", "Stored", "ResponseStore", "MemoryStore", "StoreUnavailable", "MAX_ID_CHARS", "item_ids",
           "usable_id"]

MAX_ID_CHARS = 256  # an id longer than this is no id the proxy minted: a miss, never looked up


class StoreUnavailable(Exception):
    """The store did not answer in time, or refused: the request that needed it gets a 503."""


@dataclass(frozen=True)
class Answer:
    """What one finished ``/v1/responses`` request leaves for later ones."""

    response: dict[str, Any]  # the response object, as the client received it
    input_items: list[dict[str, Any]]  # the request's own input items, each with an id
    added: list[dict[str, Any]]  # this turn's chat messages: its input, then its answer
    previous_id: str | None = None  # the stored answer it continued
    earlier: list[dict[str, Any]] = field(default_factory=list)  # that answer's conversation, as read

    @property
    def response_id(self) -> str:
        return str(self.response["id"])

    def items(self) -> Iterable[dict[str, Any]]:
        """Every item an ``item_reference`` may name: the response's output, then its input."""
        for item in (*self.response.get("output", ()), *self.input_items):
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                yield item


@dataclass(frozen=True)
class Stored:
    """A stored answer as read back."""

    response: dict[str, Any]
    input_items: list[dict[str, Any]]
    messages: list[dict[str, Any]]  # the conversation up to and including this answer (empty unless asked for)


class ResponseStore(Protocol):
    """Where answers are kept; each method is bounded in time (else ``StoreUnavailable``)."""

    description: str  # which store, as misses, errors and /readyz name it (never an address or a credential)
    location: str  # where it is, for the operator's log lines
    shared: bool  # every worker and replica sees the same answers

    async def get(self, owner: str, response_id: str, conversation: bool = False) -> Stored | None:
        """The owner's stored answer (with its conversation when asked), or None."""
        ...

    async def items(self, owner: str, item_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The owner's stored items among ``item_ids``, by id (the missing ones left out)."""
        ...

    async def put(self, owner: str, answer: Answer) -> None:
        """Keep an answer; the oldest (or any expired) go to make room."""
        ...

    async def delete(self, owner: str, response_id: str) -> bool:
        """Forget the owner's answer and its items; False when there was none."""
        ...

    async def ping(self) -> None:
        """Return when the store answers; ``StoreUnavailable`` when it does not."""
        ...

    async def aclose(self) -> None: ...


def usable_id(value: Any) -> bool:
    """Could ``value`` name something stored? (Anything else is a miss without a look.)"""
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS


def item_ids(answer: Answer) -> list[str]:
    return [item["id"] for item in answer.items()]


class MemoryStore:
    """A bounded, expiring map, in this process, from (owner, response id) to its answer and from (owner, item
    id) to the response holding it. The messages an answer shares with the one it continues are the same
    objects; the budget still counts them in each answer, so it holds however they are shared."""

    shared = False

    def __init__(self, size: int, ttl: float, max_chars: int = 256 << 20, clock: Callable[[], float] = time.monotonic):
        self.description = "this process's memory store"
        self.location = "memory"
        self.size = size
        self.ttl = ttl
        self.max_chars = max_chars
        self.chars = 0  # held now, as counted
        self._clock = clock
        self._answers: OrderedDict[tuple[str, str], tuple[float, int, Answer]] = OrderedDict()  # (expiry, chars, …)
        self._holders: dict[tuple[str, str], str] = {}  # (owner, item id) -> the response id that holds it

    def __len__(self) -> int:
        return len(self._answers)

    def _find(self, owner: str, response_id: str) -> Answer | None:
        key = (owner, response_id)
        found = self._answers.get(key)
        if found is None:
            return None
        if found[0] <= self._clock():
            self._drop(key)
            return None
        return found[2]

    async def get(self, owner: str, response_id: str, conversation: bool = False) -> Stored | None:
        answer = self._find(owner, response_id) if usable_id(response_id) else None
        if answer is None:
            return None
        return Stored(answer.response, answer.input_items, [*answer.earlier, *answer.added] if conversation else [])

    async def items(self, owner: str, item_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for item_id in item_ids:
            holder = self._holders.get((owner, item_id)) if usable_id(item_id) else None
            answer = self._find(owner, holder) if holder is not None else None
            item = next((i for i in answer.items() if i["id"] == item_id), None) if answer is not None else None
            if item is not None:
                found[item_id] = item
        return found

    async def put(self, owner: str, answer: Answer) -> None:
        now = self._clock()
        key = (owner, answer.response_id)
        if key in self._answers:
            self._drop(key)
        chars = sum(len(dumps(part)) for part in (answer.earlier, answer.added, answer.response, answer.input_items))
        if chars > self.max_chars:
            return
        self._answers[key] = (now + self.ttl, chars, answer)
        self.chars += chars
        self._holders.update(((owner, item_id), answer.response_id) for item_id in item_ids(answer))
        while self._answers:
            oldest_key, (expires, _, _) = next(iter(self._answers.items()))
            if len(self._answers) <= self.size and self.chars <= self.max_chars and expires > now:
                break
            self._drop(oldest_key)

    async def delete(self, owner: str, response_id: str) -> bool:
        if not usable_id(response_id) or self._find(owner, response_id) is None:
            return False
        self._drop((owner, response_id))
        return True

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def _drop(self, key: tuple[str, str]) -> None:
        _, chars, answer = self._answers.pop(key)
        self.chars -= chars
        owner, response_id = key
        for item_id in item_ids(answer):
            if self._holders.get((owner, item_id)) == response_id:
                del self._holders[(owner, item_id)]

