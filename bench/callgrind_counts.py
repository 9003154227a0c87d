"""Instructions (valgrind callgrind, Ir) per unit of work on every bench workload, for one or more revisions.

    python bench/callgrind_counts.py --rev 8811450 --rev HEAD [--json FILE] [--md FILE] [--only PREFIX ...]

Workloads, as ``streamparse bench`` builds them: every ``mixed:<dialect>`` of the engines scenario (per 4-character
delta, special tokens kept whole: ``deltas_for``), ``prose`` (per delta), the answers group's ``answer:<dialect>``
and ``answer1:hermes``/``answer1:qwen3_coder`` (``parse(text, tools)``, its construction included, per answer) and
``construct:new:5`` (``StreamParser(tools)`` for 5 tools never seen in the process, per construction).

Each revision is checked out with ``git worktree add --detach`` into a temporary directory (removed after). The
inputs are built once, by the last ``--rev``'s own workload code, and every revision reads those same inputs; the
table says, per workload, whether an earlier revision's own workload code builds the same text.

Each revision runs every workload in one Python process under callgrind, with ``PYTHONPATH`` set to its worktree.
Per workload it makes ``--warm`` unmeasured runs (imports, compiled patterns, cached tables, and Python's
specializing interpreter, which rewrites a function's bytecode only after its first few calls: the bench reports
the best of many runs), then ``--measured`` runs, each between two markers: ``sys.getswitchinterval()``, whose C
function callgrind is told to zero the counters before (``--zero-before=sys_getswitchinterval``), and
``sys.is_finalizing()``, whose C function it dumps them before (``--dump-before=sys_is_finalizing``). So each dump
holds one measured run and nothing of start-up or imports; a first, empty pair of markers gives the markers' own
cost, subtracted from each; the fewest instructions of the measured runs is the figure. A stream's parser is built
before its zero marker (the bench's per-delta loop does not time construction either); a whole answer's
``parse`` builds its own, counted. The collector is off (``gc.disable()``), as in the bench's timed loop;
``PYTHONHASHSEED=0``. After the measured runs an unmeasured pass counts the calls and the text the parser gives.

Needs ``valgrind`` (Debian: ``apt-get install valgrind``). The revisions run side by side (``--jobs``, default 2),
under ``nice``: about 2 minutes for two on this machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ZERO_FN, DUMP_FN = "sys_getswitchinterval", "sys_is_finalizing"  # libpython's C functions of the two markers
UNITS = {"stream": "delta", "whole": "answer", "construct": "construction"}


# ----------------------------------------------------------------------------- inputs (run in a worktree)

def build_inputs(runs: int) -> list[dict[str, Any]]:
    """Every workload's input, by the streamparse on ``sys.path`` (a worktree): name, kind and what the driver
    feeds."""
    from streamparse.harness.bench_groups import GROUPS, new_tools, one_call
    from streamparse.harness.benchmark import deltas_for
    from streamparse.harness.engines import engine_dialects
    from streamparse.harness.workloads import build_workload

    found: list[dict[str, Any]] = []
    for name in [f"mixed:{d}" for d in engine_dialects()] + ["prose"]:
        workload = build_workload(name)
        found.append({"name": name, "kind": "stream", "tools": workload.tools, "deltas": deltas_for(workload, 4)})
    for name in GROUPS["answers"](engine_dialects()):
        kind, dialect = name.split(":", 1)
        workload = one_call(dialect) if kind == "answer1" else build_workload(f"mixed:{dialect}")
        found.append({"name": name, "kind": "whole", "tools": workload.tools, "text": workload.text})
    # A list of fresh names for every run, warm and measured (each new to the driver's process).
    found.append({"name": "construct:new:5", "kind": "construct", "tools": [],
                  "lists": [new_tools(5) for _ in range(runs)]})
    return found


def own_texts(names: list[str]) -> dict[str, str | None]:
    """Per workload name, the text this tree's own workload code builds for it (None where it cannot)."""
    texts: dict[str, str | None] = {}
    for name in names:
        try:
            if name.startswith("construct:"):
                texts[name] = None
                continue
            from streamparse.harness.workloads import build_workload

            if name.startswith("answer1:"):
                from streamparse.harness.bench_groups import one_call

                texts[name] = one_call(name.split(":", 1)[1]).text
            elif name.startswith("answer:"):
                texts[name] = build_workload("mixed:" + name.split(":", 1)[1]).text
            else:
                texts[name] = build_workload(name).text
        except Exception:  # noqa: BLE001 - a workload this tree cannot build is reported as absent
            texts[name] = None
    return texts


