"""OpenAI chunks in, OpenAI chunks out: what the proxy does, as a library call on chunk dicts (no server)."""
import json

from streamparse import openai as sp_openai

request = {"model": "m", "stream": True, "tools": [{"type": "function", "function": {"name": "get_weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}


def upstream_chunks():  # what a server without a tool parser streams: the call is plain text in delta.content
    for piece in ["Checking.\n<tool_", 'call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>', ""]:
        finish = None if piece else "stop"
        yield {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
               "choices": [{"index": 0, "delta": {"content": piece} if piece else {}, "finish_reason": finish}]}


for chunk in sp_openai.rewrite_stream_sync(upstream_chunks(), request=request):  # async: rewrite_stream
    print(json.dumps(chunk["choices"][0]))

completion = {"id": "c2", "object": "chat.completion", "created": 0, "model": "m", "choices": [{
    "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content":
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'}}]}
message = sp_openai.rewrite_completion(completion, request=request)["choices"][0]  # not streamed
print(message["finish_reason"], json.dumps(message["message"]["tool_calls"][0]["function"]))
