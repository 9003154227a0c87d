"""Agent SDKs on the Responses API run a whole tool loop through the proxy: the OpenAI Agents SDK with its
default model (``OpenAIResponsesModel``) and pydantic-ai's ``OpenAIResponsesModel``. The model writes its call
as text, the proxy gives the SDK a ``function_call``, the SDK runs the tool and sends its output back, and the
final answer ends the run."""

from __future__ import annotations

import asyncio
from typing import Iterator

import pytest
from agents import Agent, Runner, function_tool, set_default_openai_api, set_default_openai_client, set_tracing_disabled
from openai import AsyncOpenAI

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread

from upstreams import RecordingModel

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
ran: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    ran.append(city)
    return f"sunny in {city}"


@pytest.fixture(scope="module")
def model() -> Iterator[RecordingModel]:
    yield RecordingModel()


@pytest.fixture(scope="module")
def proxy(model: RecordingModel) -> Iterator[ServerThread]:
    with ServerThread(model.app()) as up, \
            ServerThread(create_app(ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes"}))) as server:
        yield server


@pytest.mark.parametrize("streamed", [False, True])
def test_runner_completes_a_tool_loop_with_the_default_model(proxy: ServerThread, model: RecordingModel,
                                                              streamed: bool) -> None:
    model.reset("Let me check.\n" + CALL, "It is sunny in Paris.")
    ran.clear()
    set_tracing_disabled(True)
    set_default_openai_api("responses")  # the SDK's default, said so that no environment can change it
    set_default_openai_client(AsyncOpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0),
                              use_for_tracing=False)
    agent = Agent(name="weather", instructions="Answer with the tools.", tools=[get_weather], model="local-model")

    async def run() -> str:
        if not streamed:
            return str((await Runner.run(agent, "Weather in Paris?")).final_output)
        result = Runner.run_streamed(agent, "Weather in Paris?")
        async for _ in result.stream_events():
            pass
        return str(result.final_output)

    assert asyncio.run(run()) == "It is sunny in Paris."
    assert ran == ["Paris"]
    assert len(model.requests) == 2
    last = model.requests[-1]["messages"]
    assert last[0]["role"] == "system" and "Answer with the tools." in last[0]["content"]
    assert "sunny in Paris" in last[-1]["content"]  # the tool's output went back, rendered for a tool-less model


@pytest.mark.parametrize("streamed", [False, True])
def test_pydantic_ai_responses_model_completes_a_tool_loop(proxy: ServerThread, model: RecordingModel,
                                                          streamed: bool) -> None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model.reset(CALL, "It is sunny in Paris.")  # (a text before the call would end run_stream: pydantic-ai's rule)
    seen: list[str] = []
    agent = PydanticAgent(OpenAIResponsesModel("local-model", provider=OpenAIProvider(
        base_url=proxy.url + "/v1", api_key="sk-test")), instructions="Answer with the tools.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        seen.append(city)
        return f"sunny in {city}"

    async def run() -> str:
        if not streamed:
            return (await agent.run("Weather in Paris?")).output
        async with agent.run_stream("Weather in Paris?") as result:
            return await result.get_output()

    assert asyncio.run(run()) == "It is sunny in Paris."
    assert seen == ["Paris"] and len(model.requests) == 2
    assert "sunny in Paris" in model.requests[-1]["messages"][-1]["content"]
