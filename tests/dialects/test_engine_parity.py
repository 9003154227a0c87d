"""Parity with the serving engines' own parser tests (issue 18 §4).

Invariant: every case transcribed in ``engine_cases`` gives the engine's expected calls and
content when run as its operator would run it (auto-detection, or its dialect pinned), whole
and in every chunking; where the engine's expectation breaks a streamparse promise (text
dropped, markup or reasoning left in content, arguments invented) the case states what
streamparse does instead, its id says which promise, and it is left out of the pass rate.
Streaming equals the whole-text parse in both modes for every case, passing or not.
"""

from __future__ import annotations

import pytest

from engine_cases import CASES, Case
from engine_parity import MODES, check, table


def _param(case: Case) -> object:
    marks = [pytest.mark.xfail(strict=False, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_engine_case_as_operator_runs_it(case: Case) -> None:
    auto = check(case, "auto")
    if auto:
        pinned = check(case, "pinned")
        assert not pinned, f"auto: {auto}; pinned: {pinned}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_streaming_equals_whole_text_in_both_modes(case: Case, mode: str) -> None:
    outcome = check(case, mode)
    assert "differ from the whole text" not in outcome and not outcome.startswith("raised"), outcome


def test_every_promise_case_names_its_promise_in_its_id() -> None:
    for case in CASES:
        assert bool(case.promise) == ("--promise_" in case.id), case.id


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_the_report_counts_every_case_once() -> None:
    report = table()
    total = next(line for line in report.splitlines() if line.startswith("TOTAL"))
    counted = int(total.split()[1])
    assert counted == sum(1 for c in CASES if not c.promise)
