"""`streamparse serve`'s operating flags: `--demo` with `--upstream` refused, a mistyped flag named, the new server
settings handed on; the demo's log lines labelled `[proxy]` / `[replay]`, and its answer to a tool result is text
(a real `serve --demo` process)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from openai import OpenAI

from streamparse.cli import main
from streamparse.proxy.config import ConfigError
from streamparse.proxy.runner import free_port, port_open
from streamparse.proxy.workers import config_from_settings


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


def test_demo_with_an_upstream_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--demo", "--upstream", "http://127.0.0.1:8000/v1"]) == 2
    assert _one_line(capsys) == ("streamparse serve: --demo brings its own upstream; give --demo or --upstream, "
                                 "not both")
    assert main(["serve", "--demo", "--config", "proxy.toml"]) == 2
    assert "give --demo or --config" in _one_line(capsys)


def test_a_mistyped_serve_flag_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--upstreem", "http://127.0.0.1:8000/v1"]) == 2
    assert _one_line(capsys) == ("streamparse serve: unknown option --upstreem (did you mean '--upstream'?); "
                                 "see streamparse serve --help")
    assert main(["serve", "--demo", "--cors-orgins=*", "--log-fromat", "json"]) == 2
    line = _one_line(capsys)
    assert "'--cors-origins' for '--cors-orgins'" in line and "'--log-format' for '--log-fromat'" in line
    with pytest.raises(SystemExit):  # argparse's own check of a choice stays
        main(["serve", "--demo", "--log-format", "xml"])
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_cors_and_log_format_settings_reach_the_config() -> None:
    config = config_from_settings({"upstream": "http://127.0.0.1:8000/v1",
                                   "server": {"cors_origins": "http://localhost:3000, https://app.example.com",
                                              "log_format": "json"}})
    assert config.cors_origins == ["http://localhost:3000", "https://app.example.com"] and config.log_format == "json"
    with pytest.raises(ConfigError, match="cors_origins: 'localhost:3000/app' is not an origin"):
        config_from_settings({"upstream": "http://127.0.0.1:8000/v1", "server": {"cors_origins": "localhost:3000/app"}})
    with pytest.raises(ConfigError, match="did you mean 'json'"):
        config_from_settings({"upstream": "http://127.0.0.1:8000/v1", "server": {"log_format": "jsn"}})


def test_the_demo_labels_its_two_servers_lines_and_answers_a_tool_result(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "log"
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "streamparse", "serve", "--demo", "--port", str(port)],
                                stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while not port_open(port) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert port_open(port), log.read_text()
            client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-demo", max_retries=0)
            tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
            answer = client.chat.completions.create(model="hermes", tools=tools, messages=[  # type: ignore[arg-type]
                {"role": "user", "content": "weather in Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "12 C and sunny"}])
            assert answer.choices[0].message.content == "The tools answered: 12 C and sunny"
            assert not answer.choices[0].message.tool_calls and answer.choices[0].finish_reason == "stop"
        finally:
            proc.terminate()
            proc.wait(30)
    lines = [line for line in log.read_text().splitlines() if "POST /v1/chat/completions" in line]
    assert len(lines) == 2, lines  # once as the proxy answered it, once as the replay upstream did
    assert "[proxy]" in lines[0] + lines[1] and "[replay]" in lines[0] + lines[1]
    assert all(("[proxy]" in line) != ("[replay]" in line) for line in lines)
