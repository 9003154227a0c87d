"""Opt-in: ``canitoolcall probe`` through ``streamparse serve`` scores at least what llama.cpp scores alone.

The same run as ``bench/probe/run_probe.py`` (whose ``run_model`` this test calls): llama.cpp's
``llama-server --jinja`` on one thread on a free loopback port, probed directly (9 scenarios, non-stream,
stream and stream = non-stream: 27 checks), then ``streamparse serve --upstream`` (no other flag) in front
of it, probed the same way. Asserts that streamparse passes at least as many checks as llama.cpp alone,
and no fewer than the floor measured for that model file (``FLOORS``, keyed by the GGUF's sha256; a model
not listed gets only the first assertion).

Never part of the default run: marker ``realmodel`` (deselected by ``addopts``), and it skips unless both
of these are set:

- ``STREAMPARSE_LLAMA_SERVER`` (or ``LLAMA_SERVER``): a llama.cpp ``llama-server`` binary;
- ``STREAMPARSE_GGUF``: the model file (Qwen2.5-Coder 0.5B or 1.5B Instruct Q4_K_M: how to get them is in
  ``bench/probe/results.md``).

Run (4 to 7 minutes for the 0.5B, 5 to 10 for the 1.5B, on one busy core)::

    STREAMPARSE_LLAMA_SERVER=/path/to/llama-server STREAMPARSE_GGUF=/path/to/qwen2.5-coder-0.5b-q4_k_m.gguf \\
        python -m pytest -m realmodel -s tests/realmodel/test_probe.py

``STREAMPARSE_PROBE_OUT=DIR`` keeps the JSON reports and the server logs there (else a temporary folder).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "bench" / "probe" / "run_probe.py"

# Floors from bench/probe/results.md (llama.cpp build 11434 / commit 515e85511, canitoolcall 0.1.1, -t 1,
# x86-64, 2026-11-28; four runs per model, the same answers in every run): through streamparse serve with no
# flag the 0.5B passed 23 of 27 (llama.cpp alone 13), the 1.5B 25 of 27 (llama.cpp alone 13). Each floor is
# that score minus 2: room for another llama.cpp build or CPU changing one greedy answer (one changed answer
# moves 2 checks, its own and stream = non-stream). A drop of 3 or more fails.
FLOORS: dict[str, tuple[str, int]] = {
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32": ("Qwen2.5-Coder-0.5B-Instruct Q4_K_M", 21),
    "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046": ("Qwen2.5-Coder-1.5B-Instruct Q4_K_M", 23),
}


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("streamparse_bench_run_probe", RUNNER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _setting() -> tuple[Path, Path]:
    binary = os.environ.get("STREAMPARSE_LLAMA_SERVER") or os.environ.get("LLAMA_SERVER")
    gguf = os.environ.get("STREAMPARSE_GGUF")
    if not binary or not os.access(binary, os.X_OK):
        pytest.skip("set STREAMPARSE_LLAMA_SERVER (or LLAMA_SERVER) to a llama.cpp llama-server binary")
    if not gguf or not Path(gguf).is_file():
        pytest.skip("set STREAMPARSE_GGUF to a GGUF model file (see bench/probe/results.md)")
    return Path(binary), Path(gguf)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def test_streamparse_scores_at_least_llamacpp_alone(tmp_path: Path) -> None:
    binary, gguf = _setting()
    run = _runner()
    out = Path(os.environ.get("STREAMPARSE_PROBE_OUT") or tmp_path)
    reports: dict[str, dict[str, Any]] = run.run_model(gguf, run.Settings(llama_server=binary, out=out, tag="test"))
    print("\n" + run.build_table(out))

    alone = run.summarize(reports[run.LLAMACPP])
    proxied = run.summarize(reports[run.STREAMPARSE])
    failed = {o["scenario_id"] + (" [equiv]" if o["check"] != "scenario" else " [stream]" if o["stream"] else ""):
              o["detail"] for o in reports[run.STREAMPARSE]["outcomes"] if o["status"] != "pass"}
    assert proxied["passed"] >= alone["passed"], (
        f"through streamparse {proxied['passed']}/{proxied['total']} < llama.cpp alone "
        f"{alone['passed']}/{alone['total']}; streamparse failures: {failed}")
    name, floor = FLOORS.get(_sha256(gguf), (gguf.name, 0))
    assert proxied["passed"] >= floor, (
        f"{name}: through streamparse {proxied['passed']}/{proxied['total']}, floor {floor} "
        f"(bench/probe/results.md); failures: {failed}")
