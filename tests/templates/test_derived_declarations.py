"""Declarations derived from llama.cpp's real templates (``templates.derive``) read as the written ones do.

Both directions: where a written declaration reads a template, the declaration derived from that template reads
every probe turn the same (the same calls, reasoning and content), whole and streamed at random chunkings; and
where no written declaration reads a template, ``read_template`` uses the derived one (here: the registry without
the written one, so the real template has no reader but its own).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from budget import examples
from readings import case, derivation, sources
from streamparse import StreamParser
from streamparse.core import template_reading
from streamparse.core.events import ReasoningDelta, TextDelta, ToolCall
from streamparse.dialects import DIALECTS
from streamparse.templates.conversations import PROBE_TOOLS

# The templates a declaration cannot be derived from, and why (each has a written declaration, or a pending one).
NOT_DERIVED = {
    "MiniMax-M3.jinja": "markup that is not a tag (]<]minimax[>[) between the calls' tags",
    "google-gemma-4-31B-it.jinja": "a value's markup depends on its type (<|\"|>…<|\"|> around strings only)",
    "google-gemma-4-31B-it-interleaved.jinja": "a value's markup depends on its type",
    "muse-glimmer.jinja": "the call's name written twice (the message's recipient and the invoke)",
}


def _shape(events: list[Any]) -> tuple[str, str, list[tuple[str, Any]]]:
    """(content, reasoning, calls). One marker alone after the last call is the turn's end, which one reading may
    take as its block's end and another leave (both are exact: ``trial_read``), so it is not content."""
    text = "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    if text and not any(ch.isspace() for ch in text) and not text[0].isalnum() and len(text) <= 40:
        text = ""
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    return text, reasoning, [(c.name, json.loads(c.arguments)) for c in events if isinstance(c, ToolCall)]


def _read(dialect: Any, deltas: list[str], reading: Any) -> tuple[str, str, list[tuple[str, Any]]]:
    parser = StreamParser(PROBE_TOOLS, dialects=[dialect], start_in_reasoning=reading.state.reasoning,
                          start_in_response=reading.state.response, generation_prompt=reading.rendered_prompt)
    return _shape([e for d in deltas for e in parser.feed(d)] + parser.close())


def _written(name: str) -> str | None:
    setup = case(name).setup
    return setup.format_name if setup.dialects and setup.derived is None else None


def _derived_cases() -> list[tuple[str, Any, Any, str]]:
    out = []
    for name in sources():
        found, reading = derivation(name)
        written = _written(name)
        if found.dialect is not None and reading is not None and written is not None:
            out += [(name, found.dialect, reading, text) for text, _ in reading.answers]
    return out


def test_a_declaration_is_derived_from_every_template_but_the_listed_ones() -> None:
    failures, derived = [], 0
    for name in sources():
        found, reading = derivation(name)
        if reading is None:
            continue  # the template writes no call
        if found.dialect is None:
            if name not in NOT_DERIVED:
                failures.append(f"{name}: not derived: {found.summary}")
            continue
        trial, text = reading.reads(found.dialect)
        if not trial.exact and name not in NOT_DERIVED:
            failures.append(f"{name}: the derived declaration ({found.summary}) misreads {text!r}: {trial.why}")
        derived += trial.exact
    assert not failures, "\n".join(failures)
    assert derived >= 58


def test_the_derived_declaration_reads_as_the_written_one() -> None:
    compared, failures = 0, []
    for name in sources():
        written = _written(name)
        found, reading = derivation(name)
        if written is None or found.dialect is None or reading is None or name in NOT_DERIVED:
            continue
        for text, expected in reading.answers:
            mine, theirs = _read(found.dialect, [text], reading), _read(written, [text], reading)
            if mine != theirs or mine[2] != expected:
                failures.append(f"{name} ({written}): {text!r}\n  derived {mine}\n  written {theirs}")
        compared += 1
    assert not failures, "\n".join(failures)
    assert compared >= 55


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_derived_declaration_streams_as_it_reads_whole(data: st.DataObject) -> None:
    name, dialect, reading, text = data.draw(st.sampled_from(_derived_cases()), label="template answer")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=20), label="cuts"))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)]) if b > a]
    assert _read(dialect, pieces, reading) == _read(dialect, [text], reading), (name, pieces)


@pytest.mark.parametrize("name, written", [
    ("Qwen-Qwen2.5-7B-Instruct.jinja", "hermes"), ("Qwen3-Coder.jinja", "qwen3_coder"),
    ("moonshotai-Kimi-K2.jinja", "kimi_k2"), ("deepseek-ai-DeepSeek-V3.2.jinja", "deepseek_v32"),
    ("unsloth-mistral-Devstral-Small-2507.jinja", "mistral_v11"), ("meta-llama-Llama-3.3-70B-Instruct.jinja", "llama3_json"),
])
def test_without_its_written_declaration_a_template_is_read_by_the_derived_one(
        name: str, written: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry without the format the template writes: ``read_template``'s decision falls to the declaration
    derived from the template itself, which reads every probe turn exactly, and the notes say so."""
    assert case(name).setup.format_name == written
    monkeypatch.setattr(template_reading, "DIALECTS", {k: v for k, v in DIALECTS.items() if k != written})
    setup = template_reading.decide(sources()[name], {}, None, None)
    assert setup.derived is not None and setup.dialects is not None and setup.dialects[0] is setup.derived, setup.notes
    assert any("derived from the template is in use" in note for note in setup.notes)
    reading = case(name).reading
    assert reading is not None
    for text, expected in reading.answers:
        assert _read(setup.derived, [text], reading)[2] == expected
