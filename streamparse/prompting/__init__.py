"""Tool prompting: serving tool-using clients from a backend that ignores `tools`.

`prompt_request` turns an OpenAI chat request with tools into one without: the tools become system-prompt
instructions in a dialect (`instructions`), earlier calls and results become text (`render_history`), and
the `PromptedRequest` says how to parse the answer (`parser_options`).
"""

# Invariant: pure request rewriting (dicts in, dicts out), from the dialect table and the
# renderers; the templates are package data (``templates/<dialect>.txt``), read once per process.

from __future__ import annotations

from .requests import (PROMPT_DIALECTS, PromptedRequest, PromptError, ToolChoice, corrective_message,
                       example_arguments, instructions, merge_system, prompt_request, render_history,
                       render_tool_result)
from .system import SYSTEM_ROLES, fold_system

__all__ = ["PROMPT_DIALECTS", "PromptError", "ToolChoice", "PromptedRequest", "instructions", "example_arguments",
           "render_tool_result", "render_history", "merge_system", "corrective_message", "prompt_request",
           "fold_system", "SYSTEM_ROLES"]

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
