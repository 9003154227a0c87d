"""Two proxy keys are two clients: neither reaches what the other stored or left at the backend.

A proxy with keys KA and KB in front of a scripted model that records every request. Each route that reads
stored state (previous_response_id, item_reference, GET / DELETE /v1/responses/{id}, GET …/input_items) is tried
by B on A's ids, streamed and not, with both header forms: B gets exactly the answer an unknown id gets, and the
upstream never sees A's conversation. Relayed paths that keep state at the backend are refused with several keys
unless a backend opts in (relay_paths) or gives each key its own backend key (client_api_keys_env).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread

from upstreams import HERMES, RecordingModel

KA, KB = "key-alice-0123456789", "key-bob-9876543210"
WEATHER = {"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


class Files:
    """A backend's ``/v1/files``: what it was asked, with which credentials."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []  # (method, path, authorization)

    async def handle(self, request: Request) -> Response:
        self.seen.append((request.method, request.url.path, request.headers.get("authorization", "")))
        return JSONResponse({"object": "list", "data": [{"id": "file-0001", "object": "file"}]})


@pytest.fixture(scope="module")
def model() -> RecordingModel:
    return RecordingModel()


@pytest.fixture(scope="module")
def files() -> Files:
    return Files()


@pytest.fixture(scope="module")
def upstream(model: RecordingModel, files: Files) -> Iterator[ServerThread]:
    app = Starlette(routes=[Route("/v1/files", files.handle, methods=["GET", "POST"]),
                            Route("/v1/files/{rest:path}", files.handle, methods=["GET", "DELETE"]),
                            Mount("/", model.app())])
    with ServerThread(app) as server:
        yield server


def proxy_for(upstream: ServerThread, monkeypatch: pytest.MonkeyPatch, keys: str = f"{KA},{KB}",
              **backend: Any) -> ServerThread:
    monkeypatch.setenv("STREAMPARSE_API_KEYS", keys)
    return ServerThread(create_app(ProxyConfig.single(upstream.url + "/v1", {"dialects": ["hermes"], **backend})))


@pytest.fixture(scope="module")
def proxy(upstream: ServerThread) -> Iterator[ServerThread]:
    with pytest.MonkeyPatch.context() as mp, proxy_for(upstream, mp) as server:
        yield server


def client(server: ServerThread, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=30)


def raw(server: ServerThread, key: str, header: str) -> httpx.Client:
    """A plain client presenting ``key`` as ``Authorization: Bearer`` or as ``x-api-key``."""
    sent = {"authorization": f"Bearer {key}"} if header == "bearer" else {"x-api-key": key}
    return httpx.Client(base_url=server.url, headers=sent, timeout=30)


def create(server: ServerThread, key: str, header: str, stream: bool, **body: Any) -> tuple[int, Any]:
    """POST /v1/responses: (status, the response object or the error), streamed or not."""
    with raw(server, key, header) as http:
        if not stream:
            r = http.post("/v1/responses", json=body)
            return r.status_code, r.json()
        with http.stream("POST", "/v1/responses", json={**body, "stream": True}) as r:
            if r.status_code != 200:
                r.read()
                return r.status_code, r.json()
            events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    done = [e for e in events if e["type"] == "response.completed"]
    assert done, events
    return 200, done[0]["response"]


def alice_stores(proxy: ServerThread, model: RecordingModel, stream: bool) -> dict[str, Any]:
    model.reset("Checking.\n" + HERMES)
    status, first = create(proxy, KA, "bearer", stream, model="m", input="alice's secret plan", tools=[WEATHER])
    assert status == 200 and [i["type"] for i in first["output"]] == ["message", "function_call"]
    return first


def without_ids(error: dict[str, Any], *ids: str) -> dict[str, Any]:
    text = json.dumps(error)
    for one in ids:
        text = text.replace(one, "ID")
    return json.loads(text)


@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
@pytest.mark.parametrize("stream", [False, True])
def test_previous_response_id_of_another_key_is_an_unknown_id(proxy: ServerThread, model: RecordingModel,
                                                             stream: bool, header: str) -> None:
    first = alice_stores(proxy, model, stream)
    before = len(model.requests)
    status, theirs = create(proxy, KB, header, stream, model="m", input="go on", previous_response_id=first["id"])
    unknown_id = "resp_" + "0" * 32
    status2, unknown = create(proxy, KB, header, stream, model="m", input="go on", previous_response_id=unknown_id)
    assert status == status2 == 400
    assert theirs["error"]["code"] == "previous_response_not_found"
    assert without_ids(theirs, first["id"]) == without_ids(unknown, unknown_id)
    assert len(model.requests) == before  # nothing of A's went upstream for B
    # A's own chain goes on, with its conversation
    model.reset("Sunny.")
    status, mine = create(proxy, KA, header, stream, model="m", input="go on", previous_response_id=first["id"])
    assert status == 200 and "alice's secret plan" in json.dumps(model.requests[-1]["messages"])


