"""The dialect registry: every tool-call format streamparse knows, as data.

Invariant: this table is the only place a format is declared, and the scanner compiles the enabled openers into
one search and never names a dialect. Every format but the two families writes its markers in its grammar
(``grammars/<name>.lark``): its declaration, its spans and its renderer (``render``) read each one there by
terminal name (``markup.marker``), and the import fails, naming the terminal, when the grammar does not spell it
as plain text. The XML-parameter and key/value families are written once in their ``XmlCall`` / ``KvCall`` values
below, from which their grammars are derived.

Adding a dialect (say a model that writes ``<call name="f">{json}</call>``):

1. Write ``grammars/call_tag.lark`` describing one block, with the format's source (chat template, engine
   parser) in its header comment. Give each marker a named string terminal (``_NAME_OPEN: "<call name=\\""``,
   ``_NAME_CLOSE: "\\">"``, ``_CLOSE: "</call>"``); one the rules never read (a wrapper the scanner strips, a
   reasoning span) is declared all the same, and Lark leaves it out of the parser.
2. Pick or write a decoder: JSON bodies use ``json_calls`` as they are; a tag format gets a rule method in
   ``decoders._TagCalls`` and one line ``call_tag_calls = GrammarDecoder("call_tag", _TagCalls())``.
3. Declare it below, its markers read from the grammar::

       Dialect("call_tag", (Opener(marker("call_tag", "_NAME_OPEN"),
                                   head=(name(), lit(marker("call_tag", "_NAME_CLOSE")), ws()), look=(peek("{"),)),),
               JSON, json_calls, "call_tag", end=(marker("call_tag", "_CLOSE"),))

   ``head`` is read after the opener (a ``name()`` there names the call); ``look`` must follow but stays in the
   body; ``end`` closes the block. A format whose markers are ordinary prose (``Action:``, ``>>>``) is declared
   ``named_only=True``: auto mode (``resolve(None)``) leaves it out, naming it reads it.
4. Add its renderer to ``render.RENDERERS``, writing the same terminals (``markers("call_tag", …)``): the
   dialect tests take their samples from it, so every promise (chunking invariance, split markers, text around,
   unicode) is tested for it. List it in ``tests/dialects/test_markup_once.py``'s ``CONVERTED``.
"""

from __future__ import annotations

from typing import Any

from ..arguments.grammar import load_grammar
from .decoders import (deepseek_v3_calls, deepseek_v31_calls, harmony_calls, json_calls, kimi_calls, pythonic_calls,
                       plamo3_calls, solar_open_calls)
from .decoders_tags import (apertus_calls, cohere_calls, dsml_calls, functiongemma_calls, gemma4_calls, generic_calls,
                            kimi_k3_calls, minimax_m3_calls, olmo3_calls)
from .decoders_wild import llama31_builtin_calls, tool_use_calls
from .spec import JSON, PYTHON, TAGGED, Decoder, Dialect, Opener, Part, Registry, Span, ValueTags, lit, name, opt, peek, ws
from .kv_family import KvCall, kv_dialect
from .markup import marker, markers, pair
from .xml_family import XmlCall, xml_dialect

__all__ = ["DIALECTS", "ALIASES", "SPANS", "REGISTRY", "Dialect", "Opener", "Span", "resolve", "warm_up"]

# Qwen's <tool_call> tag, as hermes's grammar writes it: Qwen3-Coder and GLM wrap their calls in it too.
_TOOLCALL, _TOOLCALL_END = pair("hermes", "_OPEN", "_CLOSE")
_NAME_KEY = (ws(), lit('"name"'), ws(), lit(":"), ws(), lit('"'), name(gated=True), lit('"'))
# Harmony's framing (openai.lark), which Muse Glimmer's ATEM messages are written in too.
_ASSISTANT_TO, _TO, _MESSAGE = markers("openai", "_ASSISTANT_TO", "_TO", "_MESSAGE")
_MISTRAL_CALLS, _MISTRAL_ARGS = markers("mistral_v11", "_OPEN", "_ARGS")
_K3_CALL, _K3_ARGUMENT = markers("kimi_k3", "_CALL", "_ARGUMENT")

