"""What a chat template writes around an assistant turn: the generation prompt, the state it leaves the answer in,
the end of a turn, and the text a model writes for a given assistant message.

Invariant: pure functions of rendered text (and a ``Renderer`` to get it); nothing here knows a format. A span is
open at the end of a prompt when its opener is the last span marker there and none of its closers follows it
(the span declarations of ``streamparse.dialects`` say which markers those are).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..dialects import SPANS
from ..dialects.spec import Span
from .conversations import BASE_TOOLS, USER, Renderer
from .sandbox import TemplateError

__all__ = ["PromptState", "prompt_state", "generation_prompt", "answer_text", "TurnMarks", "turn_marks", "end_of_turn",
           "stop_strings", "cut_answer", "common_prefix", "REASONING_TEXT", "ANSWER_TEXT"]

ANSWER_TEXT = "The answer is ready."  # an assistant turn's text in the probes
REASONING_TEXT = "Thinking it over."  # reasoning the model writes where the prompt left it inside reasoning
_LATER_USER = "And one more thing."
# One markup token: <|x|>, <｜x｜>, <x>, [X], else a run of non-space characters ("[e~[").
_TOKEN = re.compile(r"<\|[^<>|]*\|>|<｜[^｜]*｜>|<[^<>\s]+>|\[[A-Za-z_/][^\[\]\s]*\]|\S+")
# Where a tag or bracketed token begins that is still open at the end of the text (so a cut there would split it).
_OPEN_TOKEN = re.compile(r"(?:<[^\s<>]{0,64}|\[[^\s\[\]]{0,64}|<｜[^｜]{0,64}｜?)\Z")


@dataclass(frozen=True)
class PromptState:
    """Where a generation prompt leaves the answer: inside reasoning, inside a response channel, or neither."""

    reasoning: bool = False
    response: bool = False
    opener: str = ""  # the open span's opener, as the prompt wrote it
    closers: tuple[str, ...] = ()  # what ends it


def prompt_state(prompt: str, spans: Iterable[Span] = SPANS) -> PromptState:
    """The state a prompt ending with ``prompt`` leaves the answer in (reasoning or response channel spans only)."""
    low = prompt.lower()
    best: tuple[int, Span] | None = None
    for span in spans:
        if span.kind not in ("reasoning", "content") or not span.opener or not span.closers:
            continue
        at = low.rfind(span.opener.lower())
        if at >= 0 and (best is None or at > best[0]):
            best = at, span
    if best is None:
        return PromptState()
    at, span = best
    after = low[at + len(span.opener):]
    if any(c.lower() in after for c in span.closers):
        return PromptState()
    reasoning = span.kind == "reasoning"
    return PromptState(reasoning, not reasoning, prompt[at:at + len(span.opener)], span.closers)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix, cut back to where a markup token (``<…>``, ``[…]``) begins when
    the texts part inside one."""
    k = len(os.path.commonprefix([a, b]))
    if k < len(a) and k < len(b):
        m = _OPEN_TOKEN.search(a, 0, k)
        if m is not None:
            k = m.start()
    return k


def generation_prompt(renderer: Renderer, tools: Sequence[Mapping[str, Any]] | None = BASE_TOOLS) -> str:
    """What the template appends after the conversation so that the model answers (``add_generation_prompt``).
    A template that writes it whether asked or not (Command R7B) gives the part of it an answered conversation
    does not share."""
    with_prompt = renderer.prompt(tools=tools)
    without = renderer([{"role": "user", "content": USER}], add_generation_prompt=False, tools=tools)
    written = with_prompt[common_prefix(with_prompt, without):]
    if written:
        return written
    answered = renderer.turn({"role": "assistant", "content": ANSWER_TEXT}, tools=tools)
    return with_prompt[common_prefix(with_prompt, answered):]


def answer_text(renderer: Renderer, message: Mapping[str, Any], state: PromptState,
                tools: Sequence[Mapping[str, Any]] | None = BASE_TOOLS) -> str:
    """The text a model writes, after the generation prompt, to give ``message``: the template's rendering of the
    turn past the prompt. A past turn may be written otherwise than the prompt begins it: when the turn begins with
    the prompt's last markup (``</think>`` after a prompt's ``<think></think>``) the answer follows it; when the
    prompt left the answer inside reasoning that the turn does not close (old reasoning is dropped), the model's
    own reasoning and its closer come first."""
    prompt = renderer.prompt(tools=tools)
    turn = renderer.turn(message, tools=tools)
    k = common_prefix(prompt, turn)
    prompt_tail, turn_tail = prompt[k:], turn[k:]
    if turn_tail.startswith(prompt_tail):
        answer = turn_tail[len(prompt_tail):]
    else:
        answer = turn_tail[_overlap(prompt_tail, turn_tail):]
    if state.reasoning and not any(c.lower() in answer.lower() for c in state.closers):
        answer = REASONING_TEXT + state.closers[0] + answer  # (the model closes what its prompt opened)
    return answer


