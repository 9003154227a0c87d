"""vLLM's own OpenAI-compatible server (``build_and_serve``: its FastAPI app, its three fronts, its parsers) in
front of a scripted engine client instead of a model: the answers are written in a JSON file, and the engine
streams each one token by token, as ``RequestOutput``s, the way vLLM's engine does (delta outputs, detokenized
with the request's ``skip_special_tokens``).

Run by tests/integrations/test_vllm_serving.py with the engines environment's python (engine_env.py):

    python vllm_scripted_server.py ANSWERS.json RECORD.jsonl -- --model DIR --port N [vllm serve flags]

The answer for a request is the one whose key appears as ``[case KEY]`` last in the rendered prompt. Each request
appends one JSON line to RECORD: the case, the sampling parameters the engine was given, the prompt's tail.
Only the loopback interface is served.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any, AsyncGenerator

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")  # no accelerator here: vLLM's CPU platform, never used to compute

from vllm.config import VllmConfig  # noqa: E402
from vllm.engine.arg_utils import AsyncEngineArgs  # noqa: E402
from vllm.engine.protocol import EngineClient  # noqa: E402
from vllm.entrypoints.common.cli_args import (make_arg_parser, validate_api_server_args,  # noqa: E402
                                              validate_parsed_serve_args)
from vllm.entrypoints.launchers.api_server.entry import build_and_serve  # noqa: E402
from vllm.entrypoints.launchers.launcher import setup_server  # noqa: E402
from vllm.outputs import CompletionOutput, RequestOutput  # noqa: E402
from vllm.plugins import load_general_plugins  # noqa: E402
from vllm.renderers import renderer_from_config  # noqa: E402
from vllm.sampling_params import RequestOutputKind, SamplingParams  # noqa: E402
from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402
from vllm.v1.engine.input_processor import InputProcessor  # noqa: E402

_CASE = re.compile(r"\[case ([\w-]+)\]")


class ScriptedEngine(EngineClient):
    """An engine client whose model is a file of answers."""

    def __init__(self, vllm_config: VllmConfig, answers: dict[str, str], record: str):
        self.vllm_config = vllm_config
        self.model_config = vllm_config.model_config
        self.renderer = renderer_from_config(self.vllm_config)
        self.input_processor = InputProcessor(self.vllm_config, self.renderer)
        self._answers = answers
        self._record = record
        self._tokenizer = self.renderer.tokenizer

    # ------------------------------------------------------------------ what the server asks

    async def generate(self, prompt: Any, sampling_params: SamplingParams, request_id: str, **_: Any
                       ) -> AsyncGenerator[RequestOutput, None]:
        prompt_ids = list(prompt.get("prompt_token_ids") or []) if isinstance(prompt, dict) else []
        rendered = self._tokenizer.decode(prompt_ids, skip_special_tokens=False)
        cases = _CASE.findall(rendered)
        answer = self._answers[cases[-1]] if cases else ""
        ids = self._tokenizer.encode(answer, add_special_tokens=False)
        skip = sampling_params.skip_special_tokens
        with open(self._record, "a", encoding="utf-8") as out:
            out.write(json.dumps({"case": cases[-1] if cases else None, "skip_special_tokens": skip,
                                  "prompt_tail": rendered[-200:]}) + "\n")
        delta = sampling_params.output_kind == RequestOutputKind.DELTA
        said = ""
        for i in range(1, len(ids) + 1):
            text = self._tokenizer.decode(ids[:i], skip_special_tokens=skip)
            last = i == len(ids)
            if delta or last:
                piece = text[len(said):] if delta else text
                out_ids = ids[i - 1:i] if delta else ids
                said = text
                yield RequestOutput(
                    request_id=request_id, prompt=rendered, prompt_token_ids=prompt_ids, prompt_logprobs=None,
                    outputs=[CompletionOutput(index=0, text=piece, token_ids=out_ids, cumulative_logprob=None,
                                              logprobs=None, finish_reason="stop" if last else None)],
                    finished=last)
                await asyncio.sleep(0)

    async def get_supported_tasks(self) -> tuple[Any, ...]:
        return ("generate",)

    @property
    def is_running(self) -> bool:
        return True

    @property
    def is_stopped(self) -> bool:
        return False

    @property
    def errored(self) -> bool:
        return False

    @property
    def dead_error(self) -> BaseException:
        return RuntimeError("the scripted engine does not die")

    async def check_health(self) -> None:
        return None

    async def do_log_stats(self) -> None:
        return None

    async def is_tracing_enabled(self) -> bool:
        return False

    async def abort(self, request_id: Any) -> None:
        return None

    def shutdown(self, timeout: float | None = None) -> None:
        self.renderer.shutdown()

    # ------------------------------------------------------------------ what it never asks here

    def _not_scripted(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError("not part of the scripted engine")

    encode = notify_kv_transfer_request_rejected = start_profile = stop_profile = _not_scripted
    reset_mm_cache = reset_encoder_cache = reset_prefix_cache = sleep = wake_up = is_sleeping = _not_scripted
    release_kv_cache_memory = add_lora = pause_generation = resume_generation = is_paused = _not_scripted


async def main(answers_path: str, record: str, argv: list[str]) -> None:
    load_general_plugins()  # what `vllm serve` does before it validates: the entry points, streamparse's among them
    args = make_arg_parser(FlexibleArgumentParser()).parse_args(argv)
    validate_parsed_serve_args(args)
    with open(answers_path, encoding="utf-8") as f:
        answers = json.load(f)
    # the engine's configuration as `vllm serve` makes it (this also settles --reasoning-parser into
    # args.structured_outputs_config, where the API server reads it)
    vllm_config = AsyncEngineArgs.from_cli_args(args).create_engine_config()
    validate_api_server_args(args)
    engine = ScriptedEngine(vllm_config, answers, record)
    listen_address, sock = setup_server(args, reuse_port=False)
    shutdown = await build_and_serve(engine, listen_address, sock, args)
    await shutdown


if __name__ == "__main__":
    split = sys.argv.index("--")
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[split + 1:]))
