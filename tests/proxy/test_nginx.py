"""Opt-in (`python -m pytest -m nginx`): nginx in front of two `streamparse serve` instances on loopback, with the
exact snippet docs/proxy.md gives. 200 concurrent streams from the real openai client, each identical to parse() of
the upstream's text; one instance gets SIGTERM mid-run and drains, and no client sees a cut or failed stream.

Needs nginx (Debian: `apt-get install -y nginx`); skipped in one line without it."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from openai import AsyncOpenAI

from helpers import TOOLS
from streamparse import StreamParser
from streamparse.core.events import TextDelta, ToolCall
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.runner import ServerThread, free_port, port_open, started_process

pytestmark = pytest.mark.nginx

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
PROXY_DOCS = Path(__file__).resolve().parents[2] / "docs" / "proxy.md"
TEXT = ("Checking both cities. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"
        " and <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call> done.")
STREAMS = 200


@pytest.fixture(autouse=True)
def opted_in(request: pytest.FixtureRequest) -> None:
    if "nginx" not in (request.config.getoption("-m") or ""):
        pytest.skip("opt-in: python -m pytest -m nginx")
    if NGINX is None:
        pytest.skip("nginx is not installed (Debian: apt-get install -y nginx)")


def docs_snippet() -> str:
    """The ```nginx block of the proxy docs' "Scaling out" section."""
    text = PROXY_DOCS.read_text(encoding="utf-8")
    found = re.search(r"```nginx\n(.*?)```", text[text.index("## Scaling out"):], re.S)
    assert found, "docs/proxy.md's Scaling out section has no nginx snippet"
    return found.group(1)


@pytest.fixture
def nginx(tmp_path: Path) -> Iterator[tuple[int, int, int]]:
    """nginx on a free port in front of two ports (the instances, started by the test); yields the three."""
    front, a, b = free_port(), free_port(), free_port()
    snippet = (docs_snippet().replace("127.0.0.1:8080", f"127.0.0.1:{front}")
               .replace("127.0.0.1:8081", f"127.0.0.1:{a}").replace("127.0.0.1:8082", f"127.0.0.1:{b}"))
    temp = "\n".join(f"    {kind}_temp_path {tmp_path}/{kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                             "uwsgi", "scgi"))
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"daemon off;\nworker_processes 1;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log warn;\n"
                    f"events {{ worker_connections 4096; }}\nhttp {{\n    access_log off;\n{temp}\n{snippet}\n}}\n",
                    encoding="utf-8")
    check = subprocess.run([NGINX, "-t", "-c", str(conf), "-p", str(tmp_path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    with started_process([str(NGINX), "-c", str(conf), "-p", str(tmp_path)], lambda: port_open(front)):
        yield front, a, b


def expected() -> tuple[str, list[tuple[str, Any]]]:
    parser = StreamParser(TOOLS)
    events = parser.feed(TEXT) + parser.close()
    return ("".join(e.text for e in events if isinstance(e, TextDelta)),
            [(e.name, json.loads(e.arguments)) for e in events if isinstance(e, ToolCall)])


async def one_stream(client: AsyncOpenAI, first: asyncio.Event) -> tuple[str, list[tuple[str, Any]], str | None]:
    text, calls, finish = "", {}, None
    stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}],
                                                  tools=TOOLS, stream=True)  # type: ignore[arg-type]
    async for chunk in stream:
        first.set()
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for tc in choice.delta.tool_calls or []:
                name, args = calls.get(tc.index, ("", ""))
                calls[tc.index] = (name + (tc.function.name or ""), args + (tc.function.arguments or ""))
            finish = choice.finish_reason or finish
    return text, [(n, json.loads(a)) for _, (n, a) in sorted(calls.items())], finish


async def run_load(front: int, drain: Any) -> list[Any]:
    """Half the streams, then SIGTERM to one instance while they run, then the other half during its drain."""
    limits = httpx.Limits(max_connections=STREAMS + 10)
    async with httpx.AsyncClient(limits=limits, timeout=120) as http:
        client = AsyncOpenAI(base_url=f"http://127.0.0.1:{front}/v1", api_key="sk-test", max_retries=0,
                             http_client=http)
        firsts = [asyncio.Event() for _ in range(STREAMS)]
        half = STREAMS // 2
        tasks = [asyncio.create_task(one_stream(client, firsts[i])) for i in range(half)]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in firsts[:half])), 60)
        drain()
        await asyncio.sleep(0.3)
        tasks += [asyncio.create_task(one_stream(client, firsts[i])) for i in range(half, STREAMS)]
        return await asyncio.gather(*tasks, return_exceptions=True)


def test_two_instances_behind_nginx_one_drained_mid_run(nginx: tuple[int, int, int]) -> None:
    front, a, b = nginx
    app = create_replay_app(lambda request, _choice: TEXT, token_delay=0.03)
    with ServerThread(app) as upstream:
        def serve(port: int) -> list[str]:
            return [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1",
                    "--port", str(port), "--log-level", "warning", "--drain-timeout", "60"]

        with started_process(serve(a), lambda: port_open(a)) as first, \
                started_process(serve(b), lambda: port_open(b)):
            results = asyncio.run(run_load(front, lambda: first.send_signal(signal.SIGTERM)))
            assert first.wait(60) in (0, -signal.SIGTERM)  # drained, then gone
            served_by_b = httpx.get(f"http://127.0.0.1:{b}/metrics").text
    failures = [r for r in results if isinstance(r, BaseException)]
    assert not failures, failures[:3]
    want_text, want_calls = expected()
    assert all(r == (want_text, want_calls, "tool_calls") for r in results), [r for r in results if r[0] != want_text][:2]
    assert len(results) == STREAMS
    streams_b = sum(float(line.rsplit(" ", 1)[1]) for line in served_by_b.splitlines()
                    if line.startswith("streamparse_requests_total{") and 'route="/v1/chat/completions"' in line)
    assert STREAMS // 2 <= streams_b < STREAMS  # the second half all went to the instance left
