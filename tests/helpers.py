"""Shared helpers for the tests: chunked feeding and comparable results."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable

import anyio

import streamparse as sp
from streamparse.harness.examples import EXAMPLE_TOOLS

TOOLS = EXAMPLE_TOOLS + [
    {"type": "function", "function": {"name": "server.method", "parameters": {"type": "object", "properties": {}}}},
    {
        "type": "function",
        "function": {
            "name": "configure",
            "parameters": {
                "type": "object",
                "properties": {
                    "count": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "enabled": {"type": "boolean"},
                    "nothing": {"type": "null"},
                    "options": {"type": "object"},
                    "items": {"type": "array"},
                    "code": {"type": "string"},
                },
            },
        },
    },
]


def feed_chunks(text: str, size: int | list[int], tools: Any = TOOLS, **options: Any) -> list[sp.Event]:
    """Feed ``text`` in pieces (a fixed size, or a list of cut positions) and close."""
    parser = sp.StreamParser(tools, **options)
    if isinstance(size, int):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
    else:
        cuts = [0, *sorted(c for c in size if 0 < c < len(text)), len(text)]
        pieces = [text[a:b] for a, b in zip(cuts, cuts[1:])]
    events: list[sp.Event] = []
    for piece in pieces:
        events += parser.feed(piece)
    events += parser.close()
    return events


def summary(events: list[sp.Event]) -> tuple[str, list[tuple[str, Any]]]:
    """(text, [(name, arguments as dict)]): what must not depend on chunking."""
    result = sp.ParseResult(events)
    return result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls]


def calls(text: str, tools: Any = TOOLS, **options: Any) -> list[tuple[str, Any]]:
    return summary(feed_chunks(text, len(text) or 1, tools, **options))[1]


def content(text: str, tools: Any = TOOLS, **options: Any) -> str:
    return summary(feed_chunks(text, len(text) or 1, tools, **options))[0]


def assert_chunking_invariant(text: str, tools: Any = TOOLS, **options: Any) -> tuple[str, list[tuple[str, Any]]]:
    whole = summary(feed_chunks(text, max(len(text), 1), tools, **options))
    for size in (1, 2, 3, 4, 7, 13):
        assert summary(feed_chunks(text, size, tools, **options)) == whole, f"chunk size {size}"
    return whole


async def aiter_of(items: Iterable[Any]) -> AsyncIterator[Any]:
    """An async iterator over ``items`` that yields to the event loop between them."""
    for item in items:
        yield item
        await anyio.sleep(0)


def accumulate(chunks: Iterable[Any]) -> dict[int, dict[str, Any]]:
    """openai SDK chunks -> per choice index: ``content``, ``calls`` (by index: id, name, arguments), ``finish``."""
    acc: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            slot = acc.setdefault(choice.index, {"content": "", "calls": {}, "finish": None})
            slot["content"] += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                call = slot["calls"].setdefault(tc.index, {"id": tc.id, "name": "", "arguments": ""})
                call["name"] += tc.function.name or ""
                call["arguments"] += tc.function.arguments or ""
            slot["finish"] = choice.finish_reason or slot["finish"]
    return acc


class RawServer:
    """A raw HTTP/1.1 server on loopback (``async with RawServer(answer) as server``): each request, once its
    headers are read, is answered by ``answer(writer)``; ``connections`` counts the connections it accepted, ``ended``
    those its client closed (or that broke)."""

    def __init__(self, answer: Callable[[asyncio.StreamWriter], Awaitable[None]]):
        self.answer = answer
        self.connections = self.ended = 0
        self.url = ""
        self._listener: asyncio.Server | None = None

    async def _handle(self, reader: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                await self.answer(out)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.ended += 1
        finally:
            out.close()

    async def __aenter__(self) -> "RawServer":
        self._listener = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._listener.sockets[0].getsockname()[1]}/"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._listener is not None
        self._listener.close()
