"""``ReasoningSplit`` (what the engines' reasoning parsers hand on) and ``configure`` (what they are set to),
without any engine: reasoning as the library reads it, the rest raw, for any chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import streamparse
from streamparse.integrations.configure import ENV_DIALECTS, engine_setup, function_tools, reasoning_markers
from streamparse.integrations.reading import ReasoningSplit, pieces

CALL = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
CASES = [
    # (answer, options, reasoning, rest)
    ("<think>plan</think>Answer " + CALL, {}, "plan", "Answer " + CALL),
    ("\n<think>a < b</thi</think>\n\nx", {}, "a < b</thi", "\n\n\nx"),
    ("done thinking</think>text", {"start_in_reasoning": True}, "done thinking", "text"),
    ("No reasoning, " + CALL, {}, "", "No reasoning, " + CALL),
    (CALL + " after", {}, "", CALL + " after"),
    ("<think>cut off", {}, "cut off", ""),
    ("  \n", {}, "", "  \n"),
    ("<seed:think>s</seed:think>r<seed:tool_call><function=f></function></seed:tool_call>",
     {"dialects": ("seed_oss",)}, "s", "r<seed:tool_call><function=f></function></seed:tool_call>"),
]


def _split(text: str, options: dict[str, object], cuts: list[int]) -> tuple[str, str]:
    split = ReasoningSplit(dict(options))
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    said, rest = "", ""
    for a, b in zip(bounds, bounds[1:]):
        r, t = split.feed(text[a:b])
        said, rest = said + r, rest + t
    r, t = split.close()
    assert split.ended
    return said + r, rest + t


@pytest.mark.parametrize("text, options, reasoning, rest", CASES)
def test_reasoning_then_the_raw_rest(text: str, options: dict[str, object], reasoning: str, rest: str) -> None:
    assert _split(text, options, []) == (reasoning, rest)


@given(st.sampled_from(CASES), st.lists(st.integers(0, 120), max_size=20))
def test_any_chunking_splits_at_the_same_place(case: tuple[str, dict[str, object], str, str], cuts: list[int]) -> None:
    text, options, reasoning, rest = case
    assert _split(text, options, cuts) == (reasoning, rest)


@given(st.text(alphabet="<>/thinkab \n", max_size=40), st.lists(st.integers(0, 40), max_size=8))
def test_no_character_is_lost(text: str, cuts: list[int]) -> None:
    """The reasoning is the library's; the rest, read again, gives the library's text after it."""
    said, rest = _split(text, {}, cuts)
    library = streamparse.parse(text)
    assert said == library.reasoning or library.reasoning.startswith(said)
    again = streamparse.parse(rest)
    assert said + again.reasoning == library.reasoning
    assert again.content == library.content


def test_pieces_keeps_order_and_can_fold_reasoning_into_text() -> None:
    parser = streamparse.StreamParser([{"name": "f", "parameters": {}}])
    events = parser.feed("<think>r</think>t" + CALL) + parser.close()
    split = pieces(events)
    assert (split.text, split.reasoning, [c.name for c in split.calls]) == ("t", "r", ["f"])
    assert pieces(events, reasoning_as_text=True).text == "rt"


def test_setup_explicit_dialects_win_and_bad_names_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DIALECTS, "qwen25, kimi_k2")
    setup = engine_setup(None)
    assert (setup.dialects, setup.source) == (("hermes", "kimi_k2"), "env")
    monkeypatch.setenv(ENV_DIALECTS, "no_such_format")
    with pytest.raises(ValueError, match="no_such_format"):
        engine_setup(None)


def test_setup_without_template_reads_every_dialect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_DIALECTS, raising=False)
    setup = engine_setup(None, {"enable_thinking": True})
    assert (setup.dialects, setup.start_in_reasoning, setup.source) == (None, False, "auto")
    assert setup.notes


def test_setup_never_raises_on_a_broken_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_DIALECTS, raising=False)
    for template in ("{% for %}", "{{ raise_exception('no') }}", "\x00" * 10):
        setup = engine_setup(template, {"k": object()})
        assert setup.names is None or set(setup.names) <= set(streamparse.DIALECTS) | {"derived"}
        assert setup.source in ("auto", "template")


def test_function_tools_keep_named_functions_in_every_shape() -> None:
    tools = [{"type": "function", "function": {"name": "a", "parameters": {}}},
             {"type": "function", "name": "b", "parameters": {}},
             {"name": "c", "input_schema": {}},
             {"type": "web_search"}, "junk"]
    assert [t.get("function", t)["name"] for t in function_tools(tools) or []] == ["a", "b", "c"]
    assert function_tools([]) is None


def test_markers_follow_the_dialects() -> None:
    openers, enders = reasoning_markers(("hermes",))
    assert (openers, enders) == (("<think>",), ("</think>",))
    openers, _ = reasoning_markers(None)
    assert "<seed:think>" in openers and "[THINK]" in openers
