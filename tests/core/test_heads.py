"""Reading an opener's head (``scanner.match_head``): a head matched, the text ending inside one, or not one."""

from __future__ import annotations

from streamparse.core.heads import PARTIAL, HeadMatch
from streamparse.core.head_match import match_head
from streamparse.core.scanner import marker_table
from streamparse.dialects import DIALECTS
from streamparse.dialects.spec import Opener, lit, name


def test_a_head_is_matched_waited_for_or_refused() -> None:
    table = marker_table(("qwen3_coder",), ("get_weather",), False)
    qwen = DIALECTS["qwen3_coder"].openers[0]
    assert match_head(qwen, "<tool_call>\n<fu", 11, False, table) == PARTIAL
    assert match_head(qwen, "<tool_call>\n<fu", 11, True, table) is None  # the stream ended: no head
    assert match_head(qwen, "<tool_call>\n<FUNCTION=x", 11, False, table) == HeadMatch(12, None)  # the look stays
    assert match_head(qwen, "<tool_call>\n<div>", 11, False, table) is None
    assert match_head(qwen, "<tool_call>" + " " * 33 + "<function=", 11, False, table) is None  # too much space


def test_a_gated_name_in_a_head_is_a_declared_tool_s_and_named_as_declared() -> None:
    table = marker_table(("qwen3_coder",), ("get_weather",), False)
    named = Opener("<n>", head=(name(gated=True),), look=(lit(">"),))
    assert match_head(named, "GET_WEATHER>", 0, False, table) == HeadMatch(11, "get_weather")
    assert match_head(named, "get_wea", 0, False, table) == PARTIAL
    assert match_head(named, "getx", 0, False, table) is None
    assert match_head(named, "other>", 0, False, table) is None
