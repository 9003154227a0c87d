"""The event types narrow in a type checker: the README's patterns pass ``mypy --strict``.

Invariant: ``tests/typing_check_events.py`` (the README's loop, ``match`` on the event classes and
on ``event.type``) type-checks cleanly, and a branch that reads another member's attribute does not:
so the clean result comes from narrowing on ``Event``'s discriminant, not from ``Any``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install -e '.[test]' brings it)")

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def _mypy(path: Path) -> tuple[str, int]:
    # Run from the project root so pyproject's [tool.mypy] (python_version 3.10) applies; no cache is
    # written, so parallel workers and runs never share one.
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", os.devnull, "--no-error-summary",
                           "--hide-error-context", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return done.stdout + done.stderr, done.returncode


def test_readme_event_patterns_pass_mypy_strict() -> None:
    out, status = _mypy(TESTS / "typing_check_events.py")
    assert status == 0, out
    assert "error" not in out, out


def test_a_branch_that_reads_another_events_field_is_an_error(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong_branch.py"
    wrong.write_text(
        "from streamparse import Event\n"
        "def f(event: Event) -> str:\n"
        "    if event.type == 'text':\n"
        "        return event.arguments\n"  # a ToolCall field, in the TextDelta branch
        "    return ''\n",
        encoding="utf-8",
    )
    out, status = _mypy(wrong)
    assert status == 1, out
    assert 'wrong_branch.py:4: error: "TextDelta" has no attribute "arguments"' in out, out
