"""The proxy's own cost, side by side in one run: the same replayed upstream read directly, through
``streamparse serve`` with tools (parsing), through it without tools (the bare pass-through on the same stack),
and through the LiteLLM proxy when it is installed (``pip install 'litellm[proxy]'``, or ``$STREAMPARSE_LITELLM``
naming its ``litellm`` command; skipped with one line otherwise). LiteLLM failing (not starting, or a stream through
it lost or wrong) costs only its own figures, from that load on, with one line saying why; never the others'.

For each load (concurrent streams, upstream pace) and each target: CPU per upstream chunk of the proxy process
(every thread, from ``/proc/<pid>/task/*/schedstat``, in nanoseconds), time to first byte p50/p99 and its
excess over direct, the p99 gap between reads at the client, requests/s; and, read by the load test's table
(``proxyload``), chunks per stream and per second, calls per stream, mean latency, and each proxy's peak memory.
Targets take turns round by round, so a machine that slows down mid-run slows all of them alike; figures worth
quoting are the ratios.

Invariant: a figure is reported only if every stream through every target arrived complete: the bare
pass-through and LiteLLM give the direct stream's text, streamparse its own single-request reference
(with its calls); otherwise ``LoadError`` (for LiteLLM: its figures are left out, as said above).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from typing import Any, Callable, Iterator

import anyio
import httpx

from ..proxy.runner import free_port, port_open, started_process
from .loadtest import LoadError, _payload, cpu_ns, _peak_rss_mib, _pct, _process_tree, sse_reads
from .table import lay_out

__all__ = ["run_costs", "litellm_command", "cost_table", "cost_legend", "load_label", "LOADS", "PACE"]

PACE = 0.002  # the upstream's seconds per token in a paced load of LOADS
LOADS: tuple[tuple[int, float], ...] = ((1, PACE), (20, PACE), (20, 0.0))  # (streams at once, s per token)
ALONE = 4  # requests in turn per round when the load is one stream
LITELLM_KEY = "sk-streamparse-bench-0123456789abcdef"  # LiteLLM refuses to start without a master key


def load_label(streams: int, delay: float) -> str:
    """How a load's figures are named: ``c20_paced`` (at PACE), ``c20_unpaced``, ``c200_paced20ms`` (another pace,
    in three significant digits: ``--proxy-delay 0.123456`` is ``paced123ms``, so the cost table's load column
    stays narrow; two paces that round alike would share a name)."""
    pace = "unpaced" if not delay else "paced" if delay == PACE else f"paced{delay * 1000:.3g}ms"
    return f"c{streams}_{pace}"


def litellm_command() -> list[str] | None:
    """How to start the LiteLLM proxy here, or None when it is not installed."""
    named = os.environ.get("STREAMPARSE_LITELLM")
    found = named or shutil.which("litellm") or shutil.which("litellm", path=os.path.dirname(sys.executable))
    return [found] if found and os.access(found, os.X_OK) else None


async def _timed(client: httpx.AsyncClient, url: str, payload: dict[str, Any], headers: dict[str, str]
                 ) -> dict[str, Any]:
    """One streaming request: what a client accumulates, its time to first data and the gaps between reads."""
    content: list[str] = []
    calls: list[tuple[str, Any]] = []
    gaps: list[float] = []
    latencies: list[float] = []
    chunks = 0
    first = last = None
    start = time.perf_counter()
    async with client.stream("POST", url, json=payload, headers=headers) as resp:
        async for now, wall, read in sse_reads(resp, f"{url}: "):
            for chunk in read:
                chunks += 1
                if "x_sent" in chunk:  # the upstream's send time (same machine, same clock)
                    latencies.append(wall - chunk["x_sent"])
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    content.append(delta.get("content") or "")
                    calls += [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                              for c in delta.get("tool_calls") or []]
            if read:
                if first is None:
                    first = now - start
                elif last is not None:
                    gaps.append(now - last)
                last = now
    return {"content": "".join(content), "calls": calls, "chunks": chunks, "ttfb": first or float("nan"),
            "gaps": gaps, "latencies": latencies}


async def _round(url: str, payload: dict[str, Any], streams: int, headers: dict[str, str]
                 ) -> tuple[list[dict[str, Any]], float]:
    results: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        async def one() -> None:
            results.append(await _timed(client, url, payload, headers))

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(streams):
                tg.start_soon(one)
        return results, time.perf_counter() - start


class _Target:
    """One way to the upstream: its URL, what it is sent, whose CPU counts, and what it must give back."""

    def __init__(self, name: str, url: str, payload: dict[str, Any], pids: list[int],
                 headers: dict[str, str] | None = None):
        self.name, self.url, self.payload, self.pids = name, url, payload, pids
        self.headers = headers or {}
        self.cpu = 0
        self.seconds = 0.0
        self.results: list[dict[str, Any]] = []

    def run(self, streams: int) -> None:
        """``streams`` requests at once (one alone: several in turn, so its percentiles have samples)."""
        for _ in range(max(1, ALONE // streams)):
            before = cpu_ns(self.pids)
            results, seconds = anyio.run(_round, self.url, self.payload, streams, self.headers)
            self.cpu += cpu_ns(self.pids) - before
            self.seconds += seconds
            self.results += results


def _litellm_config(upstreams: dict[float, str], path: str) -> None:
    lines = ["model_list:"]
    for delay, base in upstreams.items():
        lines += [f'  - model_name: "{_alias(delay)}"', "    litellm_params:", '      model: "openai/long"',
                  f'      api_base: "{base}"', '      api_key: "none"']
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _alias(delay: float) -> str:
    return f"long-{delay * 1000:g}ms"


def _first(target: _Target) -> dict[str, Any]:
    """One request alone: the target's reference, and its warm-up."""
    return anyio.run(_round, target.url, target.payload, 1, target.headers)[0][0]


