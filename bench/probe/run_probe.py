#!/usr/bin/env python3
"""``canitoolcall probe`` against a real model: llama.cpp's ``llama-server --jinja`` alone, then
``streamparse serve`` in front of that same llama-server.

For each GGUF given, one llama-server at a time:

1. start ``LLAMA_SERVER -m GGUF --jinja -c 8192 --host 127.0.0.1 --port P -t 1 -n 512`` (with
   ``OMP_NUM_THREADS=1``) on a free loopback port and wait for ``GET /health`` to answer 200;
2. ``canitoolcall probe --base-url http://127.0.0.1:P/v1 --model GGUF_NAME --concurrency 1
   --timeout 300 --json results/MODEL__llamacpp__TAG.json``;
3. start ``python -m streamparse serve --upstream http://127.0.0.1:P/v1 --port Q`` (no other flag:
   dialect auto-detection, the default) and wait for ``GET /healthz``; probe it the same way
   (``MODEL__streamparse__TAG.json``); stop it;
4. for each ``--tool-prompt DIALECT``: the same with ``streamparse serve --tool-prompt DIALECT``
   (``MODEL__streamparse-tool-prompt-DIALECT__TAG.json``);
5. stop llama-server.

Then it writes ``MODEL__TAG__meta.json`` (versions, GGUF sha256, the exact commands, the streamparse each
``serve`` imported, wall times) and regenerates ``table.md`` from every report in the output folder.

The probe sends temperature 0 and is not altered here. Every child (llama-server, streamparse, the
probe) is stopped on every exit path: normal end, an exception, Ctrl-C, SIGTERM/SIGHUP (turned into
an exception so the ``finally`` blocks run) and, on Linux, the runner being killed outright (the
children are started with ``PR_SET_PDEATHSIG``).

Usage (from the repository root)::

    python bench/probe/run_probe.py --llama-server /path/to/llama-server \\
        --gguf qwen2.5-coder-0.5b-q4_k_m.gguf --gguf qwen2.5-coder-1.5b-q4_k_m.gguf --tag run1
    # or: STREAMPARSE_LLAMA_SERVER=... STREAMPARSE_GGUF=a.gguf:b.gguf python bench/probe/run_probe.py
    python bench/probe/run_probe.py --table-only        # rebuild table.md from results/*.json

Children run in the logs folder, so ``python -m streamparse`` imports the installed streamparse (or one on
``PYTHONPATH``), never ``./streamparse`` of the directory the runner was started from.

``tests/realmodel/test_probe.py`` imports ``run_model``, ``Settings``, ``summarize`` and ``build_table`` from
this file.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as _dt
import hashlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = HERE / "results"

LLAMACPP = "llamacpp"
STREAMPARSE = "streamparse"
CONFIG_LABELS = {LLAMACPP: "llama.cpp alone", STREAMPARSE: "through streamparse"}


def config_label(config: str) -> str:
    if config.startswith(STREAMPARSE + "-tool-prompt-"):
        return "streamparse --tool-prompt " + config.removeprefix(STREAMPARSE + "-tool-prompt-")
    return CONFIG_LABELS.get(config, config)


# --------------------------------------------------------------------------- child processes

def _pdeathsig() -> None:
    """In the child, before exec: die (SIGTERM) when the runner dies, even by SIGKILL (Linux only)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _popen(cmd: Sequence[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in the log's folder (not the caller's: ``python -m`` puts the working directory first on
    sys.path, so run from the repository root it would import ./streamparse whatever is installed)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        out.write(f"$ {shlex.join(cmd)}\n".encode())
        out.flush()
        return subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=log.parent,
                                preexec_fn=_pdeathsig if sys.platform.startswith("linux") else None,
                                start_new_session=True)


