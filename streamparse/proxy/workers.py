"""The proxy in N worker processes: what ``streamparse serve --workers N`` hands to each worker.

uvicorn spawns its workers; an app object cannot be sent to them, only an import string. So
the parent puts what it was told (a config file or an upstream URL, and the server settings
given on the command line) into the ``STREAMPARSE_SERVE`` environment variable as JSON, and
each worker rebuilds the app with ``app_from_environment``.

Invariant: the parent and every worker build their ``ProxyConfig`` with the same function,
``config_from_settings``, from the same settings, so they cannot disagree; the parent has
checked the result (and the environment) before any worker starts.

Usable without the command line, e.g. under uvicorn directly::

    STREAMPARSE_SERVE='{"config": "/etc/streamparse/proxy.toml"}' \\
        uvicorn --factory streamparse.workers:app_from_environment --workers 4
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
from typing import Any, Mapping

from starlette.applications import Starlette
from uvicorn.config import STARTUP_FAILURE

from .config import ConfigError, ProxyConfig, load_config

__all__ = ["ENV_VAR", "APP_FACTORY", "SERVER_KEYS", "config_from_settings", "settings_env", "app_from_environment"]

ENV_VAR = "STREAMPARSE_SERVE"
APP_FACTORY = "streamparse.proxy.workers:app_from_environment"
SERVER_KEYS = ("host", "port", "workers", "drain_timeout", "cors_origins", "log_format", "responses_store")  # [server] settings the
# command line can override


def config_from_settings(settings: Mapping[str, Any]) -> ProxyConfig:
    """``{"config": PATH}`` or ``{"upstream": URL}`` (with optional ``"backend"`` settings, as a config file's
    backend table has them: ``tool_prompt``, ``stream_arguments``, ...), plus optional ``"server": {host, port,
    workers, drain_timeout, cors_origins, log_format, responses_store}`` overrides -> a checked ``ProxyConfig`` (``ConfigError`` otherwise)."""
    if isinstance(settings.get("config"), str):
        config = load_config(settings["config"])
    elif "upstream" in settings:
        config = ProxyConfig.single(settings["upstream"], settings.get("backend"))
    else:
        raise ConfigError(f"{ENV_VAR} needs 'config' (a TOML file) or 'upstream' (a URL)")
    server = settings.get("server") or {}
    if not isinstance(server, dict) or set(server) - set(SERVER_KEYS):
        raise ConfigError(f"{ENV_VAR}: 'server' may only set {', '.join(SERVER_KEYS)}")
    return dataclasses.replace(config, **server)  # replace() runs the checks again


def settings_env(settings: Mapping[str, Any]) -> dict[str, str]:
    """The environment that hands ``settings`` to the workers."""
    return {ENV_VAR: json.dumps(settings)}


def app_from_environment() -> Starlette:
    """uvicorn app factory: the proxy app described by ``$STREAMPARSE_SERVE``.

    A bad setting is logged in one line and ends the worker with uvicorn's start-up failure
    status, which tells the supervisor not to restart it (it would fail the same way).
    """
    from .app import create_app

    try:
        raw = os.environ.get(ENV_VAR)
        if not raw:
            raise ConfigError(f"{ENV_VAR} is not set; start with `streamparse serve --workers N` "
                              "or set it to JSON such as {\"config\": \"proxy.toml\"}")
        try:
            settings = json.loads(raw)
        except ValueError as exc:
            raise ConfigError(f"{ENV_VAR} is not JSON: {exc}") from None
        if not isinstance(settings, dict):
            raise ConfigError(f"{ENV_VAR} must be a JSON object")
        config = config_from_settings(settings)
        config.check_environment()
    except ConfigError as exc:
        logging.getLogger("uvicorn.error").error("streamparse: %s", exc)
        sys.exit(STARTUP_FAILURE)
    return create_app(config)