def _overlap(prompt_tail: str, turn_tail: str) -> int:
    """The length of the longest end of ``prompt_tail`` that begins a markup token and begins ``turn_tail``."""
    for i in range(len(prompt_tail)):
        if prompt_tail[i] in "<[" and turn_tail.startswith(prompt_tail[i:]):
            return len(prompt_tail) - i
    return 0


@dataclass(frozen=True)
class TurnMarks:
    """How the template marks turns: ``end`` ends an assistant's turn (its first token), ``start`` begins every
    turn (the part the user's and the assistant's headers share: ``<|im_start|>``), ``assistant`` is the
    assistant's header (the generation prompt). A model's answer ends at ``end``, or where another role's turn
    would start; it may start another assistant message (harmony's ``<|start|>assistant``)."""

    end: str = ""
    start: str = ""
    assistant: str = ""


def _turn_texts(renderer: Renderer) -> tuple[str, str]:
    """(what the template writes after an assistant turn's text to the end of the rendering, what it writes between
    that text and the next user turn's text)."""
    answer = {"role": "assistant", "content": ANSWER_TEXT}
    alone = renderer.turn(answer)
    after = alone[alone.rfind(ANSWER_TEXT) + len(ANSWER_TEXT):] if ANSWER_TEXT in alone else ""
    try:
        more = renderer([{"role": "user", "content": USER}, answer, {"role": "user", "content": _LATER_USER}],
                        add_generation_prompt=False)
    except TemplateError:
        return after, ""
    at = more.rfind(ANSWER_TEXT)
    if at < 0 or _LATER_USER not in more:
        return after, ""
    return after, more[at + len(ANSWER_TEXT): more.rfind(_LATER_USER)]


def _strip_markers(text: str, spans: Iterable[Span]) -> str:
    """``text`` (stripped) without the spans' closers and dropped markers it begins with."""
    markers = sorted({c for s in spans if s.kind in ("reasoning", "content") for c in s.closers}
                     | {s.opener for s in spans if s.kind == "drop"}, key=len, reverse=True)
    text = text.strip()
    changed = True
    while changed and text:
        changed = False
        for marker in markers:
            if marker and text.lower().startswith(marker.lower()):
                text, changed = text[len(marker):].lstrip(), True
    return text


def _closing(spans: Iterable[Span]) -> tuple[Span, ...]:
    """The spans but the dropped markers."""
    return tuple(s for s in spans if s.kind != "drop")


def turn_marks(renderer: Renderer, spans: Iterable[Span] = SPANS) -> TurnMarks:
    """The template's turn marks (see ``TurnMarks``); "" for what it does not write (an ``end`` that is only
    ``eos_token``, which the kwargs did not give)."""
    spans = tuple(spans)
    after, between = _turn_texts(renderer)
    ended = after[:common_prefix(after, between)] if between else after
    token = _TOKEN.match(_strip_markers(ended, spans)) or _TOKEN.match(_strip_markers(ended, _closing(spans)))
    end = token.group() if token else ""  # (a dropped marker that alone ends the turn is its end: MiniMax's [e~[)
    try:
        assistant = generation_prompt(renderer).strip()
    except TemplateError:
        return TurnMarks(end)
    user = _strip_markers(between, spans)
    if end and user.startswith(end):
        user = user[len(end):].lstrip()
    start = user[:common_prefix(user, assistant)] if user and assistant else ""
    return TurnMarks(end, start if start.strip() else "", assistant)


def end_of_turn(renderer: Renderer, spans: Iterable[Span] = SPANS) -> str:
    """The end-of-turn marker the template writes after an assistant's text (``TurnMarks.end``)."""
    return turn_marks(renderer, spans).end


def stop_strings(end: str, kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The stop strings: the end-of-turn marker and the ``eos_token`` the kwargs give, once each."""
    eos = kwargs.get("eos_token")
    found: Sequence[Any] = (end, eos if isinstance(eos, str) else "")
    return tuple(dict.fromkeys(s for s in found if s))


def cut_answer(text: str, stops: Iterable[str], marks: TurnMarks = TurnMarks()) -> str:
    """``text`` up to where a backend stops or the model's turn ends: the first stop string after the answer's
    first word (a model that stopped before writing anything would not answer, so a marker the answer begins with
    is its markup), or the start of a turn that is not the assistant's."""
    begin = len(text) - len(text.lstrip())
    cut = len(text)
    for stop in stops:
        at = text.find(stop, begin + 1)
        if 0 <= at < cut:
            cut = at
    if marks.start:
        own = marks.assistant[len(marks.start):]
        at = text.find(marks.start)
        while 0 <= at < cut:
            if not (own and text.startswith(own, at + len(marks.start))):
                cut = at
                break
            at = text.find(marks.start, at + 1)
    return text[:cut]
