"""The command line: built-in examples and files, human and JSON output."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from streamparse.cli import main
from streamparse.harness.examples import EXAMPLES


def run(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0
    return out.getvalue()


def test_builtin_example_prints_calls() -> None:
    text = run("--example", "qwen3_xml")
    assert "tool_call #0 get_weather" in text and '"days": 3' in text
    assert "tool_call #1 write_file" in text


def test_json_output_round_trips(tmp_path) -> None:
    source = tmp_path / "out.txt"
    source.write_text(EXAMPLES["mixed"], encoding="utf-8")
    tools = tmp_path / "tools.json"
    from streamparse.harness.examples import EXAMPLE_TOOLS

    tools.write_text(json.dumps({"tools": EXAMPLE_TOOLS}), encoding="utf-8")
    lines = [json.loads(line) for line in run("parse", str(source), "--tools", str(tools), "--json", "--chunk", "3").splitlines()]
    names = [e["name"] for e in lines if e["type"] == "tool_call"]
    assert names == ["get_weather", "search_recipes", "search_recipes", "get_weather"]
    assert "".join(e["text"] for e in lines if e["type"] == "text") == "Small models answer in many shapes:\n\n\n\nThat is all."


def test_module_entry_point_reads_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamparse", "-", "--json"],
        input='Hi <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>',
        capture_output=True, text=True, check=True, timeout=60,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["type"] for e in events] == ["text", "tool_call"]
    assert events[1]["name"] == "f" and json.loads(events[1]["arguments"]) == {"x": 1}


# ----------------------------------------------------------------------------- ordinary mistakes: one line, status 2

def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the command in-process; it must exit 2 with exactly one line on stderr, and return that line."""
    out = io.StringIO()
    assert main(list(argv), out=out) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("streamparse"), err
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "out.txt").write_text(EXAMPLES["hermes"], encoding="utf-8")
    (tmp_path / "nul.bin").write_bytes(b"text\x00with a NUL")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "adir").mkdir()
    return tmp_path


@pytest.mark.parametrize("argv, expected", [
    (["parse", "{d}/missing.txt"], ["streamparse parse: cannot read", "missing.txt", "No such file"]),
    (["{d}/missing.txt"], ["streamparse: cannot read", "No such file"]),
    (["{d}/adir"], ["streamparse: ", "adir", "is a directory"]),
    (["{d}/nul.bin"], ["nul.bin", "binary", "NUL"]),
    (["parse", "{d}/latin1.txt"], ["streamparse parse: ", "latin1.txt", "not UTF-8", "offset 3"]),
])
def test_unusable_model_output_file(capsys: pytest.CaptureFixture[str], files: Path, argv: list[str],
                                    expected: list[str]) -> None:
    line = fails(capsys, *[a.format(d=files) for a in argv])
    assert all(part in line for part in expected), line


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    path = files / "secret.txt"
    path.write_text("x", encoding="utf-8")
    path.chmod(0)
    assert "Permission denied" in fails(capsys, str(path))


TOOLS_FILES: list[tuple[str, str]] = [
    ("not json", "is not JSON"),
    ('"x"', "expected a JSON list of tools, or an object with a 'tools' list; got \"x\""),
    ('{"model": "m"}', "expected a JSON list of tools"),
    ('{"tools": "x"}', "its tools are \"x\""),
    ("[1]", "tool #0 needs a 'function' object with a string 'name'"),
    ('[{"type": "function", "function": {"name": "ok"}}, {"type": "function", "function": {"nam": "f"}}]', "tool #1"),
    ('[{"type": "function", "function": {"name": 3}}]', "tool #0"),
    ('[{"type": "function", "function": "f"}]', "tool #0"),
]


@pytest.mark.parametrize("content, expected", TOOLS_FILES)
def test_bad_tools_file(capsys: pytest.CaptureFixture[str], files: Path, content: str, expected: str) -> None:
    tools = files / "tools.json"
    tools.write_text(content, encoding="utf-8")
    line = fails(capsys, str(files / "out.txt"), "--tools", str(tools))
    assert line.startswith(f"streamparse: {str(tools)!r}") and expected in line, line


