"""Async iteration over the core: ``aparse`` turns an async stream of text deltas into events.

Plain async generators, so they run under any anyio backend (asyncio or trio).

Invariant: the events are exactly those of feeding the same deltas to one ``StreamParser``;
nothing is buffered beyond what the parser holds.
"""

from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence

from .events import Event
from .parser import StreamParser

__all__ = ["aparse", "iparse"]


async def aparse(
    text_deltas: AsyncIterable[str], tools: Sequence[Mapping[str, Any]] | None = None, **options: Any
) -> AsyncIterator[Event]:
    """Events for an async iterable of text deltas, each as soon as its delta arrives."""
    parser = StreamParser(tools, **options)
    async for delta in text_deltas:
        for event in parser.feed(delta):
            yield event
    for event in parser.close():
        yield event


def iparse(text_deltas: Iterable[str], tools: Sequence[Mapping[str, Any]] | None = None, **options: Any) -> Iterator[Event]:
    """The same for a sync iterable of text deltas."""
    parser = StreamParser(tools, **options)
    for delta in text_deltas:
        yield from parser.feed(delta)
    yield from parser.close()
