"""``benchmark.time_in_turns``, the one loop every timed run of the benchmark comes from: parsers take turns
round by round, each keeps its best time and counts its runs, and the rounds stop once the time budget per
parser is spent (after a whole round, so every parser has as many runs as the others)."""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import pytest

from streamparse.harness import benchmark as bm
from streamparse.harness.baselines import PARSERS
from streamparse.harness.results import Result


def _result(parser: str) -> Result:
    return Result("prose", parser, 10, 3, float("inf"), 0, float("nan"), 0, [], [], None)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, float]]]:
    """timed_run answers from a script per parser; the list records who ran, in order."""
    script = {"identity": iter([0.05, 0.02, 0.04, 0.03]), "floor": iter([0.01, 0.03, 0.01, 0.02])}
    names = {PARSERS[name]: name for name in script}
    ran: list[tuple[str, float]] = []

    def fake(factory: Any, tools: Any, deltas: Sequence[str]) -> float:
        seconds = next(script[names[factory]])
        ran.append((names[factory], seconds))
        return seconds

    monkeypatch.setattr(bm, "timed_run", fake)
    yield ran


def test_parsers_take_turns_and_keep_their_best(scripted: list[tuple[str, float]],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm, "TIME_BUDGET", 10.0)  # never spent: every round runs
    pair = [_result("identity"), _result("floor")]
    bm.time_in_turns(pair, PARSERS, None, ["a"], rounds=3)
    assert [name for name, _ in scripted] == ["identity", "floor"] * 3
    assert (pair[0].seconds, pair[0].runs) == (0.02, 3) and (pair[1].seconds, pair[1].runs) == (0.01, 3)


def test_a_spent_budget_ends_the_rounds_after_a_whole_round(scripted: list[tuple[str, float]],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm, "TIME_BUDGET", 0.04)  # 2 parsers: 0.08 s; spent 0.06 after round 1, 0.11 after 2
    pair = [_result("identity"), _result("floor")]
    bm.time_in_turns(pair, PARSERS, None, ["a"], rounds=4)
    assert len(scripted) == 4 and pair[0].runs == pair[1].runs == 2


def test_one_parser_alone_is_measures_burst_and_runs_at_least_once(scripted: list[tuple[str, float]],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm, "TIME_BUDGET", 0.0)  # spent from the first run: one round only
    alone = [_result("identity")]
    bm.time_in_turns(alone, PARSERS, None, ["a"], rounds=5)
    assert scripted == [("identity", 0.05)] and (alone[0].seconds, alone[0].runs) == (0.05, 1)