# ----------------------------------------------------------------------------- the driver (run under callgrind)

def drive(inputs_path: str, report_path: str, warm: int, measured: int) -> None:
    """For every workload of ``inputs_path``: ``warm`` unmeasured runs (Python 3.11's specializing interpreter
    rewrites a function's bytecode after its first few calls, so one warm run leaves a once-per-answer path cold),
    then ``measured`` runs, each between the markers; what a parser gave (calls, text length) goes to
    ``report_path``."""
    import gc
    import importlib.util
    from functools import partial
    from typing import Callable, Iterator

    import streamparse
    from streamparse import StreamParser, TextDelta, ToolCall, parse

    tree = os.environ["CALLGRIND_TREE"]
    grammars = importlib.util.find_spec("streamparse.grammars")
    for where in (streamparse.__file__ or "", *((grammars.submodule_search_locations or []) if grammars else [])):
        if not os.path.realpath(where).startswith(os.path.realpath(tree)):
            raise SystemExit(f"streamparse is imported from {where}, not from the worktree {tree}")
    inputs: list[dict[str, Any]] = json.loads(Path(inputs_path).read_text(encoding="utf-8"))
    zero, dump = sys.getswitchinterval, sys.is_finalizing
    gc.disable()
    zero()
    dump()  # dump 1: the markers' own cost
    seen: list[dict[str, Any]] = []

    def stream(deltas: list[str], tools: Any) -> None:
        p = StreamParser(tools)  # built outside the count, as the bench's timed_run builds it
        zero()
        for d in deltas:
            p.feed(d)
        p.close()

    def whole(text: str, tools: Any) -> None:
        zero()
        parse(text, tools)  # its construction for the tools included, as in the bench's answers group

    def construct(lists: Iterator[Any]) -> None:
        fresh = next(lists)  # a fresh list of tools each run: names never seen in the process
        zero()
        StreamParser(fresh)

    for w in inputs:
        tools, kind = w["tools"], w["kind"]
        step: Callable[[], None]
        if kind == "stream":
            step = partial(stream, w["deltas"], tools)
        elif kind == "whole":
            step = partial(whole, w["text"], tools)
        else:
            step = partial(construct, iter(w["lists"]))
        for _ in range(warm):
            step()
        for _ in range(measured):
            gc.collect()
            step()
            dump()
        if kind == "stream":
            check = StreamParser(tools)
            events = [e for d in w["deltas"] for e in check.feed(d)] + list(check.close())
            calls = sum(1 for e in events if isinstance(e, ToolCall))
            text = sum(len(e.text) for e in events if isinstance(e, TextDelta))
        elif kind == "whole":
            result = parse(w["text"], tools)
            calls, text = len(result.tool_calls), len(result.content or "")
        else:
            calls, text = 0, 0
        seen.append({"name": w["name"], "calls": calls, "text": text})
    Path(report_path).write_text(json.dumps(seen), encoding="utf-8")


# ----------------------------------------------------------------------------- orchestration

def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def _add_worktree(rev: str, where: Path) -> None:
    _git("worktree", "add", "--detach", str(where), rev)
    grammars = where / "streamparse" / "grammars"
    if not grammars.exists() and (where / "grammars").is_dir():
        grammars.symlink_to("../grammars")  # installed as streamparse.grammars; the source tree keeps it apart


