"""The formats added for issue 18, on the edge cases the engines' own parsers and tests handle.

Each case is written here from what vLLM / SGLang / llama.cpp accept (their parser code and tests);
where an engine drops text or keeps markup in content, our promise wins (nothing lost, no markup in
content) and the test name says so. The generic promises (chunking, split markers, unicode, streamed
arguments) are covered for every format by the RENDER tables in samples.py.
"""

from __future__ import annotations

import pytest

import streamparse as sp
from helpers import TOOLS, assert_chunking_invariant
from streamparse.dialects import ALIASES, DIALECTS, resolve

DS = "\uff5cDSML\uff5c"  # the full-width bars of DeepSeek's DSML markers
Q = '<|"|>'  # Gemma 4's string delimiter


def read(text: str, **options: object) -> tuple[str, list[tuple[str, object]]]:
    """(content, calls) whole and in every chunking the helpers try (they must agree)."""
    return assert_chunking_invariant(text, **options)  # type: ignore[arg-type]


def dialect_of(text: str) -> list[str]:
    return [c.dialect for c in sp.parse(text, TOOLS).tool_calls]


# --------------------------------------------------------------------------- llama.cpp generic

def test_generic_single_call_object_is_a_call() -> None:
    text = '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}'
    assert read(text) == ("", [("get_weather", {"city": "Paris", "days": 2})])
    assert dialect_of(text) == ["generic"]


def test_generic_call_may_carry_an_id_and_be_followed_by_text() -> None:
    text = 'Checking.\n{"tool_call": {"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "123456789"}}\nDone.'
    assert read(text) == ("Checking.\n\nDone.", [("get_weather", {"city": "Oslo"})])


def test_generic_response_object_stays_text_as_written_where_llama_cpp_unwraps_it() -> None:
    text = '{"response": "Hello, world!\\nWhat\'s up?"}'
    assert read(text) == (text, [])


def test_generic_needs_declared_tools_and_a_declared_name() -> None:
    text = '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}'
    assert sp.parse(text).tool_calls == []  # no tools: a JSON answer is prose
    unknown = '{"tool_call": {"name": "launch_rocket", "arguments": {}}}'
    assert read(unknown) == (unknown, [])


def test_generic_object_mid_line_is_prose() -> None:
    text = 'The API answers {"tool_call": {"name": "get_weather", "arguments": {}}} in that case.'
    assert read(text) == (text, [])


@pytest.mark.parametrize("key", ["tool_call", "tool_calls"])
def test_objects_written_with_python_quotes_are_read(key: str) -> None:
    call = {"name": "get_weather", "arguments": {"city": "Paris", "metric": True}}
    text = repr({key: call if key == "tool_call" else [call]})
    assert read(text) == ("", [("get_weather", {"city": "Paris", "metric": True})])
    repaired = [d.code for d in sp.parse(text, TOOLS).diagnostics]
    assert "repaired" in repaired  # Python quotes are a repair, and it is reported


# --------------------------------------------------------------------------- Nemotron

def test_nemotron_array_of_two_calls_keeps_text_before_and_after() -> None:
    text = ('Let me look.<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
            '{"name": "search_recipes", "arguments": {"query": "soup"}}]</TOOLCALL>Anything else?')
    assert read(text) == ("Let me look.Anything else?", [("get_weather", {"city": "Paris"}),
                                                         ("search_recipes", {"query": "soup"})])


def test_nemotron_single_object_without_brackets_is_read_as_vllm_wraps_it() -> None:
    text = '<TOOLCALL>{"name": "get_weather", "arguments": {"city": "Lima"}}</TOOLCALL>'
    assert read(text) == ("", [("get_weather", {"city": "Lima"})])


def test_nemotron_arguments_given_as_a_json_string_are_decoded() -> None:
    text = '<TOOLCALL>[{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}"}]</TOOLCALL>'
    assert read(text) == ("", [("get_weather", {"city": "Rome"})])


