"""``streamparse conformance``: the canitoolcall suite replayed through streamparse, counted as the suite counts.

Invariant: a thin front on ``harness.conformance`` (the operator's per-model table, the layers); it prints what the
suite's own checks decided and changes nothing. Needs the ``conformance`` extra and nothing more
(``pip install '.[conformance]'``: canitoolcall, whose pytest plugin is never imported, so pytest is not
needed).
"""

from __future__ import annotations

import argparse
import difflib
from collections import Counter, defaultdict
from typing import Any, TextIO

from .inputs import CliError

__all__ = ["add_conformance_parser", "run_conformance"]


def add_conformance_parser(sub: Any) -> None:
    c = sub.add_parser("conformance", help="replay the canitoolcall conformance suite (469 recorded model outputs) "
                                           "through the library or the OpenAI layer, per model as an operator would "
                                           "configure it, and count pass / soft pass / fail")
    c.add_argument("--layer", choices=("library", "openai"), default="library",
                   help="the library's StreamParser, or the OpenAI chunk layer the proxy runs (default library)")
    c.add_argument("--family", action="append", metavar="SLUG", help="only this fixture family (repeatable)")
    c.add_argument("--failures", action="store_true", help="also print each fixture that does not pass, and why")
    c.set_defaults(func=run_conformance)


def run_conformance(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from canitoolcall.fixtures import load_families

        from ..harness.conformance import run
    except ImportError as exc:
        raise CliError(f"needs the conformance extra (missing: {exc.name}): pip install 'canitoolcall==0.1.1'") \
            from None
    known = sorted(load_families())
    unknown = [f for f in args.family or () if f not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise CliError(f"unknown family {unknown[0]!r}{hint}; families: {', '.join(known)}")
    results = run(args.layer, args.family)
    families: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        families[r.family][r.status.value] += 1
    statuses = ("pass", "soft_pass", "fail", "error", "unsupported")
    print(f"canitoolcall through streamparse ({args.layer}): {len(results)} fixtures", file=out)
    print(f"{'family':14}" + "".join(f"{s:>12}" for s in statuses), file=out)
    for family, counts in sorted(families.items()):
        print(f"{family:14}" + "".join(f"{counts[s]:>12}" for s in statuses), file=out)
    total = Counter(r.status.value for r in results)
    print(f"{'total':14}" + "".join(f"{total[s]:>12}" for s in statuses), file=out)
    print(f"pass or soft pass: {total['pass'] + total['soft_pass']} of {len(results)}", file=out)
    if args.failures:
        for r in results:
            if r.status.value not in ("pass", "soft_pass"):
                bad = [c for c in r.checks if c.status.value in ("fail", "error")][:2]
                why = "; ".join(f"{c.check} ({c.strategy}): {(c.detail or '')[:160]}" for c in bad)
                print(f"  {r.fixture_id}: {why or r.reason}", file=out)
    return 0