# The XML-parameter family (xml_family): each member's markup is written once, here.
_QWEN3 = XmlCall("function", "parameter", value_lines=True)
_INVOKE = XmlCall("invoke", "parameter", attribute="name")
_QWEN3_SOURCE = """Qwen3-Coder tool call (also Seed-OSS inside <seed:tool_call>):
  <tool_call>
  <function=NAME>
  <parameter=KEY>
  VALUE
  </parameter>
  </function>
  </tool_call>
A value is raw text (it may hold <, >, & and newlines). It ends at *its* </parameter>: the one followed by
whitespace and then the next <parameter=…> or the end of the function, so a value may itself hold
<parameter=…>…</parameter> lines. No %ignore: whitespace inside a value is data.
Source: Qwen3-Coder chat template (qwen3coder_tool_parser.py in Qwen's repo); vLLM
tool_parsers/qwen3coder_tool_parser.py; SGLang function_call/qwen3_coder_detector.py."""
_MINIMAX_SOURCE = """MiniMax-M2: invoke elements inside <minimax:tool_call>; values raw text typed by the schema.
  <minimax:tool_call>
  <invoke name="get_weather">
  <parameter name="city">Seattle</parameter>
  </invoke>
  </minimax:tool_call>
Source: MiniMaxAI/MiniMax-M2 chat_template.jinja; vLLM tool_parsers/minimax_m2_tool_parser.py;
SGLang function_call/minimax_m2.py. Same value rule as Qwen3-Coder."""
_CLAUDE_SOURCE = """Claude-style XML calls, as Claude's prompt-based tool use taught them and as models distilled from
Claude write them: invoke elements inside <function_calls> (several per wrapper), or one bare <invoke>.
Values are raw text typed by the tool's schema (lists and objects written as JSON).
  <function_calls>
  <invoke name="get_weather">
  <parameter name="city">Paris</parameter>
  </invoke>
  </function_calls>
Source: Claude's prompt-format tool use (as public guides write it, e.g. github.com/George-RD/ai_knowledge
tool-use.md); text tool parsers for Claude-distilled models that read bare invokes, e.g. github.com/leolilley/ryeos
text_tool_parser.py. The same invoke/parameter shape and value rule as MiniMax-M2."""
_MINICPM5 = XmlCall("function", "param", attribute="name", cdata=True)
_ATEM = XmlCall("atem:invoke", "atem:parameter", attribute="name")
_ATEM_SOURCE = """Muse Glimmer's ATEM: each call its own message to the function, a Claude-style invoke in atem: tags.
  <|start|>assistant to=get_weather<|message|><atem:function_calls>
  <atem:invoke name="get_weather">
  <atem:parameter name="city">Paris</atem:parameter>
  </atem:invoke>
  </atem:function_calls><|eot|>
Strings as written, lists and objects as JSON (typed by the tool's schema).
Source: muse-glimmer chat template (llama.cpp models/templates/muse-glimmer.jinja, common/parsers/muse-glimmer.cpp);
vLLM tool_parsers/muse_glimmer_tool_parser.py."""
_DOTS_SOURCE = """rednote dots: Claude-style invokes inside <dots_function_call> (several blocks, several invokes each).
  <dots_function_call>
  <invoke name="search">
  <parameter name="query">weather in Shanghai</parameter>
  </invoke>
  </dots_function_call>
Source: vLLM tool_parsers/dots_tool_parser.py and tests/tool_parsers/test_dots_tool_parser.py; SGLang
function_call/dots_detector.py. The JSON body the same wrapper may hold is dots_json's."""
_HY = ":opensource"
_M3 = marker("minimax_m3", "_NS")  # MiniMax-M3's namespace marker, before every tag (in its doc below)
# The key/value-tag family (kv_family): each member's markup is written once, here.
_GLM = KvCall("arg_key", "arg_value")
_GLM_SOURCE = """GLM-4.5 / 4.6 (one argument per line) and GLM-4.7 (no newlines at all): the body of one <tool_call>.
  <tool_call>get_weather
  <arg_key>city</arg_key>
  <arg_value>北京</arg_value>
  </tool_call>
  <tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>
  <tool_call>get_current_date</tool_call>
Values are raw text typed by the tool's schema (like Qwen3-Coder). A value ends at *its* </arg_value>: the one
followed by whitespace and then the next <arg_key> or the end of the call, so a value may quote </arg_value>.
Source: zai-org/GLM-4.6 chat_template.jinja; vLLM tool_parsers/glm4_moe_tool_parser.py and
glm47_moe_tool_parser.py; SGLang function_call/glm4_moe_detector.py, glm47_moe_detector.py."""
_HY3 = KvCall(f"arg_key{_HY}", f"arg_value{_HY}", item=f"tool_call{_HY}", sep=f"tool_sep{_HY}")
_HY3_SOURCE = """Tencent Hy3: key/value calls inside <tool_calls:opensource>, one <tool_call:opensource> item per call.
  <tool_calls:opensource>
  <tool_call:opensource>get_weather<tool_sep:opensource>
  <arg_key:opensource>city</arg_key:opensource>
  <arg_value:opensource>Paris</arg_value:opensource>
  </tool_call:opensource>
  </tool_calls:opensource><｜hy_eos:opensource｜>
Strings are written raw, other values as JSON (typed by the tool's schema, as GLM's are).
Source: tencent/Hy3 chat template (llama.cpp models/templates/tencent-Hy3.jinja); vLLM
tool_parsers/hy_v3_tool_parser.py and tests/tool_parsers/test_hy_v3_tool_parser.py."""
_LONGCAT = KvCall("longcat_arg_key", "longcat_arg_value")
_LONGCAT_SOURCE = """LongCat's key/value form (Flash-Thinking-2601, Flash-Lite, the LongCat API): GLM's, with longcat_ tags.
  <longcat_tool_call>get_weather
  <longcat_arg_key>city</longcat_arg_key>
  <longcat_arg_value>Paris</longcat_arg_value>
  </longcat_tool_call>
Source: meituan-longcat/SGLang-FluentLLM function_call/longcat_xml_detector.py (parser longcat_xml); mlx-lm
tool_parsers/longcat.py. Its JSON form inside the same tags is the longcat dialect's."""
_IFM = KvCall("ifm|arg_key", "ifm|arg_value", item="ifm|tool_call")
_IFM_SOURCE = """K2 Horizon (MBZUAI IFM), its default xml flavour: calls inside <ifm|tool_calls>.
  <ifm|tool_calls>
  <ifm|tool_call>web_search
  <ifm|arg_key>query</ifm|arg_key>
  <ifm|arg_value>weather</ifm|arg_value>
  </ifm|tool_call>
  </ifm|tool_calls>
Source: vLLM tool_parsers/k2_horizon_tool_parser.py and tests/tool_parsers/test_k2_horizon_tool_parser.py; SGLang
function_call/k2_v3_detector.py."""
_SOLAR_CALL = marker("solar_open", "_BEGIN")
_DOTS = pair("dots_json", "_OPEN", "_CLOSE")  # rednote dots' wrapper, around invokes (dots) or JSON (dots_json)
_LONGCAT_TAGS = pair("longcat", "_OPEN", "_CLOSE")  # LongCat's call tag, around JSON (longcat) or key/values (longcat_xml)
_MINICPM5_SOURCE = """MiniCPM5: bare function elements, one per call, values inline (CDATA around a value holding <, & or a
newline).
  <function name="get_weather"><param name="city">Paris</param><param name="note"><![CDATA[a
b]]></param></function>
Source: openbmb/MiniCPM5-1B chat template (llama.cpp models/templates/openbmb-MiniCPM5-1B.jinja, which also
teaches the format in its system prompt)."""