def test_nemotron_block_cut_before_its_closing_tag_still_reads_its_complete_value() -> None:
    text = '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Kyiv"}}]'
    assert read(text) == ("", [("get_weather", {"city": "Kyiv"})])


# --------------------------------------------------------------------------- LFM2

def test_lfm2_call_then_prose() -> None:
    text = '<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>The weather in Paris is sunny.'
    assert read(text) == ("The weather in Paris is sunny.", [("get_weather", {"city": "Paris"})])


def test_lfm2_leading_whitespace_and_several_calls_with_nested_literals() -> None:
    text = ("<|tool_call_start|> [write_file(path='a.txt', content=\"x = {'k': [1, 2]}\"), "
            "configure(options={'a': [1, None]}, enabled=False)]<|tool_call_end|>")
    assert read(text)[1] == [("write_file", {"path": "a.txt", "content": "x = {'k': [1, 2]}"}),
                             ("configure", {"options": {"a": [1, None]}, "enabled": False})]


def test_lfm2_empty_list_is_not_a_call() -> None:
    text = "<|tool_call_start|>[]<|tool_call_end|>"
    result = sp.parse(text, TOOLS)
    assert result.tool_calls == [] and result.content == text and result.diagnostics


# --------------------------------------------------------------------------- Cohere Command

def test_cohere_actions_as_the_template_lays_them_out() -> None:
    text = ('<|START_THINKING|>I will look up the weather.<|END_THINKING|><|START_ACTION|>[\n'
            '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}},\n'
            '    {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}\n'
            ']<|END_ACTION|>')
    result = sp.parse(text, TOOLS)
    assert [(c.name, c.parsed_arguments) for c in result.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    assert result.reasoning == "I will look up the weather." and result.content == ""
    assert read(text)[1] == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]


def test_cohere_response_markers_wrap_content() -> None:
    result = sp.parse("<|START_RESPONSE|>Hello there.<|END_RESPONSE|>", TOOLS, dialects=["cohere"])
    assert result.content == "Hello there." and result.tool_calls == []


def test_cohere_action_without_an_id_and_an_unknown_tool() -> None:
    ok = '<|START_ACTION|>[{"tool_name": "search_recipes", "parameters": {"query": "pie"}}]<|END_ACTION|>'
    assert read(ok) == ("", [("search_recipes", {"query": "pie"})])
    unknown = '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "launch", "parameters": {}}]<|END_ACTION|>'
    assert read(unknown) == (unknown, [])


# --------------------------------------------------------------------------- Gemma 4

def test_gemma4_values_of_every_kind() -> None:
    text = (f"<|tool_call>call:configure{{count:42,ratio:0.5,enabled:true,nothing:null,"
            f"options:{{inner_key:{Q}val{Q},deep:{{x:-1}}}},items:[{Q}a{Q},{Q}b{Q},3]}}<tool_call|>")
    assert read(text) == ("", [("configure", {"count": 42, "ratio": 0.5, "enabled": True, "nothing": None,
                                              "options": {"inner_key": "val", "deep": {"x": -1}},
                                              "items": ["a", "b", 3]})])


def test_gemma4_string_holding_commas_braces_colons_and_quotes() -> None:
    value = 'a, b: {c} [d] "e" \'f\'\nnext'
    text = f"<|tool_call>call:write_file{{path:{Q}x.txt{Q},content:{Q}{value}{Q}}}<tool_call|>"
    assert read(text) == ("", [("write_file", {"path": "x.txt", "content": value})])


def test_gemma4_adjacent_calls_empty_arguments_and_the_turn_end_marker() -> None:
    text = (f"Sure.<|tool_call>call:get_weather{{city:{Q}Tokyo{Q}}}<tool_call|>"
            "<|tool_call>call:server.method{}<turn|>")
    assert read(text) == ("Sure.", [("get_weather", {"city": "Tokyo"}), ("server.method", {})])


def test_gemma4_unterminated_string_stays_text_with_a_diagnostic() -> None:
    text = f"<|tool_call>call:get_weather{{city:{Q}Tokyo}}<tool_call|>"
    result = sp.parse(text, TOOLS)
    assert result.tool_calls == [] and result.content == text and result.diagnostics