def _stop(proc: subprocess.Popen[bytes], grace: float = 40) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def running(cmd: Sequence[str], health_url: str, log: Path, timeout: float,
            env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd``, wait until ``health_url`` answers 200, stop it on leaving (whatever the reason)."""
    proc = _popen(cmd, log, env)
    try:
        deadline = time.monotonic() + timeout
        while not _ok(health_url):
            if proc.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited ({proc.returncode}) before {health_url} answered; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{health_url} not ready after {timeout:.0f} s; see {log}")
            time.sleep(0.5)
        yield proc
    finally:
        _stop(proc)


class _Signalled(BaseException):
    pass


def _raise_on_signal(signum: int, frame: Any) -> None:
    raise _Signalled(f"signal {signum}")


# --------------------------------------------------------------------------- versions

def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _out(cmd: Sequence[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable: {e}"
    return (done.stdout + done.stderr).strip()


def versions(llama_server: Path) -> dict[str, str]:
    """llama-server's and canitoolcall's versions."""
    import canitoolcall

    llama = [line for line in _out([str(llama_server), "--version"]).splitlines() if line.startswith("version")]
    return {"llama_server": llama[0] if llama else "unknown", "canitoolcall": str(canitoolcall.__version__),
            "python": sys.version.split()[0]}


def streamparse_version(cwd: Path) -> dict[str, str]:
    """The streamparse a child started in ``cwd`` imports: this checkout's commit (with a diffstat of
    uncommitted changes under streamparse/), or, imported from elsewhere, its path and the first line of
    a ``COMMIT`` file beside its package folder if there is one. Taken as each ``serve`` starts."""
    where = Path(_out([sys.executable, "-c", "import streamparse; print(streamparse.__file__)"], cwd=cwd)
                 .splitlines()[-1])
    out = {"streamparse_path": str(where.parent)}
    if where.parent == REPO / "streamparse":
        out["streamparse_commit"] = _out(["git", "rev-parse", "HEAD"], cwd=REPO)
        out["streamparse_uncommitted"] = _out(["git", "diff", "--stat", "HEAD", "--", "streamparse"], cwd=REPO)
    else:
        stamp = where.parent.parent / "COMMIT"
        out["streamparse_commit"] = (stamp.read_text().strip().splitlines() or ["?"])[0] if stamp.is_file() else (
            "unknown (not this checkout)")
    return out


# --------------------------------------------------------------------------- one model

@dataclass
class Settings:
    llama_server: Path
    out: Path
    tag: str = "run1"
    threads: int = 1
    ctx: int = 8192
    n_predict: int = 512
    timeout: float = 300
    concurrency: int = 1
    tool_prompts: Sequence[str] = ()
    direct: bool = True
    log_dir: Path | None = None
    extra_llama_args: Sequence[str] = field(default_factory=list)


def model_slug(gguf: Path) -> str:
    return gguf.name.removesuffix(".gguf")


def report_path(out: Path, gguf: Path, config: str, tag: str) -> Path:
    return out / f"{model_slug(gguf)}__{config}__{tag}.json"


def _probe(base_url: str, model: str, json_path: Path, s: Settings, log: Path) -> tuple[list[str], float]:
    cmd = [sys.executable, "-m", "canitoolcall", "probe", "--base-url", base_url, "--model", model,
           "--concurrency", str(s.concurrency), "--timeout", str(s.timeout), "--json", str(json_path)]
    started = time.monotonic()
    proc = _popen(cmd, log)
    try:
        proc.wait()
    finally:
        _stop(proc, grace=5)
    if not json_path.is_file():
        raise RuntimeError(f"canitoolcall probe wrote no report (exit {proc.returncode}); see {log}")
    return cmd, time.monotonic() - started


def run_model(gguf: Path, s: Settings) -> dict[str, dict[str, Any]]:
    """Probe ``gguf`` behind llama-server alone and through streamparse; returns {config: report}.
    The children run in the logs folder, so every path is made absolute first."""
    gguf, out = gguf.resolve(), s.out.resolve()
    s = replace(s, out=out, llama_server=s.llama_server.resolve(), log_dir=(s.log_dir or out / "logs").resolve())
    assert s.log_dir is not None
    out.mkdir(parents=True, exist_ok=True)
    logs = s.log_dir
    slug = f"{model_slug(gguf)}__{s.tag}"
    port = free_port()
    upstream = f"http://127.0.0.1:{port}/v1"
    llama_cmd = [str(s.llama_server), "-m", str(gguf), "--jinja", "-c", str(s.ctx), "--host", "127.0.0.1",
                 "--port", str(port), "-t", str(s.threads), "-n", str(s.n_predict), *s.extra_llama_args]
    meta: dict[str, Any] = {
        "model": gguf.name, "gguf_bytes": gguf.stat().st_size, "gguf_sha256": sha256(gguf),
        **versions(s.llama_server),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "tag": s.tag, "runner": _show([sys.executable, *sys.argv]),
        "llama_server_command": _show(llama_cmd), "configs": {},
    }
    reports: dict[str, dict[str, Any]] = {}
    with running(llama_cmd, f"http://127.0.0.1:{port}/health", logs / f"{slug}__llama-server.log", timeout=900,
                 env={**os.environ, "OMP_NUM_THREADS": str(s.threads)}):
        proxies: list[tuple[str, list[str]]] = [(STREAMPARSE, [])]
        proxies += [(f"{STREAMPARSE}-tool-prompt-{d}", ["--tool-prompt", d]) for d in s.tool_prompts]
        if s.direct:
            path = report_path(s.out, gguf, LLAMACPP, s.tag)
            cmd, wall = _probe(upstream, gguf.name, path, s, logs / f"{slug}__probe-{LLAMACPP}.log")
            meta["configs"][LLAMACPP] = {"probe_command": _show(cmd), "wall_s": round(wall, 1)}
            reports[LLAMACPP] = json.loads(path.read_text())
            _say(f"{gguf.name} {LLAMACPP}: {_brief(reports[LLAMACPP])} in {wall:.0f} s")
        for config, flags in proxies:
            proxy_port = free_port()
            serve = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream, "--host", "127.0.0.1",
                     "--port", str(proxy_port), "--log-level", "warning", *flags]
            logs.mkdir(parents=True, exist_ok=True)
            sp_version = streamparse_version(logs)
            with running(serve, f"http://127.0.0.1:{proxy_port}/healthz", logs / f"{slug}__serve-{config}.log",
                         timeout=60):
                path = report_path(s.out, gguf, config, s.tag)
                cmd, wall = _probe(f"http://127.0.0.1:{proxy_port}/v1", gguf.name, path, s,
                                   logs / f"{slug}__probe-{config}.log")
            meta["configs"][config] = {**sp_version, "serve_command": _show(serve), "probe_command": _show(cmd),
                                       "wall_s": round(wall, 1)}
            reports[config] = json.loads(path.read_text())
            _say(f"{gguf.name} {config}: {_brief(reports[config])} in {wall:.0f} s")
    (s.out / f"{slug}__meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return reports


def _show(cmd: Sequence[str]) -> str:
    """``cmd`` as a shell line, with this interpreter written ``python`` and paths in the repo relative to it."""
    prefix = str(REPO) + os.sep
    return shlex.join("python" if a == sys.executable else a.removeprefix(prefix) for a in cmd)


def _say(text: str) -> None:
    print(f"[run_probe {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- scoring and the table

def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """Pass counts of one canitoolcall probe report: total, non-stream, stream, stream=non-stream."""
    rows = report["outcomes"]
    total = len(rows)

    def count(pred: Any) -> tuple[int, int]:
        mine = [o for o in rows if pred(o)]
        return sum(o["status"] == "pass" for o in mine), len(mine)

    scenarios: dict[str, dict[str, str]] = {}
    for o in rows:
        col = "equiv" if o["check"] == "stream_equals_nonstream" else ("stream" if o["stream"] else "nonstream")
        scenarios.setdefault(o["scenario_id"], {})[col] = o["status"]
    return {
        "passed": sum(o["status"] == "pass" for o in rows), "total": total,
        "nonstream": count(lambda o: o["check"] == "scenario" and not o["stream"]),
        "stream": count(lambda o: o["check"] == "scenario" and o["stream"]),
        "equiv": count(lambda o: o["check"] != "scenario"),
        "errors": sum(o["status"] == "error" for o in rows),
        "scenarios": scenarios,
    }


def _brief(report: dict[str, Any]) -> str:
    s = summarize(report)
    return (f"{s['passed']}/{s['total']} (non-stream {s['nonstream'][0]}/{s['nonstream'][1]}, "
            f"stream {s['stream'][0]}/{s['stream'][1]}, equal {s['equiv'][0]}/{s['equiv'][1]}"
            + (f", {s['errors']} errors" if s["errors"] else "") + ")")


MARK = {"pass": "✓", "fail": "✗", "error": "E", "skip": "–"}


def _config_order(config: str) -> tuple[int, str]:
    return ({LLAMACPP: 0, STREAMPARSE: 1}.get(config, 2), config)


def _short(model: str) -> str:
    return model.replace("qwen2.5-coder-", "").replace("-q4_k_m", "")


def build_table(out: Path) -> str:
    """Markdown tables from every ``MODEL__CONFIG__TAG.json`` in ``out`` (meta files excluded).

    One row per model and path; the runs (tags) of a row are listed, and said to be identical when every
    check has the same status and the same observed answer in each."""
    groups: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for p in sorted(out.glob("*__*__*.json")):
        parts = p.name.removesuffix(".json").split("__")
        if len(parts) != 3 or "meta" in (parts[1], parts[2]):
            continue
        model, config, tag = parts
        groups.setdefault((model, config), {})[tag] = json.loads(p.read_text())
    if not groups:
        return "(no reports)\n"
    keys = sorted(groups, key=lambda k: (k[0], _config_order(k[1])))
    lines = ["| model | path | passed | non-stream | stream | stream = non-stream | runs |",
             "|---|---|---|---|---|---|---|"]
    columns: list[tuple[str, list[dict[str, Any]]]] = []
    for model, config in keys:
        runs = groups[(model, config)]
        sums = [summarize(r) for r in runs.values()]

        def cell(key: str) -> str:
            seen = []
            for s in sums:
                text = f"{s[key][0]}/{s[key][1]}" if key != "passed" else f"{s['passed']}/{s['total']}" + (
                    f" ({s['errors']} errors)" if s["errors"] else "")
                if text not in seen:
                    seen.append(text)
            return " or ".join(seen)

        same = all([(o["status"], o["observed"]) for o in r["outcomes"]]
                   == [(o["status"], o["observed"]) for o in next(iter(runs.values()))["outcomes"]]
                   for r in runs.values())
        note = ", ".join(runs) + (" (identical answers)" if same and len(runs) > 1 else "")
        lines.append(f"| {_short(model)} | {config_label(config)} | **{cell('passed')}** | {cell('nonstream')} | "
                     f"{cell('stream')} | {cell('equiv')} | {note} |")
        columns.append((f"{_short(model)} {config_label(config).replace('through ', '')}", sums))
    scenarios: list[str] = []
    for _, sums in columns:
        for s in sums:
            scenarios += [k for k in s["scenarios"] if k not in scenarios]
    lines += ["", "Per scenario, three marks: non-stream, stream, stream = non-stream (✓ pass, ✗ fail, E error, "
              "– skipped; runs that differ are separated by /).", "",
              "| scenario | " + " | ".join(name for name, _ in columns) + " |",
              "|---|" + "---|" * len(columns)]
    for sid in scenarios:
        cells = []
        for _, sums in columns:
            marks: list[str] = []
            for s in sums:
                got = s["scenarios"].get(sid, {})
                mark = "".join(MARK.get(got.get(c, ""), "·") for c in ("nonstream", "stream", "equiv"))
                if mark not in marks:
                    marks.append(mark)
            cells.append(" / ".join(marks))
        lines.append(f"| {sid} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- command line

def _ggufs(values: Sequence[str]) -> list[Path]:
    paths = [Path(p) for v in values for p in v.split(os.pathsep) if p]
    for p in paths:
        if not p.is_file():
            raise SystemExit(f"run_probe: no GGUF at {p}")
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--llama-server", default=os.environ.get("STREAMPARSE_LLAMA_SERVER")
                    or os.environ.get("LLAMA_SERVER"),
                    help="llama-server binary (default: $STREAMPARSE_LLAMA_SERVER, else $LLAMA_SERVER)")
    ap.add_argument("--gguf", action="append", default=[],
                    help=f"model file, repeatable (default: $STREAMPARSE_GGUF, '{os.pathsep}'-separated)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the JSON reports and table.md go")
    ap.add_argument("--log-dir", type=Path, default=None, help="server and probe logs (default: OUT/logs)")
    ap.add_argument("--tag", default="run1", help="run label in the file names (run1, run2, ...)")
    ap.add_argument("--threads", type=int, default=1, help="llama-server -t (default 1)")
    ap.add_argument("--ctx", type=int, default=8192, help="llama-server -c (default 8192)")
    ap.add_argument("--n-predict", type=int, default=512, help="llama-server -n (default 512)")
    ap.add_argument("--timeout", type=float, default=300, help="canitoolcall probe --timeout (default 300)")
    ap.add_argument("--tool-prompt", action="append", default=[], metavar="DIALECT",
                    help="also probe streamparse serve --tool-prompt DIALECT (repeatable)")
    ap.add_argument("--no-direct", action="store_true", help="skip the llama.cpp-alone probe")
    ap.add_argument("--table-only", action="store_true", help="only rebuild OUT/table.md from OUT/*.json")
    args = ap.parse_args(argv)

    if not args.table_only:
        args.llama_server = args.llama_server and (shutil.which(args.llama_server) or args.llama_server)
        if not args.llama_server or not os.access(args.llama_server, os.X_OK):
            ap.error("give --llama-server (or set STREAMPARSE_LLAMA_SERVER) to an executable llama-server")
        ggufs = _ggufs(args.gguf or [os.environ.get("STREAMPARSE_GGUF", "")])
        if not ggufs:
            ap.error("give --gguf (or set STREAMPARSE_GGUF)")
        settings = Settings(llama_server=Path(args.llama_server), out=args.out, tag=args.tag, threads=args.threads,
                            ctx=args.ctx, n_predict=args.n_predict, timeout=args.timeout,
                            tool_prompts=args.tool_prompt, direct=not args.no_direct, log_dir=args.log_dir)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _raise_on_signal)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background (ignored)
        try:
            for gguf in ggufs:
                run_model(gguf, settings)
        except (KeyboardInterrupt, _Signalled) as e:
            _say(f"stopped ({type(e).__name__} {e}); children stopped")
            return 130
    args.out.mkdir(parents=True, exist_ok=True)
    table = build_table(args.out)
    (args.out / "table.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
