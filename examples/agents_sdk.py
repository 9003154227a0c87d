"""The OpenAI Agents SDK with its default model (the Responses API) runs a tool loop through `streamparse serve`.

Start the proxy first, e.g. `streamparse serve --demo` (a built-in upstream replays a model's answer, then answers
in text once the tools have answered), or `streamparse serve --upstream http://127.0.0.1:8000/v1` in front of your
llama.cpp / MLX / vLLM server.
"""
import asyncio
import os
import sys

from agents import Agent, Runner, function_tool, set_default_openai_client, set_tracing_disabled
from openai import AsyncOpenAI


@function_tool
def get_weather(city: str, metric: bool = True, days: int = 1) -> str:
    """Current weather for a city."""
    sys.stdout.write(f"[tool] get_weather(city={city!r}, metric={metric}, days={days})\n")  # one write: the SDK
    # runs the two calls concurrently, and print's two writes (text, then newline) could interleave
    return f"sunny in {city}"


set_tracing_disabled(True)  # traces would go to OpenAI
base_url = os.environ.get("STREAMPARSE_URL", "http://127.0.0.1:8080") + "/v1"
set_default_openai_client(AsyncOpenAI(base_url=base_url, api_key="local"), use_for_tracing=False)
agent = Agent(name="weather", instructions="Answer with the tools.", tools=[get_weather],
              model=os.environ.get("STREAMPARSE_MODEL", "hermes"))  # the demo replays the answer this name picks
result = asyncio.run(Runner.run(agent, "Weather in Paris and Oslo?"))
print("final:", result.final_output)
