"""Deciding a setup from a chat template: render the probe turns, then trial-read them with every declaration.

Invariant: the declarations are tried in the registry's order, named-only ones included (the template says the
format, so a marker too plain to look for everywhere is the right one here), and the first that reads every
probe turn exactly (``template_trials.trial_read``) is chosen; when none does, a declaration derived from the
template is tried the same way; when that fails too, nothing is decided about the format. Every step that fails
says why in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..dialects import DIALECTS, REGISTRY
from ..dialects.spec import Dialect
from ..templates.conversations import (PROBE_TOOLS, PROBE_TURNS, USER, Renderer, assistant_calls, find_style,
                                       tool_result, tools_for)
from ..templates.derive import Derivation, derive
from ..templates.sandbox import BudgetExceeded, TemplateError
from ..templates.setup import TemplateSetup
from ..templates.turns import (PromptState, TurnMarks, answer_text, cut_answer, generation_prompt, prompt_state,
                               stop_strings, turn_marks)
from .openings import answer_opening
from .scanner import table_for
from .template_trials import Trial, trial_read

__all__ = ["decide", "Reading", "prepare", "derived_for"]

Expected = list[tuple[str, dict[str, Any]]]
_MAX_OPENING = 64


@dataclass
class Reading:
    """What is known of a template before any declaration is tried: the renderer that writes its calls, the
    rendered generation prompt and the state it leaves the answer in, its turn marks and stop strings, and the
    probe turns' answers with the calls each holds."""

    renderer: Renderer
    rendered_prompt: str
    state: PromptState
    marks: TurnMarks
    stops: tuple[str, ...]
    answers: list[tuple[str, Expected]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def start(self) -> tuple[bool, bool]:
        return self.state.reasoning, self.state.response

    @property
    def opening(self) -> str:
        """The rendered generation prompt's last line, which an answer may continue (see ``answer_opening``)."""
        last = self.rendered_prompt[self.rendered_prompt.rfind("\n") + 1:]
        return last if len(last) <= _MAX_OPENING else ""

    def reads(self, dialect: str | Dialect) -> tuple[Trial, str]:
        """The first failing trial over the probe answers (with the answer it failed on), or the last exact one."""
        last = Trial(False, why="no answer to read")
        for text, expected in self.answers:
            last = trial_read(dialect, text, expected, PROBE_TOOLS, self.start, self.rendered_prompt)
            if not last.exact:
                return last, text
        return last, ""

    def derive(self) -> Derivation:
        return derive(self.renderer, self.state, self.stops, self.marks, self.opening)


def prepare(renderer: Renderer, kwargs: Mapping[str, Any], tools: Sequence[Mapping[str, Any]] | None = None) -> Reading:
    """Render what is needed to read ``renderer``'s template (which renders calls: ``find_style`` found it)."""
    rendered_prompt = _generation_prompt(renderer, tools)
    try:
        marks = turn_marks(renderer)
    except TemplateError:
        marks = TurnMarks()
    reading = Reading(renderer, rendered_prompt, prompt_state(rendered_prompt), marks, stop_strings(marks.end, kwargs))
    for turn in PROBE_TURNS:
        message = assistant_calls(turn, string_arguments=renderer.style.string_arguments)
        try:
            text = answer_text(renderer, message, reading.state, tools_for(turn))
        except TemplateError as exc:
            reading.notes.append(f"the template cannot render the calls {[c.name for c in turn]}: {exc}")
            continue
        text = cut_answer(text, reading.stops, marks)
        written = [c for c in turn if c.name in text]  # (a template may write only a turn's first call)
        if written:
            reading.answers.append((text, [(c.name, dict(c.arguments)) for c in written]))
        else:
            reading.notes.append(f"the template writes none of the calls {[c.name for c in turn]} in a turn that "
                                 "has them")
    return reading


def _generation_prompt(renderer: Renderer, tools: Sequence[Mapping[str, Any]] | None) -> str:
    """The generation prompt rendered with the request's tools, or with the probe's where those do not render (a
    template may not describe every schema: Command-R+ needs ``additionalProperties`` on an object)."""
    if tools:
        try:
            return generation_prompt(renderer, tools)
        except TemplateError:
            pass
    return generation_prompt(renderer, tools_for(PROBE_TURNS[0]))


def derived_for(source: str, kwargs: Mapping[str, Any] | None = None) -> tuple[Derivation, Reading | None]:
    """The declaration derived from a template (whatever the written ones read), with its reading: what tests and
    diagnostics compare with the written declaration."""
    try:
        renderer, why = find_style(Renderer(source, dict(kwargs or {})))
    except BudgetExceeded as exc:
        return Derivation(None, str(exc)), None
    if renderer is None:
        return Derivation(None, why), None
    reading = prepare(renderer, dict(kwargs or {}))
    return reading.derive(), reading


def _result_example(renderer: Renderer) -> str:
    """How the template writes a tool's result after a call turn (past the call turn's own rendering)."""
    first = PROBE_TURNS[0][0]
    tools = tools_for(PROBE_TURNS[0])
    call_turn = assistant_calls(PROBE_TURNS[0], string_arguments=renderer.style.string_arguments)
    try:
        base = renderer.turn(call_turn, tools=tools)
        more = renderer([{"role": "user", "content": USER}, call_turn, tool_result(first, 1, '{"temperature": 21}')],
                        add_generation_prompt=False, tools=tools)
    except TemplateError:
        return ""
    return more[len(base):] if more.startswith(base) else ""


def decide(source: Any, kwargs: Mapping[str, Any], given_prompt: str | None,
           tools: Sequence[Mapping[str, Any]] | None) -> TemplateSetup:
    """The setup ``read_template`` returns (uncached)."""
    if not isinstance(source, str) or not source.strip():
        return TemplateSetup(None, False, False, (), None, ("no chat template given: auto-detection stays",))
    notes: list[str] = []
    base = Renderer(source, kwargs)
    try:
        renderer, why = find_style(base)
    except BudgetExceeded as exc:
        return TemplateSetup(None, False, False, (), None, (f"the template is not read: {exc}; auto-detection stays",))
    reading: Reading | None = None
    rendered_prompt = ""
    try:
        if renderer is not None:
            reading = prepare(renderer, kwargs, tools)
            rendered_prompt = reading.rendered_prompt
        else:
            rendered_prompt = _generation_prompt(base, tools)
    except TemplateError as exc:
        notes.append(f"the template's generation prompt does not render ({exc})")
    prompt = given_prompt if given_prompt else rendered_prompt  # (an empty one says nothing)
    state = prompt_state(prompt)
    if state.reasoning or state.response:
        notes.append(f"the {'given' if given_prompt else 'rendered'} generation prompt opens "
                     f"{'reasoning' if state.reasoning else 'a response channel'} ({state.opener!r}): "
                     "the answer starts inside it")
    if renderer is None or reading is None:
        notes.append(f"no format decided: {why or 'the template does not render'}; auto-detection stays")
        return TemplateSetup(None, state.reasoning, state.response, (), None, tuple(notes), prompt)
    if renderer.style != base.style:
        notes.append(f"the template renders calls given {renderer.style.describe()}")
    notes += reading.notes
    example = reading.answers[0][0] if reading.answers else ""
    results = _result_example(renderer)
    stops = reading.stops
    chosen: str | Dialect | None = None
    derived: Dialect | None = None
    trial = Trial(False)
    for dialect_name in DIALECTS:
        trial, _ = reading.reads(dialect_name)
        if trial.exact:
            chosen = dialect_name
            break
    if chosen is None:
        found = reading.derive()
        if found.dialect is None:
            failure = f"no declaration could be derived: {found.summary}"
        else:
            trial, _ = reading.reads(found.dialect)
            failure = f"the derived declaration ({found.summary}) does not read them: {trial.why}"
            if trial.exact:
                chosen = derived = found.dialect
                notes.append(f"no written declaration reads the template's calls: a declaration derived from the "
                             f"template is in use ({found.summary})")
        if chosen is None:
            notes.append(f"no declaration reads the calls the template writes ({example[:160]!r}); {failure}; "
                         "auto-detection stays")
            return TemplateSetup(None, state.reasoning, state.response, stops, None, tuple(notes), prompt, example,
                                 results)
    assert chosen is not None
    if trial.turn_end and trial.turn_end not in stops:
        stops = (*stops, trial.turn_end)
    if derived is None:
        notes.append(f"the template writes calls in the {chosen} format (read exactly, whole and streamed)")
    prefix = answer_opening(prompt, table_for(None, [chosen]))
    if prefix:
        notes.append(f"the generation prompt ends with {prefix!r}, where the format's markup begins: the answer is "
                     "read as its continuation")
    if stops:
        notes.append(f"the template ends an assistant turn with {' or '.join(map(repr, stops))}")
    # The template's format is read first, never alone: it wins where formats share a marker, and what a model
    # writes besides it (bare JSON, a fence, another format) is still read, as with no template (not pinned).
    others = tuple(name for name in REGISTRY.auto if name != chosen)
    notes.append("the other formats are still detected, after it")
    return TemplateSetup((chosen, *others), state.reasoning, state.response, stops, derived, tuple(notes), prompt,
                         example, results, prefix)
