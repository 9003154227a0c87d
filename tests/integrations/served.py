"""A server process a test starts: its output in a log file, ready once a URL answers 200, stopped on exit.

Invariant: the process is always stopped (terminate, then kill after ``grace`` seconds), and a start that fails,
by exiting or by outlasting ``timeout``, fails the test with the end of its log.
"""

from __future__ import annotations

import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

import httpx
import pytest


@contextmanager
def served(cmd: list[str], ready_url: str, log_path: Path, *, name: str, timeout: float, poll: float = 0.5,
           grace: float = 20, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Iterator[None]:
    """Run ``cmd`` (stdout and stderr to ``log_path``) until ``ready_url`` answers 200, then yield."""
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"{name} exited ({proc.returncode}):\n{log_path.read_text()[-3000:]}")
                try:
                    if httpx.get(ready_url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"{name} did not start:\n{log_path.read_text()[-3000:]}")
                time.sleep(poll)
            yield
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
