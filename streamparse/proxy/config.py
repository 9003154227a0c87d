"""Proxy configuration: one or more upstream backends, read from TOML.

Invariant: a ``ProxyConfig`` that exists has been checked — every upstream is an
http(s) URL, every number is in range, every model a backend names goes to exactly one backend first (``routes``),
every ``fallback`` names other backends, and (once ``check_environment`` ran) every
``api_key_env`` (and ``api_keys_env``) names a variable that is set. Keys live only in the
environment: the backends' keys and the proxy's own keys (``proxy_keys``), which clients present.

```toml
[server]
host = "127.0.0.1"
port = 8080
workers = 1                     # uvicorn worker processes (share a responses_store other than memory)
max_body_bytes = 10485760       # larger request bodies get a 400, on every path
max_response_bytes = 67108864   # larger upstream bodies end with an error
max_event_bytes = 16777216      # a longer upstream SSE line ends the stream with an error
api_keys_env = "PROXY_KEYS"     # clients must present one of these keys (comma-separated in that variable),
                                # as "Authorization: Bearer KEY" or "x-api-key: KEY"; /healthz stays open.
                                # Also read: $STREAMPARSE_API_KEYS / $STREAMPARSE_API_KEY, `serve --api-key`
header_timeout = 10             # seconds a client has to send a request's headers (else 408, connection closed)
body_timeout = 30               # seconds a client has to send a request's body (else 408, connection closed)
drain_timeout = 30              # on SIGTERM / Ctrl-C: seconds in-flight answers get to finish before they are
                                # ended properly (held text, an error event, [DONE]); new connections are refused
ready_cache = 5                 # seconds /readyz remembers whether the upstreams answered
responses_store = "memory"      # where POST /v1/responses keeps answers for previous_response_id and
                                # item_reference: "memory" (this process only) or "redis://host:6379/0" (and
                                # rediss://): one store for every worker and replica (docs/proxy.md)
responses_store_size = 1000     # answers kept at most, for how many seconds, and how many characters of JSON
responses_store_ttl = 3600      # they may hold in all
responses_store_chars = 268435456
responses_store_timeout = 2     # seconds one store operation may take (Redis); past it: a 503, never a hang
owner_secret_env = "OWNER_SECRET"  # the secret that keys the hash of a proxy key naming a stored answer's owner
                                # (default: derived from the proxy keys; set it when replicas' keys differ)
fallback_attempts = 3           # backends one request may try: its own, then its fallbacks (docs/operating.md)
cors_origins = ["https://app.example.com"]  # browser origins answered with CORS ("*": any); default: none (off)
log_format = "text"             # or "json": one JSON line per request (request id, backend, status, timings...)

[backends.local]
upstream = "http://127.0.0.1:8000/v1"   # base URL, as an OpenAI client takes it
api_key_env = "LOCAL_API_KEY"            # name of an environment variable, never the key itself
dialects = ["qwen3_coder", "hermes"]     # default: all (aliases such as qwen3_xml accepted)
# dialect = "llama3_json"                # instead of dialects: one, pinned (read as the engine's parser reads it)
models = ["qwen3-coder"]                 # request models routed here (also the model_map keys)
default = true                           # the backend for models no backend names
fallback = ["cloud"]                     # tried in order when this one fails before the first byte (connect error,
                                         # timeout, 429, 5xx); a model two backends name must be in one's fallback
parse_without_tools = false              # parse tagged blocks even when the request offers no tools
tool_prompt = "hermes"                   # the backend ignores `tools`: prompt them in this dialect (see prompting)
tool_prompt_retry = false                # tool_choice required/named, answer without a call: ask once more
constrain = "off"                        # with tool_prompt: constrain decoding to the prompted calls, for this
                                         # engine: "llamacpp", "vllm", "sglang", or "auto" (probed once); "off"
stream_arguments = false                 # stream each call's arguments as they are written (name first)
calls_in_reasoning = false               # a call to an offered tool written inside <think> leaves as a call
reasoning_start = "closed"               # the chat template opens <think> in the prompt, so answers start inside
                                         # reasoning with no opening tag: "open" (always), "auto" (unless the
                                         # request turns thinking off), "asked" (only when it turns thinking on),
                                         # "closed" (never: the default). Only for an engine that does not split
                                         # reasoning out itself (docs/proxy.md lists the models)
response_start = false                   # when the answer does not start in reasoning, the template opened a
                                         # response channel instead (Kimi K3 with thinking off): it starts there
chat_template = "auto"                   # the model's chat template, which tells the format, whether answers start
                                         # in reasoning and the stop tokens: "auto" asks the backend (llama.cpp
                                         # /props, vLLM /tokenizer_info, Ollama /api/show, ...); or a path: a .jinja
                                         # file, a model folder, a GGUF file; "off": none. dialect(s),
                                         # reasoning_start and response_start, when written, win (docs/proxy.md)
system_messages = "inline"               # system messages after the first (Claude Code sends them): "inline" sends
                                         # each in its place; "fold" joins them into the leading one, for chat
                                         # templates that accept only one system message at the start
report_diagnostics = true                # tell clients what the parser refused, repaired or coerced (SSE comments,
                                         # x-streamparse-diagnostics header); the payloads stay valid either way
max_block_chars = 1048576
max_calls = 1000
max_connections = 1000                   # upstream requests in flight (per worker); more get a 503 at once
connect_timeout = 10                     # seconds to open the upstream connection
first_byte_timeout = 1800                # longest wait for the answer's first data (a CPU backend reads a long
                                         # prompt before it writes anything; llama.cpp's prompt progress counts)
read_timeout = 300                       # longest wait for the next data event after the first (": ping" does not
                                         # count)
total_timeout = 3600                     # whole request, first byte to last
relay_paths = ["/v1/files"]              # with several proxy keys, the /v1 paths beyond the chat APIs that hold
                                         # state at the backend (files, batches, ...) are refused (403) unless listed
                                         # here (prefixes), since every client reaches the backend as one identity
client_api_keys_env = "LOCAL_CLIENT_KEYS"  # or give each proxy key its own backend key: "PROXYKEY=BACKENDKEY,..."
                                         # in that variable; such a backend relays every path, each client as itself

[backends.local.model_map]
"qwen3-coder" = "Qwen3-Coder-30B-A3B-Instruct"   # client name -> upstream name
```
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from typing import Any, Mapping
from urllib.parse import urlsplit

from ..dialects import REGISTRY, resolve
from .checks import ConfigError, check_chat_template, check_store_url, check_upstream, did_you_mean, key_pairs, redact_url
from .cors import check_origins

__all__ = ["Backend", "ProxyConfig", "ConfigError", "load_config", "check_upstream", "KEYS_ENV", "KEY_ENV",
           "CONSTRAIN_MODES", "SYSTEM_MESSAGE_MODES", "REASONING_START_MODES", "LOG_FORMATS", "did_you_mean"]

KEYS_ENV = "STREAMPARSE_API_KEYS"  # the proxy's own keys, comma-separated (``serve --api-key`` sets it)
KEY_ENV = "STREAMPARSE_API_KEY"  # one more key of the proxy's own
CONSTRAIN_MODES = ("off", "auto", "llamacpp", "vllm", "sglang")  # a backend's ``constrain``
SYSTEM_MESSAGE_MODES = ("inline", "fold")  # a backend's ``system_messages``
REASONING_START_MODES = ("closed", "open", "auto", "asked")  # a backend's ``reasoning_start`` (proxy.plan)
LOG_FORMATS = ("text", "json")  # [server] log_format


@dataclass
class Backend:
    name: str
    upstream: str
    api_key_env: str | None = None
    dialects: list[str] | None = None
    models: list[str] = field(default_factory=list)
    model_map: dict[str, str] = field(default_factory=dict)
    default: bool = False
    fallback: list[str] = field(default_factory=list)
    parse_without_tools: bool = False
    tool_prompt: str | None = None
    tool_prompt_retry: bool = False
    constrain: str = "off"
    stream_arguments: bool = False
    calls_in_reasoning: bool = False
    reasoning_start: str = "closed"
    response_start: bool = False
    system_messages: str = "inline"
    report_diagnostics: bool = True
    max_block_chars: int = 1 << 20
    max_calls: int = 1000
    max_connections: int = 1000
    connect_timeout: float = 10.0
    first_byte_timeout: float = 1800.0
    read_timeout: float = 300.0
    total_timeout: float = 3600.0
    relay_paths: list[str] = field(default_factory=list)
    client_api_keys_env: str | None = None
    chat_template: str = "auto"
    written: frozenset[str] = field(default=frozenset(), compare=False)  # the settings a config or flag wrote

    @property
    def api_key(self) -> str | None:
        """The upstream key (None: the client's own credentials are forwarded)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    @property
    def display(self) -> str:
        """The upstream URL as it may be shown to clients and logs (credentials removed)."""
        return redact_url(self.upstream)

    def client_api_keys(self) -> dict[str, str]:
        """Each proxy key -> the backend key its requests carry (``client_api_keys_env``: ``PROXYKEY=BACKENDKEY``
        pairs, comma-separated, or a JSON object); empty when the setting is absent. ConfigError when the variable
        is unset or malformed."""
        if not self.client_api_keys_env:
            return {}
        pairs = key_pairs(os.environ.get(self.client_api_keys_env, ""))
        if pairs is None:
            raise ConfigError(f"backend {self.name!r}: client_api_keys_env names {self.client_api_keys_env!r}, which "
                              "must hold PROXYKEY=BACKENDKEY pairs, comma-separated (or a JSON object)")
        return pairs

    def secrets(self) -> list[str]:
        """Strings that must never leave the proxy: the keys and any URL credentials."""
        found = [self.api_key or ""]
        if self.client_api_keys_env and os.environ.get(self.client_api_keys_env):
            found += list(self.client_api_keys().values())
        parts = urlsplit(self.upstream)
        found += [parts.username or "", parts.password or ""]
        return [s for s in found if len(s) >= 4]

    def parser_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"dialects": self.dialects, "max_block_chars": self.max_block_chars,
                                   "max_calls": self.max_calls}
        if self.stream_arguments:
            options["stream_arguments"] = True
        if self.calls_in_reasoning:
            options["calls_in_reasoning"] = True
        if not self.report_diagnostics:
            options["report_diagnostics"] = False
        return options

    def serves(self, model: Any) -> bool:
        return isinstance(model, str) and (model in self.models or model in self.model_map)

    def upstream_model(self, model: Any) -> Any:
        return self.model_map.get(model, model) if isinstance(model, str) else model


