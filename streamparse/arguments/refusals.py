"""What keeps a decoded block from being a call: ``ArgumentError``, and expressions.

An arithmetic expression written where a value goes is read as an opaque :class:`Expression`, never evaluated.

Invariant: :func:`refuse_in_arguments` is the one check every decoder makes on a call's arguments. It raises
:class:`ExpressionRefused`, which names the first expression's parameter by path (``opts.scale``,
``tags[1]``), and it walks the value without recursion, whatever its depth.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ArgumentError", "Expression", "ExpressionRefused", "expression_paths", "holds_expression",
           "refuse_expressions", "refuse_in_arguments"]


class ArgumentError(ValueError):
    """A block body that is not a usable call (not JSON even after repair, no name, ...)."""


class Expression:
    """An arithmetic expression written where a value goes (``2 * math.pi``): kept as its text, never
    evaluated, and never a JSON value (``json.dumps`` refuses it), so it cannot leave as an argument."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


def expression_paths(value: Any) -> list[tuple[str, str]]:
    """``(path, text)`` of each expression anywhere in a decoded value, depth-first, in order; a path
    names the value as the ``coerced`` diagnostics do (``end``, ``options.mode``, ``tags[0]``; ``""``: the
    value itself). Iterative: the model's nesting never costs a Python frame."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, Expression):
            found.append((path, item.text))
        elif isinstance(item, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return found


def holds_expression(value: Any) -> bool:
    """Does a decoded value hold an expression anywhere? (No paths spelt: every decoded call is asked.)"""
    if type(value) is dict:  # (most arguments: an object of scalars, read in one pass)
        for v in value.values():
            t = type(v)
            if not (t is str or t is int or t is float or t is bool or v is None):
                break
        else:
            return False
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Expression):
            return True
        for v in item.values() if isinstance(item, dict) else item if isinstance(item, list) else ():
            t = type(v)
            if not (t is str or t is int or t is float or t is bool or v is None):  # (a scalar holds none)
                stack.append(v)
    return False


class ExpressionRefused(ArgumentError):
    """A call's arguments hold an expression (the decision: a call keeps no expression, and none is
    evaluated). ``details``: ``parameter`` (a path, as in ``coerced`` diagnostics), ``expression`` (its
    text) and the tool's ``name`` when known, for the ``rejected`` diagnostic."""

    def __init__(self, where: str, parameter: str, expression: str, name: str | None = None):
        shown = f"the value of {parameter!r}" if parameter else "the value"
        super().__init__(f"an expression ({expression[:60]}) as {shown} in {where}: not evaluated, kept as text")
        self.details: dict[str, str] = {"parameter": parameter, "expression": expression[:200]}
        if name is not None:
            self.details = {"name": name, **self.details}


def refuse_expressions(value: Any, where: str, name: str | None = None) -> None:
    """ExpressionRefused, naming the first one's parameter, when ``value`` holds an expression."""
    if holds_expression(value):
        raise ExpressionRefused(where, *expression_paths(value)[0], name=name)


def refuse_in_arguments(name: str, arguments: Any) -> None:
    """``refuse_expressions`` for the arguments of the call ``name``: every decoder's one check."""
    if holds_expression(arguments):  # (the message is made only then: every decoded call is asked)
        refuse_expressions(arguments, f"the arguments of {name.strip()!r}", name.strip())
