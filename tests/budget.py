"""How many random examples the property tests and the seeded fuzz loops draw.

Invariant: a test states its full count once, as ``examples(FULL)``; the default run (CI, the
README's command) draws a quarter of it (never fewer than 25, never more than ``FULL``), the long
run draws all of it. The long run is ``HYPOTHESIS_PROFILE=long python -m pytest`` (or
``--hypothesis-profile=long``, which ``conftest.py`` passes on here). What a test asserts is the same
in both runs; a seeded loop's default cases are the first ones of its long run.
"""

from __future__ import annotations

import os

LONG_PROFILE = "long"
QUICK_DIVISOR = 4
QUICK_FLOOR = 25

long_run = os.environ.get("HYPOTHESIS_PROFILE", "") == LONG_PROFILE


def examples(full: int) -> int:
    """The number of examples (hypothesis) or cases (seeded loops) to draw in this run."""
    if long_run:
        return full
    return min(full, max(QUICK_FLOOR, full // QUICK_DIVISOR))