@dataclass
class ProxyConfig:
    backends: list[Backend]
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    max_body_bytes: int = 10 * 1024 * 1024
    max_response_bytes: int = 64 * 1024 * 1024
    max_event_bytes: int = 16 * 1024 * 1024
    api_keys_env: str | None = None
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    drain_timeout: float = 30.0
    ready_cache: float = 5.0
    responses_store: str = "memory"
    responses_store_size: int = 1000
    responses_store_ttl: float = 3600.0
    responses_store_chars: int = 256 << 20
    responses_store_timeout: float = 2.0
    owner_secret_env: str | None = None
    fallback_attempts: int = 3
    cors_origins: list[str] = field(default_factory=list)
    log_format: str = "text"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"[server] {f.name} must be a positive integer, not {value!r}")
            if f.type == "float" and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
                raise ConfigError(f"[server] {f.name} must be a positive number of seconds, not {value!r}")
        if self.port > 65535:
            raise ConfigError(f"[server] port must be at most 65535, not {self.port}")
        if self.api_keys_env is not None and (not isinstance(self.api_keys_env, str) or not self.api_keys_env):
            raise ConfigError("[server] api_keys_env must name an environment variable")
        self.responses_store = check_store_url(self.responses_store)
        if self.owner_secret_env is not None and (not isinstance(self.owner_secret_env, str) or not self.owner_secret_env):
            raise ConfigError("[server] owner_secret_env must name an environment variable")
        if self.log_format not in LOG_FORMATS:
            hint = did_you_mean([self.log_format], LOG_FORMATS) if isinstance(self.log_format, str) else ""
            raise ConfigError(f"[server] log_format must be one of {list(LOG_FORMATS)}, not {self.log_format!r}{hint}")
        try:
            self.cors_origins = check_origins(self.cors_origins)
        except ValueError as exc:
            raise ConfigError(f"[server] cors_origins: {exc}") from None
        self._routes: dict[str, Backend] = routes(self.backends)

    def proxy_keys(self) -> list[str]:
        """The keys clients must present (none: the proxy is open), from ``$STREAMPARSE_API_KEYS``
        (comma-separated), ``$STREAMPARSE_API_KEY`` and the variable ``api_keys_env`` names."""
        raw = [os.environ.get(KEYS_ENV, ""), os.environ.get(KEY_ENV, "")]
        if self.api_keys_env:
            raw.append(os.environ.get(self.api_keys_env, ""))
        return sorted({key.strip() for text in raw for key in text.split(",") if key.strip()})

    def backend_for(self, model: Any) -> Backend:
        """The backend that names ``model``, else the default one (the first, unless one says default)."""
        if isinstance(model, str) and model in self._routes:
            return self._routes[model]
        return next((b for b in self.backends if b.default), self.backends[0])

    def chain(self, backend: Backend) -> list[Backend]:
        """``backend`` then its ``fallback`` backends, in order: at most ``fallback_attempts`` of them."""
        named = {b.name: b for b in self.backends}
        return [backend, *(named[name] for name in backend.fallback)][:self.fallback_attempts]

    def check_environment(self) -> None:
        """Refuse to run with a key variable that is not set: the client's key would be forwarded instead."""
        for backend in self.backends:
            if backend.api_key_env and not os.environ.get(backend.api_key_env):
                raise ConfigError(f"backend {backend.name!r}: api_key_env names {backend.api_key_env!r}, "
                                  "which is not set in the environment")
            own = backend.client_api_keys()  # refuses a variable that is unset or not PROXYKEY=BACKENDKEY pairs
            keys = set(self.proxy_keys())
            if own and set(own) != keys:
                raise ConfigError(
                    f"backend {backend.name!r}: client_api_keys_env must give every proxy key a backend key of its "
                    f"own, and name no other key ({len(keys - set(own))} proxy key(s) without one, "
                    f"{len(set(own) - keys)} name(s) that are no proxy key; a key holding '=' or ',' needs the JSON "
                    "form: {\"PROXYKEY\": \"BACKENDKEY\"})")
        if self.owner_secret_env and not os.environ.get(self.owner_secret_env):
            raise ConfigError(f"[server] owner_secret_env names {self.owner_secret_env!r}, which is not set in the "
                              "environment")
        if self.api_keys_env and not os.environ.get(self.api_keys_env, "").strip(","):
            raise ConfigError(f"[server] api_keys_env names {self.api_keys_env!r}, which is not set in the "
                              "environment (the proxy would be open to anyone)")

    @classmethod
    def single(cls, upstream: str, backend: Mapping[str, Any] | None = None, **server: Any) -> "ProxyConfig":
        """One default backend at ``upstream``, with ``backend`` settings (checked as a config file's would be)."""
        url = check_upstream(upstream)
        return cls(backends=[_backend("default", {**(backend or {}), "upstream": url, "default": True})], **server)


