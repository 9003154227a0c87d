"""Instructions per delta, this checkout against an earlier commit: the A/B that a shared, noisy machine cannot
spoil. Wall-clock ratios between two runs swing by 10-30 % here; instruction counts (valgrind's callgrind, Ir) do
not, and they move with wall time for this pure-Python code (checked: both said qwen3_coder 1.2x at one commit).

    python bench/instructions_ab.py 8a42639                       # the default workloads
    python bench/instructions_ab.py 8a42639 dialect:glm45 short:qwen3_coder

The earlier commit is checked out into a temporary git worktree. The workloads are built once, by this checkout's
``build_workload`` and ``deltas_for`` (4-character deltas, as ``streamparse bench``), so both trees read the same
text. Each tree parses each workload in a fresh process under callgrind, with the collector off, first once (the
warm run: imports, compiled patterns) and then ``REPS`` more times; what the extra runs cost, divided by their
deltas, is the figure (a parser for the tools is built in every run, as the bench's construction is not timed per
delta: it adds a few hundred instructions per run against millions). Needs ``valgrind`` (Debian: ``apt-get install
valgrind``); two workers at a time, about 10 minutes for the default list.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["dialect:hermes", "dialect:qwen3_coder", "dialect:glm45", "dialect:seed_oss", "dialect:functiongemma",
           "dialect:olmo3", "dialect:gemma4", "mixed:hermes", "mixed:qwen3_coder", "mixed:glm45", "mixed:minimax_m2",
           "mixed:deepseek_v31", "mixed:kimi_k2", "mixed:openai", "mixed:pythonic", "short:hermes",
           "short:qwen3_coder", "prose"]
REPS = 2
WORKER = """
import gc, json, sys
tree, path, name, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, tree)
import streamparse
assert streamparse.__file__.startswith(tree), streamparse.__file__
from streamparse.core.parser import StreamParser
w = json.load(open(path))[name]
tools, deltas = w["tools"], w["deltas"]
gc.disable()
for _ in range(1 + reps):
    p = StreamParser(tools)
    for d in deltas:
        p.feed(d)
    p.close()
"""


def _workloads(names: list[str], path: str) -> dict[str, int]:
    """Build the workloads with this checkout and write them where both trees read them; their delta counts."""
    from streamparse.harness.benchmark import deltas_for
    from streamparse.harness.workloads import build_workload

    out: dict[str, dict[str, Any]] = {}
    for n in names:
        w = build_workload(n)
        out[n] = {"tools": w.tools, "deltas": deltas_for(w, 4)}
    Path(path).write_text(json.dumps(out))
    return {n: len(v["deltas"]) for n, v in out.items()}


def _instructions(tree: str, workloads: str, worker: str, name: str, reps: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable,
                            worker, tree, workloads, name, str(reps)],
                           capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, cwd=tmp)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode or m is None:
        raise SystemExit(f"{tree} {name}: callgrind failed\n{r.stderr[-2000:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="the earlier commit (any git revision)")
    ap.add_argument("workloads", nargs="*", help="workload names as streamparse bench takes them (default: a list)")
    args = ap.parse_args()
    names = args.workloads or DEFAULT
    with tempfile.TemporaryDirectory() as tmp:
        base = f"{tmp}/base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", base, args.base], check=True,
                       capture_output=True)
        try:
            grammars = Path(base, "streamparse", "grammars")
            if not grammars.exists() and Path(base, "grammars").is_dir():
                grammars.symlink_to("../grammars")  # (installed as streamparse.grammars; the tree keeps it apart)
            workloads, worker = f"{tmp}/workloads.json", f"{tmp}/worker.py"
            Path(worker).write_text(WORKER)
            deltas = _workloads(names, workloads)
            trees = {"base": base, "now": str(ROOT)}
            jobs = [(t, n, reps) for n in names for t in trees for reps in (0, REPS)]
            with ThreadPoolExecutor(2) as pool:
                counts = dict(zip(jobs, pool.map(lambda j: _instructions(trees[j[0]], workloads, worker, j[1], j[2]),
                                                 jobs)))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", base], capture_output=True)
    print(f"instructions per delta (callgrind Ir), {args.base} against this checkout")
    for n in names:
        per = {t: (counts[(t, n, REPS)] - counts[(t, n, 0)]) / (REPS * deltas[n]) for t in trees}
        print(f"{n:24s} base {per['base']:9.0f}  now {per['now']:9.0f}  ratio {per['now'] / per['base']:.3f}")


if __name__ == "__main__":
    main()
