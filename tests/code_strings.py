"""The string constants of a module's code, for the tests that hold a format's markup to one place.

``code_strings(source, described=…)`` gives every string constant of ``source`` (the literal parts of f-strings
included) except docstrings and the values a module keeps to describe, not to write: the arguments of the keywords
and the assignments to the names that ``described`` says are descriptions (a dialect's ``doc=``/``source=``, a
``*_SOURCE`` text, the constraints' ``UNSUPPORTED`` reasons).
"""

from __future__ import annotations

import ast
from typing import Callable


def code_strings(source: str, described: Callable[[str], bool] = lambda name: False) -> tuple[str, ...]:
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                skipped.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg is not None and described(node.arg):
            skipped.update(id(n) for n in ast.walk(node.value))
        targets = ([node.target] if isinstance(node, ast.AnnAssign)
                   else node.targets if isinstance(node, ast.Assign) else [])
        value = getattr(node, "value", None)
        if value is not None and any(isinstance(t, ast.Name) and described(t.id) for t in targets):
            skipped.update(id(n) for n in ast.walk(value))
    return tuple(n.value for n in ast.walk(tree)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skipped)