def routes(backends: list[Backend]) -> dict[str, Backend]:
    """Each model a backend names (``models``, ``model_map`` keys) -> the backend its requests go to first.

    A model named by two backends is refused (ConfigError), unless exactly one of them lists all the others in
    its ``fallback``: that one is tried first. Fallbacks must name other backends, each once."""
    names = {b.name for b in backends}
    for backend in backends:
        unknown = [n for n in backend.fallback if n not in names or n == backend.name]
        if unknown or len(set(backend.fallback)) < len(backend.fallback):
            hint = did_you_mean(unknown, names - {backend.name})
            raise ConfigError(f"backend {backend.name!r}: fallback must name other backends, each once, not "
                              f"{backend.fallback!r}{hint}")
    named: dict[str, list[Backend]] = {}
    for backend in backends:
        for model in dict.fromkeys([*backend.models, *backend.model_map]):
            named.setdefault(model, []).append(backend)
    table: dict[str, Backend] = {}
    for model, group in named.items():
        first = [b for b in group if all(o is b or o.name in b.fallback for o in group)]
        if len(first) != 1:
            raise ConfigError(f"model {model!r} is named by backends {' and '.join(repr(b.name) for b in group)}; "
                              "a model goes to one backend: name it in one, or list the others in its fallback")
        table[model] = first[0]
    return table


