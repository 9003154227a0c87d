"""streamparse inside the serving stacks people already run: a vLLM tool-call and reasoning parser, an SGLang
detector and a LiteLLM proxy callback, each registered where that system looks for plug-ins.

Invariant: importing this package, or any of its modules' names, imports none of vllm, sglang or litellm; each
module imports its engine when the engine asks for it (``vllm``: ``register``, the parser modules; ``sglang``:
``register``; ``litellm``: the callback's module), and a missing or unsupported engine is an error that names the
supported versions.

- ``configure``: what a parser inside an engine is set to (dialects, start state), from explicit settings or the
  model's chat template; shared by every engine.
- ``reading``: one answer read through ``StreamParser`` into text, reasoning and calls, delta by delta or whole;
  and the reasoning split (reasoning first, then the raw rest of the answer) for engines that parse reasoning
  apart from calls.
- ``vllm``, ``vllm_tool``, ``vllm_reasoning``: ``--tool-call-parser streamparse`` and ``--reasoning-parser
  streamparse`` (the ``vllm.general_plugins`` entry point ``register``).
- ``sglang``: ``--tool-call-parser streamparse`` (the ``sglang.srt.plugins`` entry point ``register``).
- ``litellm``: ``StreamparseCallback``, a ``CustomLogger`` for ``litellm_settings: callbacks`` in LiteLLM's proxy.
"""

from __future__ import annotations

from .._lazy import lazy_submodules

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
