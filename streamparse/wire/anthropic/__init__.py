"""The Anthropic Messages API: output (``stream``, ``wire``) and requests (``request``).

Output: parser events, OpenAI chunks and completions -> Anthropic events and Messages.

Invariant: a ``MessageStream``'s events form one well-ordered Anthropic stream (``message_start``,
``ping``, then per block ``content_block_start`` / ``content_block_delta``* / ``content_block_stop``, one
block open at a time, indexes from 0, then ``message_delta`` and ``message_stop``; or, instead of the end,
one ``error`` event), and accumulating them as the anthropic SDK does gives ``MessageStream.message``,
which is what the non-streaming functions return for the same input.

``ChunkTranslator`` feeds the writer OpenAI ``chat.completion.chunk`` dicts (rewritten by
``streamparse.openai.ChunkRewriter``, or with an upstream's native ``tool_calls``);
``message_from_completion`` reads a ``chat.completion`` (replayed as the chunks a stream would have carried,
through the same translator); ``stream_events*`` / ``message_from_text`` parse text. Streaming or not, the
blocks come in the order the model wrote them (``[thinking, text, tool_use, text, tool_use]``): a completion
made by ``rewrite_completion`` remembers that order; a plain one, which cannot, gives
``[thinking, text, tool_use…]`` on every path. No block is only whitespace (such text is dropped, as OpenAI's blank content is). A call's ``input``
is parsed when its block closes: arguments that are not a JSON object give ``{}`` (their ``partial_json``
is streamed as it came: only the parser's calls, always objects, are sure to accumulate to the same input).
"""

from __future__ import annotations

from .request import estimate_input_tokens, to_chat_request
from .stream import ChunkTranslator, MessageStream, events_from_chunks, events_from_chunks_sync, message_from_completion, message_from_text, stream_events, stream_events_sync
from .vocab import ERROR_TYPES, encode_sse, error_body, error_type, message_id, stop_reason, tool_use_id, usage_from

__all__ = ["MessageStream", "ChunkTranslator", "tool_use_id", "message_id", "stop_reason", "usage_from",
           "message_from_completion", "message_from_text", "stream_events", "stream_events_sync",
           "events_from_chunks", "events_from_chunks_sync", "encode_sse", "ERROR_TYPES", "error_type", "error_body",
           "to_chat_request", "estimate_input_tokens"]
