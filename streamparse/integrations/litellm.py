"""A LiteLLM proxy callback that turns tool calls written as text into structured ``tool_calls``.

Configure it in LiteLLM's ``config.yaml``::

    litellm_settings:
      callbacks: ["streamparse.integrations.litellm.callback"]

Invariant: streamed answers (``async_post_call_streaming_iterator_hook``) go through ``ChunkRewriter``, whole
ones (``async_post_call_success_hook``) through ``rewrite_completion``: the same OpenAI writers as the library
and ``streamparse serve``, with the same rule (an answer is read when the request offered tools and its
``tool_choice`` is not ``"none"``; anything else passes through untouched). Chunks and responses go back to
LiteLLM as its own types (``ModelResponseStream``, ``ModelResponse``). Answers that are not chat completions
(embeddings, images, a Responses or Messages call LiteLLM did not route through chat completions) pass
through untouched.

Known LiteLLM problems (docs/engines.md): before late 2025 some proxy paths skipped
``async_post_call_streaming_iterator_hook`` silently; callbacks run in the listed order, so a guardrail listed
before this one sees the model's raw text, and one that rebuilds chunks from text after it can flatten the
calls it made.
"""

from __future__ import annotations

import logging
from typing import Any, AsyncGenerator, Mapping

try:
    import litellm
    from litellm.integrations.custom_logger import CustomLogger
except ImportError as exc:  # pragma: no cover - said once, with the fix
    raise ImportError("streamparse's LiteLLM callback needs LiteLLM's proxy: pip install 'streamparse-tools[litellm]' "
                      f"(tested with litellm 1.108.7) ({exc})") from exc

from ..wire.openai import ChunkRewriter, rewrite_completion

__all__ = ["StreamparseCallback", "callback"]

log = logging.getLogger("streamparse.integrations")


class StreamparseCallback(CustomLogger):
    """Structured tool calls for a LiteLLM proxy whose backend writes them as text.

    ``parse_without_tools``: read answers to requests that offered no tools too (off: a client that offered
    none did not ask for calls). ``parser_options``: ``StreamParser`` options (``dialects=...``)."""

    def __init__(self, *, parse_without_tools: bool = False, **parser_options: Any) -> None:
        super().__init__()
        self.parse_without_tools = parse_without_tools
        self.parser_options = parser_options

    async def async_post_call_streaming_iterator_hook(self, user_api_key_dict: Any, response: Any,
                                                      request_data: dict[str, Any]) -> AsyncGenerator[Any, None]:
        if not _is_chat(request_data):
            async for item in response:
                yield item
            return
        rewriter = ChunkRewriter(request=request_data, parse_without_tools=self.parse_without_tools,
                                 report_diagnostics=False, **self.parser_options)
        async for item in response:
            if not isinstance(item, litellm.ModelResponseStream):
                yield item  # not a chat chunk (a string, an error frame): not ours
                continue
            for out in rewriter.feed(_plain(item)):
                yield litellm.ModelResponseStream(**out)
        for out in rewriter.close():
            yield litellm.ModelResponseStream(**out)

    async def async_post_call_success_hook(self, data: dict[str, Any], user_api_key_dict: Any,
                                           response: Any) -> Any:
        if not _is_chat(data) or not isinstance(response, litellm.ModelResponse):
            return None
        rewritten = rewrite_completion(_plain(response), request=data, parse_without_tools=self.parse_without_tools,
                                       report_diagnostics=False, **self.parser_options)
        return litellm.ModelResponse(**dict(rewritten))


def _is_chat(request: Mapping[str, Any] | None) -> bool:
    return isinstance(request, Mapping) and isinstance(request.get("messages"), list)


def _plain(model: Any) -> dict[str, Any]:
    """A LiteLLM response as the JSON it stands for (fields left unset are left out, as on the wire)."""
    data: dict[str, Any] = model.model_dump(exclude_none=True)
    return data


callback = StreamparseCallback()
"""The instance ``litellm_settings: callbacks`` names: ``streamparse.integrations.litellm.callback``."""