def _json_tag(opener: str, *, start: str = "[{") -> Opener:
    """An opener followed (after whitespace) by a JSON value."""
    return Opener(opener, head=(ws(),), look=(peek(start),))


def _gemma(dialect: str, decode: Decoder, ends: tuple[str, ...], doc: str) -> Dialect:
    """Gemma-style: the opener, then ``call:NAME{`` (the body starts at ``call:``), strings between quote tokens."""
    opener, call, quote = markers(dialect, "_OPEN", "_CALL", "_QUOTE")
    return Dialect(dialect, (Opener(opener, look=(lit(call), name(), lit("{"))),), TAGGED, decode, dialect,
                   end=markers(dialect, *ends), quotes=(quote,), doc=doc)


def _deepseek(dialect: str, decode: Decoder, called: Part, **fields: Any) -> Dialect:
    """A DeepSeek V3-style section of calls: ``called`` is what stands between a call's opener and its separator."""
    section, section_end, call, call_end, sep = markers(dialect, "_CALLS_BEGIN", "_CALLS_END", "_BEGIN", "_END", "_SEP")
    return Dialect(dialect, (Opener(section, head=(ws(),), look=(lit(call), called, lit(sep))),), TAGGED, decode,
                   dialect, end=(section_end,), item=(call, call_end), json_strings=True, **fields)


def _dsml(dialect: str, space: str, wrappers: tuple[str, ...], **fields: Any) -> Dialect:
    """DeepSeek's DSML in one namespace of ``deepseek_v32.lark`` (``space``: its terminals' prefix), wrapped in any
    of ``wrappers`` (their terminals' names after the prefix)."""
    opens = markers("deepseek_v32", *(f"_{space}_{w}" for w in wrappers))
    ends = markers("deepseek_v32", *(f"_{space}_{w}_END" for w in wrappers))
    invoke, invoke_end, param, param_end = markers("deepseek_v32", *(f"_{space}_{t}" for t in (
        "INVOKE", "INVOKE_END", "PARAMETER", "PARAMETER_END")))
    return Dialect(dialect, tuple(Opener(o, head=(ws(),), look=(lit(invoke),)) for o in opens), TAGGED, dsml_calls,
                   "deepseek_v32", end=ends, item=(invoke, invoke_end), values=ValueTags((param,), param_end, (param,)),
                   **fields)


