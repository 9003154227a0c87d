"""The openai SDK, streaming, through `streamparse serve`: tool calls arrive as `delta.tool_calls`.

Start the proxy first, e.g. `streamparse serve --demo` (a built-in upstream replays a model's answer), or
`streamparse serve --upstream http://127.0.0.1:8000/v1` in front of your llama.cpp / MLX / vLLM server.
"""
import os

import openai

client = openai.OpenAI(base_url=os.environ.get("STREAMPARSE_URL", "http://127.0.0.1:8080") + "/v1", api_key="local")
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "metric": {"type": "boolean"},
                   "days": {"type": "integer"}},
    "required": ["city"]}}}]

stream = client.chat.completions.create(
    model=os.environ.get("STREAMPARSE_MODEL", "hermes"),  # the demo replays the answer this name picks
    messages=[{"role": "user", "content": "Weather in Paris and Oslo?"}], tools=tools, stream=True)
for chunk in stream:
    for choice in chunk.choices:
        if choice.delta.content:
            print(choice.delta.content, end="", flush=True)
        for call in choice.delta.tool_calls or []:
            print(f"\n[tool_call {call.index}] {call.function.name}({call.function.arguments})")
        if choice.finish_reason:
            print(f"\nfinish_reason: {choice.finish_reason}")