def test_gemma4_call_syntax_without_the_marker_is_prose() -> None:
    text = f"Write call:get_weather{{city:{Q}Tokyo{Q}}} to ask."
    assert read(text) == (text, [])


# --------------------------------------------------------------------------- FunctionGemma

def test_functiongemma_escaped_strings_and_bare_numbers() -> None:
    text = ("<start_function_call>call:get_weather{city:<escape>London<escape>,days:3,metric:false}"
            "<end_function_call>")
    assert read(text) == ("", [("get_weather", {"city": "London", "days": 3, "metric": False})])


def test_functiongemma_escaped_number_is_typed_by_the_schema() -> None:
    text = "<start_function_call>call:get_weather{city:<escape>Paris<escape>,days:<escape>2<escape>}<end_function_call>"
    assert read(text) == ("", [("get_weather", {"city": "Paris", "days": 2})])


def test_functiongemma_several_calls_with_text_between() -> None:
    one = "<start_function_call>call:search_recipes{query:<escape>soup, hot<escape>}<end_function_call>"
    text = f"First:{one}then:{one}"
    assert read(text) == ("First:then:", [("search_recipes", {"query": "soup, hot"})] * 2)


# --------------------------------------------------------------------------- DeepSeek V3.2 / V4 DSML

def test_dsml_two_invokes_with_text_values_as_vllm_documents() -> None:
    text = (f"<{DS}function_calls>\n"
            f'<{DS}invoke name="get_weather">\n<{DS}parameter name="city" string="true">杭州</{DS}parameter>\n'
            f'<{DS}parameter name="days" string="false">2</{DS}parameter>\n</{DS}invoke>\n'
            f'<{DS}invoke name="get_weather">\n<{DS}parameter name="city" string="true">北京</{DS}parameter>\n'
            f"</{DS}invoke>\n</{DS}function_calls>")
    assert read(text) == ("", [("get_weather", {"city": "杭州", "days": 2}), ("get_weather", {"city": "北京"})])


def test_dsml_json_values_and_a_text_value_that_looks_like_json() -> None:
    text = (f'Let me configure.\n<{DS}tool_calls>\n<{DS}invoke name="configure">\n'
            f'<{DS}parameter name="options" string="false">{{"a": [1, {{"b": null}}]}}</{DS}parameter>\n'
            f'<{DS}parameter name="enabled" string="false">true</{DS}parameter>\n'
            f'<{DS}parameter name="code" string="true">007</{DS}parameter>\n'
            f"</{DS}invoke>\n</{DS}tool_calls>")
    assert read(text) == ("Let me configure.\n", [("configure", {"options": {"a": [1, {"b": None}]}, "enabled": True,
                                                                 "code": "007"})])


def test_dsml_value_holding_markup_and_angle_brackets() -> None:
    value = "if a < b and c > d:\n    print('<tag>')"
    text = (f'<{DS}function_calls><{DS}invoke name="write_file"><{DS}parameter name="path" string="true">a.py'
            f'</{DS}parameter><{DS}parameter name="content" string="true">{value}</{DS}parameter>'
            f"</{DS}invoke></{DS}function_calls>")
    assert read(text) == ("", [("write_file", {"path": "a.py", "content": value})])


# --------------------------------------------------------------------------- Olmo 3

def test_olmo3_one_call_per_line_with_json_literals() -> None:
    text = ('<function_calls>\nget_weather(city="Paris", metric=true)\n'
            "configure(options={'a': null}, enabled=False)\n</function_calls>")
    assert read(text) == ("", [("get_weather", {"city": "Paris", "metric": True}),
                               ("configure", {"options": {"a": None}, "enabled": False})])


def test_olmo3_tag_followed_by_prose_stays_text() -> None:
    text = "<function_calls> is the tag Olmo writes; see the docs."
    assert read(text) == (text, [])


# --------------------------------------------------------------------------- Apertus

