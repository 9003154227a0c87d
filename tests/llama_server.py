"""What the opt-in real-model tests need to start llama-server: its binary, the model, and a readiness probe.
Each skips, saying what to set, when the binary or the model is not there."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest


def llama_binary() -> str:
    """``$LLAMA_SERVER``, else ``llama-server`` on the PATH."""
    path = os.environ.get("LLAMA_SERVER") or shutil.which("llama-server")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("no llama.cpp server: set LLAMA_SERVER to a llama-server binary (or put llama-server on PATH)")
    return path


def gguf_model() -> Path:
    """``$STREAMPARSE_GGUF``: Qwen2.5-Coder-0.5B-Instruct Q4_K_M (tests/proxy/test_real_model_tools.py says where
    it comes from)."""
    path = os.environ.get("STREAMPARSE_GGUF")
    if not path or not Path(path).is_file():
        pytest.skip("no model: set STREAMPARSE_GGUF to qwen2.5-coder-0.5b-instruct-q4_k_m.gguf "
                    "(see tests/proxy/test_real_model_tools.py)")
    return Path(path)


def answers(url: str) -> bool:
    """Does ``url`` answer 200 (llama-server's ``/health`` once the model is loaded)?"""
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
