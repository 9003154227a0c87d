"""The engines group of `streamparse bench` on every format: the comparator table, the mixed stream per
format, deltas that keep a model's special tokens whole, the per-family tokenizer stand-in, and the one
summary table. With vllm / sglang installed, every comparator runs on its format's mixed stream and the
calls it gets right are pinned; without them those tests skip with one line each.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from streamparse.dialects.render import RENDERERS
from streamparse.harness import benchmark as bm
from streamparse.harness import engines
from streamparse.harness.check import check, reference
from streamparse.harness.engines_tokens import KEYED_ON_IDS, VOCABULARIES, StandInTokenizer, whole_tokens
from streamparse.harness.report import best_engine, format_engines
from streamparse.harness.results import Result
from streamparse.harness.workloads import LAYOUT, MIXED_LARGE, build_workload, several, split_keeping

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, when the engines import it

FORMATS = list(engines.COMPARATORS)


def test_every_compared_format_is_a_streamparse_dialect_and_sessions_are_named_engine_colon_parser() -> None:
    assert set(FORMATS) <= set(RENDERERS)
    compared = {f"{e}:{p}" for pairs in engines.COMPARATORS.values() for e, p in pairs}
    assert not compared & set(engines.NOT_COMPARED)  # a parser left out says why, and is not run
    assert {"glm45", "kimi_k2", "deepseek_v3", "deepseek_v31", "mistral", "llama3_json", "pythonic", "minimax_m2",
            "seed_oss", "openai"} <= set(FORMATS)
    for pairs in engines.COMPARATORS.values():
        assert pairs and all(engine in ("vllm", "sglang") and name for engine, name in pairs)
        assert len(set(pairs)) == len(pairs)


@pytest.mark.parametrize("dialect", FORMATS)
def test_mixed_stream_is_deterministic_and_streamparse_reads_the_calls_as_written(dialect: str) -> None:
    workload = build_workload(f"mixed:{dialect}")
    assert workload.text == build_workload(f"mixed:{dialect}").text
    text, calls = reference(workload)
    assert calls == workload.calls  # five calls, arguments as written
    assert [name for name, _ in calls] == ["get_weather", "search_recipes", "get_weather", "search_recipes",
                                           "write_file"]
    assert len(calls[-1][1]["content"]) >= MIXED_LARGE - 100  # the large one
    assert len(workload.call_ends) == 5 and workload.call_ends == sorted(workload.call_ends)
    assert workload.call_ends[-1] <= len(workload.text)
    sentences = len([s for s in text.split(".") if s.strip()])
    assert sentences == {"only": 0, "end": 1}.get(LAYOUT.get(dialect, ""), 4)  # prose before, between, after


def test_several_calls_in_one_block_or_one_after_the_other() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [("f", {"a": 1}), ("g", {})]
    text, ends = several("mistral", calls)
    assert text == '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]'
    assert [text[:e][-3:] for e in ends] == ["1}}", "{}}"]  # each call complete at the end of its object
    text, ends = several("hermes", calls)
    assert text.count("<tool_call>") == 2 and "</tool_call>\n<tool_call>" in text
    assert ends[1] > ends[0]
    text, _ = several("openai", calls)
    assert text.count("<|start|>assistant") == 1  # the second call is a message of its own


def test_split_keeping_cuts_every_4_characters_but_never_inside_a_special_token() -> None:
    text = "ab<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}xyzuvw"
    deltas = split_keeping(text, whole_tokens("deepseek_v31"))
    assert "".join(deltas) == text
    assert deltas[:4] == ["ab", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "f"]
    assert all(len(d) <= 4 for d in deltas if d not in VOCABULARIES["deepseek_v31"][0])
    assert split_keeping("abcdefgh", ()) == ["abcd", "efgh"]


def test_mixed_streams_keep_special_tokens_whole_and_nothing_else_changes() -> None:
    for dialect in ("kimi_k2", "hermes", "olmo3"):
        workload = build_workload(f"mixed:{dialect}")
        deltas = bm.deltas_for(workload)
        assert "".join(deltas) == workload.text
        whole = whole_tokens(dialect)
        assert all(d in whole or len(d) <= 4 for d in deltas)
        assert not any(t in d and d != t for d in deltas for t in whole)
    agent = build_workload("agent:hermes")
    assert bm.deltas_for(agent) == bm.split(agent.text, 4)  # other workloads: plain 4-character cuts


def test_stand_in_tokenizer_per_family() -> None:
    deepseek = StandInTokenizer("deepseek_v3")
    assert deepseek.get_vocab()["<｜tool▁calls▁begin｜>"] == 128806  # the real ids, keyed on by vLLM's parser
    assert deepseek.get_vocab()["<｜tool▁sep｜>"] == 128814
    assert StandInTokenizer("kimi_k2").get_vocab()["<|tool_call_argument_begin|>"] == 163598
    assert StandInTokenizer("mistral").get_vocab()["[TOOL_CALLS]"] == 5
    glm = StandInTokenizer("glm45")
    text = "x<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>"
    ids = glm.encode(text)
    assert glm.decode(ids) == text and len(set(ids)) == len(ids) == 10  # 6 tokens, 4 pieces
    assert min(glm.get_vocab().values()) > 128_000 and max(glm.get_vocab().values()) < glm.FIRST_PIECE_ID
    other = StandInTokenizer("gigachat3")  # no family table: a tokenizer that still round-trips
    assert other.decode(other.encode("<|message_sep|>a")) == "<|message_sep|>a"
    assert set(KEYED_ON_IDS) <= set(VOCABULARIES)
    assert whole_tokens("xlam") == ()


def _row(scenario: str, parser: str, us: float, right: bool = True, *, engine: bool = True) -> Result:
    r = Result(scenario, parser, 1000, 250, us * 250 / 1e6, 5 if right else 3, float("nan"), None, [], [], None)
    r.calls_ok, r.calls_expected, r.text_ok, r.engine = (5 if right else 2), 5, "ok", engine
    return r


def test_summary_table_and_ratio_use_only_engines_that_got_every_call_right() -> None:
    results = [_row("mixed:mistral", "streamparse", 1.0, engine=False), _row("mixed:mistral", "vllm:mistral", 4.0),
               _row("mixed:mistral", "sglang:mistral", 0.5, right=False),
               _row("mixed:phi4_mini", "streamparse", 1.0, engine=False),
               _row("mixed:phi4_mini", "vllm:phi4_mini_json", 0.2, right=False)]
    assert best_engine(results, "mixed:mistral").parser == "vllm:mistral"  # type: ignore[union-attr]
    assert best_engine(results, "mixed:phi4_mini") is None
    ratios = bm.ratios(results)
    assert ratios["mistral_streamparse_over_best_engine"] == 0.25
    assert "phi4_mini_streamparse_over_best_engine" not in ratios  # no yardstick: no ratio
    table = format_engines(results)
    lines = table.splitlines()
    assert lines[1].startswith("== engines") and len(lines) == 5  # blank, title, head, 2 formats
    mistral = next(line for line in lines if line.startswith("mistral"))
    assert "vllm:mistral" in mistral and "0.250×" in mistral and "sglang:mistral 0.5 [2/5 / ok]" in mistral
    phi = next(line for line in lines if line.startswith("phi4_mini"))
    assert "none right" in phi and "×" not in phi
    assert format_engines([_row("prose", "streamparse", 1.0, engine=False)]) == ""


def test_engines_group_is_one_mixed_stream_per_format_and_engines_skip_dialect_workloads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert bm.SCENARIOS["engines"]() == [f"mixed:{d}" for d in FORMATS]
    asked: list[str] = []

    def fake(dialect: str) -> tuple[dict[str, Any], list[str]]:
        asked.append(dialect)
        return {}, []

    monkeypatch.setattr("streamparse.harness.engines.engine_comparators", fake)
    bm.run_suite(["dialect:kimi_k2", "mixed:glm45"], parsers={"streamparse": bm.PARSERS["streamparse"]}, quick=True,
                 log=lambda s: None)
    assert asked == ["glm45"]


# ----------------------------------------------------------------------------- with the engines installed

# Calls right (of 5) on each format's mixed stream, as the pinned versions (bench/requirements-engines.txt) give
# them; the others run but miss calls, which `streamparse bench` reports. A change here is worth a look.
MISSES = {"vllm:mistral": 2,  # arguments of some calls start with ": " (where a 4-character cut falls)
          "sglang:mistral": 1,  # the first call of the array; the rest comes out as text
          "vllm:jamba": 2, "vllm:xlam": 4,  # xlam: the large call's arguments stop at "{" (nothing left for close)
          "sglang:cohere_command4": 2, "sglang:gemma4": 2,
          "vllm:functiongemma": 2,  # integer arguments dropped
          "sglang:interns1": 0,  # looks for "<|action_start|> <|plugin|>" (a space); the template writes none
          "vllm:gigachat3": 1, "sglang:gigachat3": 1}  # one call per message
NOT_LOADED = {"vllm:internlm"}  # raises on a stream with a second call (ValueError): a failed row in the table
CASES = [(d, f"{e}:{p}") for d, pairs in engines.COMPARATORS.items() for e, p in pairs]


def _run(session: Any, deltas: list[str]) -> tuple[str, list[tuple[str, str]]]:
    text, calls = [], []
    for delta in deltas:
        t, c = session.feed(delta)
        text.append(t)
        calls += c
    t, c = session.close()
    return "".join(text) + t, calls + c


@pytest.mark.parametrize("dialect,name", CASES)
def test_each_engine_parser_on_its_formats_mixed_stream(dialect: str, name: str) -> None:
    engine = name.split(":")[0]
    if importlib.util.find_spec(engine) is None:
        pytest.skip(f"{engine} not installed (bench/README.md: installing the engine comparators)")
    sessions, notes = engines.engine_comparators(dialect)
    assert name in sessions, notes
    workload = build_workload(f"mixed:{dialect}")
    expected = reference(workload)
    if name in NOT_LOADED:
        with pytest.raises(Exception):
            _run(sessions[name](workload.tools), bm.deltas_for(workload))
        return
    text, calls = _run(sessions[name](workload.tools), bm.deltas_for(workload))
    right, _ = check(text, calls, expected)
    assert right == MISSES.get(name, 5)
    if name not in MISSES:
        assert [(n, json.loads(a)) for n, a in calls] == workload.calls
