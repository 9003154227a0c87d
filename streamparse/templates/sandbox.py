"""Chat templates rendered as transformers renders them, in jinja2's immutable sandbox, with a bounded cost.

Invariant: a render either returns its text or raises ``TemplateError`` (``BudgetExceeded`` when it ran out of its
budget), within its ``Limits``: at most
``steps`` steps (loop iterations, macro and function calls, filters, outputs), ``seconds`` of wall time (checked
at every step; one weighing, at most ``chars`` members, may run past it) and ``chars`` characters made (every output, captured or not, and every value a call, a filter,
a concatenation, an operator or a list, tuple or dict literal makes, weighed as the text it can become:
``templates.costs``). An operation whose result its inputs' weights do not bound (a separator joining many items,
a width padding many fields or lines, a power) is refused before it runs when its estimate passes the budget, so
no single operation makes much more than ``chars``. Everything a template runs goes through the sandbox: no attribute
beginning with ``_``, no change to a list or dict (unless ``mutable``: then the list is weighed after each call), no I/O; ``lipsum`` (a text generator) is not offered.
No thread and no signal: the steps are counted by calls compiled into the template (each loop iteration, each
macro call), so a loop that prints nothing and calls nothing is bounded too.

The environment is transformers' (``apply_chat_template``): ``trim_blocks``, ``lstrip_blocks``, loop controls,
the ``{% generation %}`` block, ``tojson`` without HTML escaping (``ensure_ascii``, ``indent``, ``separators``,
``sort_keys``), ``raise_exception`` and ``strftime_now``.
"""

from __future__ import annotations

import functools
import json
import time
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterator, Mapping

from jinja2 import Environment, nodes
from jinja2.exceptions import TemplateError as JinjaTemplateError
from jinja2.ext import Extension
from jinja2.parser import Parser
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment
from jinja2.visitor import NodeTransformer

from .costs import binop_estimate, call_estimate, filter_estimate, weight

__all__ = ["Limits", "LIMITS", "TemplateError", "BudgetExceeded", "render", "compile_template"]


class TemplateError(Exception):
    """A template that could not be compiled or rendered within its limits (the reason is the message)."""


class BudgetExceeded(TemplateError):
    """A render that ran past its limits: the template is hostile or broken, and rendering it again costs as much."""


@dataclass(frozen=True)
class Limits:
    """What one render may cost."""

    steps: int = 500_000
    seconds: float = 1.0
    chars: int = 2_000_000


LIMITS = Limits()

_TICK, _CONCAT, _MADE = "__streamparse_step", "__streamparse_concat", "__streamparse_made"


class _Budget:
    """One render's remaining allowance (held in a context variable while the render runs)."""

    __slots__ = ("steps", "deadline", "chars", "now")

    def __init__(self, limits: Limits, now: datetime | None):
        self.steps = limits.steps
        self.deadline = time.monotonic() + limits.seconds
        self.chars = limits.chars
        self.now = now

    def step(self, chars: int = 0) -> None:
        self.steps -= 1
        self.chars -= chars
        if self.steps < 0:
            raise BudgetExceeded("the template ran past its step budget")
        if self.chars < 0:
            raise BudgetExceeded("the template made more text than its size budget")
        if time.monotonic() > self.deadline:
            raise BudgetExceeded("the template ran past its time budget")


_BUDGET: ContextVar[_Budget | None] = ContextVar("streamparse_template_budget", default=None)


def _budget() -> _Budget:
    budget = _BUDGET.get()
    if budget is None:
        raise TemplateError("a template's functions run only inside render()")
    return budget


def _checked(value: Any) -> Any:
    """A value the template made: weighed against the size budget (a huge one ends the render)."""
    if weight(value, _budget().chars) > _budget().chars:
        _too_large()
    return value


def _refuse_over(estimate: int) -> None:
    """Refuse, before it runs, an operation that would make more than the size budget."""
    if estimate > _budget().chars:
        _too_large()


def _step(chars: int = 0) -> str:
    _budget().step(chars)
    return ""


def _concat(*parts: Any) -> str:
    texts = [str(p) for p in parts]
    return _checked("".join(texts)) if sum(map(len, texts)) <= _budget().chars else _too_large()


def _too_large() -> str:
    raise BudgetExceeded("the template made a value larger than its size budget")


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    """transformers' ``tojson``: JSON without HTML escaping; as llama.cpp's minja writes them, an iterator (what
    ``map`` gives) is a list and an undefined value is null."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent,
                      separators=tuple(separators) if separators else None, sort_keys=sort_keys, default=_json_default)


def _json_default(value: Any) -> Any:
    if isinstance(value, Undefined):
        return None
    if isinstance(value, Iterator):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _raise_exception(message: Any) -> None:
    raise JinjaTemplateError(str(message))


def _strftime_now(fmt: str) -> str:
    now = _budget().now or datetime.now()
    return now.strftime(fmt)


class _Generation(Extension):
    """transformers' ``{% generation %}…{% endgeneration %}``: marks the assistant's part; rendered as is."""

    tags = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("render_block"), [], [], body).set_lineno(lineno)

    def render_block(self, caller: Callable[[], str]) -> str:
        return caller()


def _literal_chars(body: list[nodes.Node]) -> int:
    """Characters of literal text a body writes each time it runs (nested loops and macros count their own)."""
    total = 0
    stack: list[nodes.Node] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.TemplateData):
            total += len(node.data)
        elif not isinstance(node, (nodes.For, nodes.Macro, nodes.CallBlock)):
            stack.extend(node.iter_child_nodes())
    return total


class _Bounded(NodeTransformer):
    """Compiles a step into every loop iteration and every macro or call-block body (weighted by the literal text
    it writes), every ``~`` concatenation into a size-checked call, and every list, tuple or dict literal into a
    weighed one."""

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Call(nodes.Name(_CONCAT, "load"), list(node.nodes), [], None, None, lineno=node.lineno)

    def _made(self, node: nodes.List | nodes.Tuple | nodes.Dict) -> nodes.Node:
        """A literal that holds values (``[x, x]`` nests without a call): weighed like a call's result."""
        self.generic_visit(node)
        if isinstance(node, nodes.Tuple) and node.ctx != "load":  # (an assignment's or a loop's target)
            return node
        return nodes.Call(nodes.Name(_MADE, "load"), [node], [], None, None, lineno=node.lineno)

    visit_List = visit_Tuple = visit_Dict = _made

    def _stepped(self, node: nodes.For | nodes.Macro | nodes.CallBlock) -> nodes.Node:
        self.generic_visit(node)
        weight = nodes.Const(_literal_chars(node.body))
        node.body.insert(0, nodes.ExprStmt(nodes.Call(nodes.Name(_TICK, "load"), [weight], [], None, None),
                                           lineno=node.lineno))
        return node

    visit_For = visit_Macro = visit_CallBlock = _stepped