def test_apertus_one_key_objects_with_text_before() -> None:
    text = ('I will check. <|tools_prefix|>[{"get_weather": {"city": "Paris"}}, '
            '{"search_recipes": {"query": "tart"}}]<|tools_suffix|>')
    assert read(text) == ("I will check. ", [("get_weather", {"city": "Paris"}), ("search_recipes", {"query": "tart"})])


def test_apertus_object_with_two_keys_is_not_a_call() -> None:
    text = '<|tools_prefix|>[{"get_weather": {"city": "Paris"}, "extra": {}}]<|tools_suffix|>'
    result = sp.parse(text, TOOLS)
    assert result.tool_calls == [] and result.content == text


# --------------------------------------------------------------------------- InternLM, GigaChat 3

@pytest.mark.parametrize("opener", ["<|action_start|><|plugin|>\n", "<|action_start|> <|plugin|>\n"])
@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_internlm_either_argument_key(opener: str, key: str) -> None:
    text = f'What is the weather?{opener}{{"name": "get_weather", "{key}": {{"city": "Tokyo"}}}}<|action_end|>'
    assert read(text) == ("What is the weather?", [("get_weather", {"city": "Tokyo"})])


@pytest.mark.parametrize("marker", ["<|message_sep|>function call<|role_sep|>\n", "<|function_call|>"])
def test_gigachat3_both_markers_and_the_end_token(marker: str) -> None:
    text = f'Checking.{marker}{{"name": "get_weather", "arguments": {{"city": "Moscow"}}}}</s>'
    assert read(text) == ("Checking.", [("get_weather", {"city": "Moscow"})])


# --------------------------------------------------------------------------- Phi-4-mini's closer

@pytest.mark.parametrize("opener", ["functools", "<|tool_call|>"])
def test_phi4_mini_closing_marker_does_not_leak_into_content(opener: str) -> None:
    text = f'{opener}[{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}]<|/tool_call|>\nDone.'
    assert read(text) == ("\nDone.", [("get_weather", {"city": "Paris"})])


# --------------------------------------------------------------------------- engine parser names

ENGINE_NAMES = {
    # vLLM --tool-call-parser
    "hermes": "hermes", "qwen3_coder": "qwen3_coder", "qwen3_xml": "qwen3_coder", "glm45": "glm45", "glm47": "glm45",
    "llama3_json": "llama3_json", "llama4_json": "llama3_json", "llama4_pythonic": "pythonic", "pythonic": "pythonic",
    "mistral": "mistral", "deepseek_v3": "deepseek_v3", "deepseek_v31": "deepseek_v31", "deepseek_v32": "deepseek_v32",
    "deepseek_v4": "deepseek_v32", "kimi_k2": "kimi_k2", "openai": "openai", "seed_oss": "seed_oss",
    "minimax_m2": "minimax_m2", "granite": "granite", "granite4": "hermes", "hunyuan_a13b": "hunyuan",
    "jamba": "hunyuan", "phi4_mini_json": "phi4_mini", "xlam": "xlam", "internlm": "internlm", "lfm2": "lfm2",
    "olmo3": "olmo3", "gigachat3": "gigachat3", "functiongemma": "functiongemma", "gemma4": "gemma4",
    "apertus": "apertus", "cohere_command3": "cohere", "cohere_command4": "cohere", "nemotron_json": "nemotron",
    "step3p5": "qwen3_coder", "minimax": "hunyuan",
    # SGLang --tool-call-parser
    "qwen": "hermes", "qwen25": "hermes", "glm": "glm45", "gpt-oss": "openai", "llama3": "llama3_json",
    "deepseekv3": "deepseek_v3", "deepseekv31": "deepseek_v31", "deepseekv32": "deepseek_v32", "deepseekv4": "deepseek_v32",
    "minimax-m2": "minimax_m2", "interns1": "internlm", "apertus2509": "apertus", "hunyuan": "hunyuan",
}


@pytest.mark.parametrize("engine_name", sorted(ENGINE_NAMES))
def test_engine_parser_names_resolve(engine_name: str) -> None:
    assert resolve([engine_name]) == [ENGINE_NAMES[engine_name]]


