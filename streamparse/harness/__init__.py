"""The benchmark harness: workloads, baselines, the engines' parsers, the load test, the replay upstream
and the built-in examples.

Invariant: tools built on top of everything else; nothing outside ``harness`` (but the CLI) imports it.
"""

from __future__ import annotations

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
