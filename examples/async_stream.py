"""Async code (asyncio or trio, through anyio): wrap any async iterator of text deltas."""
import anyio

import streamparse

tools = [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}}}}]


async def model_deltas():  # stands for your model client's token stream; a bare [call(...)] list counts at a line start
    for piece in ["Searching.\n[sea", "rch(query='lark grammars')]", "\nDone."]:
        await anyio.sleep(0)
        yield piece


async def main() -> None:
    async for event in streamparse.aparse(model_deltas(), tools):
        if event.type == "text":
            print("text:", repr(event.text))
        elif event.type == "tool_call":
            print("call:", event.name, event.parsed_arguments)


anyio.run(main)
