"""The command line's finish: --version from package metadata, help text on every option, "did you mean" for a
typo'd dialect or config key, --chunk 0 refused; and the LICENSE file says what pyproject.toml declares."""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from streamparse.cli import DISTRIBUTION, build_parser, main
from streamparse.proxy.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parent.parent


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the command line, expect exit status 2 (argparse's or ours) and return stderr."""
    try:
        status = main(list(argv), out=io.StringIO())
    except SystemExit as exc:
        status = exc.code  # type: ignore[assignment]
    assert status == 2
    return capsys.readouterr().err


def test_version_comes_from_package_metadata() -> None:
    done = subprocess.run([sys.executable, "-m", "streamparse", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"streamparse {importlib.metadata.version(DISTRIBUTION)}"


def test_the_distribution_name_is_pyprojects() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["name"] == DISTRIBUTION != "streamparse"  # PyPI's streamparse is another project


def test_every_option_has_help() -> None:
    parsers = [build_parser()]
    parsers += [p for action in parsers[0]._actions if isinstance(action, argparse._SubParsersAction)
                for p in action.choices.values()]
    missing = [f"{p.prog} {'/'.join(a.option_strings) or a.dest}" for p in parsers for a in p._actions
               if not a.help and not isinstance(a, argparse._SubParsersAction)]
    assert missing == []


@pytest.mark.parametrize("command", ["parse", "serve"])
def test_a_typod_dialect_gets_a_suggestion(capsys: pytest.CaptureFixture[str], command: str) -> None:
    err = fails(capsys, command, "--dialect", "hermez", "--upstream", "http://127.0.0.1:9/v1") if command == "serve" \
        else fails(capsys, command, "--dialect", "qwen3_codr", "-")
    assert "did you mean" in err and ("'hermes'" in err or "'qwen3_coder'" in err)


def test_chunk_zero_or_less_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    for value in ("0", "-3"):
        err = fails(capsys, "parse", "--example", "hermes", "--chunk", value)
        assert err.strip() == f"streamparse parse: --chunk must be a positive number of characters, not {value}"


@pytest.mark.parametrize("toml,hint", [
    ('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\nmodel = ["x"]\n', "did you mean 'models'?"),
    ('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\ndialects = ["hermez"]\n', "did you mean 'hermes'?"),
    ('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\ntool_prompt = "qwen3_codr"\n', "did you mean 'qwen3_coder'?"),
    ('[server]\nprot = 1\n[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n', "did you mean 'port'?"),
    ('[server]\ndrain_timout = 1\n[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n', "did you mean 'drain_timeout'?"),
    ('[backend.a]\nupstream = "http://127.0.0.1:9/v1"\n', "did you mean 'backends'?"),
])
def test_config_typos_get_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str,
                                       hint: str) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match=hint.replace("?", r"\?")):
        load_config(str(path))
    err = fails(capsys, "serve", "--config", str(path))  # the same, as one line from the command
    assert err.count("\n") == 1 and hint in err


def test_license_file_matches_pyproject() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'license = {text = "MIT"}' in pyproject or 'license = "MIT"' in pyproject
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


def test_serve_system_messages_flag_reaches_the_backend(monkeypatch: Any, capsys: Any, tmp_path: Any) -> None:
    from streamparse import cli
    from streamparse.cli import serve as serve_command
    from streamparse.proxy.config import ConfigError
    from streamparse.proxy.workers import config_from_settings

    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(serve_command, "_serve", lambda settings, level, out: seen.append(settings) or 0)
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--system-messages", "fold"]) == 0
    assert config_from_settings(seen[-1]).backends[0].system_messages == "fold"
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1"]) == 0
    assert config_from_settings(seen[-1]).backends[0].system_messages == "inline"
    with pytest.raises(SystemExit):
        cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--system-messages", "merge"])
    with pytest.raises(ConfigError, match="system_messages must be one of .*did you mean 'fold'"):
        config_from_settings({"upstream": "http://127.0.0.1:9/v1", "backend": {"system_messages": "folded"}})
