"""The openai SDK's Responses API, streaming, through `streamparse serve`: calls arrive as `function_call` items.

Start the proxy first, e.g. `streamparse serve --demo` (a built-in upstream replays a model's answer), or
`streamparse serve --upstream http://127.0.0.1:8000/v1` in front of your llama.cpp / MLX / vLLM server.
"""
import os

import openai

client = openai.OpenAI(base_url=os.environ.get("STREAMPARSE_URL", "http://127.0.0.1:8080") + "/v1", api_key="local")
tools = [{"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "metric": {"type": "boolean"},
                   "days": {"type": "integer"}},
    "required": ["city"]}}]

with client.responses.stream(
        model=os.environ.get("STREAMPARSE_MODEL", "hermes"),  # the demo replays the answer this name picks
        input="Weather in Paris and Oslo?", tools=tools) as stream:
    for event in stream:
        if event.type == "response.output_text.delta":
            print(event.delta, end="", flush=True)
        elif event.type == "response.output_item.done" and event.item.type == "function_call":
            print(f"\n[function_call {event.item.call_id}] {event.item.name}({event.item.arguments})")
    response = stream.get_final_response()
print(f"\nstatus: {response.status}; items: {[item.type for item in response.output]}")