_NUMBERS = {"max_block_chars", "max_calls", "max_connections", "connect_timeout", "first_byte_timeout", "read_timeout",
            "total_timeout"}
_FLAGS = {"default", "parse_without_tools", "tool_prompt_retry", "stream_arguments", "calls_in_reasoning",
          "report_diagnostics", "response_start"}


def _backend(name: str, raw: Mapping[str, Any]) -> Backend:
    if "api_key" in raw:
        raise ConfigError(f"backend {name!r}: put the key in an environment variable and name it in api_key_env")
    raw = dict(raw)
    if "timeout" in raw:  # the older single setting: the wait for the next piece of the answer
        raw.setdefault("read_timeout", raw.pop("timeout"))
    if "dialect" in raw:  # one dialect, pinned: read as its engine parser reads it
        if "dialects" in raw or not isinstance(raw["dialect"], str):
            raise ConfigError(f"backend {name!r}: 'dialect' is one name, and goes without 'dialects'")
        raw["dialects"] = [raw.pop("dialect")]
    known = set(Backend.__dataclass_fields__) - {"name", "written"}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"backend {name!r}: unknown key(s) {sorted(unknown)}{did_you_mean(unknown, known)}; "
                          f"known: {sorted(known)}")
    written = frozenset(raw)
    raw["upstream"] = check_upstream(raw.get("upstream"), f"backend {name!r}: 'upstream'")
    for key in _NUMBERS & set(raw):
        value = raw[key]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"backend {name!r}: {key!r} must be a positive number, not {value!r}")
    for key in _FLAGS & set(raw):
        if not isinstance(raw[key], bool):
            raise ConfigError(f"backend {name!r}: {key!r} must be true or false")
    relay = raw.get("relay_paths", [])
    if not isinstance(relay, list) or not all(isinstance(p, str) and p.startswith("/v1/") for p in relay):
        raise ConfigError(f"backend {name!r}: 'relay_paths' must be a list of paths under /v1/, e.g. [\"/v1/files\"]")
    if not isinstance(raw.get("client_api_keys_env", ""), str) or raw.get("client_api_keys_env") == "":
        raise ConfigError(f"backend {name!r}: 'client_api_keys_env' must name an environment variable")
    raw["fallback"] = [raw["fallback"]] if isinstance(raw.get("fallback"), str) else raw.get("fallback", [])
    if not isinstance(raw["fallback"], list) or not all(isinstance(n, str) for n in raw["fallback"]):
        raise ConfigError(f"backend {name!r}: 'fallback' must be a list of backend names")
    dialects = raw.get("dialects")
    if dialects is not None:
        if not isinstance(dialects, list) or not all(isinstance(d, str) for d in dialects):
            raise ConfigError(f"backend {name!r}: 'dialects' must be a list of names")
        try:
            raw["dialects"] = resolve(dialects)  # aliases (qwen3_xml, tool_call_json, ...) accepted
        except ValueError:
            names = REGISTRY.known_names()
            unknown_names = [d for d in dialects if d not in names]
            raise ConfigError(f"backend {name!r}: unknown dialect(s) {unknown_names}"
                              f"{did_you_mean(unknown_names, names)}; known: {names}") from None
    if "chat_template" in raw:
        raw["chat_template"] = check_chat_template(raw["chat_template"], f"backend {name!r}")
    if "tool_prompt" in raw:
        raw["tool_prompt"] = _prompt_dialect(name, raw["tool_prompt"])
    if "constrain" in raw:
        _check_constrain(name, raw["constrain"], raw.get("tool_prompt"))
    for key, modes in (("system_messages", SYSTEM_MESSAGE_MODES), ("reasoning_start", REASONING_START_MODES)):
        if key in raw and raw[key] not in modes:
            value = raw[key]
            hint = did_you_mean([value], modes) if isinstance(value, str) else ""
            raise ConfigError(f"backend {name!r}: {key} must be one of {list(modes)}, not {value!r}{hint}")
    return Backend(name=name, written=written, **raw)


