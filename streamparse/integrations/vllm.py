"""vLLM's ``--tool-call-parser streamparse`` and ``--reasoning-parser streamparse``: the plug-in entry point and
the one place vLLM's modules are found.

Invariant: ``register`` (the ``vllm.general_plugins`` entry point, which vLLM runs in every process before it
validates its arguments) only names the two parsers to vLLM's registries, lazily: their modules, and so
streamparse's reading of vLLM's interfaces, load when a server asks for ``streamparse``. It never raises: vLLM
runs it for every installed plug-in, wanted or not. ``vllm_api`` finds vLLM's classes at the paths the supported
releases keep them, and raises ``ImportError`` naming the supported versions when they are not there.

vLLM moved these modules three times (``vllm.entrypoints.openai.tool_parsers`` -> ``vllm.tool_parsers``;
``vllm.entrypoints.openai.protocol`` -> ``...openai.engine.protocol`` -> ``vllm.entrypoints.generate.base.
protocol``; ``vllm.entrypoints.openai.reasoning_parsers`` -> ``vllm.reasoning``), and changed the tool
parser's constructor (``tools``). Every known path is tried; the interface this parser needs (delta-only
``engine_based_streaming`` with ``finish_streaming()``, a constructor taking ``tools``) is vLLM 0.33's.
"""

from __future__ import annotations

import importlib
import logging
import types
from typing import Any

__all__ = ["SUPPORTED", "NAME", "register", "vllm_api"]

NAME = "streamparse"
SUPPORTED = "vLLM 0.33 (tested with 0.33.0)"
log = logging.getLogger("streamparse.integrations")

_PATHS = {
    "tool_parsers": ("vllm.tool_parsers", "vllm.tool_parsers.abstract_tool_parser",
                     "vllm.entrypoints.openai.tool_parsers"),
    "reasoning": ("vllm.reasoning", "vllm.reasoning.abs_reasoning_parsers",
                  "vllm.entrypoints.openai.reasoning_parsers"),
    "protocol": ("vllm.entrypoints.generate.base.protocol", "vllm.entrypoints.openai.engine.protocol",
                 "vllm.entrypoints.openai.protocol"),
}
_NAMES = {
    "tool_parsers": ("ToolParser", "ToolParserManager"),
    "reasoning": ("ReasoningParser", "ReasoningParserManager"),
    "protocol": ("DeltaMessage", "DeltaToolCall", "DeltaFunctionCall", "ExtractedToolCallInformation",
                 "ToolCall", "FunctionCall"),
}
_api: types.SimpleNamespace | None = None


def vllm_api() -> types.SimpleNamespace:
    """vLLM's parser base classes, registries and message models, found once."""
    global _api
    if _api is None:
        found: dict[str, Any] = {}
        for group, paths in _PATHS.items():
            found.update(_first(group, paths, _NAMES[group]))
        if not hasattr(found["ToolParser"], "engine_based_streaming"):
            raise ImportError(f"streamparse's vLLM parser needs {SUPPORTED}: this vLLM's ToolParser has no "
                              f"engine_based_streaming (delta-only streaming with finish_streaming())")
        _api = types.SimpleNamespace(**found)
    return _api


def _first(group: str, paths: tuple[str, ...], names: tuple[str, ...]) -> dict[str, Any]:
    tried: list[str] = []
    for path in paths:
        try:
            module = importlib.import_module(path)
        except ImportError as exc:
            tried.append(f"{path} ({exc})")
            continue
        if all(hasattr(module, n) for n in names):
            return {n: getattr(module, n) for n in names}
        tried.append(f"{path} (no {', '.join(n for n in names if not hasattr(module, n))})")
    raise ImportError(f"streamparse's vLLM parser needs {SUPPORTED}; vLLM's {group} were not found: "
                      + "; ".join(tried))


def register() -> None:
    """The ``vllm.general_plugins`` entry point: name ``streamparse`` in vLLM's tool and reasoning parser
    registries (lazily: the modules load when asked for). Logs, never raises, when vLLM is not supported."""
    try:
        tool_manager = _first("tool_parsers", _PATHS["tool_parsers"], ("ToolParserManager",))["ToolParserManager"]
        reasoning_manager = _first("reasoning", _PATHS["reasoning"],
                                   ("ReasoningParserManager",))["ReasoningParserManager"]
        tool_manager.register_lazy_module(NAME, "streamparse.integrations.vllm_tool", "StreamparseToolParser")
        reasoning_manager.register_lazy_module(NAME, "streamparse.integrations.vllm_reasoning",
                                               "StreamparseReasoningParser")
    except Exception as exc:  # noqa: BLE001 - vLLM runs every installed plug-in: one that cannot load must not stop it
        log.error("streamparse: not registered with vLLM (%s: %s); supported: %s", type(exc).__name__, exc, SUPPORTED)


def chat_template_of(tokenizer: Any) -> str | None:
    """The tokenizer's own chat template (transformers' ``get_chat_template``, else its ``chat_template``);
    None when it has none or it cannot be had."""
    try:
        getter = getattr(tokenizer, "get_chat_template", None)
        template = getter() if callable(getter) else getattr(tokenizer, "chat_template", None)
    except Exception:  # noqa: BLE001 - no template (transformers raises ValueError) or a tokenizer without one
        template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):
        template = template.get("default") or next(iter(template.values()), None)
    return template if isinstance(template, str) and template else None
