"""What a chat template decided: the reading an operator would otherwise write by hand.

Invariant: plain frozen data. ``dialects`` None means nothing was decided about the format (auto-detection stays);
``notes`` say, in words, what was found and why each decision was made, so a log line can carry them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dialects.spec import Dialect

__all__ = ["TemplateSetup"]


@dataclass(frozen=True)
class TemplateSetup:
    """How to read a model's answers, as its chat template says.

    ``dialects``: what to read (one declaration, by name, or the ``derived`` one), or None: auto-detection stays.
    ``start_in_reasoning`` / ``start_in_response``: the generation prompt leaves the answer inside reasoning or a
    response channel. ``stop_tokens``: what the template writes to end an assistant turn (the model stops there).
    ``derived``: a declaration made from the template's own renderings, when no written one reads them.
    ``generation_prompt``: the text the prompt ends with, as given or rendered. ``call_example`` and
    ``result_example``: how the template writes an assistant's tool call, and a tool's result, after the prompt
    (what tool prompting can show a model). ``answer_prefix``: the end of the generation prompt that begins the
    format's markup (functionary's ``>>>``): a parser reads it first, as the answer's beginning.
    ``notes``: what was found and decided.
    """

    dialects: tuple[str | Dialect, ...] | None
    start_in_reasoning: bool
    start_in_response: bool
    stop_tokens: tuple[str, ...]
    derived: Dialect | None
    notes: tuple[str, ...]
    generation_prompt: str = ""
    call_example: str = ""
    result_example: str = ""
    answer_prefix: str = ""

    def parser_options(self) -> dict[str, Any]:
        """The ``StreamParser`` options this setup decides: ``dialects`` (only when a format was decided), the start
        state, and the generation prompt (whose last line may begin the answer's markup)."""
        options: dict[str, Any] = {"start_in_reasoning": self.start_in_reasoning,
                                   "start_in_response": self.start_in_response}
        if self.dialects is not None:
            options["dialects"] = list(self.dialects)
        if self.generation_prompt:
            options["generation_prompt"] = self.generation_prompt
        return options

    @property
    def format_name(self) -> str | None:
        """The name of the format decided (a derived one's too), or None."""
        if not self.dialects:
            return None
        first = self.dialects[0]
        return first.name if isinstance(first, Dialect) else first
