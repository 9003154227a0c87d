"""Proxy configuration: one or more upstream backends, read from TOML.

```toml
[server]
host = "127.0.0.1"
port = 8080
max_body_bytes = 10485760       # larger request bodies get a 400

[backends.local]
upstream = "http://127.0.0.1:8000/v1"   # base URL, as an OpenAI client takes it
api_key_env = "LOCAL_API_KEY"            # name of an environment variable, never the key itself
dialects = ["qwen3_coder", "hermes"]   # default: all (aliases such as qwen3_xml accepted)
models = ["qwen3-coder"]                 # request models routed here (also the model_map keys)
default = true                           # the backend for models no backend names
max_block_chars = 1048576
max_calls = 1000
timeout = 600                            # seconds to wait for the upstream

[backends.local.model_map]
"qwen3-coder" = "Qwen3-Coder-30B-A3B-Instruct"   # client name -> upstream name
```
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .dialects import resolve

__all__ = ["Backend", "ProxyConfig", "ConfigError", "load_config"]


class ConfigError(ValueError):
    """The configuration file (or command line) says something we cannot use."""


@dataclass
class Backend:
    name: str
    upstream: str
    api_key_env: str | None = None
    dialects: list[str] | None = None
    models: list[str] = field(default_factory=list)
    model_map: dict[str, str] = field(default_factory=dict)
    default: bool = False
    max_block_chars: int = 1 << 20
    max_calls: int = 1000
    timeout: float = 600.0

    @property
    def api_key(self) -> str | None:
        """The upstream key, read from the environment at request time (None: forward the client's)."""
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def parser_options(self) -> dict[str, Any]:
        return {"dialects": self.dialects, "max_block_chars": self.max_block_chars, "max_calls": self.max_calls}

    def serves(self, model: Any) -> bool:
        return isinstance(model, str) and (model in self.models or model in self.model_map)

    def upstream_model(self, model: Any) -> Any:
        return self.model_map.get(model, model) if isinstance(model, str) else model


@dataclass
class ProxyConfig:
    backends: list[Backend]
    host: str = "127.0.0.1"
    port: int = 8080
    max_body_bytes: int = 10 * 1024 * 1024

    def backend_for(self, model: Any) -> Backend:
        """The backend that names ``model``, else the default one (the first, unless one says default)."""
        for backend in self.backends:
            if backend.serves(model):
                return backend
        return next((b for b in self.backends if b.default), self.backends[0])

    @classmethod
    def single(cls, upstream: str, **server: Any) -> "ProxyConfig":
        return cls(backends=[Backend(name="default", upstream=upstream.rstrip("/"), default=True)], **server)


def _backend(name: str, raw: Mapping[str, Any]) -> Backend:
    if "api_key" in raw:
        raise ConfigError(f"backend {name!r}: put the key in an environment variable and name it in api_key_env")
    known = set(Backend.__dataclass_fields__) - {"name"}
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"backend {name!r}: unknown key(s) {sorted(unknown)}; known: {sorted(known)}")
    upstream = raw.get("upstream")
    if not isinstance(upstream, str) or not upstream.startswith(("http://", "https://")):
        raise ConfigError(f"backend {name!r}: 'upstream' must be an http(s) URL")
    dialects = raw.get("dialects")
    if dialects is not None:
        if not isinstance(dialects, list) or not all(isinstance(d, str) for d in dialects):
            raise ConfigError(f"backend {name!r}: 'dialects' must be a list of names")
        try:
            raw = {**raw, "dialects": resolve(dialects)}  # aliases (qwen3_xml, tool_call_json, ...) accepted
        except ValueError as exc:
            raise ConfigError(f"backend {name!r}: {exc}") from None
    return Backend(name=name, **{**raw, "upstream": upstream.rstrip("/")})


def load_config(path: str) -> ProxyConfig:
    """Read a TOML config file; errors name the file and the key."""
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    backends_raw = raw.get("backends")
    if not isinstance(backends_raw, dict) or not backends_raw:
        raise ConfigError(f"{path}: needs at least one [backends.NAME] table with an 'upstream'")
    backends = [_backend(name, table) for name, table in backends_raw.items()]
    server = raw.get("server", {})
    unknown = set(server) - {"host", "port", "max_body_bytes"}
    if unknown:
        raise ConfigError(f"{path}: [server] has unknown key(s) {sorted(unknown)}")
    return ProxyConfig(backends=backends, **server)
