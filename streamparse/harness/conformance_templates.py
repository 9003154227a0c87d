"""The canitoolcall suite told only what a backend can tell: the model's chat template, the request's kwargs and
the generation prompt. No dialect, no operator's table.

Invariant: a fixture's options are ``chat_template`` (its reference model's template, from llama.cpp's
``models/templates`` folder where it holds one: ``TEMPLATES``), ``chat_template_kwargs`` (the request's, as
``conformance.request_for`` writes them) and ``generation_prompt`` (the fixture's, else its model's default:
what an engine renders); nothing else, and nothing chosen per fixture. A model whose template the folder lacks is
read with the kwargs and the generation prompt alone. The suite's own checks judge the results, as in
``conformance.run``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .conformance import generation_prompt, replay, request_for

if TYPE_CHECKING:
    from canitoolcall.chunking import ChunkStrategy
    from canitoolcall.fixtures import Family, Fixture
    from canitoolcall.results import CaseResult

__all__ = ["TEMPLATES", "TemplateOptions", "template_file", "options_for", "run_with_templates"]

# A reference model -> its chat template in llama.cpp's models/templates (first match). A sibling checkpoint is
# named only where it ships the same template (same family and release, another size or variant).
TEMPLATES: tuple[tuple[str, str], ...] = (
    (r"DeepSeek-V3\.1", "deepseek-ai-DeepSeek-V3.1.jinja"),
    (r"DeepSeek-V3\.2", "deepseek-ai-DeepSeek-V3.2.jinja"),
    (r"DeepSeek-V4-Flash$", "deepseek-ai-DeepSeek-V4.jinja"),  # (-0731 is a later revision of the template)
    (r"gemma-4-31B-it$", "google-gemma-4-31B-it.jinja"),
    (r"GLM-4\.7$", "GLM-4.7-Flash.jinja"),  # GLM-4.7 and 4.7-Flash share one template
    (r"gpt-oss", "openai-gpt-oss-120b.jinja"),  # one harmony template for 20b and 120b
    (r"Kimi-K2-Instruct", "Kimi-K2-Instruct.jinja"),
    (r"Kimi-K3$", "Kimi-K3.jinja"),
    (r"Llama-3\.3-70B-Instruct$", "meta-llama-Llama-3.3-70B-Instruct.jinja"),
    (r"Devstral-Small-2507$", "unsloth-mistral-Devstral-Small-2507.jinja"),
    (r"Ministral-3-14B-Reasoning-2512$", "mistralai-Ministral-3-14B-Reasoning-2512.jinja"),
    (r"Mistral-Small-3\.2-24B-Instruct-2506$", "Mistral-Small-3.2-24B-Instruct-2506.jinja"),
    (r"Qwen3-0\.6B$", "Qwen-Qwen3-0.6B.jinja"),
    (r"Qwen3-Coder-30B-A3B-Instruct$", "Qwen3-Coder.jinja"),
    (r"Qwen3\.5-9B$", "Qwen3.5-4B.jinja"),  # Qwen3.5's dense models share one template
)


def template_file(reference_model: str) -> str | None:
    """The file name of the model's template in llama.cpp's folder, or None where it holds none."""
    return next((name for pattern, name in TEMPLATES if re.search(pattern, reference_model)), None)


@dataclass(frozen=True)
class TemplateOptions:
    """What a backend can tell about one request: the parser options made of it (``conformance.replay`` reads
    ``options()``)."""

    chat_template: str | None
    chat_template_kwargs: dict[str, Any] | None
    generation_prompt: str

    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"generation_prompt": self.generation_prompt}
        if self.chat_template is not None:
            options["chat_template"] = self.chat_template
        if self.chat_template_kwargs is not None:
            options["chat_template_kwargs"] = self.chat_template_kwargs
        return options


def options_for(fixture: Fixture, family: Family | None, templates: Path) -> TemplateOptions:
    """The fixture's template (read from ``templates``, llama.cpp's folder), kwargs and generation prompt."""
    name = template_file(fixture.reference_model)
    path = templates / name if name else None
    source = path.read_text(encoding="utf-8") if path is not None and path.is_file() else None
    kwargs = request_for(fixture).get("chat_template_kwargs")
    return TemplateOptions(source, kwargs, generation_prompt(fixture, family))


def run_with_templates(templates: Path, layer: str = "openai", families: Sequence[str] | None = None,
                       strategies: Sequence[ChunkStrategy] | None = None) -> list[CaseResult]:
    """Every selected fixture replayed with only what a backend can tell, judged by canitoolcall's checks."""
    from canitoolcall.checks import case_status, run_checks
    from canitoolcall.fixtures import load_fixtures
    from canitoolcall.results import CaseResult, Observation
    from canitoolcall.runner import family_for

    results = []
    read: dict[Path, Family | None] = {}
    for fixture in load_fixtures(None, families=list(families) if families else None):
        family = family_for(fixture, read)
        told = options_for(fixture, family, templates)
        got = replay(fixture, family, told, layer, strategies)  # type: ignore[arg-type]  # (reads .options() only)
        obs = Observation(nonstream=got.nonstream, streams=got.streams)
        rows = tuple(run_checks(fixture, family, obs))
        config = {k: v for k, v in told.options().items() if k != "chat_template"}
        config["chat_template"] = template_file(fixture.reference_model)
        results.append(CaseResult(fixture.id, fixture.family, case_status(rows), checks=rows, parser_config=config,
                                  observed=obs))
    return results