def _in_tree(tree: Path, role: str, *args: str, valgrind: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0", "CALLGRIND_TREE": str(tree)}
    command = [*(valgrind or []), sys.executable, str(Path(__file__).resolve()), role, *args]
    return subprocess.run(["nice", "-n", "10", *command], capture_output=True, text=True, env=env, cwd=str(tree))


def _summary(path: Path) -> int:
    m = re.search(r"^summary:\s*(\d+)", path.read_text(encoding="utf-8", errors="replace"), re.M)
    if m is None:
        raise SystemExit(f"{path}: no summary line")
    return int(m.group(1))


def _count(rev: str, tree: Path, inputs: Path, work: Path, warm: int, measured: int) -> dict[str, Any]:
    """Run the driver under callgrind in ``tree``: per workload, the fewest instructions of its measured runs less
    the markers' own, and the most (to show how far the runs agree)."""
    out, report = work / f"cg.{rev}.out", work / f"seen.{rev}.json"
    started = time.monotonic()
    r = _in_tree(tree, "--drive", str(inputs), str(report), str(warm), str(measured), valgrind=[
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--zero-before={ZERO_FN}",
        f"--dump-before={DUMP_FN}", "--dump-instr=no"])
    names = [w["name"] for w in json.loads(inputs.read_text(encoding="utf-8"))]
    dumps = sorted(work.glob(f"cg.{rev}.out.*"), key=lambda p: int(p.suffix[1:]))
    if r.returncode or len(dumps) != 1 + len(names) * measured:
        raise SystemExit(f"{rev}: callgrind run failed ({len(dumps)} dumps for {len(names)} workloads, {measured} "
                         f"measured runs each)\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    counts = [_summary(p) for p in dumps]
    markers = counts[0]
    seen = {s["name"]: s for s in json.loads(report.read_text(encoding="utf-8"))}
    found: dict[str, Any] = {}
    for i, n in enumerate(names):
        runs = [c - markers for c in counts[1 + i * measured: 1 + (i + 1) * measured]]
        found[n] = {"instructions": min(runs), "runs": runs, "calls": seen[n]["calls"], "text": seen[n]["text"]}
    return {"markers": markers, "seconds": round(time.monotonic() - started, 1), "workloads": found}


def _describe(rev: str) -> dict[str, str]:
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    return {"rev": rev, "commit": sha, "subject": _git("log", "-1", "--format=%s", sha)[:100]}


def run(revs: list[str], jobs: int, only: list[str], warm: int, measured: int) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor

    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (Debian: apt-get install valgrind)")
    started = time.monotonic()
    described = [_describe(r) for r in revs]
    with tempfile.TemporaryDirectory(prefix="callgrind_counts.") as tmp:
        work = Path(tmp)
        trees = {d["commit"]: work / f"tree-{i}" for i, d in enumerate(described)}
        try:
            for d in described:
                _add_worktree(d["commit"], trees[d["commit"]])
            last = trees[described[-1]["commit"]]
            built = _in_tree(last, "--build", str(work / "inputs.json"), str(warm + measured))
            if built.returncode:
                raise SystemExit(f"building the inputs failed\n{built.stderr[-3000:]}")
            inputs = json.loads((work / "inputs.json").read_text(encoding="utf-8"))
            if only:
                inputs = [w for w in inputs if w["name"].startswith(tuple(only))]
                (work / "inputs.json").write_text(json.dumps(inputs), encoding="utf-8")
            names = [w["name"] for w in inputs]
            texts = {w["name"]: w.get("text", "".join(w.get("deltas", []))) for w in inputs}
            (work / "names.json").write_text(json.dumps(names), encoding="utf-8")
            same: dict[str, dict[str, str]] = {}
            for d in described[:-1]:
                own = _in_tree(trees[d["commit"]], "--texts", str(work / "names.json"), str(work / "own.json"))
                theirs = json.loads((work / "own.json").read_text(encoding="utf-8")) if not own.returncode else {}
                same[d["commit"]] = {n: ("n/a" if n.startswith("construct:") else "absent" if theirs.get(n) is None
                                         else "same" if theirs[n] == texts[n] else "differs") for n in names}
            with ThreadPoolExecutor(max(1, jobs)) as pool:
                results = list(pool.map(lambda d: _count(d["commit"][:12], trees[d["commit"]], work / "inputs.json",
                                                         work, warm, measured), described))
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                               capture_output=True)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
    kinds = {w["name"]: w["kind"] for w in inputs}
    units = {w["name"]: len(w["deltas"]) if w["kind"] == "stream" else 1 for w in inputs}
    rows = []
    for n in names:
        per = [res["workloads"][n]["instructions"] / units[n] for res in results]
        rows.append({"workload": n, "unit": UNITS[kinds[n]], "units": units[n], "per_unit": per,
                     "ratio": [p / per[0] if per[0] else math.nan for p in per[1:]],
                     "spread": [max(res["workloads"][n]["runs"]) / max(min(res["workloads"][n]["runs"]), 1) - 1
                                for res in results],
                     "runs": [res["workloads"][n]["runs"] for res in results],
                     "calls": [res["workloads"][n]["calls"] for res in results],
                     "text": [res["workloads"][n]["text"] for res in results],
                     "input_as_own": [same.get(d["commit"], {}).get(n, "built by it") for d in described]})
    return {"revisions": described, "valgrind": subprocess.run(["valgrind", "--version"], capture_output=True,
                                                               text=True).stdout.strip(),
            "python": sys.version.split()[0], "warm": warm, "measured": measured,
            "markers": [r["markers"] for r in results],
            "seconds": {"total": round(time.monotonic() - started, 1), "per_revision": [r["seconds"] for r in results]},
            "rows": rows}


def _geomean(values: list[float]) -> float:
    good = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, good)) / len(good)) if good else math.nan


