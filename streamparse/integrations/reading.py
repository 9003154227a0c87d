"""One answer read through ``StreamParser`` into what an engine's parser interface returns.

Invariant: what leaves is what ``StreamParser`` read, re-shelved, never re-read: ``Pieces`` holds the text,
reasoning and calls of one feed (or of a whole answer) in the parser's order. ``ReasoningSplit`` cuts an answer
into its leading reasoning and the raw rest, character for character (what follows the reasoning's end marker,
markup included, for the engine's tool parser to read); an answer that does not open with reasoning is all rest.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..core import Diagnostic, Event, ReasoningDelta, StreamParser, TextDelta, ToolCall
from .configure import reasoning_markers

__all__ = ["Pieces", "pieces", "ReasoningSplit"]

log = logging.getLogger("streamparse.integrations")


@dataclass
class Pieces:
    """``text`` and ``reasoning`` joined, ``calls`` in order; ``diagnostics`` for the log."""

    text: str = ""
    reasoning: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def pieces(events: Sequence[Event], reasoning_as_text: bool = False) -> Pieces:
    """The events of one feed as ``Pieces``. ``reasoning_as_text``: reasoning joins the text (an engine
    interface with no reasoning field for this parser); its markers are markup and stay out."""
    text: list[str] = []
    reasoning: list[str] = []
    out = Pieces()
    for event in events:
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            (text if reasoning_as_text else reasoning).append(event.text)
        elif isinstance(event, ToolCall):
            out.calls.append(event)
        elif isinstance(event, Diagnostic):
            out.diagnostics.append(event)
            log.debug("streamparse: %s: %s", event.code, event.message)
    out.text = "".join(text)
    out.reasoning = "".join(reasoning)
    return out


class ReasoningSplit:
    """Reads an answer's leading reasoning, delta by delta; once the reasoning has ended, ``feed`` and
    ``close`` return the raw text after its end marker (and ``ended`` is True). Text before any reasoning
    that is only whitespace waits: a model may write a line break before ``<think>``. Any other text,
    or a call, before reasoning means the answer has none: all of it is rest.

    Built with the setup's dialects (their reasoning spans) and no tools; the calls it may read in the
    rest are discarded: the rest is handed on raw, for the tool parser."""

    def __init__(self, options: dict[str, Any]):
        self._parser = StreamParser(None, **options)
        self._opened = bool(options.get("start_in_reasoning"))
        self._lead = ""  # whitespace before any reasoning: all raw (prose leaves verbatim)
        self.ended = False
        openers, enders = reasoning_markers(options.get("dialects"))
        self._openers = sorted(openers, key=len, reverse=True)
        self._enders = sorted(enders, key=len, reverse=True)

    def feed(self, delta: str) -> tuple[str, str]:
        """(reasoning, rest) of this delta; after the end, the delta is all rest."""
        if self.ended:
            return "", delta
        region = self._parser.held_text + delta  # every raw character not yet released, then the delta
        return self._take(region, self._parser.feed(delta))

    def close(self) -> tuple[str, str]:
        """(reasoning, rest) left at the end of the answer."""
        if self.ended:
            return "", ""
        region = self._parser.held_text
        reasoning, rest = self._take(region, self._parser.close())
        if not self.ended:  # never ended: the answer was reasoning (or only whitespace) to its end
            self.ended = True
            if not self._opened:
                rest, self._lead = self._lead + rest, ""
        return reasoning, rest

    def _take(self, region: str, events: list[Event]) -> tuple[str, str]:
        opened_before = self._opened
        reasoning: list[str] = []
        lead_now = ""  # whitespace text of this feed before its first reasoning
        for event in events:
            if isinstance(event, ReasoningDelta):
                self._opened = True
                reasoning.append(event.text)
                continue
            if isinstance(event, Diagnostic):
                continue
            if not self._opened and isinstance(event, TextDelta) and not event.text.strip():
                lead_now += event.text
                continue
            # the reasoning is over (or there never was any): everything raw from its end on is the rest
            self.ended = True
            said = "".join(reasoning)
            if not self._opened:
                rest, self._lead = self._lead + region, ""
                return "", rest
            return said, self._after_end(region, said, lead_now, opened_before)
        if not self._opened:
            self._lead += lead_now
        return "".join(reasoning), ""

    def _after_end(self, region: str, said: str, lead_now: str, opened_before: bool) -> str:
        """The raw text after the reasoning's end marker: ``region`` is [whitespace, opener] (when the
        reasoning opened in this feed), the reasoning said in it, the end marker, the rest."""
        at = 0
        if not opened_before:
            self._lead = ""
            at = len(lead_now)
            opener = next((o for o in self._openers if region.startswith(o, at)), "")
            at += len(opener)
        at += len(said)
        ender = next((e for e in self._enders if region.startswith(e, at)), None)
        if ender is None:  # not where the reasoning's text says: the nearest end marker after it, else all
            found = [(i, e) for e in self._enders if (i := region.find(e, at)) >= 0]
            if not found:
                log.warning("streamparse: the end of reasoning was not found in the answer; the rest is kept whole")
                return region[at:]
            i, ender = min(found)
            at = i
        return region[at + len(ender):]
