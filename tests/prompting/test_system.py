"""System messages folded into one leading message (``prompting.system``), and the plan that applies it per
backend (``proxy.plan``), with and without tool prompting."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse.prompting import SYSTEM_ROLES, ToolChoice, fold_system, instructions
from streamparse.proxy.config import Backend
from streamparse.proxy.plan import plan_chat

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
# What the Anthropic front makes of a Claude Code turn: a system message after the first user message.
CONVERSATION = [
    {"role": "system", "content": "Lead."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "system", "content": "Mid-conversation note."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "system", "content": [{"type": "text", "text": "Late"}, {"type": "text", "text": "note."}]},
]


def test_several_system_messages_become_one_leading_message() -> None:
    before = copy.deepcopy(CONVERSATION)
    out = fold_system(CONVERSATION)
    assert CONVERSATION == before
    assert out == [{"role": "system", "content": "Lead.\n\nMid-conversation note.\n\nLate\nnote."},
                   *[m for m in CONVERSATION if m["role"] not in SYSTEM_ROLES]]


def test_no_leading_system_message_gets_one() -> None:
    messages = [{"role": "user", "content": "a"}, {"role": "developer", "content": "Be brief."},
                {"role": "assistant", "content": "b"}, {"role": "system", "content": ""}]
    assert fold_system(messages) == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "a"},
                                     {"role": "assistant", "content": "b"}]
    lead = [{"role": "developer", "content": "D", "name": "x"}, {"role": "user", "content": "a"},
            {"role": "system", "content": "S"}]
    assert fold_system(lead)[0] == {"role": "developer", "content": "D\n\nS", "name": "x"}


@pytest.mark.parametrize("messages", [
    [], [{"role": "user", "content": "a"}], [{"role": "system", "content": "S"}, {"role": "user", "content": "a"}],
    [{"role": "system", "content": [{"type": "text", "text": "S"}]}, {"role": "user", "content": "a"}],
])
def test_what_a_one_system_template_accepts_stays_as_it_is(messages: list[dict[str, Any]]) -> None:
    out = fold_system(messages)
    assert out == messages and all(a is not b for a, b in zip(out, messages))


_message = st.fixed_dictionaries({"role": st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
                                  "content": st.text(alphabet="ab ", max_size=4)})


@settings(max_examples=200, deadline=None)
@given(st.lists(_message, max_size=8))
def test_folding_keeps_every_message_and_all_system_text(messages: list[dict[str, Any]]) -> None:
    out = fold_system(messages)
    systems = [m for m in messages if m["role"] in SYSTEM_ROLES]
    assert [m for m in out if m["role"] not in SYSTEM_ROLES] == [m for m in messages if m["role"] not in SYSTEM_ROLES]
    assert sum(m["role"] in SYSTEM_ROLES for m in out) == min(len(systems), 1)
    if systems:
        assert out[0]["role"] in SYSTEM_ROLES and all(s["content"] in out[0]["content"] for s in systems)
        assert fold_system(out) == out  # folding twice changes nothing


# --------------------------------------------------------------------------- the plan, per backend

def backend(**options: Any) -> Backend:
    return Backend(name="b", upstream="http://127.0.0.1:9/v1", default=True, **options)


@pytest.mark.parametrize("tool_prompt", [None, "hermes"])
def test_inline_keeps_each_system_message_in_its_place(tool_prompt: str | None) -> None:
    payload = {"model": "m", "messages": CONVERSATION, "tools": TOOLS}
    sent = plan_chat(payload, backend(tool_prompt=tool_prompt)).upstream["messages"]
    assert [m["role"] for m in sent if m["role"] == "system"] == ["system"] * 3
    assert sent[2] == {"role": "system", "content": "Mid-conversation note."}
    if tool_prompt:  # the tool instructions go into the leading one only
        assert sent[0]["content"] == "Lead.\n\n" + instructions(TOOLS, "hermes", ToolChoice())
        assert sent[-1] == CONVERSATION[-1]
    else:
        assert sent == CONVERSATION


@pytest.mark.parametrize("tool_prompt", [None, "hermes"])
def test_fold_gives_the_backend_one_leading_system_message(tool_prompt: str | None) -> None:
    payload = {"model": "m", "messages": CONVERSATION, "tools": TOOLS}
    before = copy.deepcopy(payload)
    plan = plan_chat(payload, backend(tool_prompt=tool_prompt, system_messages="fold"))
    assert payload == before
    sent = plan.upstream["messages"]
    assert [m["role"] for m in sent].count("system") == 1 and sent[0]["role"] == "system"
    folded = "Lead.\n\nMid-conversation note.\n\nLate\nnote."
    if tool_prompt:  # folded first, then the instructions after all of the client's text
        assert sent[0]["content"] == folded + "\n\n" + instructions(TOOLS, "hermes", ToolChoice())
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    else:
        assert sent[0]["content"] == folded and plan.upstream["tools"] == TOOLS
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