def _check(target: _Target, reference: dict[str, Any], with_calls: bool) -> None:
    for result in target.results:
        if result["content"] != reference["content"] or (with_calls and result["calls"] != reference["calls"]):
            raise LoadError(f"a stream through {target.name} differs from its reference")
        if not with_calls and result["calls"]:
            raise LoadError(f"a stream through {target.name} got tool calls it should not have")


def _opened(port: int) -> Callable[[], bool]:
    return lambda: port_open(port)


def _streamparse(source: str | None) -> list[str]:
    """``python -m streamparse``, or the same from the tree at ``source`` (another version to compare)."""
    if source is None:
        return [sys.executable, "-m", "streamparse"]
    code = f"import runpy, sys; sys.path.insert(0, {source!r}); runpy.run_module('streamparse', run_name='__main__')"
    return [sys.executable, "-c", code]


def run_costs(loads: tuple[tuple[int, float], ...] = LOADS, rounds: int = 2, litellm: bool = True,
              variants: dict[str, str] | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Direct, bare pass-through, streamparse (and LiteLLM) on each load; returns flat figures and ratios.

    ``variants``: name -> a source tree of streamparse (a checkout of another commit), served beside this one
    on the same upstream and load: its bare pass-through and parsing proxy are targets ``bare@name`` and
    ``streamparse@name``. ``rounds``: turns each target takes per load (more: steadier ratios, a longer run).
    A load run without LiteLLM (the load test's hundreds of streams, which would take it minutes) is a run of
    its own, ``litellm=False``: only the servers of the loads given are started."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    command = litellm_command() if litellm else None
    if litellm and command is None:
        log("# litellm: not installed (pip install 'litellm[proxy]' or set $STREAMPARSE_LITELLM); not compared")
    delays = sorted({d for _, d in loads})
    sources: dict[str, str | None] = {"": None, **{f"@{k}": v for k, v in (variants or {}).items()}}
    figures: dict[str, Any] = {}
    with ExitStack() as stack:
        upstreams: dict[float, str] = {}
        proxies: dict[tuple[float, str], tuple[str, list[int]]] = {}
        for delay in delays:
            port = free_port()
            stack.enter_context(started_process([*_streamparse(None), "replay", "--port", str(port), "--delay",
                                                 str(delay), "--stamp", "--log-level", "warning"], _opened(port)))
            upstreams[delay] = f"http://127.0.0.1:{port}/v1"
            for suffix, source in sources.items():
                port = free_port()
                proc = stack.enter_context(started_process(
                    [*_streamparse(source), "serve", "--upstream", upstreams[delay], "--port", str(port),
                     "--log-level", "warning"], _opened(port)))
                proxies[delay, suffix] = (f"http://127.0.0.1:{port}/v1", _process_tree(proc.pid))
        lite = _start_litellm(stack, command, upstreams, log) if command is not None else None
        for streams, delay in loads:
            mine = {suffix: proxies[delay, suffix] for suffix in sources}
            out, failure = _one_load(streams, delay, upstreams[delay], mine, lite, rounds, log)
            figures.update(out)
            if failure is not None:
                log(f"# litellm: {failure}; its figures are left out from {load_label(streams, delay)} on")
                lite = None
    return figures


def _start_litellm(stack: ExitStack, command: list[str], upstreams: dict[float, str], log: Callable[[str], None]
                   ) -> tuple[str, list[int]] | None:
    """The LiteLLM proxy in front of ``upstreams`` (stopped with ``stack``): (base URL, pids); None, with one line
    saying why, when it does not start."""
    folder = stack.enter_context(tempfile.TemporaryDirectory())
    _litellm_config(upstreams, os.path.join(folder, "litellm.yaml"))
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MASTER_KEY": LITELLM_KEY,
           "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False"}
    try:
        proc = stack.enter_context(started_process(
            [*command, "--config", os.path.join(folder, "litellm.yaml"), "--host", "127.0.0.1", "--port",
             str(port), "--num_workers", "1"], _opened(port), timeout=120, env=env))
    except (RuntimeError, OSError) as exc:
        log(f"# litellm: {command[0]} did not start ({_one_line(exc)}); not compared")
        return None
    return f"http://127.0.0.1:{port}/v1", _process_tree(proc.pid)


def _one_line(exc: BaseException) -> str:
    """What went wrong, in one short line: the first failure inside an exception group (anyio's task groups
    wrap a stream's error in one), its type and the start of its message."""
    inner = getattr(exc, "exceptions", None)  # BaseExceptionGroup (a builtin from Python 3.11 only)
    while isinstance(inner, tuple) and inner and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def _one_load(streams: int, delay: float, upstream: str, proxies: dict[str, tuple[str, list[int]]],
              lite: tuple[str, list[int]] | None, rounds: int, log: Callable[[str], None]
              ) -> tuple[dict[str, Any], str | None]:
    """One load's figures, and why LiteLLM failed on it (its target then dropped, its figures left out), or None."""
    path = "/chat/completions"
    tools, bare = _payload("long"), _payload("long", tools=False)
    targets = [_Target("direct", upstream + path, tools, [])]
    for suffix, (base, pids) in proxies.items():
        targets += [_Target("bare" + suffix, base + path, bare, pids),
                    _Target("streamparse" + suffix, base + path, tools, pids)]
    if lite is not None:
        targets.append(_Target("litellm", lite[0] + path, {**tools, "model": _alias(delay)}, lite[1],
                               {"authorization": f"Bearer {LITELLM_KEY}"}))
    failure: str | None = None

    def attempt(target: _Target, step: Callable[..., Any], *args: Any) -> Any:
        """``step(target, *args)``; a LiteLLM failure drops its target (and is kept as ``failure``), any other
        target's is raised."""
        nonlocal failure
        try:
            return step(target, *args)
        except Exception as exc:  # noqa: BLE001 - LiteLLM's own failure, whatever it is, costs only its figures
            if target.name != "litellm":
                raise
            failure = _one_line(exc)
            targets.remove(target)
            return None

    references: dict[str, dict[str, Any]] = {}
    for target in list(targets):  # the reference of each, a warm-up too
        first = attempt(target, _first)
        if first is not None:
            references[target.name] = first
    for _ in range(rounds):
        for target in list(targets):
            attempt(target, _Target.run, streams)
    direct = targets[0]
    for target in list(targets[1:]):
        parsing = target.name.startswith("streamparse")
        attempt(target, _check, references[target.name] if parsing else references["direct"], parsing)
        if parsing and not references[target.name]["calls"]:
            raise LoadError(f"{target.name} found no calls in the replayed stream")
    upstream_chunks = sum(r["chunks"] for r in direct.results)
    label = load_label(streams, delay)
    out: dict[str, Any] = {}
    for target in targets:
        ttfb = [r["ttfb"] for r in target.results]
        gaps = [g for r in target.results for g in r["gaps"]]
        latencies = [x for r in target.results for x in r["latencies"]]
        name = f"{label}_{target.name}"
        if target.pids:
            out[f"{name}_cpu_us_per_chunk"] = target.cpu / 1e3 / max(upstream_chunks, 1)
        out[f"{name}_ttfb_ms_p50"] = _pct(ttfb, 0.5) * 1e3
        out[f"{name}_ttfb_ms_p99"] = _pct(ttfb, 0.99) * 1e3
        out[f"{name}_latency_ms_p50"] = _pct(latencies, 0.5) * 1e3
        out[f"{name}_latency_ms_p99"] = _pct(latencies, 0.99) * 1e3
        out[f"{name}_gap_ms_p99"] = _pct(gaps, 0.99) * 1e3
        out[f"{name}_requests_per_s"] = len(target.results) / target.seconds
        chunks = sum(r["chunks"] for r in target.results)
        out[f"{name}_chunks_per_stream"] = chunks // max(len(target.results), 1)
        out[f"{name}_chunks_per_s"] = chunks / target.seconds
        out[f"{name}_calls_per_stream"] = len(target.results[0]["calls"]) if target.results else 0
        out[f"{name}_latency_ms_mean"] = statistics.fmean(latencies) * 1e3 if latencies else float("nan")
        if target.pids:
            out[f"{name}_peak_rss_mib"] = _peak_rss_mib(target.pids[0])  # the process's peak so far in the run
        if target is not direct:
            for q in ("p50", "p99"):
                out[f"{name}_added_ttfb_ms_{q}"] = out[f"{name}_ttfb_ms_{q}"] - out[f"{label}_direct_ttfb_ms_{q}"]
    for suffix in proxies:
        ours = out[f"{label}_streamparse{suffix}_cpu_us_per_chunk"]
        out[f"{label}_cpu_ratio_streamparse{suffix}_to_bare{suffix}"] = ours / out[f"{label}_bare{suffix}_cpu_us_per_chunk"]
        if any(t.name == "litellm" for t in targets):
            out[f"{label}_cpu_ratio_streamparse{suffix}_to_litellm"] = ours / out[f"{label}_litellm_cpu_us_per_chunk"]
    log(f"# proxy cost {label}: " + ", ".join(f"{t.name} {out[f'{label}_{t.name}_cpu_us_per_chunk']:.0f} µs"
                                              for t in targets[1:]) + " CPU per upstream chunk")
    return out, failure


_COST_COLUMNS = (("cpu_us_per_chunk", "CPU µs/chk", ".1f"), ("added_ttfb_ms_p50", "+TTFB50 ms", ".2f"),
                 ("added_ttfb_ms_p99", "+TTFB99 ms", ".2f"), ("latency_ms_p50", "lat50 ms", ".2f"),
                 ("latency_ms_p99", "lat99 ms", ".2f"), ("gap_ms_p99", "gap99 ms", ".2f"),
                 ("requests_per_s", "req/s", ".1f"))  # (figure, header with its unit, format)


def cost_table(figures: dict[str, Any]) -> Iterator[str]:
    """``figures`` as one table: a header, a row per load and target, then the ratios, one a line; under 100
    columns for the usual targets. Each column is explained by ``cost_legend``."""
    rows = [k.rsplit("_", 3)[0] for k in figures if k.endswith("_requests_per_s")]
    cells = [("load", "target", *(head for _, head, _ in _COST_COLUMNS))]
    for row in rows:
        streams, pace, target = row.split("_", 2)  # c20_paced_streamparse@before
        cells.append((f"{streams}_{pace}", target, *(format(figures[f"{row}_{c}"], spec) if f"{row}_{c}" in figures
                                                     else "-" for c, _, spec in _COST_COLUMNS)))
    yield from lay_out(cells, "ll" + "r" * len(_COST_COLUMNS), least=(0, 0, *(8,) * len(_COST_COLUMNS)))
    for key, value in figures.items():
        if "_ratio_" in key:
            yield f"{key:<66}{value:>8.3f}"


def cost_legend(loads: tuple[tuple[int, float], ...] = LOADS) -> list[str]:
    """One line per load, target, column and ratio of ``cost_table`` (for the loads ``run_costs`` ran)."""
    lines = [f"  {load_label(streams, delay)}: {streams} stream{'s' * (streams > 1)} at once, "
             + (f"upstream paced at {delay * 1000:g} ms per token" if delay else "upstream as fast as it can")
             + (f" ({ALONE} in turn per round)" if streams == 1 else "") for streams, delay in loads]
    lines += [
        "  direct: the upstream read directly; bare: streamparse serve, request without tools (pass-through);",
        "  streamparse: streamparse serve parsing tool calls; litellm: the LiteLLM proxy (when installed)",
        "  CPU µs/chk   the proxy process's CPU time (all threads) per upstream chunk, microseconds",
        "  +TTFB50/99   time to first byte minus direct's, median / 99th percentile, milliseconds",
        "  lat50/99     upstream send to client receipt of each chunk, median / 99th percentile, ms",
        "  gap99        99th percentile of the time between two reads at the client, milliseconds",
        "  req/s        requests completed per second of the round (all streams of the load)",
        "  ..._cpu_ratio_A_to_B: A's CPU µs per chunk ÷ B's, same load (below 1: A costs less)",
    ]
    return lines