def markdown(found: dict[str, Any]) -> str:
    revs = found["revisions"]
    short = [r["commit"][:7] for r in revs]
    spread = max(s for row in found["rows"] for s in row["spread"])
    lines = [f"Instructions (callgrind Ir) per unit of work: per workload {found['warm']} warm runs, then the fewest "
             f"of {found['measured']} measured runs (they differ by at most {spread:.2%}); {found['valgrind']}, "
             f"Python {found['python']}; {found['seconds']['total']:.0f} s in all.", ""]
    lines += [f"- `{r['commit'][:7]}` (`--rev {r['rev']}`): {r['subject']}" for r in revs]
    lines += ["", "Ratio: each later revision over the first. Calls: calls the measured run's parser gave, per revision "
              "(a whole answer's and a stream's; - for a construction). Input: whether each earlier revision's own "
              "workload code builds the same text as the last's, which all revisions read.", ""]
    ratio_heads = [f"{s} / {short[0]}" for s in short[1:]]
    lines.append("| workload | per | " + " | ".join(f"Ir {s}" for s in short) + " | "
                 + " | ".join(ratio_heads) + " | calls | input |")
    lines.append("|---|---|" + "---:|" * (len(short) + len(ratio_heads)) + "---|---|")
    for row in found["rows"]:
        calls = "-" if row["unit"] == "construction" else "/".join(map(str, row["calls"]))
        lines.append(f"| `{row['workload']}` | {row['unit']} | " + " | ".join(f"{p:,.0f}" for p in row["per_unit"])
                     + " | " + " | ".join(f"{q:.2f}" for q in row["ratio"]) + f" | {calls} | "
                     + ", ".join(row["input_as_own"][:-1]) + " |")
    groups = {"mixed:* (per delta)": "mixed:", "answer:* (per answer)": "answer:", "answer1:* (per answer)": "answer1:"}
    lines += ["", "Geometric mean of the ratios:", ""]
    for label, prefix in groups.items():
        rows = [r for r in found["rows"] if r["workload"].startswith(prefix)]
        if rows:
            means = [_geomean([r["ratio"][i] for r in rows]) for i in range(len(revs) - 1)]
            lines.append(f"- {label}, {len(rows)} workloads: " + ", ".join(f"{h} {m:.2f}" for h, m in
                                                                            zip(ratio_heads, means)))
    return "\n".join(lines) + "\n"


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--drive":
        drive(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--build":
        Path(sys.argv[2]).write_text(json.dumps(build_inputs(int(sys.argv[3]))), encoding="utf-8")
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--texts":
        names = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
        Path(sys.argv[3]).write_text(json.dumps(own_texts(names)), encoding="utf-8")
        return
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rev", action="append", required=True, help="a revision (any git revision); repeat it; the "
                    "first is the one the ratios divide by, the last builds the inputs")
    ap.add_argument("--json", help="write the results here as JSON")
    ap.add_argument("--md", help="write the markdown table here (it is printed either way)")
    ap.add_argument("--only", nargs="*", default=[], help="only the workloads whose names start with these")
    ap.add_argument("--jobs", type=int, default=2, help="revisions run at once (default 2)")
    ap.add_argument("--warm", type=int, default=10, help="unmeasured runs of each workload first (default 10)")
    ap.add_argument("--measured", type=int, default=2, help="measured runs of each workload; the fewest "
                    "instructions is the figure (default 2)")
    args = ap.parse_args()
    if args.warm < 0 or args.measured < 1:
        ap.error("--warm must be 0 or more and --measured 1 or more")
    found = run(args.rev, args.jobs, args.only, args.warm, args.measured)
    table = markdown(found)
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1), encoding="utf-8")
    if args.md:
        Path(args.md).write_text(table, encoding="utf-8")


if __name__ == "__main__":
    main()
