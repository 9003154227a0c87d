"""``streamparse`` command line: stream model output through the parser and print the events;
run the proxy, the replay upstream, the demo and the benchmarks.

Invariant: an ordinary mistake (a missing or binary file, a bad tools file, a typo'd command,
an unknown benchmark scenario or ``--compare`` module, a taken port, a bad config) ends with one
line on stderr, ``streamparse[ COMMAND]: ...``, and exit status 2 — never a traceback. Output cut
short by a closed pipe (``streamparse FILE | head``, ``streamparse bench | head -3``) ends with
exit status 2 and nothing at all on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
from typing import Any, Sequence, TextIO

from ..dialects import REGISTRY
from ..core.events import Diagnostic, Event, ToolCall, ToolCallDelta, ToolCallStart
from ..harness.examples import DEFAULT_EXAMPLE, EXAMPLE_TOOLS, EXAMPLES
from .inputs import CliError, dialect_name, load_tools, read_text
from .conformance import add_conformance_parser
from .serve import LOG_LEVELS, add_serve_parser, run_replay
from ..core.parser import StreamParser

COMMANDS = ("parse", "serve", "replay", "demo", "bench", "conformance")
# pyproject's [project] name: the import name is streamparse, but "streamparse" on PyPI is another project.
DISTRIBUTION = "streamparse-tools"


def _format(ev: Event) -> str:
    if isinstance(ev, ToolCall):
        return f"tool_call #{ev.index} {ev.name} {ev.arguments}  (id={ev.id}, {ev.dialect})"
    if isinstance(ev, Diagnostic):
        return f"diagnostic {ev.code}: {ev.message}"
    if isinstance(ev, (ToolCallStart, ToolCallDelta)):
        return f"{ev.type} #{ev.index} " + (ev.name if isinstance(ev, ToolCallStart) else repr(ev.arguments_fragment))
    return f"{ev.type:<9} {ev.text!r}"


def _event_json(ev: Event) -> str:
    data: dict[str, Any] = {"type": ev.type}
    data.update({f.name: getattr(ev, f.name) for f in dataclasses.fields(ev)})
    return json.dumps(data, ensure_ascii=False)


def run_parse(args: argparse.Namespace, out: TextIO) -> int:
    if args.chunk < 1:
        raise CliError(f"--chunk must be a positive number of characters, not {args.chunk}")
    if args.file is not None:
        text = read_text(args.file)
        example = False
    elif args.example or (sys.stdin is not None and sys.stdin.isatty()):
        text = EXAMPLES[args.example or DEFAULT_EXAMPLE]
        example = True
    else:
        text = read_text("-")
        example = False
        if not text:  # `streamparse < /dev/null`, or run by a program without a terminal
            build_parser().print_help(sys.stderr)
            raise CliError("nothing on stdin: give a FILE, pipe model output in, or try --example NAME")
    tools = load_tools(args.tools) if args.tools else EXAMPLE_TOOLS if example else None
    parser = StreamParser(tools, dialects=args.dialect, calls_in_reasoning=args.calls_in_reasoning)
    if example and not args.json:
        print(f"# built-in example {args.example or DEFAULT_EXAMPLE!r}, fed {args.chunk} characters at a time", file=out)
    chunk = args.chunk
    for i in range(0, len(text), chunk):
        for ev in parser.feed(text[i : i + chunk]):
            print(_event_json(ev) if args.json else _format(ev), file=out)
    for ev in parser.close():
        print(_event_json(ev) if args.json else _format(ev), file=out)
    return 0


def run_demo(args: argparse.Namespace, out: TextIO) -> int:
    """The whole path on one machine: replay upstream -> streamparse proxy -> a streaming client."""
    import httpx

    from ..proxy.config import ProxyConfig
    from ..harness.replay import create_replay_app
    from ..proxy.runner import ServerThread
    from ..proxy.app import create_app
    from ..wire.sse import SSEDecoder

    with ServerThread(create_replay_app(token_delay=args.delay)) as upstream, \
            ServerThread(create_app(ProxyConfig.single(upstream.url + "/v1"))) as proxy:
        print(f"# upstream (replays recorded model output, token by token): {upstream.url}/v1", file=out)
        print(f"# streamparse proxy in front of it:                          {proxy.url}/v1", file=out)
        request = {"model": args.example, "stream": True, "tools": EXAMPLE_TOOLS,
                   "messages": [{"role": "user", "content": "Weather in Sao Paulo, and write hello.py"}]}
        print(f"# POST /v1/chat/completions model={args.example!r} stream=true, {len(EXAMPLE_TOOLS)} tools\n", file=out)
        decoder = SSEDecoder()
        finish = None
        thinking = False
        with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=request, timeout=60) as resp:
            resp.raise_for_status()
            for raw in resp.iter_bytes():
                for event in decoder.feed(raw):
                    if event.data is None or event.data == "[DONE]":
                        continue
                    for choice in json.loads(event.data).get("choices", []):
                        delta = choice.get("delta", {})
                        if delta.get("reasoning_content"):
                            if not thinking:
                                print("(reasoning) ", end="", file=out)
                            thinking = True
                            print(delta["reasoning_content"], end="", file=out, flush=True)
                        if delta.get("content"):
                            if thinking:
                                print("\n(answer) ", end="", file=out)
                            thinking = False
                            print(delta["content"], end="", file=out, flush=True)
                        for call in delta.get("tool_calls") or []:
                            fn = call["function"]
                            print(f"\n[tool_call {call['index']}] {fn['name']}({fn['arguments']})  id={call['id']}", file=out, flush=True)
                        finish = choice.get("finish_reason") or finish
        print(f"\n\n# finish_reason: {finish}", file=out)
    return 0


PLOT_FORMATS = ("png", "svg", "pdf")  # what --plot writes, chosen by the file's extension


def run_bench(args: argparse.Namespace, out: TextIO) -> int:
    from ..harness import benchmark as bm
    from ..harness.report import format_ratios

    chunk = _bench_chunk(args.chunk)
    scenarios = args.scenario or list(bm.SCENARIOS)
    unknown = [name for name in scenarios if not _known_scenario(name)]
    if unknown:
        raise CliError(f"unknown scenario {unknown[0]!r}; give {', '.join(bm.SCENARIOS)}, dialect:NAME, mixed:NAME, "
                       f"short:NAME, answer:NAME, construct:new:N or args:NAME:KB, where NAME is one of "
                       f"{', '.join(bm.RENDERERS)}")
    if args.plot:
        _check_plot(args.plot, scenarios)
    if args.proxy and (args.proxy_concurrency < 1 or args.proxy_delay < 0 or args.proxy_rounds < 1):
        raise CliError("--proxy-concurrency and --proxy-rounds must be at least 1 and --proxy-delay at least 0")
    parsers = dict(bm.PARSERS)
    for spec in args.compare or []:
        name, factory = _compare_parser(spec)
        parsers[name] = factory
    results = bm.run_suite(scenarios, chunk=chunk, parsers=parsers, quick=args.quick, engines=not args.no_engines,
                           log=lambda s: print(s, file=out, flush=True))
    headline = bm.ratios(results)
    if headline:
        print(format_ratios(headline), file=out)
    if args.proxy:
        _bench_proxy(args, headline, out)
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump({"chunk": chunk, "results": [r.as_dict() for r in results], "ratios": headline}, fh, indent=1)
        except OSError as exc:
            raise CliError(f"cannot write {args.json!r}: {exc.strerror or exc}") from None
    if args.plot:
        try:
            bm.plot(results, args.plot, chunk)
        except (RuntimeError, OSError, ValueError) as exc:
            raise CliError(f"--plot: {exc}") from None
        print(f"# plot written to {args.plot}", file=out)
    return 1 if any(r.correct is False for r in results if r.parser == "streamparse") else 0


def _bench_proxy(args: argparse.Namespace, headline: dict[str, float], out: TextIO) -> None:
    """``bench --proxy``: the load test's load first, without LiteLLM, its table printed as soon as it is done
    (``proxyload``); then ``--workers`` 1 against 2 (``loadtest.run_workers``); then the cost loads with LiteLLM (``proxycost``; a LiteLLM failure costs only its columns,
    with one line saying why), and the cost table of every load. Each run starts only the servers it uses."""
    from ..harness.loadtest import run_workers
    from ..harness.proxycost import LOADS, cost_legend, cost_table, run_costs
    from ..harness.proxyload import load_figures, load_table, workers_table

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    load = (args.proxy_concurrency, args.proxy_delay)
    tested = run_costs((load,), rounds=args.proxy_rounds, litellm=False, log=log)
    figures = load_figures(tested, *load)
    headline.update({f"proxy_{k}": v for k, v in figures.items() if isinstance(v, (int, float))})
    print("\n== proxy load test (streamparse serve vs the upstream read directly, real processes on loopback)",
          file=out)
    for line in load_table(figures):
        print(line, file=out)
    out.flush()
    workers = run_workers(args.proxy_concurrency, rounds=args.proxy_rounds + 1)
    headline.update({f"proxy_{k}": v for k, v in workers.items() if isinstance(v, (int, float))})
    print(f"\n== proxy workers (serve --workers 1 and 2, taking turns; {args.proxy_concurrency} clients x 5 requests "
          "each on the lean client and upstream, which leave the cores to the proxy)", file=out)
    for line in workers_table(workers):
        print(line, file=out)
    out.flush()
    costs = run_costs(LOADS, rounds=args.proxy_rounds, log=log)
    costs.update({k: v for k, v in tested.items() if k not in costs})  # a load in LOADS too: the cost run's figures
    headline.update({f"proxy_cost_{k}": v for k, v in costs.items()})
    print("\n== proxy cost (direct / bare / streamparse / litellm, same upstream and load)", file=out)
    for line in [*cost_table(costs), *cost_legend(tuple(dict.fromkeys(LOADS + (load,))))]:
        print(line, file=out)


def _check_plot(path: str, scenarios: list[str]) -> None:
    """Before any run: matplotlib is there, the file type is one it writes, its folder exists, and the run has
    what the picture draws (args:* lines or mixed:* bars)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise CliError(f"--plot needs matplotlib: pip install '{DISTRIBUTION}[plot]'")
    kind = os.path.splitext(path)[1].lstrip(".").lower()
    if kind not in PLOT_FORMATS:
        raise CliError(f"--plot {path}: give a file ending in {', '.join('.' + k for k in PLOT_FORMATS)}")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise CliError(f"--plot {path}: no folder {folder!r}")
    if not any(name in ("scaling", "engines") or name.startswith(("args:", "mixed:")) for name in scenarios):
        raise CliError("--plot draws the scaling or engines scenario (args:* or mixed:*): add --scenario scaling")


