"""Chat templates: rendered in a bounded sandbox, and read for what they say about a model's answers.

This package sits at the dialects layer: it renders and analyses text and makes declarations
(``streamparse.dialects.spec.Dialect``), importing only ``streamparse.arguments`` and ``streamparse.dialects``.
The decision that needs the parser itself (which declaration reads a template's own rendering of a call) is
``streamparse.core.chat_template.read_template``, which returns a ``TemplateSetup``.

Modules: ``sandbox`` (transformers' environment, bounded), ``conversations`` (what is rendered), ``turns`` (the
generation prompt, the start state, the end of a turn, a turn's answer text), ``derive`` (a declaration made from
the template's renderings), ``setup`` (``TemplateSetup``), ``sources`` (where a template comes from: a file, a
model folder, a GGUF).
"""

# Invariant: importing this package loads no jinja2 (``setup`` only); the submodules load on first access.

from __future__ import annotations

from .._lazy import lazy_submodules
from .setup import TemplateSetup

__all__ = ["TemplateSetup"]

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