def test_aliases_are_unique_and_never_shadow_a_dialect() -> None:
    assert not set(ALIASES) & set(DIALECTS)
    every = [a for d in DIALECTS.values() for a in d.aliases]
    assert len(every) == len(set(every)) and all(isinstance(d.aliases, tuple) for d in DIALECTS.values())


@pytest.mark.parametrize("dialect", ["generic", "nemotron", "lfm2", "cohere", "gemma4", "functiongemma", "deepseek_v32",
                                     "olmo3", "apertus", "internlm", "gigachat3"])
def test_each_new_dialect_pinned_reads_its_own_rendering_only(dialect: str) -> None:
    from streamparse.dialects.render import render

    block = render(dialect, "get_weather", {"city": "Paris"})
    assert [c.dialect for c in sp.parse(block, TOOLS, dialects=[dialect]).tool_calls] == [dialect]
    other = "hermes" if dialect != "hermes" else "mistral"
    assert sp.parse(block, TOOLS, dialects=[other]).tool_calls == []



# --------------------------------------------------------------------------- Kimi K3 XTML (decoder only, see the report)

def test_kimi_k3_decoder_reads_one_call_item() -> None:
    from streamparse.dialects.decoders_tags import kimi_k3_calls

    item = ('<|open|>call tool="write_file" index="1"<|sep|>'
            '<|open|>argument key="path" type="string"<|sep|>a &quot;b&quot;.txt<|close|>argument<|sep|>'
            '<|open|>argument key="content" type="string"<|sep|>  {"not": "json"}\n<|close|>argument<|sep|>'
            '<|open|>argument key="n" type="integer"<|sep|>3<|close|>argument<|sep|>'
            '<|close|>call<|sep|>')
    calls, repaired = kimi_k3_calls(item, None)
    assert calls == [("write_file", {"path": "a &quot;b&quot;.txt", "content": '  {"not": "json"}\n', "n": 3})]
    assert not repaired
# --------------------------------------------------------------------------- Kimi K3 XTML

def test_kimi_k3_channels_split_reasoning_content_and_calls() -> None:
    text = ('<|open|>think<|sep|>Need the weather.<|close|>think<|sep|>'
            '<|open|>response<|sep|>One moment.<|close|>response<|sep|>'
            '<|open|>tools<|sep|>\n<|open|>call tool="get_weather" index="1"<|sep|>'
            '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
            '<|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|>'
            '<|close|>call<|sep|>\n<|close|>tools<|sep|><|close|>message<|sep|>')
    result = sp.parse(text, TOOLS)
    assert result.reasoning == "Need the weather." and result.content == "One moment."
    assert [(c.name, c.parsed_arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris", "days": 3})]
    assert read(text)[1] == [("get_weather", {"city": "Paris", "days": 3})]


def test_kimi_k3_string_values_stay_raw_and_attributes_are_unescaped() -> None:
    value = '  {"not": "json"} <b>\n'
    text = ('<|open|>tools<|sep|><|open|>call tool="write_file" index="1"<|sep|>'
            '<|open|>argument key="path" type="string"<|sep|>a &quot;b&quot;.txt<|close|>argument<|sep|>'
            f'<|open|>argument key="content" type="string"<|sep|>{value}<|close|>argument<|sep|>'
            '<|close|>call<|sep|><|close|>tools<|sep|>')
    assert read(text) == ("", [("write_file", {"path": "a &quot;b&quot;.txt", "content": value})])


def test_kimi_k3_attribute_escapes_in_keys_and_names() -> None:
    text = ('<|open|>tools<|sep|><|open|>call tool="configure" index="1"<|sep|>'
            '<|open|>argument key="options" type="object"<|sep|>{"a&amp;b": [1, null]}<|close|>argument<|sep|>'
            '<|close|>call<|sep|><|close|>tools<|sep|>')
    assert read(text) == ("", [("configure", {"options": {"a&amp;b": [1, None]}})])
