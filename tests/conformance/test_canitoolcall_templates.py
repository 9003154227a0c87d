"""canitoolcall told only what a backend can tell (issue 42): each fixture's model's chat template (from llama.cpp's
``models/templates`` where it holds one), the request's ``chat_template_kwargs`` and the generation prompt the
engine rendered. No dialect, no operator's table (``harness.conformance_templates``).

The suite's own count must reach 460 of 469 through the OpenAI layer (and the library), and what fails must be
exactly the argued policy of ``test_canitoolcall``. A second run gives the templated models the template alone
(the generation prompt rendered from it, not given): every fixture of theirs still passes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from streamparse.harness.conformance_templates import TemplateOptions, run_with_templates, template_file
from template_files import llama_cpp_templates
from test_canitoolcall import POLICY


@pytest.fixture(scope="module")
def templates() -> Path:
    return llama_cpp_templates()


@pytest.mark.parametrize("layer", ["openai", "library"])
def test_told_only_what_a_backend_can_tell(templates: Path, layer: str) -> None:
    results = run_with_templates(templates, layer)
    statuses = Counter(r.status.value for r in results)
    assert len(results) == 469
    assert statuses["pass"] + statuses["soft_pass"] >= 460, statuses
    assert {r.fixture_id for r in results if r.status.value not in ("pass", "soft_pass")} == set(POLICY)


def test_the_template_alone_gives_what_the_generation_prompt_gives(templates: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the engine's generation prompt, the template's own rendering of it decides where each answer
    starts: every fixture of a model whose template the folder holds passes (but the policy ones)."""
    told = TemplateOptions.options

    def template_alone(self: TemplateOptions) -> dict[str, object]:
        options = told(self)
        if self.chat_template is not None:
            options.pop("generation_prompt")
        return options

    monkeypatch.setattr(TemplateOptions, "options", template_alone)
    results = run_with_templates(templates, "openai")
    templated = [r for r in results if r.parser_config.get("chat_template")]
    assert len(templated) == 311  # the fixtures whose model the folder has a template for
    assert {r.fixture_id for r in templated if r.status.value not in ("pass", "soft_pass")} <= set(POLICY)


def test_the_model_table_names_files_of_the_folder(templates: Path) -> None:
    names = {template_file(m) for m in ("openai/gpt-oss-20b", "Qwen/Qwen3.5-9B", "moonshotai/Kimi-K3",
                                         "google/gemma-4-31B-it", "zai-org/GLM-4.7")}
    assert all(n is not None and (templates / n).is_file() for n in names)
    assert template_file("deepseek-ai/DeepSeek-V4.1-Flash") is None  # not in the folder: kwargs and prompt only