def test_missing_tools_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    line = fails(capsys, "parse", str(files / "out.txt"), "--tools", str(files / "nope.json"))
    assert line.startswith("streamparse parse: cannot read") and "nope.json" in line


@pytest.mark.parametrize("tools", [
    [{"name": "get_weather", "parameters": {"type": "object"}}],             # bare function, as the parser takes
    [{"name": "get_weather", "input_schema": {"type": "object"}}],           # Anthropic
    {"tools": [{"type": "function", "function": {"name": "get_weather"}}]},  # a request body
    [],                                                                      # no tools: any name goes
])
def test_tools_the_parser_accepts_are_accepted(files: Path, tools: Any) -> None:
    path = files / "tools.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    assert "tool_call #0 get_weather" in run(str(files / "out.txt"), "--tools", str(path))


@pytest.mark.parametrize("word, hint", [("serv", "did you mean 'serve'?"), ("benchh", "did you mean 'bench'?"),
                                        ("frobnicate", "and no file of that name")])
def test_typo_in_command(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         word: str, hint: str) -> None:
    monkeypatch.chdir(tmp_path)
    line = fails(capsys, word, "--port", "80")
    assert line == f"streamparse: unknown command {word!r} ({hint}); commands: parse, serve, replay, demo, bench, conformance"


def test_an_existing_file_named_like_a_command_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serv").write_text(EXAMPLES["hermes"], encoding="utf-8")
    assert "tool_call #0 get_weather" in run("serv")


PROXY_LIMITS = "--proxy-concurrency and --proxy-rounds must be at least 1 and --proxy-delay at least 0"


@pytest.mark.parametrize("argv, expected", [
    (["--scenario", "nope"], "unknown scenario 'nope'; give prose, tool_heavy, dialects, scaling, engines, short, "
                             "construction, answers, dialect:NAME, mixed:NAME, short:NAME, answer:NAME, "
                             "construct:new:N or args:NAME:KB, where NAME is one of hermes, "),
    (["--scenario", "prose", "--scenario", "dialect:nope"], "unknown scenario 'dialect:nope'"),
    (["--scenario", "args:hermes:big"], "unknown scenario 'args:hermes:big'"),
    (["--chunk", "abc"], "--chunk must be a positive number of characters or 'random', not 'abc'"),
    (["--compare", "no_such_module_here:f"], "--compare no_such_module_here:f: no module 'no_such_module_here' in "),
    (["--compare", "nocolon"], "--compare nocolon: --compare wants module:callable"),
    (["--proxy", "--proxy-concurrency", "0"], PROXY_LIMITS),
    (["--proxy", "--proxy-delay", "-1"], PROXY_LIMITS),
    (["--proxy", "--proxy-rounds", "0"], PROXY_LIMITS),
])
def test_bench_refuses_before_running(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    line = fails(capsys, "bench", "--quick", *argv)
    assert line.startswith("streamparse bench: " + expected), line


def test_bench_proxy_rounds_default_to_two_and_are_documented_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    from streamparse.cli import build_parser

    assert build_parser().parse_args(["bench"]).proxy_rounds == 2
    assert build_parser().parse_args(["bench", "--proxy", "--proxy-rounds", "5"]).proxy_rounds == 5
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--help"])
    assert "--proxy-rounds N" in capsys.readouterr().out


def test_bench_accepts_every_scenario_run_suite_knows() -> None:
    from streamparse.harness.benchmark import RENDERERS, SCENARIOS
    from streamparse.cli import _known_scenario

    names = list(SCENARIOS) + [name for group in SCENARIOS.values() for name in group()]
    assert all(_known_scenario(name) for name in names)
    assert {f"dialect:{d}" for d in RENDERERS} <= set(names)
    assert not any(_known_scenario(n) for n in ("args:hermes:0", "args:nope:4", "dialect:", "scaling:", ""))


def test_serve_refuses_at_start_up(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    up = ["--upstream", "http://127.0.0.1:9/v1"]
    assert fails(capsys, "serve") == "streamparse serve: give --upstream URL, --config FILE or --demo"
    assert "upstream must be an http(s) URL" in fails(capsys, "serve", "--upstream", "not-a-url")
    assert fails(capsys, "serve", *up, "--port", "70000") == "streamparse serve: --port must be between 1 and 65535, not 70000"
    assert fails(capsys, "serve", *up, "--port", "0") == "streamparse serve: --port must be between 1 and 65535, not 0"
    assert fails(capsys, "serve", *up, "--workers", "0") == "streamparse serve: --workers must be at least 1, not 0"
    assert "missing.toml" in fails(capsys, "serve", "--config", str(tmp_path / "missing.toml"))
    config = tmp_path / "proxy.toml"
    config.write_text('[server]\nport = 70000\n[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    assert fails(capsys, "serve", "--config", str(config)) == "streamparse serve: [server] port must be at most 65535, not 70000"
    monkeypatch.delenv("STREAMPARSE_TEST_UNSET_KEY", raising=False)
    config.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\napi_key_env = "STREAMPARSE_TEST_UNSET_KEY"\n',
                      encoding="utf-8")
    line = fails(capsys, "serve", "--config", str(config))
    assert "'STREAMPARSE_TEST_UNSET_KEY'" in line and "not set" in line


def test_serve_and_replay_refuse_a_taken_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        line = fails(capsys, "serve", "--upstream", "http://127.0.0.1:9/v1", "--port", port)
        assert line.startswith(f"streamparse serve: cannot listen on 127.0.0.1:{port}: ") and "in use" in line
        assert "in use" in fails(capsys, "replay", "--port", port)


def test_argparse_usage_errors_still_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["parse", "--chunk"], ["serve", "--log-level", "loud"], ["bench", "--nope"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert "error:" in capsys.readouterr().err


# ----------------------------------------------------------------------------- stdin: terminal, pipe, nothing

class _Stdin(io.StringIO):
    def __init__(self, text: str, tty: bool) -> None:
        super().__init__(text)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_terminal_stdin_shows_the_builtin_example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin("", tty=True))
    text = run()
    assert text.startswith("# built-in example") and "tool_call #0 get_weather" in text


def test_piped_stdin_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(EXAMPLES["hermes"], tty=False))
    text = run()
    assert "built-in example" not in text and "tool_call #0 get_weather" in text


def test_empty_stdin_prints_usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin("", tty=False))
    out = io.StringIO()
    assert main([], out=out) == 2
    err = capsys.readouterr().err
    assert out.getvalue() == ""
    assert err.startswith("usage: streamparse") and "{parse,serve,replay,bench,demo,conformance}" in err
    assert err.splitlines()[-1] == "streamparse: nothing on stdin: give a FILE, pipe model output in, or try --example NAME"


