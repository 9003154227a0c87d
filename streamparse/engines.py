"""The serving engines' own streaming tool parsers (vLLM, SGLang) as benchmark sessions.

Invariant: importing this module never imports vllm, sglang or torch; each comparator
is loaded when asked for, and a missing package is one line of notes, never an error.
"""

from __future__ import annotations

from .baselines import SessionFactory

__all__ = ["engine_comparators"]


def engine_comparators(dialect: str) -> tuple[dict[str, SessionFactory], list[str]]:
    """Sessions for the engines' parsers of ``dialect`` (e.g. ``"vllm:hermes"``), and a note per engine not available."""
    return {}, [f"vllm, sglang: comparators for {dialect} not wired yet"]
