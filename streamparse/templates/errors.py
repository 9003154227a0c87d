"""The one error a template source raises.

Invariant: its message is one line that names the file (or folder) and says what was wrong with it.
"""

from __future__ import annotations

__all__ = ["TemplateSourceError"]


class TemplateSourceError(ValueError):
    """The path holds no chat template we can read (the message names the file and why)."""
