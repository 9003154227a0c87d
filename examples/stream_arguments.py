"""A long argument reaches the client while the model writes it: `stream_arguments=True`."""
import streamparse

tools = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]
deltas = ['<tool_call>{"name": "write_file", "arguments": {"path": "a.py", ', '"content": "print(1)\\n',
          'print(2)\\n"}}', "</tool_call>"]

parser = streamparse.StreamParser(tools=tools, stream_arguments=True)
fragments = []
for delta in deltas:
    for event in parser.feed(delta):
        if event.type == "tool_call_start":  # as soon as the name is known and declared
            print("start:", event.name)
        elif event.type == "tool_call_delta":  # pieces of the arguments' JSON text, in order
            fragments.append(event.arguments_fragment)
            print("piece:", repr(event.arguments_fragment))
        elif event.type == "tool_call":  # the whole call, same index and id; the pieces joined are its arguments
            print("call:", event.name, event.parsed_arguments, "".join(fragments) == event.arguments)
