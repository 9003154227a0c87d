"""``streamparse`` command line: stream model output through the parser and print the events."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence, TextIO

from .dialects import DIALECTS
from .events import Event, ToolCall
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
    if ev.type == "diagnostic":
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


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="streamparse", description=__doc__)
    sub = ap.add_subparsers(dest="command")
    p = sub.add_parser("parse", help="stream a model output (file, stdin or a built-in example) through the parser")
    p.add_argument("file", nargs="?", help="model output to parse; '-' for stdin; default: a built-in example")
    p.add_argument("--example", choices=sorted(EXAMPLES), help="use a built-in example output (and its tools)")
    p.add_argument("--tools", help="JSON file with OpenAI tools (a list, or a request body with 'tools')")
    p.add_argument("--dialect", action="append", choices=sorted(DIALECTS), help="restrict detection (repeatable)")
    p.add_argument("--chunk", type=int, default=4, help="characters per delta (default 4)")
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.set_defaults(func=run_parse)
    return ap


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = build_parser()
    commands = {"parse"}
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help")):
        argv.insert(0, "parse")
    args = ap.parse_args(argv)
    return args.func(args, out or sys.stdout)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
