"""Wire formats: OpenAI chunks and completions, Anthropic events and Messages, server-sent events,
and the checks on what a chat request may hold.

Invariant: sans-I/O. Dicts and bytes in, dicts and bytes out; built on ``core`` and nothing above it.
The submodules are imported on use (``streamparse.wire.openai``, ``streamparse.wire.anthropic``...).
"""

from __future__ import annotations

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
