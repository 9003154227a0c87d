"""A second LiteLLM callback for the order test: it writes what each chunk and each whole answer held when it
reached it (text, and whether structured tool calls were there) to the file ``ORDER_PROBE_LOG`` names.

LiteLLM loads it from beside the test's config.yaml (``callbacks: ["order_probe.probe"]``)."""

from __future__ import annotations

import json
import os
from typing import Any, AsyncGenerator

from litellm.integrations.custom_logger import CustomLogger


def _write(kind: str, text: str, calls: int) -> None:
    with open(os.environ["ORDER_PROBE_LOG"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"kind": kind, "text": text, "calls": calls}) + "\n")


class OrderProbe(CustomLogger):  # type: ignore[misc]
    async def async_post_call_streaming_iterator_hook(self, user_api_key_dict: Any, response: Any,
                                                      request_data: dict[str, Any]) -> AsyncGenerator[Any, None]:
        async for item in response:
            for choice in getattr(item, "choices", None) or ():
                delta = choice.delta
                _write("chunk", delta.content or "", len(delta.tool_calls or ()))
            yield item

    async def async_post_call_success_hook(self, data: dict[str, Any], user_api_key_dict: Any, response: Any) -> Any:
        message = response.choices[0].message
        _write("whole", message.content or "", len(message.tool_calls or ()))
        return None


probe = OrderProbe()
