"""Deciding a setup from a chat template: render the probe turns, then trial-read them with every declaration.

Invariant: the declarations are tried in the registry's order, named-only ones included (the template says the
format, so a marker too plain to look for everywhere is the right one here), and the first that reads every
probe turn exactly (``chat_template.trial_read``) is chosen; when none does, a declaration derived from the
template is tried the same way; when that fails too, nothing is decided about the format. Every step that
fails says why in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..dialects import DIALECTS
from ..dialects.spec import Dialect
from ..templates.conversations import (PROBE_TOOLS, PROBE_TURNS, Renderer, assistant_calls, find_style, tool_result,
                                       tools_for, USER)
from ..templates.derive import derive
from ..templates.sandbox import TemplateError
from ..templates.setup import TemplateSetup
from ..templates.turns import (PromptState, TurnMarks, answer_text, cut_answer, generation_prompt, prompt_state,
                               stop_strings, turn_marks)
from .chat_template import answer_opening
from .scanner import table_for
from .template_trials import Trial, trial_read

__all__ = ["decide", "probe_answers"]

Expected = list[tuple[str, dict[str, Any]]]


def probe_answers(renderer: Renderer, state: PromptState, stops: Sequence[str],
                  marks: TurnMarks = TurnMarks()) -> tuple[list[tuple[str, Expected]], list[str]]:
    """The answers a model writes for each probe turn the template renders (cut at the first stop string),
    with the calls each holds; and notes on the turns it could not render."""
    answers, notes = [], []
    for turn in PROBE_TURNS:
        message = assistant_calls(turn, string_arguments=renderer.style.string_arguments)
        try:
            text = answer_text(renderer, message, state, tools_for(turn))
        except TemplateError as exc:
            notes.append(f"the template cannot render the calls {[c.name for c in turn]}: {exc}")
            continue
        text = cut_answer(text, stops, marks)
        written = [c for c in turn if c.name in text]  # (a template may write only a turn's first call)
        if written:
            answers.append((text, [(c.name, dict(c.arguments)) for c in written]))
        else:
            notes.append(f"the template writes none of the calls {[c.name for c in turn]} in a turn that has them")
    return answers, notes


def _reads(dialect: str | Dialect, answers: list[tuple[str, Expected]], start: tuple[bool, bool],
           prompt: str) -> tuple[Trial, str]:
    """The first failing trial (with the answer it failed on), or the last exact one."""
    last = Trial(False, why="no answer to read")
    for text, expected in answers:
        last = trial_read(dialect, text, expected, PROBE_TOOLS, start, prompt)
        if not last.exact:
            return last, text
    return last, ""


def _result_example(renderer: Renderer, call_turn: dict[str, Any]) -> str:
    """How the template writes a tool's result after a call turn (past the call turn's own rendering)."""
    first = PROBE_TURNS[0][0]
    tools = tools_for(PROBE_TURNS[0])
    try:
        base = renderer.turn(call_turn, tools=tools)
        more = renderer([{"role": "user", "content": USER}, call_turn, tool_result(first, 1, '{"temperature": 21}')],
                        add_generation_prompt=False, tools=tools)
    except TemplateError:
        return ""
    return more[len(base):] if more.startswith(base) else ""


def decide(source: Any, kwargs: Mapping[str, Any], given_prompt: str | None,
           tools: Sequence[Mapping[str, Any]] | None) -> TemplateSetup:
    notes: list[str] = []
    if not isinstance(source, str) or not source.strip():
        return TemplateSetup(None, False, False, (), None, ("no chat template given: auto-detection stays",))
    base = Renderer(source, kwargs)
    renderer, why = find_style(base)
    # The start state: the generation prompt given, else rendered.
    rendered_prompt = ""
    try:
        rendered_prompt = generation_prompt(renderer or base, tools or tools_for(PROBE_TURNS[0]))
    except TemplateError as exc:
        notes.append(f"the template's generation prompt does not render ({exc})")
    prompt = given_prompt if given_prompt is not None else rendered_prompt
    state = prompt_state(prompt)
    said = "given" if given_prompt is not None else "rendered"
    if state.reasoning or state.response:
        notes.append(f"the {said} generation prompt opens {'reasoning' if state.reasoning else 'a response channel'} "
                     f"({state.opener!r}): the answer starts inside it")
    if renderer is None:
        notes.append(f"no format decided: {why}; auto-detection stays")
        return TemplateSetup(None, state.reasoning, state.response, (), None, tuple(notes), prompt)
    if renderer.style != base.style:
        notes.append(f"the template renders calls given {renderer.style.describe()}")
    try:
        marks = turn_marks(renderer)
    except TemplateError:
        marks = TurnMarks()
    stops = stop_strings(marks.end, kwargs)
    rendered_state = prompt_state(rendered_prompt)
    answers, more = probe_answers(renderer, rendered_state, stops, marks)
    notes += more
    start = (rendered_state.reasoning, rendered_state.response)
    call_turn = assistant_calls(PROBE_TURNS[0], string_arguments=renderer.style.string_arguments)
    example = answers[0][0] if answers else ""
    results = _result_example(renderer, call_turn)
    chosen: str | Dialect | None = None
    derived: Dialect | None = None
    trial = Trial(False)
    failures: list[str] = []
    for name in DIALECTS:
        trial, _ = _reads(name, answers, start, rendered_prompt)
        if trial.exact:
            chosen = name
            break
    if chosen is None:
        found = derive(renderer, rendered_state, stops)
        if found.dialect is not None:
            trial, text = _reads(found.dialect, answers, start, rendered_prompt)
            if trial.exact:
                chosen = derived = found.dialect
                notes.append(f"no written declaration reads the template's calls: a declaration derived from the "
                             f"template is in use ({found.summary})")
            else:
                failures.append(f"the derived declaration ({found.summary}) does not read them: {trial.why}")
        else:
            failures.append(f"no declaration could be derived: {found.summary}")
    if chosen is None:
        notes.append(f"no declaration reads the calls the template writes ({example[:160]!r}); "
                     + "; ".join(failures) + "; auto-detection stays")
        return TemplateSetup(None, state.reasoning, state.response, stops, None, tuple(notes), prompt, example, results)
    if trial.turn_end and trial.turn_end not in stops:
        stops = (*stops, trial.turn_end)
    if derived is None:
        notes.append(f"the template writes calls in the {chosen!s} format (read exactly, whole and streamed)")
    prefix = answer_opening(prompt, table_for(None, [chosen]))
    if prefix:
        notes.append(f"the generation prompt ends with {prefix!r}, where the format's markup begins: the answer is "
                     "read as its continuation")
    if stops:
        notes.append(f"the template ends an assistant turn with {' or '.join(map(repr, stops))}")
    return TemplateSetup((chosen,), state.reasoning, state.response, stops, derived, tuple(notes), prompt, example,
                         results, prefix)