_DECLARATIONS = (
    Dialect("hermes", (_json_tag(_TOOLCALL),), JSON, json_calls, "hermes", end=(_TOOLCALL_END,), several=True, separators=",",
            aliases=("tool_call_json", "qwen25", "qwen", "granite4"),
            doc='<tool_call>{"name", "arguments"|"parameters"|"input"}</tool_call>; arrays and several objects too'),
    xml_dialect("qwen3_coder", _QWEN3, wrapper=(_TOOLCALL, _TOOLCALL_END), bare=True, closers=(_TOOLCALL_END,),
                aliases=("qwen3_xml", "step3p5"), source=_QWEN3_SOURCE,
                doc="<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call> (wrapper optional)"),
    kv_dialect("glm45", _GLM, opener=_TOOLCALL, closer=_TOOLCALL_END, source=_GLM_SOURCE,
               aliases=("glm47", "glm4_moe", "glm"), doc="<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>"),
    Dialect("tools_array", (_json_tag(marker("tools_array", "_OPEN")),), JSON, json_calls, "tools_array",
            end=markers("tools_array", "_CLOSE"),
            doc="<tools>[{…}, {…}]</tools>, each element emitted as it closes"),
    Dialect("function_tag", (_json_tag(marker("function_tag", "_OPEN"), start="{"),
                             *(Opener(opener, head=(name(), lit(closer), ws()), look=(peek("{"),))
                               for opener, closer in (markers("function_tag", "_EQUALS_OPEN", "_EQUALS_CLOSE"),
                                                      markers("function_tag", "_NAME_OPEN", "_NAME_CLOSE")))),
            JSON, json_calls, "function_tag", end=markers("function_tag", "_CLOSE"),
            doc='<function>{"name", "parameters"}</function>, <function=NAME>{…}</function>, <function name="NAME">{…}</function>'),
    Dialect("angle_json", (Opener("<{", keep=1),), JSON, json_calls, "angle_json", closers=(">",),
            doc='<{"name": …, "arguments": …}>'),
    Dialect("name_tag", (Opener("<{name}>", head=(ws(),), look=(peek("{"),)),), JSON, json_calls, "name_tag",
            end=(marker("name_tag", "_FUNCTION_CLOSE"), "</{name}>"), doc="<TOOL_NAME>{…}</function> or </TOOL_NAME> (provided tools only)"),
    Dialect("tool_calls_json", (Opener("{", keep=1, line_start=True,
                                       look=(ws(), lit('"tool_calls"', "'tool_calls'"), ws(), lit(":"), ws(), peek("["))),),
            JSON, json_calls, "tool_calls_json", needs_tools=True,
            doc='{"tool_calls": [{"name", "arguments"}]} at a line start, either quote kind (when tools are given)'),
    Dialect("generic", (Opener("{", keep=1, line_start=True,
                               look=(ws(), lit('"tool_call"', "'tool_call'"), ws(), lit(":"), ws(), peek("{"))),),
            JSON, generic_calls, "generic", needs_tools=True, aliases=("llama_cpp_generic",),
            doc='llama.cpp generic: {"tool_call": {"name", "arguments"}} at a line start (when tools are given)'),
    Dialect("llama3_json", (_json_tag(marker("llama3_json", "_TAG")), Opener("{", keep=1, line_start=True, look=_NAME_KEY),
                            Opener("{{", keep=2, line_start=True, look=_NAME_KEY)),  # doubled braces (a repair)
            JSON, json_calls, "llama3_json", separators=";", aliases=("bare_json", "llama4_json", "llama3"),
            doc='<|python_tag|>{"name", "parameters"}; or a bare call object at a line start (provided tools only)'),
    Dialect("xlam", (Opener("[", keep=1, line_start=True, look=(ws(), lit("{"), *_NAME_KEY)),), JSON, json_calls, "xlam",
            doc='[{"name", "arguments"}, …] at a line start, fenced or not (provided tools only)'),
    Dialect("pythonic", (Opener("[", keep=1, line_start=True, look=(ws(), name(gated=True, called="("), ws(), lit("("))),
                         Opener(marker("pythonic", "_START"), head=(ws(),), look=(peek("["),))),
            PYTHON, pythonic_calls, "pythonic", closers=markers("pythonic", "_END"), aliases=("llama4_pythonic",),
            doc='[f(a=1, b="x"), g()] at a line start (when tools are given: each element judged, an undeclared '
                'name stays text, reported), or in <|python_start|>…<|python_end|>'),
    Dialect("mistral", (_json_tag(marker("mistral", "_OPEN")),), JSON, json_calls, "mistral",
            doc='[TOOL_CALLS][{"name", "arguments"}, …]'),
    Dialect("mistral_v11", (Opener(_MISTRAL_CALLS, head=(ws(), name(), opt(_MISTRAL_ARGS), ws()), look=(peek("{"),)),
                            # Mistral Small 3.2's template writes the call's id (the second name: read, not kept)
                            Opener(_MISTRAL_CALLS, head=(ws(), name(), lit(marker("mistral_v11", "_CALL_ID")), name(),
                                                         lit(_MISTRAL_ARGS), ws()), look=(peek("{"),))),
            JSON, json_calls, "mistral_v11", doc="[TOOL_CALLS]NAME[ARGS]{…}, [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…} or [TOOL_CALLS]NAME{…}"),
    _deepseek("deepseek_v3", deepseek_v3_calls, lit(marker("deepseek_v3", "_TYPE")), aliases=("deepseekv3", "deepseek_r1"),
              doc="<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME ```json …```"),
    _deepseek("deepseek_v31", deepseek_v31_calls, name(), aliases=("deepseekv31",),
              doc="<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>"),
    Dialect("kimi_k2", tuple(Opener(o, head=(ws(),))  # a token only Kimi writes: the section is Kimi's whatever follows
                             for o in markers("kimi_k2", "_SECTION_BEGIN", "_SECTION_BEGIN_SINGULAR")),
            TAGGED, kimi_calls, "kimi_k2", end=markers("kimi_k2", "_SECTION_END", "_SECTION_END_SINGULAR"),
            item=(marker("kimi_k2", "_BEGIN"), marker("kimi_k2", "_END")), json_strings=True,
            doc="<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…"),
    # (before openai: both open on <|start|>assistant to=, and ATEM's head, which reads on to its wrapper, decides)
    xml_dialect("atem", _ATEM, wrapper=("<atem:function_calls>", "</atem:function_calls>"),
                framed=tuple(Opener(o, head=(name(), lit(_MESSAGE), ws(), lit("<atem:function_calls>"), ws()),
                                    look=(lit("<atem:invoke"),), line_start=not o.startswith("<"))
                             for o in (_ASSISTANT_TO, _TO)),  # (the first message: right after the prompt)
                aliases=("muse_glimmer", "glimmer"), source=_ATEM_SOURCE,
                doc='<|start|>assistant to=NAME<|message|><atem:function_calls><atem:invoke name="NAME">'
                    '<atem:parameter name="K">V</atem:parameter></atem:invoke></atem:function_calls><|eot|> (Muse Glimmer)'),
    Dialect("openai", (*(Opener(o, look=(name(),)) for o in markers("openai", "_COMMENTARY_TO", "_ASSISTANT_TO",
                                                                      "_ANALYSIS_TO")),  # (a recipient in analysis too)
                       Opener(marker("openai", "_TO_FUNCTIONS"), keep=len(marker("openai", "_FUNCTIONS")), line_start=True)),
            # <|end|> also ends a call (vLLM's test): the model ended the message instead of calling
            TAGGED, harmony_calls, "openai", end=markers("openai", "_CALL", "_END"), eos_ends=True, json_strings=True, aliases=("gpt_oss", "gpt-oss", "harmony"),
            doc="gpt-oss harmony: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>"),
    xml_dialect("seed_oss", _QWEN3, wrapper=("<seed:tool_call>", "</seed:tool_call>"),
                source="ByteDance Seed-OSS: Qwen3-Coder's calls inside <seed:tool_call>; reasoning in <seed:think>.\n"
                       "Source: ByteDance-Seed/Seed-OSS-36B-Instruct chat_template.jinja; "
                       "vLLM tool_parsers/seed_oss_tool_parser.py.",
                doc="<seed:tool_call><function=NAME><parameter=K>V</parameter></function></seed:tool_call>"),
    xml_dialect("minimax_m2", _INVOKE, wrapper=("<minimax:tool_call>", "</minimax:tool_call>"), aliases=("minimax-m2",),
                source=_MINIMAX_SOURCE,
                doc='<minimax:tool_call><invoke name="NAME"><parameter name="K">V</parameter></invoke></minimax:tool_call>'),
    Dialect("granite", (_json_tag(marker("granite", "_OPEN")),), JSON, json_calls, "granite",
            closers=markers("granite", "_CLOSE"),
            doc="<|tool_call|>[{…}], optionally closed by <|/tool_call|> (Phi-4-mini's template writes it so)"),
    Dialect("hunyuan", (_json_tag(marker("hunyuan", "_OPEN")),), JSON, json_calls, "hunyuan",
            end=markers("hunyuan", "_CLOSE"), several=True,
            aliases=("hunyuan_a13b", "jamba", "minimax"), doc="<tool_calls>[{…}]</tool_calls> (also MiniMax-M1, vLLM's minimax parser)"),
    Dialect("phi4_mini", (Opener(marker("phi4_mini", "_OPEN"), head=(ws(),), look=(peek("["),), line_start=True),), JSON,
            json_calls, "phi4_mini", closers=markers("phi4_mini", "_CLOSE"), aliases=("phi4_mini_json",),
            doc="functools[{…}] at a line start, optionally closed by <|/tool_call|>"),
    # ---- issue 18: formats the engines read that were missing (sources in each grammar's header)
    Dialect("nemotron", (_json_tag(marker("nemotron", "_OPEN")),), JSON, json_calls, "nemotron",
            closers=markers("nemotron", "_CLOSE"),
            aliases=("nemotron_json", "nemotron_v2"), doc='<TOOLCALL>[{"name", "arguments"}]</TOOLCALL>'),
    Dialect("lfm2", (Opener(marker("lfm2", "_OPEN"), head=(ws(),), look=(peek("["),)),), PYTHON, pythonic_calls, "lfm2",
            closers=markers("lfm2", "_CLOSE"),
            doc="<|tool_call_start|>[f(a=1), g()]<|tool_call_end|>"),
    Dialect("cohere", (_json_tag(marker("cohere", "_OPEN")),), JSON, cohere_calls, "cohere",
            closers=markers("cohere", "_CLOSE"),
            aliases=("cohere_command4", "cohere_command3", "command_r7b"),
            doc='<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>'),
    _gemma("gemma4", gemma4_calls, ("_CLOSE", "_TURN_END"), doc='<|tool_call>call:NAME{k:<|"|>v<|"|>,n:1}<tool_call|>'),
    _gemma("functiongemma", functiongemma_calls, ("_CLOSE",),
           doc="<start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>"),
    _dsml("deepseek_v32", "V32", ("FUNCTION_CALLS", "TOOL_CALLS"), aliases=("deepseekv32", "deepseek_v4", "deepseekv4"),
          doc='<｜DSML｜function_calls><｜DSML｜invoke name="NAME"><｜DSML｜parameter name="K" string="true">V</｜DSML｜parameter>…'),
    _dsml("deepseek_v41", "V41", ("CALLS",), aliases=("deepseekv41", "deepseek_v4_1"),
          doc='<｜DSML｜ calls><｜DSML｜ invoke name="NAME"><｜DSML｜ parameter name="K" string="true">V</｜DSML｜ parameter>… '
                "(V4.1: DSML with a space, wrapper \"calls\")"),
    Dialect("olmo3", (Opener(marker("olmo3", "_CALLS"), head=(ws(),), look=(name(), ws(), lit("("))),), TAGGED,
            olmo3_calls, "olmo3", end=(marker("olmo3", "_CALLS_END"),), quotes=("'", '"'),
            doc="<function_calls>\nf(a=1)\ng(b=null)\n</function_calls> (one pythonic call per line)"),
    Dialect("apertus", (_json_tag(marker("apertus", "_OPEN")),), JSON, apertus_calls, "apertus",
            closers=markers("apertus", "_CLOSE"),
            aliases=("apertus2509",), doc='<|tools_prefix|>[{"NAME": {…}}]<|tools_suffix|>'),
    Dialect("internlm", (Opener(marker("internlm", "_ACTION_START"), head=(ws(), lit(marker("internlm", "_PLUGIN")), ws()),
                                look=(peek("{"),)),), JSON,
            json_calls, "internlm", closers=markers("internlm", "_CLOSE"), aliases=("internlm2", "interns1"),
            doc='<|action_start|><|plugin|>{"name", "parameters"}<|action_end|>'),
    Dialect("gigachat3", (Opener(marker("gigachat3", "_MESSAGE_SEP"), head=(ws(), lit(marker("gigachat3", "_FUNCTION_CALL")),
                                                                           ws()), look=(peek("{"),)),
                          *(Opener(o, head=(ws(),), look=(peek("{"),))
                            for o in markers("gigachat3", "_FUNCTION_CALL", "_FUNCTION_CALL_TOKEN"))),
            JSON, json_calls, "gigachat3", closers=markers("gigachat3", "_CLOSE"),
            doc='<|message_sep|>function call<|role_sep|>\n{"name", "arguments"}'),
    Dialect("kimi_k3", (Opener(marker("kimi_k3", "_TOOLS"), head=(ws(),), look=(lit(_K3_CALL),)),), TAGGED, kimi_k3_calls,
            "kimi_k3", end=(marker("kimi_k3", "_TOOLS_END"),), item=(_K3_CALL, marker("kimi_k3", "_CALL_CLOSE")),
            values=ValueTags((_K3_ARGUMENT,), marker("kimi_k3", "_ARGUMENT_END"), (_K3_ARGUMENT,)),
            doc='<|open|>tools<|sep|><|open|>call tool="NAME"<|sep|><|open|>argument key="K" type="string"<|sep|>V'
                "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"),
    # ---- issue 30 §4: formats seen in the wild (sources in each grammar's header)
    xml_dialect("claude_xml", _INVOKE, wrapper=("<function_calls>", "</function_calls>"), bare=True,
                aliases=("claude", "invoke_xml"), source=_CLAUDE_SOURCE,
                doc='<function_calls><invoke name="NAME"><parameter name="K">V</parameter></invoke></function_calls> '
                    "(several invokes per wrapper), or a bare <invoke name=\"NAME\">…</invoke>"),
    Dialect("tool_use", (Opener(marker("tool_use", "_OPEN"), head=(ws(),), look=(lit(*markers("tool_use", "_NAME", "_TOOL_NAME")),)),),
            TAGGED, tool_use_calls, "tool_use", end=markers("tool_use", "_CLOSE"), eos_ends=True, json_strings=True, aliases=("cherry_studio", "tool_use_xml"),
            doc="<tool_use><name>NAME</name><arguments>{…}</arguments></tool_use> (also <tool_name>, and <input>, "
                "<tool_input> or <parameters> for the arguments)"),
    Dialect("llama31_builtin", (Opener(marker("llama31_builtin", "_TAG"), head=(ws(),), look=(name(), lit("("))),),
            # (llama3_json's opener too: there a "{" follows)
            TAGGED, llama31_builtin_calls, "llama31_builtin",
            end=markers("llama31_builtin", "_END_OF_MESSAGE", "_END_OF_TURN"), eos_ends=True,
            quotes=("'", '"'), aliases=("llama3_builtin", "llama_builtin"),
            doc='<|python_tag|>brave_search.call(query="…")<|eom_id|> (Llama 3.1 built-in tools: the call\'s name is '
                "the tool's, its keyword arguments the arguments)"),
    Dialect("functionary_v32", (Opener(marker("functionary_v32", "_OPEN"), head=(name(), ws()), look=(peek("{"),)),), JSON,
            json_calls,
            "functionary_v32", named_only=True, aliases=("functionary", "functionary_v3_2"),
            doc=">>>NAME\n{…} (several back to back; >>>all\n opens plain content); named only"),
    Dialect("react", (Opener(marker("react", "_ACTION_LABEL"), line_start=True,
                             head=(ws(), name(), ws(), lit(marker("react", "_INPUT_LABEL")), ws()), look=(peek("{"),)),),
            JSON, json_calls, "react", named_only=True, aliases=("langchain_react", "react_json"),
            doc="Action: NAME\nAction Input: {…} (LangChain's ReAct; Thought:/Observation: stay text); named only"),
    # ---- issue 42: formats the chat templates write that no declaration read
    _dsml("gigachat35", "GCML", ("TOOL_CALLS",), aliases=("gigachat3_5",),
          doc='<｜GCML｜tool_calls><｜GCML｜invoke name="NAME"><｜GCML｜parameter name="K" string="true">V</｜GCML｜parameter>… '
                "(GigaChat 3.5: DeepSeek's DSML under another namespace)"),
    Dialect("granite_20b_fc", (Opener(marker("granite_20b_fc", "_OPEN"), head=(ws(),), look=(peek("{"),)),), JSON, json_calls,
            "granite_20b_fc",
            aliases=("granite-20b-fc",), doc='<function_call> {"name", "arguments"}, no closer, one per line'),
    xml_dialect("dots", _INVOKE, wrapper=_DOTS, source=_DOTS_SOURCE,
                doc='<dots_function_call><invoke name="NAME"><parameter name="K">V</parameter></invoke></dots_function_call> '
                    "(rednote dots; quotes around names optional)"),
    Dialect("dots_json", (_json_tag(_DOTS[0], start="{"),), JSON, json_calls, "dots_json",
            end=(_DOTS[1],), doc='<dots_function_call>{"name", "arguments"|"parameters"}</dots_function_call>'),
    kv_dialect("hy3", _HY3, opener=f"<tool_calls{_HY}>", closer=f"</tool_calls{_HY}>", source=_HY3_SOURCE,
               aliases=("hy_v3", "hunyuan_v3"),
               doc=f"<tool_calls{_HY}><tool_call{_HY}>NAME<tool_sep{_HY}><arg_key{_HY}>K</arg_key{_HY}>"
                   f"<arg_value{_HY}>V</arg_value{_HY}></tool_call{_HY}></tool_calls{_HY}> (Tencent Hy3)"),
    kv_dialect("longcat_xml", _LONGCAT, opener=_LONGCAT_TAGS[0], closer=_LONGCAT_TAGS[1], source=_LONGCAT_SOURCE,
               doc="<longcat_tool_call>NAME<longcat_arg_key>K</longcat_arg_key><longcat_arg_value>V</longcat_arg_value>"
                   "</longcat_tool_call> (LongCat-Flash-Thinking-2601, Flash-Lite, the LongCat API)"),
    Dialect("longcat", (_json_tag(_LONGCAT_TAGS[0]),), JSON, json_calls, "longcat", end=(_LONGCAT_TAGS[1],),
            several=True, separators=",", aliases=("longcat_flash",),
            doc='<longcat_tool_call>{"name", "arguments"}</longcat_tool_call> (LongCat-Flash-Chat)'),
    Dialect("minimax_m3", tuple(Opener(o, head=(ws(),), look=(lit(marker("minimax_m3", "_INVOKE")),))
                                for o in markers("minimax_m3", "_CALLS", "_BARE_CALLS")),  # (a server may strip the first NS)
            TAGGED, minimax_m3_calls, "minimax_m3", end=markers("minimax_m3", "_CALLS_END"),
            item=pair("minimax_m3", "_INVOKE", "_INVOKE_END"),
            text_values=True, value_layout=False, aliases=("minimax-m3",),
            doc=f'{_M3}<tool_call>{_M3}<invoke name="NAME">{_M3}<KEY>V{_M3}</KEY>…{_M3}</invoke>{_M3}</tool_call> '
                "(every tag after the namespace marker; objects as nested tags, arrays as <item> tags)"),
    Dialect("plamo3", (Opener(marker("plamo3", "_REQUESTS"), head=(ws(),), look=(lit(marker("plamo3", "_BEGIN")),)),),
            TAGGED, plamo3_calls, "plamo3", end=markers("plamo3", "_REQUESTS_END"),
            item=pair("plamo3", "_BEGIN", "_END"), json_strings=True,
            aliases=("plamo",), doc="<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>"
                                    "<|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>"
                                    "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{…}"
                                    "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>…"),
    Dialect("command_r", (Opener(marker("command_r", "_ACTION"), line_start=True, head=(ws(), lit(marker("command_r", "_FENCE")),
                                                                                       ws()), look=(peek("["),)),), JSON,
            cohere_calls, "command_r", closers=markers("command_r", "_FENCE_CLOSE"), aliases=("command_r_plus", "cohere_classic"),
            doc='Action:\n```json\n[{"tool_name", "parameters"}]``` at a line start (classic Command-R / R+)'),
    kv_dialect("k2_horizon", _IFM, opener="<ifm|tool_calls>", closer="</ifm|tool_calls>", source=_IFM_SOURCE,
               aliases=("ifm", "k2_v3"),
               doc="<ifm|tool_calls><ifm|tool_call>NAME<ifm|arg_key>K</ifm|arg_key><ifm|arg_value>V</ifm|arg_value>"
                   "</ifm|tool_call></ifm|tool_calls> (K2 Horizon's IFM, xml flavour)"),
    Dialect("solar_open", (Opener(marker("solar_open", "_CALLS"), head=(ws(),), look=(lit(_SOLAR_CALL),)),
                           Opener(_SOLAR_CALL, keep=len(_SOLAR_CALL))),  # the wrapper is optional (Upstage's parser)
            TAGGED, solar_open_calls, "solar_open", end=markers("solar_open", "_CALLS_END"),
            item=(_SOLAR_CALL, marker("solar_open", "_END")),
            eos_ends=True, json_strings=True, aliases=("solar", "solar_open_100b"),
            doc="<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>…<|calls|>"),
    xml_dialect("minicpm5", _MINICPM5, wrapper=None, bare=True, stream=False, source=_MINICPM5_SOURCE,
                doc='<function name="NAME"><param name="K">V</param></function> (CDATA around values holding markup)'),
)

