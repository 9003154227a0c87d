"""Every script in examples/ runs as the docs show it, so no example can rot.

The in-code example runs as is; the client examples run against a real `streamparse serve --demo` process
(the command the README gives), reached on loopback. README shows the in-code example verbatim, and the docs
pages include every example file itself (mkdocs snippets), which these tests check too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamparse.proxy.runner import free_port

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_example(name: str, **env: str) -> str:
    return run_example_with(name, **env)


def run_example_with(name: str, *args: str, **env: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def demo_proxy() -> Iterator[str]:
    """`streamparse serve --demo --port N` as its own process, as a reader of the README would start it."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamparse", "serve", "--demo", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            assert time.monotonic() < deadline, "streamparse serve --demo did not start"
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_every_example_is_run_by_a_test_here() -> None:
    tested = set(re.findall(r'run_example(?:_with)?\("([\w.]+)"', Path(__file__).read_text()))
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested


def test_in_code_example_streams_the_call_and_the_text_around_it() -> None:
    out = run_example("in_code.py").splitlines()
    assert out[0] == "text: 'Let me check. '"  # released before the split marker completes
    assert "call: get_weather {'city': 'Paris', 'days': 3}" in out
    assert out.index("call: get_weather {'city': 'Paris', 'days': 3}") < out.index("text: ' Anything else?'")
    assert any(line.startswith("note: coerced") for line in out)  # "3" became 3, and it says so
    assert out[-1] == """whole: 'Let me check.  Anything else?' [('get_weather', '{"city": "Paris", "days": 3}')]"""


def test_openai_chunks_example_turns_text_markup_into_tool_call_chunks() -> None:
    out = run_example("openai_chunks.py").splitlines()
    assert json.loads(out[0]) == {"index": 0, "delta": {"content": "Checking.\n"}, "finish_reason": None}
    call = json.loads(out[1])["delta"]["tool_calls"][0]
    assert (call["function"], call["type"]) == ({"name": "get_weather", "arguments": '{"city": "Rome"}'}, "function")
    assert json.loads(out[2])["finish_reason"] == "tool_calls"
    assert out[3] == 'tool_calls {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}'


def test_stream_arguments_example_sends_pieces_that_join_to_the_arguments() -> None:
    out = run_example("stream_arguments.py").splitlines()
    assert out[0] == "start: write_file"
    assert sum(line.startswith("piece: ") for line in out) >= 2  # before the call closed
    assert out[-1] == "call: write_file {'path': 'a.py', 'content': 'print(1)\\nprint(2)\\n'} True"


def test_async_example_reads_a_pythonic_call_split_across_deltas() -> None:
    assert run_example("async_stream.py").splitlines() == [
        "text: 'Searching.\\n'", "call: search {'query': 'lark grammars'}", "text: '\\nDone.'"]


def test_constraints_example_builds_each_backends_fields() -> None:
    out = run_example("constraints.py").splitlines()
    assert out[:3] == ["llamacpp ['grammar']", "vllm ['response_format']", "sglang ['ebnf']"]
    assert out[3].startswith("root ::= ")


def test_openai_client_example_gets_tool_calls_through_the_demo_proxy(demo_proxy: str) -> None:
    out = run_example("openai_client.py", STREAMPARSE_URL=demo_proxy)
    assert '[tool_call 0] get_weather({"city": "Paris", "metric": true})' in out
    assert '[tool_call 1] get_weather({"city": "Oslo", "days": 2})' in out
    assert "Done; <b>HTML</b> and a < b stay text." in out  # text after the calls is kept
    assert "<tool_call>" not in out
    assert out.rstrip().endswith("finish_reason: tool_calls")


def test_anthropic_client_example_gets_tool_use_blocks_through_the_demo_proxy(demo_proxy: str) -> None:
    out = run_example("anthropic_client.py", STREAMPARSE_URL=demo_proxy).splitlines()
    uses = [line for line in out if line.startswith("tool_use: toolu_")]
    assert [u.split(" ", 2)[2] for u in uses] == ["get_weather {'city': 'Paris', 'metric': True}",
                                                   "get_weather {'city': 'Oslo', 'days': 2}"]
    assert out[0] == "text: 'Sure, checking two cities.\\n'"
    assert out[-1] == "stop_reason: tool_use"


def test_readme_shows_the_in_code_example_as_it_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert (EXAMPLES / "in_code.py").read_text() in readme


def test_docs_include_every_example_file() -> None:
    docs = "".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    included = set(re.findall(r'--8<-- "examples/([\w.]+)"', docs))
    assert included == {p.name for p in EXAMPLES.glob("*.py")}


def test_the_chat_template_example_reads_a_real_template() -> None:
    from template_files import llama_cpp_templates  # (downloaded once and cached; skips saying why when it cannot)

    out = run_example_with("chat_template.py", str(llama_cpp_templates() / "Qwen3.5-4B.jinja")).splitlines()
    assert out[:3] == ["format: qwen3_coder", "starts in reasoning: True", "stop tokens: ('<|im_end|>',)"]
    assert out[-2:] == ["reasoning: 'The user wants the weather.\\n'", "calls: [('get_weather', {'city': 'Paris'})]"]


def test_every_python_block_in_the_docs_is_an_example_file() -> None:
    """A block of Python in README or docs/ is an examples/ file (included, or in README copied whole)."""
    examples = {p.read_text() for p in EXAMPLES.glob("*.py")}
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S):
            assert block in examples or re.fullmatch(r'--8<-- "examples/[\w.]+"\n', block), (page.name, block[:80])


def test_responses_client_example_gets_function_calls_through_the_demo_proxy(demo_proxy: str) -> None:
    out = run_example("responses_client.py", STREAMPARSE_URL=demo_proxy)
    calls = re.findall(r"\[function_call call_\w+\] (.*)", out)
    assert calls == ['get_weather({"city": "Paris", "metric": true})', 'get_weather({"city": "Oslo", "days": 2})']
    assert "Done; <b>HTML</b> and a < b stay text." in out and "<tool_call>" not in out
    assert out.rstrip().endswith("status: completed; items: ['message', 'function_call', 'function_call', 'message']")


def test_agents_sdk_example_runs_a_tool_loop_through_the_demo_proxy(demo_proxy: str) -> None:
    out = run_example("agents_sdk.py", STREAMPARSE_URL=demo_proxy).splitlines()
    assert sorted(out[:2]) == ["[tool] get_weather(city='Oslo', metric=True, days=2)",  # run concurrently
                               "[tool] get_weather(city='Paris', metric=True, days=1)"]
    assert out[-1].startswith("final: The tools answered: ") and "sunny in" in out[-1]
