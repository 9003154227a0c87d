"""OpenAI wire format: rewrite ``chat.completion.chunk`` streams and ``chat.completion`` responses.

The rule for requests without tools, the same in the library, the middleware and the proxy (one
implementation, ``should_parse``): an answer is parsed unless the request's ``tool_choice`` is
``"none"``, or no tools are offered (the ``tools`` argument, else the request's ``tools``, is missing or
empty) and ``parse_without_tools`` is false. Not parsed means passed on untouched; ``parse_without_tools``
defaults to true in the functions here (calling one asks for parsing) and to false in the middleware and
the proxy, which stand in front of clients that did not ask.

``ChunkRewriter`` is the sans-I/O piece (chunk dicts in, chunk dicts out, ``chunks``);
``rewrite_stream`` / ``rewrite_stream_sync`` wrap it around async / sync iterators, and
``rewrite_completion`` handles non-streaming responses (``completion``). Only ``content`` is owned by the
parser: every other field (role, reasoning, logprobs, usage, native ``tool_calls``) passes through
untouched.

Input is JSON-shaped: dicts, or openai SDK objects (``ChatCompletionChunk``, ``ChatCompletion``, any
pydantic v2 model), read as the fields they were given, i.e. the JSON the server sent. Output is always
plain dicts, ready for ``json.dumps`` (``ChatCompletionChunk.model_validate(chunk)`` makes an SDK object
of one).

Invariant: this module is the public face of the OpenAI adapter and holds no logic of its own beyond
wrapping a ``ChunkRewriter`` around an iterator.
"""

from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping

from .chunks import ChunkRewriter
from .completion import Completion, completion_to_chunks, rewrite_completion
from .shapes import JSONObject, Model, Tools, should_parse, tools_from

__all__ = ["ChunkRewriter", "rewrite_stream", "rewrite_stream_sync", "rewrite_completion", "completion_to_chunks",
           "Completion", "tools_from", "should_parse", "Tools", "JSONObject", "Model"]


def rewrite_stream_sync(
    chunks: Iterable[JSONObject], tools: Tools = None, *, request: Mapping[str, Any] | None = None,
    parse_without_tools: bool = True, **options: Any
) -> Iterator[dict[str, Any]]:
    """Rewrite a sync iterable of chunks (dicts or SDK objects, e.g. an openai ``Stream``) into chunk dicts."""
    rewriter = ChunkRewriter(tools, request=request, parse_without_tools=parse_without_tools, **options)
    for chunk in chunks:
        yield from rewriter.feed(chunk)
    yield from rewriter.close()


async def rewrite_stream(
    chunks: AsyncIterable[JSONObject], tools: Tools = None, *, request: Mapping[str, Any] | None = None,
    parse_without_tools: bool = True, **options: Any
) -> AsyncIterator[dict[str, Any]]:
    """Rewrite an async iterable of chunks (dicts or SDK objects, e.g. an openai ``AsyncStream``) into chunk
    dicts (any anyio backend: asyncio or trio)."""
    rewriter = ChunkRewriter(tools, request=request, parse_without_tools=parse_without_tools, **options)
    async for chunk in chunks:
        for out in rewriter.feed(chunk):
            yield out
    for out in rewriter.close():
        yield out