def _streamparse(*argv: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamparse", *argv], capture_output=True, text=True, timeout=60, **kw)


def test_real_process_with_nothing_on_stdin_prints_usage() -> None:
    proc = _streamparse(stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "usage: streamparse" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("streamparse: nothing on stdin")


def test_real_process_typo_and_missing_file() -> None:
    for argv, line in [(["serv"], "streamparse: unknown command 'serv' (did you mean 'serve'?)"),
                       (["no/such/file.txt"], "streamparse: cannot read 'no/such/file.txt': No such file or directory")]:
        proc = _streamparse(*argv, stdin=subprocess.DEVNULL)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(line), proc.stderr


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """`streamparse big.txt | head -1`: no traceback, no "Exception ignored", status 2."""
    big = tmp_path / "big.txt"
    big.write_text("prose and more prose " * 50_000, encoding="utf-8")  # ~250k output lines: far past a pipe buffer
    proc = subprocess.Popen([sys.executable, "-m", "streamparse", str(big)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"text")
    proc.stdout.close()
    assert proc.wait(timeout=60) == 2
    assert proc.stderr.read() == b""


def test_serve_tool_prompt_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    up = ["serve", "--upstream", "http://127.0.0.1:9/v1"]
    assert "tool_prompt must name a dialect" in fails(capsys, *up, "--tool-prompt", "nope")
    config = tmp_path / "p.toml"
    config.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\ntool_prompt = "qwen3_xml"\n')
    assert fails(capsys, "serve", "--config", str(config), "--tool-prompt", "hermes") == (
        "streamparse serve: --tool-prompt goes with --upstream; in a config file set tool_prompt per backend")
    from streamparse.proxy.config import load_config
    from streamparse.proxy.workers import config_from_settings

    assert load_config(str(config)).backends[0].tool_prompt == "qwen3_coder"  # aliases accepted
    single = config_from_settings({"upstream": "http://127.0.0.1:9/v1",
                                   "backend": {"tool_prompt": "hermes", "tool_prompt_retry": True}})
    assert (single.backends[0].tool_prompt, single.backends[0].tool_prompt_retry) == ("hermes", True)


def test_bench_cut_short_by_head_ends_quietly() -> None:
    """`streamparse bench | head -3`: the reader goes away mid-run; nothing on stderr, status 2."""
    proc = subprocess.Popen([sys.executable, "-m", "streamparse", "bench", "--quick", "--no-engines", "--scenario",
                             "prose", "--scenario", "tool_heavy"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    assert [proc.stdout.readline() for _ in range(3)][1].startswith(b"== prose")
    proc.stdout.close()
    assert proc.wait(timeout=120) == 2
    assert proc.stderr.read() == b""


# ----------------------------------------------------------------------------- bench --compare and --plot

@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh current directory; sys.path restored, and the modules imported from it forgotten, afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", os.getcwd())])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def test_bench_compare_finds_a_module_in_the_current_directory(here: Path) -> None:
    (here / "my_echo_parser.py").write_text(
        "def parse(deltas):\n    return ''.join(deltas), []\n", encoding="utf-8")
    text = run("bench", "--quick", "--no-engines", "--scenario", "prose", "--compare", "my_echo_parser:parse")
    row = next(line for line in text.splitlines() if line.startswith("my_echo_parser:parse"))
    assert row.split()[-2:] == ["ok", "ok"]  # prose: no calls, the text handed back whole


@pytest.mark.parametrize("source, spec, expected", [
    ("x = 1\n", "my_mod_a:parse", "module 'my_mod_a' ("),
    ("parse = 3\n", "my_mod_b:parse", "has a non-callable 'parse'"),
    ("1 / 0\n", "my_mod_c:parse", "importing 'my_mod_c' failed: ZeroDivisionError: division by zero"),
    ("import no_such_dependency_here\n", "my_mod_d:parse", "importing 'my_mod_d' failed: No module named"),
    (None, "missing_mod_e:parse", "no module 'missing_mod_e' in "),
    (None, ":parse", "--compare wants module:callable"),
])
def test_bench_compare_mistakes_are_one_line(here: Path, capsys: pytest.CaptureFixture[str], source: str | None,
                                             spec: str, expected: str) -> None:
    if source is not None:
        (here / f"{spec.partition(':')[0]}.py").write_text(source, encoding="utf-8")
    err = fails(capsys, "bench", "--quick", "--scenario", "prose", "--compare", spec)
    assert "\n" not in err and err.startswith(f"streamparse bench: --compare {spec}: ") and expected in err, err


@pytest.mark.parametrize("path, scenario, expected", [
    ("plot.txt", "scaling", "--plot plot.txt: give a file ending in .png, .svg, .pdf"),
    ("no/such/dir/plot.png", "scaling", "--plot no/such/dir/plot.png: no folder 'no/such/dir'"),
    ("plot.svg", "prose", "--plot draws the scaling or engines scenario"),
])
def test_bench_plot_mistakes_are_refused_before_running(here: Path, capsys: pytest.CaptureFixture[str], path: str,
                                                        scenario: str, expected: str) -> None:
    pytest.importorskip("matplotlib")
    assert fails(capsys, "bench", "--scenario", scenario, "--plot", path).startswith(f"streamparse bench: {expected}")


@pytest.mark.parametrize("kind", ["png", "svg"])
def test_bench_plot_writes_the_file_named(here: Path, kind: str) -> None:
    pytest.importorskip("matplotlib")
    (here / "out").mkdir()
    text = run("bench", "--quick", "--no-engines", "--scenario", "args:hermes:1", "--plot", f"out/scaling.{kind}")
    assert text.rstrip().endswith(f"# plot written to out/scaling.{kind}")
    head = (here / "out" / f"scaling.{kind}").read_bytes()[:200]
    assert head.startswith(b"\x89PNG") if kind == "png" else b"<svg" in head
