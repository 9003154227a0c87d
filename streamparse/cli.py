"""``streamparse`` command line: stream model output through the parser and print the events."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence, TextIO

from .dialects import REGISTRY
from .events import Diagnostic, Event, ToolCall
from .examples import DEFAULT_EXAMPLE, EXAMPLE_TOOLS, EXAMPLES
from .parser import StreamParser


def _load_tools(path: str | None, use_example: bool) -> list[dict[str, Any]] | None:
    if path:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data.get("tools", data) if isinstance(data, dict) else data
    return EXAMPLE_TOOLS if use_example else None


def _format(ev: Event) -> str:
    if isinstance(ev, ToolCall):
        return f"tool_call #{ev.index} {ev.name} {ev.arguments}  (id={ev.id}, {ev.dialect})"
    if isinstance(ev, Diagnostic):
        return f"diagnostic {ev.code}: {ev.message}"
    return f"{ev.type:<9} {ev.text!r}"


def _event_json(ev: Event) -> str:
    data = {"type": ev.type}
    data.update({k: getattr(ev, k) for k in ev.__slots__})  # type: ignore[union-attr]
    return json.dumps(data, ensure_ascii=False)


def run_parse(args: argparse.Namespace, out: TextIO) -> int:
    if args.file is not None:
        text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
        example = False
    elif args.example or sys.stdin.isatty():
        text = EXAMPLES[args.example or DEFAULT_EXAMPLE]
        example = True
    else:
        text = sys.stdin.read()
        example = False
    parser = StreamParser(_load_tools(args.tools, example), dialects=args.dialect)
    if example and not args.json:
        print(f"# built-in example {args.example or DEFAULT_EXAMPLE!r}, fed {args.chunk} characters at a time", file=out)
    chunk = max(1, args.chunk)
    for i in range(0, len(text), chunk):
        for ev in parser.feed(text[i : i + chunk]):
            print(_event_json(ev) if args.json else _format(ev), file=out)
    for ev in parser.close():
        print(_event_json(ev) if args.json else _format(ev), file=out)
    return 0


def run_serve(args: argparse.Namespace, out: TextIO) -> int:
    from .config import ConfigError, ProxyConfig, load_config
    from .runner import ServerThread, serve_forever
    from .server import create_app

    try:
        if args.config:
            config = load_config(args.config)
        elif args.upstream:
            config = ProxyConfig.single(args.upstream)
        elif not args.demo:
            print("streamparse serve: give --upstream URL, --config FILE or --demo", file=sys.stderr)
            return 2
        else:
            config = None
    except ConfigError as exc:
        print(f"streamparse serve: {exc}", file=sys.stderr)
        return 2
    host = args.host or (config.host if config else "127.0.0.1")
    port = args.port if args.port is not None else (config.port if config else 8080)
    if args.demo:
        from .replay import create_replay_app

        with ServerThread(create_replay_app(token_delay=0.02)) as upstream:
            config = ProxyConfig.single(upstream.url + "/v1")
            print(f"streamparse: built-in replay upstream at {upstream.url}/v1 (models: qwen3_xml, hermes, mixed)", file=out)
            print(f"streamparse: proxy on http://{host}:{port}/v1", file=out, flush=True)
            serve_forever(create_app(config), host, port, args.log_level)
        return 0
    assert config is not None
    print(f"streamparse: proxy on http://{host}:{port}/v1 -> " + ", ".join(b.upstream for b in config.backends), file=out, flush=True)
    serve_forever(create_app(config), host, port, args.log_level)
    return 0


def run_replay(args: argparse.Namespace, out: TextIO) -> int:
    from .replay import create_replay_app
    from .runner import serve_forever

    print(f"streamparse: replay upstream on http://{args.host}:{args.port}/v1", file=out, flush=True)
    serve_forever(create_replay_app(token_delay=args.delay, stamp=args.stamp), args.host, args.port, args.log_level)
    return 0


def run_demo(args: argparse.Namespace, out: TextIO) -> int:
    """The whole path on one machine: replay upstream -> streamparse proxy -> a streaming client."""
    import httpx

    from .config import ProxyConfig
    from .replay import create_replay_app
    from .runner import ServerThread
    from .server import create_app
    from .sse import SSEDecoder

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


def run_bench(args: argparse.Namespace, out: TextIO) -> int:
    from . import benchmark as bm

    parsers = dict(bm.PARSERS)
    extra, notes = bm.optional_comparators()
    parsers.update(extra)
    for spec in args.compare or []:
        name, factory = bm.load_compare(spec)
        parsers[name] = factory
    for note in notes:
        print(f"# {note}", file=out)
    chunk = args.chunk if args.chunk == "random" else int(args.chunk)
    scenarios = args.scenario or ["prose", "tool_heavy", "dialects", "scaling"]
    results = bm.run_suite(scenarios, chunk=chunk, parsers=parsers, quick=args.quick,
                           log=lambda s: print(s, file=out, flush=True))
    headline = bm.ratios(results)
    if headline:
        print("\n== ratios (same run, same machine)", file=out)
        for key, value in headline.items():
            print(f"{key:<40}{value:>10.2f}", file=out)
    if args.proxy:
        from .loadtest import run_load

        figures = run_load(args.proxy_concurrency, args.proxy_delay)
        headline.update({f"proxy_{k}": v for k, v in figures.items() if isinstance(v, (int, float))})
        print("\n== proxy (streamparse serve vs direct, real processes on loopback)", file=out)
        for key, value in figures.items():
            print(f"{key:<40}{value:>12.2f}", file=out)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"chunk": chunk, "results": [r.as_dict() for r in results], "ratios": headline}, fh, indent=1)
    if args.plot:
        bm.plot(results, args.plot)
        print(f"# plot written to {args.plot}", file=out)
    return 1 if any(r.correct is False for r in results) else 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="streamparse", description=__doc__)
    sub = ap.add_subparsers(dest="command")
    p = sub.add_parser("parse", help="stream a model output (file, stdin or a built-in example) through the parser")
    p.add_argument("file", nargs="?", help="model output to parse; '-' for stdin; default: a built-in example")
    p.add_argument("--example", choices=sorted(EXAMPLES), help="use a built-in example output (and its tools)")
    p.add_argument("--tools", help="JSON file with OpenAI tools (a list, or a request body with 'tools')")
    p.add_argument("--dialect", action="append", choices=REGISTRY.known_names(), metavar="NAME",
                   help="restrict detection (repeatable; names as vLLM/SGLang --tool-call-parser, or aliases)")
    p.add_argument("--chunk", type=int, default=4, help="characters per delta (default 4)")
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(func=run_parse)

    s = sub.add_parser("serve", help="run the proxy in front of an OpenAI-compatible server")
    s.add_argument("--upstream", help="upstream base URL as an OpenAI client takes it, e.g. http://127.0.0.1:8000/v1")
    s.add_argument("--config", help="TOML file with several backends (see streamparse.config)")
    s.add_argument("--demo", action="store_true", help="use the built-in replay upstream (no model server needed)")
    s.add_argument("--host", default=None, help="default 127.0.0.1")
    s.add_argument("--port", type=int, default=None, help="default 8080")
    s.add_argument("--log-level", default="info")
    s.set_defaults(func=run_serve)

    r = sub.add_parser("replay", help="run the built-in replay upstream (recorded outputs, streamed token by token)")
    r.add_argument("--host", default="127.0.0.1")
    r.add_argument("--port", type=int, default=8000)
    r.add_argument("--delay", type=float, default=0.02, help="seconds between tokens")
    r.add_argument("--stamp", action="store_true", help="add x_sent (send time) to every chunk, for latency measurements")
    r.add_argument("--log-level", default="info")
    r.set_defaults(func=run_replay)

    b = sub.add_parser("bench", help="speed, latency and scaling of the parser next to baselines")
    b.add_argument("--scenario", action="append",
                   help="prose, tool_heavy, dialects, scaling, or one workload such as dialect:qwen3_coder or "
                        "args:hermes:64 (repeatable; default: all four groups)")
    b.add_argument("--chunk", default="4", help="characters per delta, or 'random' for 1-12 (default 4)")
    b.add_argument("--compare", action="append", metavar="MODULE:CALLABLE",
                   help="another parser: a callable taking the list of deltas, returning (text, calls)")
    b.add_argument("--json", metavar="FILE", help="write machine-readable results")
    b.add_argument("--plot", metavar="FILE.png", help="time against argument size, log-log (needs matplotlib)")
    b.add_argument("--quick", action="store_true", help="tiny workloads (a smoke run)")
    b.add_argument("--proxy", action="store_true", help="also load-test the proxy (starts real processes)")
    b.add_argument("--proxy-concurrency", type=int, default=200)
    b.add_argument("--proxy-delay", type=float, default=0.02, help="upstream seconds per token in the proxy run")
    b.set_defaults(func=run_bench)

    d = sub.add_parser("demo", help="replay upstream + proxy + streaming client, all on loopback, then exit")
    d.add_argument("--example", choices=sorted(EXAMPLES), default=DEFAULT_EXAMPLE)
    d.add_argument("--delay", type=float, default=0.01, help="seconds between upstream tokens")
    d.set_defaults(func=run_demo)
    return ap


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = build_parser()
    commands = {"parse", "serve", "replay", "demo", "bench"}
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help")):
        argv.insert(0, "parse")
    args = ap.parse_args(argv)
    return args.func(args, out or sys.stdout)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
