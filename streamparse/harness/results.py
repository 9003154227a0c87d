"""One parser's figures on one workload, as the benchmark, its report and its plot read them.

Invariant: a plain record with no behaviour beyond derived figures; it imports nothing from the
harness, so the benchmark that fills it and the report and plot that read it never import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Result:
    scenario: str
    parser: str
    chars: int
    deltas: int
    seconds: float
    calls: int
    peak_kib: float
    max_held: int | None
    latency_deltas: list[int]
    latency_us: list[float]
    correct: bool | None  # calls and text both equal to streamparse's whole-text parse
    note: str = ""  # what happened to this parser here (skipped, failed, timed otherwise), without its name
    calls_ok: int | None = None  # calls equal (name and parsed arguments) to the reference, position by position
    calls_expected: int | None = None
    text_ok: str | None = None  # "ok", "ws" (equal once whitespace runs are collapsed) or "differs"
    runs: int = 0  # timed runs; the best is reported
    engine: bool = False  # a serving engine's parser (from streamparse.engines)
    complete: bool = True  # False: the run was stopped at its deadline; chars and deltas are the part fed

    @property
    def mb_per_s(self) -> float:
        return self.chars / self.seconds / 1e6 if self.seconds else float("inf")

    @property
    def us_per_delta(self) -> float:
        return self.seconds / self.deltas * 1e6 if self.deltas else 0.0

    @property
    def skipped(self) -> bool:
        return self.seconds != self.seconds  # NaN

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d.update(mb_per_s=self.mb_per_s, us_per_delta=self.us_per_delta,
                 deltas_per_s=self.deltas / self.seconds if self.seconds else None,
                 calls_per_s=self.calls / self.seconds if self.seconds else None)
        return d