SPANS: tuple[Span, ...] = (
    Span("<think>", ("</think>",)),
    Span("<seed:think>", ("</seed:think>",), dialect="seed_oss"),
    Span(marker("openai", "_ANALYSIS"), markers("openai", "_END"), dialect="openai"),
    Span(marker("openai", "_FINAL"), markers("openai", "_RETURN", "_END"), kind="content", dialect="openai"),
    Span(marker("openai", "_COMMENTARY"), markers("openai", "_END"), kind="content", dialect="openai"),
    Span(marker("openai", "_ASSISTANT"), kind="drop", dialect="openai"),
    Span(marker("cohere", "_THINKING"), markers("cohere", "_THINKING_END"), dialect="cohere"),
    Span(marker("cohere", "_RESPONSE"), markers("cohere", "_RESPONSE_END"), kind="content", dialect="cohere"),
    Span(marker("cohere", "_TEXT"), markers("cohere", "_TEXT_END"), kind="content", dialect="cohere"),  # Cohere2MoE's
    # Apriel 1.6: its generation prompt opens plain-text reasoning, which the model ends with [BEGIN FINAL RESPONSE]
    # (its calls are hunyuan's). The opener is the prompt's whole tail, so prose never looks like it.
    Span(marker("hunyuan", "_APRIEL_REASONING"), markers("hunyuan", "_APRIEL_REASONING_END"), dialect="hunyuan"),
    Span(marker("kimi_k3", "_THINK"), markers("kimi_k3", "_THINK_END"), dialect="kimi_k3"),
    Span(marker("kimi_k3", "_RESPONSE"), markers("kimi_k3", "_RESPONSE_END"), kind="content", dialect="kimi_k3"),
    Span(marker("kimi_k3", "_MESSAGE_END"), kind="drop", dialect="kimi_k3"),
    Span(marker("mistral_v11", "_THINK"), markers("mistral_v11", "_THINK_END"), dialect="mistral_v11"),  # Magistral, Ministral 3
    Span(marker("gemma4", "_THOUGHT"), markers("gemma4", "_CHANNEL_END"), dialect="gemma4"),  # Gemma 4 thinking
    Span(marker("functionary_v32", "_ALL"), kind="drop", dialect="functionary_v32"),  # Functionary's content recipient: the text is content
    Span(f"<think{_HY}>", (f"</think{_HY}>",), dialect="hy3"),
    Span(f"<｜hy_eos{_HY}｜>", kind="drop", dialect="hy3"),  # end of turn, when a server leaves it in
    Span("<longcat_think>", ("</longcat_think>",), dialect="longcat_xml"),
    Span("<ifm|think>", ("</ifm|think>",), dialect="k2_horizon"),  # three tags, by reasoning effort
    Span("<ifm|think_fast>", ("</ifm|think_fast>",), dialect="k2_horizon"),
    Span("<ifm|think_faster>", ("</ifm|think_faster>",), dialect="k2_horizon"),
    Span(marker("apertus", "_THINK"), markers("apertus", "_THINK_END"), dialect="apertus"),  # Apertus 1.5's reasoning
    Span(marker("plamo3", "_THINK"), markers("plamo3", "_THINK_END"), dialect="plamo3"),
    Span(marker("plamo3", "_TURN_END"), kind="drop", dialect="plamo3"),  # end of turn, when a server leaves it in
    Span(marker("minimax_m3", "_THINK"), markers("minimax_m3", "_THINK_END"), dialect="minimax_m3"),
    # (its closer alone begins an answer without reasoning: the template's prefix)
    Span(marker("minimax_m3", "_THINK_END"), kind="drop", dialect="minimax_m3"),
    Span(marker("minimax_m3", "_TURN_END"), kind="drop", dialect="minimax_m3"),  # end of turn, when a server leaves it in
    Span(marker("solar_open", "_THINK"), markers("solar_open", "_END_MESSAGE"), dialect="solar_open"),  # its own message
    Span(marker("solar_open", "_ASSISTANT"), kind="drop", dialect="solar_open"),  # the next message's header
    Span(marker("solar_open", "_CONTENT"), kind="drop", dialect="solar_open"),
    Span(marker("solar_open", "_FLUSH"), kind="drop", dialect="solar_open"),  # ends content before calls
    Span(marker("solar_open", "_END_MESSAGE"), kind="drop", dialect="solar_open"),  # ends a content message
    Span(f"{_ASSISTANT_TO}self{_MESSAGE}", ("<|eom|>", "<|eot|>"), dialect="atem"),  # reasoning: to itself
    Span(f"{_TO}self{_MESSAGE}", ("<|eom|>", "<|eot|>"), dialect="atem"),  # (at a line start: right after the prompt)
    Span(f"{_ASSISTANT_TO}user{_MESSAGE}", ("<|eot|>", "<|eom|>"), kind="content", dialect="atem"),
    Span(f"{_TO}user{_MESSAGE}", ("<|eot|>", "<|eom|>"), kind="content", dialect="atem"),
    Span("<|eom|>", kind="drop", dialect="atem"),  # ends a message another follows (after a call)
    Span("<|eot|>", kind="drop", dialect="atem"),  # ends the turn, when a server leaves it in
)

DIALECTS: dict[str, Dialect] = {d.name: d for d in _DECLARATIONS}
"""Every dialect streamparse reads, by its canonical name (`"hermes"`, `"llama3_json"`, ...): the names
`dialects=` and `--dialect` take, listed on the Dialects page."""
ALIASES: dict[str, str] = {a: d.name for d in _DECLARATIONS for a in d.aliases}
"""Other names a dialect answers to (an engine's parser name, a model family's), each mapped to the canonical
name: `ALIASES["qwen25"] == "hermes"`."""
REGISTRY = Registry(DIALECTS, SPANS, ALIASES)


def resolve(names: object) -> list[str]:
    """Canonical names for ``dialects=`` / ``--dialect`` / config values (aliases accepted)."""
    return REGISTRY.resolve(names)


def warm_up() -> None:
    """Build every grammar now (about 15 ms each), so no first call pays for it; servers call this at start-up. (A
    grammar's compiled program, ``grammar_program``, is built on its first item: 1-75 ms once per process.)"""
    for grammar in {d.grammar for d in DIALECTS.values()} | {"relaxed_json"}:
        load_grammar(grammar)

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
