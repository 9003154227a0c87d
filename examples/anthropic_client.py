"""The anthropic SDK through `streamparse serve`: an OpenAI-compatible backend answers with `tool_use` blocks.

Start the proxy first, e.g. `streamparse serve --demo`, or `streamparse serve --upstream URL --tool-prompt hermes`
for a backend that ignores `tools`.
"""
import os

import anthropic

client = anthropic.Anthropic(base_url=os.environ.get("STREAMPARSE_URL", "http://127.0.0.1:8080"), api_key="local")
message = client.messages.create(
    model=os.environ.get("STREAMPARSE_MODEL", "hermes"), max_tokens=512,
    tools=[{"name": "get_weather", "description": "Current weather", "input_schema": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}],
    messages=[{"role": "user", "content": "Weather in Paris and Oslo?"}])
for block in message.content:
    if block.type == "text":
        print("text:", repr(block.text))
    elif block.type == "tool_use":
        print("tool_use:", block.id, block.name, block.input)
print("stop_reason:", message.stop_reason)
