"""Rendering untrusted chat templates (``templates.sandbox``): transformers' environment, bounded in steps, time and
size, with no way out of jinja2's sandbox.

The hostile code below is not a chat template to read but the attacks a template could carry: each must end in a
``TemplateError`` within its budget, never hang, never exhaust memory, never reach Python internals.
"""

from __future__ import annotations

import json
import tracemalloc
from datetime import datetime

import pytest
from hypothesis import given, settings, strategies as st

from budget import examples
from readings import sources
from streamparse.core.chat_template import read_template
from streamparse.templates.sandbox import BudgetExceeded, Limits, TemplateError, render

_NESTED = "{% set ns = namespace(x=[1]) %}{% for i in range(60) %}{% set ns.x = [ns.x, ns.x] %}{% endfor %}"
HOSTILE = {
    "nested loops with no output": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "loops over a list made once": "{% set l = range(3000)|list %}{% for a in l %}{% for b in l %}{% for c in l %}"
                                   "{% endfor %}{% endfor %}{% endfor %}",
    "a string doubled in a namespace": "{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
                                       "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    "a list doubled in a namespace": "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}"
                                     "{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
    "a huge repeat": "{{ 'x' * 10**10 }}",
    "a huge padding": "{{ 'x'.ljust(10**10) }}",
    "a huge centre filter": "{{ 'x'|center(10**10) }}",
    "a replacement that multiplies": "{{ ('a' * 1000)|replace('a', 'b' * 100000) }}",
    "a wide format": "{{ '%999999999d' % 1 }}{{ '{:>999999999}'.format(1) }}",
    "a huge power": "{{ 9 ** 99999999 }}",
    "captured output in a loop": "{% set x %}{% for i in range(100000) %}" + "y" * 200 + "{% endfor %}{% endset %}{{ x|length }}",
    "output in a loop": "{% for i in range(100000) %}" + "z" * 300 + "{% endfor %}",
    "recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
    # values that are small to hold and huge to print: one list held twice at each of 60 levels
    "a list nested in itself, printed": _NESTED + "{{ ns.x }}",
    "a list nested in itself, as JSON": _NESTED + "{{ ns.x|tojson }}",
    "a list nested in itself, as a string": _NESTED + "{{ ns.x|string|length }}",
    "a dict nested in itself": "{% set ns = namespace(x={}) %}{% for i in range(60) %}"
                               "{% set ns.x = {'a': ns.x, 'b': ns.x} %}{% endfor %}{{ ns.x }}",
    "a list nested through a macro": "{% macro f(x, n) %}{% if n %}{{ f([x, x], n - 1) }}{% else %}{{ x }}"
                                     "{% endif %}{% endmacro %}{{ f(1, 60) }}",
    "lists of lists summed": "{{ ([[1] * 1000] * 1000000)|sum(start=[])|length }}",
    # one operation whose inputs are small and whose result is not
    "a separator joining many items": "{% set l = ['a'] * 100000 %}{{ l|join('x' * 100000) }}",
    "a string joining many items": "{% set l = ['a'] * 100000 %}{{ ('x' * 100000).join(l) }}",
    "a long string held many times, printed": "{{ ['a' * 100000] * 100000 }}",
    "many wide fields": "{{ ('{0:>99999}' * 1000).format(1) }}",
    "many wide percent fields": "{{ ('%99999d' * 1000) % ((1,) * 1000) }}",
    "tabs expanded": "{{ ('\t' * 100000).expandtabs(100000) }}",
    "lines indented": "{{ ('\n' * 100000)|indent(100000) }}",
    "deep JSON indented": "{% set ns = namespace(x=1) %}{% for i in range(500) %}{% set ns.x = [ns.x] %}{% endfor %}"
                          "{{ ns.x|tojson(indent=100000) }}",
    "a translation table": "{{ ('a' * 100000).translate({97: 'b' * 100000}) }}",
    "a batch padded": "{{ [1]|batch(10**9, 'x')|list|length }}",
    "bytes repeated": "{{ ('a'.encode() * 10**10)|length }}",
    "an int squared again and again": "{% set ns = namespace(n=9 ** 4000) %}{% for i in range(40) %}"
                                      "{% set ns.n = ns.n * ns.n %}{% endfor %}{{ ns.n > 0 }}",
    "a large int's power": "{{ (9 ** 4000) ** 4000 > 0 }}",
}
REFUSED = {
    "python internals": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "a list changed": "{% set l = [] %}{{ l.append(1) }}",
    "a generator of text": "{{ lipsum(100000) }}",
    "raising": "{{ raise_exception('refused') }}",
    "not a template": "{% for x in %}",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_costly_code_runs_out_of_its_budget_without_the_memory_it_asks_for(name: str) -> None:
    limits = Limits(steps=200_000, seconds=30.0, chars=200_000)  # (the steps and size end these, not the clock)
    tracemalloc.start()
    try:
        with pytest.raises(BudgetExceeded):
            render(HOSTILE[name], {}, limits=limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak


def test_a_list_the_template_may_change_is_weighed_as_it_grows() -> None:
    """``l.extend(l)`` doubles a list in place, with no value made: the list itself is weighed after the call."""
    with pytest.raises(BudgetExceeded, match="size budget"):
        render("{% set l = [1] %}{% for i in range(60) %}{% set _ = l.extend(l) %}{% endfor %}{{ l|length }}", {},
               limits=Limits(steps=200_000, seconds=30.0, chars=100_000), mutable=True)


def test_what_is_within_the_budget_renders_as_jinja_renders_it() -> None:
    """The weighing refuses only what passes the budget: shared, nested and formatted values that fit render."""
    code = ("{% set x = [1, 'ab'] %}{% set y = [x, x, {'k': x}] %}{{ y }}|{{ y|tojson(indent=1)|length }}|"
            "{{ ', '.join(['a', 'b']) }}|{{ ['a', 'b']|join('-') }}|{{ '%5d|{:>4}'.format(7) % 3 }}|"
            "{{ 'a\tb'.expandtabs(4) }}|{{ 'a\nb'|indent(2) }}|{{ 2 ** 64 }}|{{ [0]|batch(3, 9)|list }}")
    shared = [[1, "ab"], [1, "ab"], {"k": [1, "ab"]}]
    assert render(code, {}) == (f"{shared}|{len(json.dumps(shared, indent=1))}|a, b|a-b|    3|   7|a   b|a\n  b|"
                                "18446744073709551616|[[0, 9, 9]]")


def test_a_render_is_bounded_by_the_clock_too() -> None:
    with pytest.raises(BudgetExceeded, match="time budget"):
        render(HOSTILE["nested loops with no output"], {}, limits=Limits(steps=10**9, seconds=0.05))


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_the_sandbox_refuses_is_a_template_error(name: str) -> None:
    with pytest.raises(TemplateError) as caught:
        out = render(REFUSED[name], {})
        assert "class" not in out  # (rendered: it must not have reached an internal)
        raise TemplateError("rendered")
    assert not isinstance(caught.value, BudgetExceeded)


def test_transformers_environment() -> None:
    """tojson without HTML escaping and with its options, raise_exception, strftime_now, loop controls,
    trim_blocks / lstrip_blocks, and the generation block."""
    now = datetime(2026, 1, 15, 9, 30)
    out = render("{{ x|tojson }}|{{ x|tojson(indent=2) }}|{{ y|tojson(separators=(',', ':')) }}|"
                 "{{ strftime_now('%d %b %Y') }}|"
                 "{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}{% endif %}"
                 "{{ i }}{% endfor %}|{% generation %}kept{% endgeneration %}",
                 {"x": {"a": "<é>"}, "y": [1, 2]}, now=now)
    assert out == '{"a": "<é>"}|{\n  "a": "<é>"\n}|[1,2]|15 Jan 2026|02|kept'
    assert render("{% if true %}\n  x\n{% endif %}\n", {}) == "  x\n"  # (trim_blocks, lstrip_blocks)
    with pytest.raises(TemplateError, match="refused here"):
        render("{{ raise_exception('refused here') }}", {})


def test_a_template_may_change_its_own_lists_only_when_asked() -> None:
    """transformers' sandbox is immutable; llama.cpp's minja lets a template change its lists (Kimi K2's does)."""
    code = "{% set l = [] %}{% set _ = l.append(3) %}{{ l }}"
    with pytest.raises(TemplateError):
        render(code, {})
    assert render(code, {}, mutable=True) == "[3]"
    given_list = [1]
    render("{% set _ = items.append(2) %}", {"items": given_list}, mutable=True)
    assert given_list == [1, 2]  # (what the caller hands over is the template's: conversations hand over copies)


def test_a_real_template_renders_in_milliseconds() -> None:
    source = sources()["Qwen3-Coder.jinja"]
    context = {"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": True, "tools": None}
    assert render(source, context).endswith("<|im_start|>assistant\n")


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=300))
def test_read_template_never_raises(text: str) -> None:
    """Any text as a template: a setup comes back (auto-detection, with notes saying why), never an exception."""
    setup = read_template(text)
    assert setup.notes
    if setup.dialects is not None:
        assert setup.format_name


@pytest.mark.parametrize("name", [*HOSTILE, *REFUSED])
def test_read_template_never_raises_on_hostile_code(name: str) -> None:
    """Auto-detection stays, the notes say why; a template that runs out of its budget is not rendered again (in
    another style): it costs one budget."""
    setup = read_template({**HOSTILE, **REFUSED}[name] + "{% for m in messages %}{{ m }}{% endfor %}")
    assert setup.dialects is None and any("auto-detection stays" in note for note in setup.notes)
    if name in HOSTILE:
        assert any("budget" in note for note in setup.notes), setup.notes
