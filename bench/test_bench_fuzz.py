"""The long seeded fuzz: the loop of ``tests/core/test_fuzz.py`` (inputs and checks from ``tests/fuzzing.py``),
a million cases or more, both modes, every dialect.

Opt-in by size, so that the default bench stays quick:

    python -m pytest bench/test_bench_fuzz.py -p no:cacheprovider -s                      # 2,000 cases (smoke)
    FUZZ_CASES=1000000 python -m pytest bench/test_bench_fuzz.py -p no:cacheprovider -s   # the long run
    FUZZ_CASES=1000000 FUZZ_SHARDS=2 python -m pytest bench/test_bench_fuzz.py -p no:cacheprovider -s -n 2

``FUZZ_SHARDS=k`` splits the run into ``k`` seeds (``FUZZ_SEED`` + 0 … k-1), one test each, so that
``-n`` spreads them over cores; each shard runs ``FUZZ_CASES / k`` cases. Each shard reports its
cases per second and stops at its first ten failures (seed and case printed: the seeded loop
reproduces it). Not a benchmark of speed: the timing is only printed.
"""

from __future__ import annotations

import os
import random
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from fuzzing import check_case, random_deltas, random_options, random_text  # noqa: E402

CASES = int(os.environ.get("FUZZ_CASES", "2000"))
SHARDS = max(1, int(os.environ.get("FUZZ_SHARDS", "1")))
SEED = int(os.environ.get("FUZZ_SEED", "1806"))


@pytest.mark.parametrize("shard", range(SHARDS))
def test_long_fuzz_keeps_every_promise(shard: int) -> None:
    seed, cases = SEED + shard, CASES // SHARDS
    rng = random.Random(seed)
    failures: list[str] = []
    started = time.perf_counter()
    for case in range(cases):
        text = random_text(rng)
        deltas = random_deltas(rng, text)
        tools, options = random_options(rng)
        try:
            check_case(text, deltas, tools, options)
        except Exception as exc:  # noqa: BLE001 - an escaping exception is a failure too
            failures.append(f"seed {seed} case {case}: {type(exc).__name__}: {str(exc)[:2000]}")
            if len(failures) >= 10:
                break
    elapsed = time.perf_counter() - started
    print(f"\nshard {shard} (seed {seed}): {case + 1} cases in {elapsed:.0f} s ({(case + 1) / elapsed:.0f}/s), "
          f"{len(failures)} failures")
    assert not failures, "\n".join(failures)
