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
    """Reads an answer's leading reasoning, delta by delta, into (reasoning, rest): the rest is the raw text
    after the reasoning's end marker (``ended`` is True from then on), and the whitespace that stood before
    the reasoning, handed on when the reasoning opens. Text before any reasoning that is only whitespace
    waits: a model may write a line break before ``<think>``. Any other text, or a call, before reasoning
    means the answer has none: all of it is rest.

    Built with the setup's dialects (their reasoning spans) and no tools; what it reads after the reasoning is
    discarded: the rest is handed on raw, for the tool parser. The raw text is kept until the reasoning ends
    (the end marker is found once, where the reasoning's text says it is)."""

    def __init__(self, options: dict[str, Any]):
        self._parser = StreamParser(None, **options)
        self._opened = bool(options.get("start_in_reasoning"))
        self._prompted = self._opened  # the prompt opened it: no opener in the answer
        self._raw: list[str] = []  # the answer so far, until the reasoning ends
        self._lead = ""  # whitespace before any reasoning (prose leaves verbatim)
        self._said = 0  # characters of reasoning read so far
        self.ended = False
        openers, enders = reasoning_markers(options.get("dialects"))
        self._openers = sorted(openers, key=len, reverse=True)
        self._enders = sorted(enders, key=len, reverse=True)

    def feed(self, delta: str) -> tuple[str, str]:
        """(reasoning, rest) of this delta; after the end, the delta is all rest."""
        if self.ended:
            return "", delta
        self._raw.append(delta)
        return self._take(self._parser.feed(delta), final=False)

    def close(self) -> tuple[str, str]:
        """(reasoning, rest) left at the end of the answer."""
        if self.ended:
            return "", ""
        return self._take(self._parser.close(), final=True)

    def _take(self, events: list[Event], final: bool) -> tuple[str, str]:
        reasoning: list[str] = []
        before = ""  # the whitespace before the reasoning, when it opens in this feed
        for event in events:
            if isinstance(event, ReasoningDelta):
                if not self._opened:
                    self._opened, before = True, self._lead
                reasoning.append(event.text)
                self._said += len(event.text)
            elif isinstance(event, Diagnostic):
                continue
            elif not self._opened and isinstance(event, TextDelta) and not event.text.strip():
                self._lead += event.text
            else:  # the reasoning is over (or there never was any): the raw text from its end on is the rest
                return "".join(reasoning), before + self._end()
        if final:
            self.ended = True
            self._raw = []
            return "".join(reasoning), before + ("" if self._opened else self._lead)
        return "".join(reasoning), before

    def _end(self) -> str:
        self.ended = True
        text, self._raw = "".join(self._raw), []
        if not self._opened:
            return text
        at = 0 if self._prompted else len(self._lead)
        if not self._prompted:
            at += len(next((o for o in self._openers if text.startswith(o, at)), ""))
        at += self._said
        ender = next((e for e in self._enders if text.startswith(e, at)), None)
        if ender is None:  # not where the reasoning's text says: the nearest end marker after it, else all
            found = [(i, e) for e in self._enders if (i := text.find(e, at)) >= 0]
            if not found:
                log.warning("streamparse: the end of reasoning was not found in the answer; the rest is kept whole")
                return text[at:]
            at, ender = min(found)
        return text[at + len(ender):]