def _compare_parser(spec: str) -> tuple[str, Any]:
    """``--compare module:callable`` (``baselines.load_compare``); its refusal is one line naming the spec."""
    from ..harness.baselines import CompareError, load_compare

    try:
        return load_compare(spec)
    except CompareError as exc:
        raise CliError(f"--compare {spec}: {exc}") from None


def _bench_chunk(value: str) -> int | str:
    if value == "random":
        return value
    if not value.isdecimal() or int(value) < 1:
        raise CliError(f"--chunk must be a positive number of characters or 'random', not {value!r}")
    return int(value)


def _known_scenario(name: str) -> bool:
    """What ``benchmark.run_suite`` accepts: a group, or one workload ``dialect:NAME``, ``agent:NAME``, ``mixed:NAME``,
    ``short:NAME``, ``args:NAME:KB``, or of the per-request groups ``answer:NAME``, ``answer1:NAME``,
    ``construct:new|same|equal:N`` (``bench_groups.known``)."""
    from ..harness.bench_groups import known
    from ..harness.benchmark import RENDERERS, SCENARIOS

    if name in SCENARIOS or known(name):
        return True
    kind, _, rest = name.partition(":")
    dialect, _, kb = rest.partition(":")
    if kind in ("dialect", "agent", "mixed", "short"):
        return rest in RENDERERS
    if kind == "args":
        return dialect in RENDERERS and kb.isdecimal() and int(kb) > 0
    return name in SCENARIOS


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="streamparse",
        description="Stream model output through the tool-call parser and print the events; run the proxy, "
                    "the replay upstream, the demo and the benchmarks.",
        epilog="`streamparse [FILE|-]` is short for `streamparse parse [FILE|-]`; with no FILE it reads stdin, "
               "or shows a built-in example when stdin is a terminal.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {version()}",
                    help="print the installed version and exit")
    sub = ap.add_subparsers(dest="command")
    p = sub.add_parser("parse", help="stream a model output (file, stdin or a built-in example) through the parser")
    p.add_argument("file", nargs="?", help="model output to parse; '-' for stdin; default: a built-in example")
    p.add_argument("--example", choices=sorted(EXAMPLES), help="use a built-in example output (and its tools)")
    p.add_argument("--tools", help="JSON file with OpenAI tools (a list, or a request body with 'tools')")
    p.add_argument("--dialect", action="append", type=dialect_name, metavar="NAME",
                   help="restrict detection (repeatable; names as vLLM/SGLang --tool-call-parser, or aliases); "
                        "one dialect is pinned: its bare forms are read without --tools")
    p.add_argument("--calls-in-reasoning", action="store_true",
                   help="a call to a given tool written inside <think> leaves as a call")
    p.add_argument("--chunk", type=int, default=4, help="characters per delta (default 4)")
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(func=run_parse)

    add_serve_parser(sub)

    r = sub.add_parser("replay", help="run the built-in replay upstream (recorded outputs, streamed token by token)")
    r.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    r.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    r.add_argument("--delay", type=float, default=0.02, help="seconds between tokens")
    r.add_argument("--stamp", action="store_true", help="add x_sent (send time) to every chunk, for latency measurements")
    r.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="uvicorn's log level (default info)")
    r.set_defaults(func=run_replay)

    b = sub.add_parser("bench", help="speed, latency and scaling of the parser next to baselines and the "
                                     "serving engines' parsers")
    b.add_argument("--scenario", action="append",
                   help="prose, tool_heavy, dialects, scaling, engines (every format an engine parses: one mixed "
                        "stream each), short (100 short calls per format), construction (a parser for 5 or 100 "
                        "tools, new or cached), answers (complete answers parsed at once), or one workload such as "
                        "dialect:qwen3_coder, mixed:glm45, agent:hermes, short:hermes, answer:hermes or "
                        "args:hermes:64 (repeatable; default: every group)")
    b.add_argument("--chunk", default="4", help="characters per delta, or 'random' for 1-12 (default 4)")
    b.add_argument("--compare", action="append", metavar="MODULE:CALLABLE",
                   help="another parser: a callable taking the list of deltas, returning (text, calls)")
    b.add_argument("--json", metavar="FILE", help="write machine-readable results")
    b.add_argument("--plot", metavar="FILE.png",
                   help="draw cost per delta against argument size (log-log, every parser) and, with the engines "
                        "group, every format's bars; .png, .svg or .pdf (needs matplotlib and the scaling or "
                        "engines scenario)")
    b.add_argument("--no-engines", action="store_true",
                   help="leave out the serving engines' parsers (vLLM, SGLang) even when installed")
    b.add_argument("--quick", action="store_true", help="tiny workloads (a smoke run)")
    b.add_argument("--proxy", action="store_true", help="also load-test the proxy (starts real processes)")
    b.add_argument("--proxy-concurrency", type=int, default=200, help="concurrent streams in the proxy run (default 200)")
    b.add_argument("--proxy-delay", type=float, default=0.02, help="upstream seconds per token in the proxy run")
    b.add_argument("--proxy-rounds", type=int, default=2, metavar="N",
                   help="turns each target (direct, bare, streamparse, litellm) takes per proxy load (default 2); "
                        "more give steadier CPU ratios, which swing by about 0.2 between runs of 2 on a busy "
                        "machine, in a longer run")
    b.set_defaults(func=run_bench)

    d = sub.add_parser("demo", help="replay upstream + proxy + streaming client, all on loopback, then exit")
    d.add_argument("--example", choices=sorted(EXAMPLES), default=DEFAULT_EXAMPLE,
                   help=f"which recorded model output the replay upstream streams (default {DEFAULT_EXAMPLE})")
    d.add_argument("--delay", type=float, default=0.01, help="seconds between upstream tokens")
    d.set_defaults(func=run_demo)

    add_conformance_parser(sub)
    return ap


