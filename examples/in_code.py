"""Tool calls out of a model's streamed text, in code: no server, no network."""
import streamparse

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]

# What a model streams, in the pieces a server sends. The marker is split across two of them on purpose.
deltas = ["Let me check. <tool", '_call>{"name": "get_weather", ', '"arguments": {"city": "Paris", "days": "3"}}',
          "</tool_call> Anything else?"]

parser = streamparse.StreamParser(tools=tools)
for delta in deltas:
    for event in parser.feed(delta):
        if event.type == "text":  # released as soon as it cannot be markup
            print("text:", repr(event.text))
        elif event.type == "tool_call":  # emitted by the feed that completes it
            print("call:", event.name, event.parsed_arguments)  # days typed by the schema: 3, not "3"
        elif event.type == "diagnostic":  # what was repaired or refused, and why
            print("note:", event.code, event.message)
for event in parser.close():  # end of stream: flush what was held back
    print("end:", event.type)

result = streamparse.parse("".join(deltas), tools=tools)  # the same machine, whole text at once
print("whole:", repr(result.content), [(c.name, c.arguments) for c in result.tool_calls])