def _check_constrain(backend: str, value: Any, tool_prompt: str | None) -> None:
    """``constrain`` aims at what ``tool_prompt`` teaches: without it (or with a dialect that has no grammar)
    there is nothing to aim at, and a constraint there would bind a model that writes its own template's calls."""
    if value not in CONSTRAIN_MODES:
        hint = did_you_mean([value], CONSTRAIN_MODES) if isinstance(value, str) else ""
        raise ConfigError(f"backend {backend!r}: constrain must be one of {list(CONSTRAIN_MODES)}, not {value!r}{hint}")
    if value == "off":
        return
    if tool_prompt is None:
        raise ConfigError(f"backend {backend!r}: constrain = {value!r} needs tool_prompt (it constrains decoding to "
                          "the calls the prompted dialect teaches); set tool_prompt, or constrain = \"off\"")
    from ..constraints import unsupported_reason

    why = unsupported_reason(tool_prompt)
    if why is not None:
        raise ConfigError(f"backend {backend!r}: constrain cannot constrain tool_prompt = {tool_prompt!r}: {why}")


def _prompt_dialect(backend: str, value: Any) -> str:
    from ..prompting.requests import PROMPT_DIALECTS

    try:
        (canonical,) = resolve([value]) if isinstance(value, str) else (None,)
    except ValueError:
        canonical = None
    if canonical not in PROMPT_DIALECTS:
        hint = did_you_mean([value], PROMPT_DIALECTS) if isinstance(value, str) else ""
        raise ConfigError(f"backend {backend!r}: tool_prompt must name a dialect to prompt tools in, one of "
                          f"{sorted(PROMPT_DIALECTS)}; not {value!r}{hint}")
    return canonical


def load_config(path: str) -> ProxyConfig:
    """Read a TOML config file; errors name the file and the key."""
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    tables = set(raw) - {"server", "backends"}
    if tables:
        raise ConfigError(f"{path}: unknown table(s) or key(s) {sorted(tables)}"
                          f"{did_you_mean(tables, ['server', 'backends'])}; a config has [server] and [backends.NAME]")
    backends_raw = raw.get("backends")
    if not isinstance(backends_raw, dict) or not backends_raw:
        raise ConfigError(f"{path}: needs at least one [backends.NAME] table with an 'upstream'")
    backends = [_backend(name, table) for name, table in backends_raw.items()]
    server = raw.get("server", {})
    if isinstance(server, dict) and "api_keys" in server:
        raise ConfigError(f"{path}: [server] api_keys: put the keys in an environment variable "
                          "(comma-separated) and name it in api_keys_env")
    settings = set(ProxyConfig.__dataclass_fields__) - {"backends"}
    unknown = set(server) - settings
    if unknown:
        raise ConfigError(f"{path}: [server] has unknown key(s) {sorted(unknown)}{did_you_mean(unknown, settings)}")
    return ProxyConfig(backends=backends, **server)