def version() -> str:
    """The installed distribution's version (package metadata: pyproject's ``version``, the one source)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def _unknown_command(word: str) -> CliError | None:
    """``streamparse serv``: a word that is neither a command nor an existing file is a typo'd command."""
    if not re.fullmatch(r"[A-Za-z][\w-]*", word) or os.path.exists(word):
        return None  # a path (or an option): `streamparse FILE` reports it if it cannot be read
    close = difflib.get_close_matches(word, COMMANDS, n=1)
    hint = f"did you mean {close[0]!r}?" if close else "and no file of that name"
    return CliError(f"unknown command {word!r} ({hint}); commands: {', '.join(COMMANDS)}")


def _silence_stdout() -> None:
    """After the reader of our output went away (``| head``): point stdout at /dev/null, so that
    the interpreter's last flush cannot fail too (the recipe in Python's signal docs)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout: nothing left to protect
        pass


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    command = argv[0] if argv and argv[0] in COMMANDS else None
    try:
        if command is None and argv[:1] not in (["-h"], ["--help"], ["--version"]):
            if argv and (error := _unknown_command(argv[0])):
                raise error
            argv.insert(0, "parse")
        args = build_parser().parse_args(argv)
        status: int = args.func(args, out)
        out.flush()
        return status
    except CliError as exc:
        print(f"streamparse{' ' + command if command else ''}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