@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
@pytest.mark.parametrize("stream", [False, True])
def test_item_references_to_another_keys_items_are_unknown_items(proxy: ServerThread, model: RecordingModel,
                                                                stream: bool, header: str) -> None:
    first = alice_stores(proxy, model, stream)
    message, call = first["output"]
    before = len(model.requests)
    for item_id in (message["id"], call["id"]):
        status, theirs = create(proxy, KB, header, stream, model="m", tools=[WEATHER],
                                input=[{"role": "user", "content": "hi"}, {"type": "item_reference", "id": item_id}])
        unknown_id = item_id[:3] + "f" * (len(item_id) - 3)
        _, unknown = create(proxy, KB, header, stream, model="m", tools=[WEATHER],
                            input=[{"role": "user", "content": "hi"}, {"type": "item_reference", "id": unknown_id}])
        assert status == 400 and theirs["error"]["param"] == "input[1]"
        assert without_ids(theirs, item_id) == without_ids(unknown, unknown_id)
    assert len(model.requests) == before
    model.reset("Sunny.")
    status, _ = create(proxy, KA, header, stream, model="m", tools=[WEATHER],
                       input=[{"role": "user", "content": "hi"}, {"type": "item_reference", "id": message["id"]}])
    assert status == 200 and model.requests[-1]["messages"][-1]["content"] == "Checking.\n"


@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
def test_get_input_items_and_delete_find_only_the_callers_own(proxy: ServerThread, model: RecordingModel,
                                                              header: str) -> None:
    first = alice_stores(proxy, model, stream=False)
    rid, unknown_id = first["id"], "resp_" + "1" * 32
    with raw(proxy, KB, header) as bob:
        for method, path in (("GET", "/v1/responses/{}"), ("GET", "/v1/responses/{}/input_items"),
                             ("DELETE", "/v1/responses/{}")):
            theirs = bob.request(method, path.format(rid))
            unknown = bob.request(method, path.format(unknown_id))
            assert theirs.status_code == unknown.status_code == 404
            assert without_ids(theirs.json(), rid) == without_ids(unknown.json(), unknown_id)
            assert set(theirs.json()["error"]) == {"message", "type", "param", "code"}
    alice = client(proxy, KA)
    assert alice.responses.retrieve(rid).id == rid  # B's DELETE touched nothing
    listed = alice.responses.input_items.list(rid)
    assert [item.type for item in listed.data] == ["message"] and listed.data[0].id.startswith("msg_")
    assert alice.responses.delete(rid) is None
    with pytest.raises(openai.NotFoundError):
        alice.responses.retrieve(rid)


def test_bobs_answer_is_stored_as_bobs_own(proxy: ServerThread, model: RecordingModel) -> None:
    model.reset("Hello Bob.")
    bob = client(proxy, KB).responses.create(model="m", input="I am Bob")
    with pytest.raises(openai.NotFoundError):
        client(proxy, KA).responses.retrieve(bob.id)
    assert client(proxy, KB).responses.retrieve(bob.id).output_text == "Hello Bob."


def test_stateful_relay_paths_are_refused_with_several_keys(proxy: ServerThread, files: Files) -> None:
    before = len(files.seen)
    for path in ("/v1/files", "/v1/files/file-0001/content", "/v1/batches", "/v1/vector_stores/vs_1",
                 "/v1/conversations"):
        with raw(proxy, KA, "bearer") as http:
            r = http.get(path)
        assert r.status_code == 403, path
        assert r.json()["error"]["code"] == "relay_refused" and "relay_paths" in r.json()["error"]["message"]
    assert len(files.seen) == before