class _Sandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, each call, filter and operator counted and size-checked. ``mutable``: lists and
    dicts the template holds may be changed (``append``, ``update``...), as llama.cpp's minja allows; the
    template only ever holds copies."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *, mutable: bool, **options: Any):
        super().__init__(**options)
        self.mutable = mutable

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if self.mutable:
            return SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)
        return super().is_safe_attribute(obj, attr, value)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        _budget().step()
        _refuse_over(binop_estimate(operator, left, right, _budget().chars))
        return _checked(super().call_binop(context, operator, left, right))

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (jinja's form)
        if __obj is _step or __obj is _checked:  # (the compiled-in step and weighing of a literal)
            return __obj(*args)
        _budget().step()
        name = getattr(__obj, "__name__", "")
        target = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        _refuse_over(call_estimate(name, target, args, kwargs, _budget().chars))
        made = _checked(super().call(__context, __obj, *args, **kwargs))
        if __self.mutable and isinstance(target, (list, dict, set)):
            _checked(target)  # (``l.extend(l)`` doubles a list in place)
        return made


def _counted_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """A filter that counts a step, refuses a blow-up and checks its result's size (jinja's pass_* marks kept)."""

    @functools.wraps(func)
    def counted(*args: Any, **kwargs: Any) -> Any:
        _budget().step()
        values = [a for a in args if not isinstance(a, (Context, Environment, nodes.EvalContext))]
        _refuse_over(filter_estimate(name, values, kwargs, _budget().chars))
        return _checked(func(*args, **kwargs))

    return counted


def _finalize(value: Any) -> Any:
    """Every ``{{ … }}`` output: its characters are counted (captured outputs too)."""
    text = value if isinstance(value, str) else str(value) if value is not None else ""
    _budget().step(len(text))
    return value


def _environment(mutable: bool) -> _Sandbox:
    env = _Sandbox(mutable=mutable, trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols", _Generation],
                   finalize=_finalize)
    env.filters["tojson"] = _tojson
    env.filters = {name: _counted_filter(name, f) for name, f in env.filters.items()}
    env.globals.pop("lipsum", None)
    env.globals.update({"raise_exception": _raise_exception, "strftime_now": _strftime_now,
                        _TICK: _step, _CONCAT: _concat, _MADE: _checked})
    return env


_ENVIRONMENTS = {False: _environment(False), True: _environment(True)}


@functools.lru_cache(maxsize=32)
def compile_template(source: str, mutable: bool = False) -> Any:
    """The template compiled once (bounded: steps compiled in), or TemplateError saying why it does not compile."""
    if not isinstance(source, str):
        raise TemplateError(f"a chat template is text, not {type(source).__name__}")
    env = _ENVIRONMENTS[mutable]
    try:
        tree = _Bounded().visit(env.parse(source))
        return env.from_string(tree)
    except JinjaTemplateError as exc:
        raise TemplateError(f"the template does not compile: {exc}") from None
    except (RecursionError, MemoryError, ValueError, TypeError) as exc:
        raise TemplateError(f"the template does not compile: {type(exc).__name__}") from None


def render(source: str, context: Mapping[str, Any], *, limits: Limits = LIMITS, now: datetime | None = None,
           mutable: bool = False) -> str:
    """``source`` rendered with ``context`` (messages, tools, add_generation_prompt, the kwargs...), within
    ``limits``; ``now`` is what ``strftime_now`` reads (default: the clock); ``mutable``: the template may change
    the lists it holds (see ``_Sandbox``). Raises TemplateError."""
    template = compile_template(source, mutable)
    budget = _Budget(limits, now)
    token = _BUDGET.set(budget)
    try:
        pieces = []
        for piece in template.generate(**context):
            budget.step(len(piece))
            pieces.append(piece)
        return "".join(pieces)
    except TemplateError:
        raise
    except JinjaTemplateError as exc:
        raise TemplateError(f"the template raised: {exc}") from None
    except (RecursionError, MemoryError) as exc:  # as costly as a budget run out
        raise BudgetExceeded(f"the template ran past its budget ({type(exc).__name__})") from None
    except Exception as exc:  # untrusted code: any failure is the template's (TypeError, ...)
        raise TemplateError(f"the template failed: {type(exc).__name__}: {str(exc)[:200]}") from None
    finally:
        _BUDGET.reset(token)
