"""The OpenAI Responses API: requests in (``request``, ``items``), events and response objects out (``stream``).

Requests: a Responses body -> the chat-completions body that says the same (``to_chat_request``), or a
``BadRequest`` naming the field. Output: parser events, OpenAI chunks (rewritten by
``streamparse.openai.ChunkRewriter``, or an upstream's native ``tool_calls``) and completions ->
Responses stream events and ``response`` objects.

Invariant: streamed or whole, the same answer gives the same output items (a whole completion is replayed as
the chunks a stream would have carried, through the same writer), and the events of
``ResponseStream`` accumulate, as the openai SDK accumulates them, to its ``response``.
"""

from __future__ import annotations

from .items import HOSTED_CALL_ITEMS, Input, chat_messages, input_items, referenced_ids
from .request import CLIENT_TOOLS, ResponsesRequest, to_chat_request
from .stream import ChunkTranslator, ResponseStream, response_from_completion, response_from_text
from .vocab import CUSTOM_INPUT, Offered, chat_name, custom_input, fresh_id, usage_from

__all__ = ["ResponsesRequest", "to_chat_request", "chat_messages", "Input", "HOSTED_CALL_ITEMS", "CLIENT_TOOLS",
           "input_items", "referenced_ids", "ResponseStream", "ChunkTranslator", "response_from_completion", "response_from_text", "custom_input",
           "CUSTOM_INPUT", "Offered", "chat_name", "fresh_id", "usage_from"]