def test_relay_paths_opts_a_path_in(upstream: ServerThread, files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    with proxy_for(upstream, monkeypatch, relay_paths=["/v1/files"]) as server, raw(server, KB, "bearer") as http:
        assert http.get("/v1/files").status_code == 200
        assert http.get("/v1/files/file-0001/content").status_code == 200
        assert http.get("/v1/batches").status_code == 403


def test_a_backend_key_per_proxy_key_relays_each_client_as_itself(upstream: ServerThread, files: Files,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PER_CLIENT", f"{KA}=sk-backend-alice,{KB}=sk-backend-bob")
    with proxy_for(upstream, monkeypatch, client_api_keys_env="PER_CLIENT") as server:
        for key, header in ((KA, "bearer"), (KB, "x-api-key")):
            with raw(server, key, header) as http:
                r = http.get("/v1/files")
            assert r.status_code == 200 and "sk-backend" not in r.text
        assert [auth for *_, auth in files.seen[-2:]] == ["Bearer sk-backend-alice", "Bearer sk-backend-bob"]


def test_one_key_relays_as_before(upstream: ServerThread, files: Files, monkeypatch: pytest.MonkeyPatch) -> None:
    with proxy_for(upstream, monkeypatch, keys=KA) as server, raw(server, KA, "bearer") as http:
        assert http.get("/v1/files").status_code == 200


def test_minted_ids_are_secure_and_distinct(proxy: ServerThread, model: RecordingModel) -> None:
    model.reset("Checking.\n" + HERMES)
    seen: set[str] = set()
    for _ in range(5):
        first = client(proxy, KA).responses.create(model="m", input="hi", tools=[WEATHER])
        for one in (first.id, *(i.id for i in first.output), first.output[1].call_id):  # type: ignore[union-attr]
            assert one not in seen
            seen.add(one)
            prefix, _, digits = one.partition("_")
            assert prefix in ("resp", "msg", "fc", "call") and len(digits) >= 24
            int(digits, 16)  # hex: 96 bits or more from os.urandom


def test_a_backend_key_map_must_cover_every_proxy_key(upstream: ServerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    """A key left out would reach the backend as the shared identity, with every path relayed: refused at start."""
    from streamparse.proxy.config import ConfigError

    monkeypatch.setenv("STREAMPARSE_API_KEYS", f"{KA},{KB},key-carol-555555")
    for mapping in (f"{KA}=sk-a,{KB}=sk-b", f"{KA}=sk-a,{KB}=sk-b,key-carol-555555=sk-c,key-dave=sk-d"):
        monkeypatch.setenv("PER_CLIENT", mapping)
        with pytest.raises(ConfigError, match="every proxy key"):
            create_app(ProxyConfig.single(upstream.url + "/v1", {"client_api_keys_env": "PER_CLIENT"}))


def test_keys_holding_equals_signs_map_in_the_json_form(upstream: ServerThread, files: Files,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    padded_a, padded_b = "c2stYWxpY2U=", "c2stYm9iYg=="
    monkeypatch.setenv("PER_CLIENT", json.dumps({padded_a: "sk-backend-a=", padded_b: "sk-backend-b"}))
    with proxy_for(upstream, monkeypatch, keys=f"{padded_a},{padded_b}", client_api_keys_env="PER_CLIENT") as server:
        for key in (padded_a, padded_b):
            with raw(server, key, "bearer") as http:
                assert http.get("/v1/files").status_code == 200
    assert [auth for *_, auth in files.seen[-2:]] == ["Bearer sk-backend-a=", "Bearer sk-backend-b"]
    monkeypatch.setenv("PER_CLIENT", f"{padded_a}=sk-backend-a,{padded_b}=sk-backend-b")  # misread: said at start
    from streamparse.proxy.config import ConfigError
    with pytest.raises(ConfigError, match="JSON form"):
        create_app(ProxyConfig.single(upstream.url + "/v1", {"client_api_keys_env": "PER_CLIENT"}))


def test_a_fallback_that_shares_one_identity_never_takes_a_stateful_path(upstream: ServerThread, files: Files,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The primary gives each key its own backend key but is down; its fallback has one shared key: the stateful
    path is refused, never relayed to the fallback as the shared identity."""
    from streamparse.proxy.config import Backend
    from streamparse.proxy.runner import free_port

    monkeypatch.setenv("STREAMPARSE_API_KEYS", f"{KA},{KB}")
    monkeypatch.setenv("PER_CLIENT", f"{KA}=sk-a,{KB}=sk-b")
    monkeypatch.setenv("SHARED", "sk-shared-backend")
    down = f"http://127.0.0.1:{free_port()}/v1"
    config = ProxyConfig(backends=[
        Backend("primary", down, default=True, client_api_keys_env="PER_CLIENT", fallback=["spare"]),
        Backend("spare", upstream.url + "/v1", api_key_env="SHARED")])
    before = len(files.seen)
    with ServerThread(create_app(config)) as server, raw(server, KA, "bearer") as http:
        r = http.get("/v1/files")
        assert r.status_code == 502  # the primary, the only backend allowed, is down: not relayed to the spare
        assert http.get("/v1/models").status_code != 403  # (a stateless read may go to the spare)
    assert len(files.seen) == before


def test_models_are_read_but_never_changed_through_a_shared_identity(proxy: ServerThread) -> None:
    with raw(proxy, KA, "bearer") as http:
        assert http.delete("/v1/models/ft:some-model").status_code == 403
        assert http.post("/v1/models/x", json={}).status_code == 403
        assert http.get("/v1/models").status_code != 403


def test_the_anthropic_front_carries_the_key_auth_accepted(upstream: ServerThread, model: RecordingModel,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``Authorization: Basic …`` beside a valid ``x-api-key``: auth accepts the x-api-key, and the request reaches
    the backend with that key's own backend key, not the shared one."""
    monkeypatch.setenv("PER_CLIENT", f"{KA}=sk-backend-alice,{KB}=sk-backend-bob")
    model.reset("Hello.")
    with proxy_for(upstream, monkeypatch, client_api_keys_env="PER_CLIENT") as server:
        r = httpx.post(server.url + "/v1/messages", headers={"authorization": "Basic dXNlcjpwYXNz", "x-api-key": KB},
                       json={"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200
    assert model.headers[-1]["authorization"] == "Bearer sk-backend-bob"
