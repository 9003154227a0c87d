"""``streamparse serve`` and ``streamparse replay``: settings from the command line checked, the port bound,
then the proxy (or the replay upstream) served in the foreground until a signal.

Invariant: everything that can be refused is refused before the port is bound (one ``CliError`` line);
the metrics directory the workers share exists for exactly as long as they run.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import sys
import tempfile
from typing import Any, Iterator, TextIO

from .inputs import CliError, dialect_name

__all__ = ["run_serve", "run_replay", "check_range", "listen", "add_serve_parser", "LOG_LEVELS"]

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def run_serve(args: argparse.Namespace, out: TextIO) -> int:
    from ..proxy.runner import ServerThread
    from ..proxy.workers import SERVER_KEYS

    check_range("--port", args.port, 65535)
    check_range("--workers", args.workers)
    settings: dict[str, Any] = {"server": {key: getattr(args, key) for key in SERVER_KEYS if getattr(args, key) is not None}}
    if args.demo and (args.upstream or args.config):
        raise CliError(f"--demo brings its own upstream; give --demo or {'--upstream' if args.upstream else '--config'}"
                       ", not both")
    if args.demo:
        pass  # the upstream is the replay app started below
    elif args.config:
        settings["config"] = args.config  # workers are spawned in this working directory
    elif args.upstream:
        settings["upstream"] = args.upstream
    else:
        raise CliError("give --upstream URL, --config FILE or --demo")
    if args.tool_prompt or args.tool_prompt_retry:
        if args.config:
            raise CliError("--tool-prompt goes with --upstream; in a config file set tool_prompt per backend")
        settings["backend"] = {"tool_prompt": args.tool_prompt or "hermes", "tool_prompt_retry": args.tool_prompt_retry}
    for flag, key, value in (("--constrain", "constrain", args.constrain),
                             ("--stream-arguments", "stream_arguments", args.stream_arguments or None),
                             ("--calls-in-reasoning", "calls_in_reasoning", args.calls_in_reasoning or None),
                             ("--system-messages", "system_messages", args.system_messages),
                             ("--reasoning-start", "reasoning_start", args.reasoning_start),
                             ("--response-start", "response_start", args.response_start or None),
                             ("--chat-template", "chat_template", args.chat_template),
                             ("--dialect", "dialects", args.dialect)):
        if value is None:
            continue
        if args.config:
            raise CliError(f"{flag} goes with --upstream; in a config file set {key} per backend")
        settings["backend"] = {**settings.get("backend", {}), key: value}
    if args.constrain not in (None, "off") and "tool_prompt" not in settings.get("backend", {}):
        raise CliError("--constrain goes with --tool-prompt: it constrains decoding to the calls the prompt teaches")
    if args.api_key:  # the proxy's own keys: handed on (to worker processes too) in the environment
        from ..proxy.config import KEYS_ENV

        os.environ[KEYS_ENV] = ",".join(filter(None, [os.environ.get(KEYS_ENV, ""), *args.api_key]))
    if not args.demo:
        return _serve(settings, args.log_level, out)
    from ..harness.examples import EXAMPLES
    from ..harness.replay import create_replay_app

    # One process, two servers: uvicorn's access log is the proxy's ([proxy]), the replay's lines are its own.
    with ServerThread(create_replay_app(token_delay=0.02, log_requests=True), access_log=False) as upstream:
        settings["upstream"] = upstream.url + "/v1"
        json_lines = settings["server"].get("log_format") == "json"
        _say(f"built-in replay upstream at {upstream.url}/v1 (models: {', '.join(EXAMPLES)})", json_lines, out)
        try:
            return _serve(settings, args.log_level, out, label="proxy")
        finally:  # uvicorn's server log is one per process: the replay's own shutdown lines would read as the proxy's
            logging.getLogger("uvicorn.error").setLevel(logging.WARNING)


def _say(message: str, json_lines: bool, out: TextIO, level: int = logging.INFO) -> None:
    """A line of ``serve``'s own: ``streamparse: ...`` (a warning on stderr), or a JSON line as the logs are."""
    from ..proxy.access_log import JSONFormatter

    stream = out if level < logging.WARNING else sys.stderr
    if json_lines:
        line = JSONFormatter().format(logging.LogRecord("streamparse.serve", level, __file__, 0, message, None, None))
    else:
        line = f"streamparse{' serve: warning' if level >= logging.WARNING else ''}: {message}"
    print(line, file=stream, flush=True)


def _serve(settings: dict[str, Any], log_level: str, out: TextIO, label: str | None = None) -> int:
    """Check everything, bind the port, then serve: in this process, or in worker processes."""
    with _metrics_dir():
        return _serve_checked(settings, log_level, out, label)


@contextlib.contextmanager
def _metrics_dir() -> Iterator[None]:
    """``$PROMETHEUS_MULTIPROC_DIR`` for the workers' shared /metrics: a new temporary directory (removed at
    the end) unless it is set. Set before prometheus-client is first imported, which reads it then."""
    from ..proxy.metrics import MULTIPROC_ENV

    if os.environ.get(MULTIPROC_ENV):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="streamparse-metrics-") as path:
        os.environ[MULTIPROC_ENV] = path
        try:
            yield
        finally:
            os.environ.pop(MULTIPROC_ENV, None)


def _serve_checked(settings: dict[str, Any], log_level: str, out: TextIO, label: str | None) -> int:
    from ..proxy.config import ConfigError
    from ..proxy.runner import serve_app, serve_workers
    from ..proxy.app import create_app
    from ..proxy.workers import APP_FACTORY, config_from_settings, settings_env

    try:
        config = config_from_settings(settings)
        config.check_environment()
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    sock = listen(config.host, config.port, per_worker=config.workers > 1)
    from ..proxy.catalog import probe_upstreams

    json_lines = config.log_format == "json"
    from ..proxy.responses import store_warnings

    for line in [*probe_upstreams(config), *store_warnings(config)]:
        _say(line, json_lines, out, logging.WARNING)
    with sock:
        workers = f", {config.workers} workers" if config.workers > 1 else ""
        _say(f"proxy on http://{config.host}:{config.port}/v1 -> " + ", ".join(b.display for b in config.backends)
             + workers, json_lines, out)
        if config.workers > 1:
            started = serve_workers(APP_FACTORY, sock, config.workers, log_level, settings_env(settings),
                                    config.drain_timeout, config.log_format, label)
        else:
            started = serve_app(create_app(config), sock, log_level, config.log_format, label)
    return 0 if started else 1


def run_replay(args: argparse.Namespace, out: TextIO) -> int:
    from ..harness.replay import create_replay_app
    from ..proxy.runner import serve_app

    with listen(args.host, args.port) as sock:
        print(f"streamparse: replay upstream on http://{args.host}:{args.port}/v1", file=out, flush=True)
        started = serve_app(create_replay_app(token_delay=args.delay, stamp=args.stamp), sock, args.log_level)
    return 0 if started else 1


def check_range(option: str, value: int | None, high: int | None = None) -> None:
    if value is not None and (value < 1 or (high is not None and value > high)):
        raise CliError(f"{option} must be {f'between 1 and {high}' if high else 'at least 1'}, not {value}")


def listen(host: str, port: int, per_worker: bool = False) -> socket.socket:
    from ..proxy.runner import listening_socket

    check_range("port", port, 65535)
    try:
        return listening_socket(host, port, per_worker)
    except OSError as exc:
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def add_serve_parser(sub: Any) -> None:
    """``streamparse serve`` and its flags (``sub``: the command line's subparsers)."""
    s = sub.add_parser("serve", help="run the proxy in front of an OpenAI-compatible server")
    s.add_argument("--upstream", help="upstream base URL as an OpenAI client takes it, e.g. http://127.0.0.1:8000/v1")
    s.add_argument("--config", help="TOML file with several backends (see streamparse.proxy.config)")
    s.add_argument("--demo", action="store_true", help="use the built-in replay upstream (no model server needed)")
    s.add_argument("--host", default=None, help="default: [server] host in --config, else 127.0.0.1")
    s.add_argument("--port", type=int, default=None, help="default: [server] port in --config, else 8080")
    s.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (default: [server] workers in --config, else 1). Each worker has its own "
                        "upstream connections, so max_connections applies per worker; with --demo the replay "
                        "upstream stays in the main process, shared by the workers")
    s.add_argument("--tool-prompt", metavar="DIALECT",
                   help="the upstream ignores 'tools': prompt them in this dialect (e.g. hermes, qwen3_coder)")
    s.add_argument("--tool-prompt-retry", action="store_true",
                   help="with --tool-prompt: ask once more when tool_choice demanded a call and none came")
    s.add_argument("--constrain", choices=("off", "auto", "llamacpp", "vllm", "sglang"), default=None,
                   help="with --tool-prompt: constrain decoding to the prompted dialect's calls to the given tools, "
                        "in this engine's request fields (auto: probe the upstream once; default off)")
    s.add_argument("--stream-arguments", action="store_true",
                   help="stream each tool call's arguments as the model writes them (name first, then pieces)")
    s.add_argument("--calls-in-reasoning", action="store_true",
                   help="a call to an offered tool written inside <think> leaves as a call (off: it stays reasoning)")
    s.add_argument("--reasoning-start", choices=("closed", "open", "auto", "asked"), default=None,
                   help="the chat template opens <think> in the prompt, so answers start inside reasoning: open "
                        "(always), auto (unless the request turns thinking off), asked (only when it turns it on), "
                        "closed (never, the default). For an engine that does not split reasoning out itself")
    s.add_argument("--response-start", action="store_true",
                   help="when an answer does not start in reasoning, the chat template opened a response channel "
                        "instead (Kimi K3 with thinking off): the answer starts inside it")
    s.add_argument("--chat-template", default=None, metavar="PATH|auto|off",
                   help="the model's chat template, which tells its tool-call format, whether answers start in "
                        "reasoning, and its stop tokens: auto (the default) asks the upstream (llama.cpp /props, "
                        "vLLM /tokenizer_info, Ollama /api/show, ...); or a .jinja file, a model folder or a GGUF "
                        "file; off: none. --dialect, --reasoning-start and --response-start still win")
    s.add_argument("--system-messages", choices=("inline", "fold"), default=None,
                   help="system messages after the first (Claude Code sends one): each in its place (inline, the "
                        "default), or folded into the leading one, for chat templates that take only one (fold)")
    s.add_argument("--dialect", action="append", type=dialect_name, metavar="NAME",
                   help="the upstream model's format (repeatable; names as vLLM/SGLang --tool-call-parser). One "
                        "dialect is pinned: its bare forms are read as the engine's parser reads them")
    s.add_argument("--api-key", action="append", metavar="KEY",
                   help="clients must present this key (Authorization: Bearer KEY or x-api-key: KEY; repeatable; "
                        "also $STREAMPARSE_API_KEYS, comma-separated, or [server] api_keys_env). /healthz stays open")
    s.add_argument("--drain-timeout", type=float, default=None, metavar="SECONDS",
                   help="on SIGTERM or Ctrl-C, seconds in-flight answers get to finish before each is ended "
                        "properly (an error event, then [DONE]); default: [server] drain_timeout, else 30")
    s.add_argument("--cors-origins", default=None, metavar="ORIGINS",
                   help="browser origins allowed to call the proxy, comma-separated, or '*' for any: preflights are "
                        "answered by the proxy (default: [server] cors_origins, else none: CORS off)")
    s.add_argument("--log-format", choices=("text", "json"), default=None,
                   help="json: one JSON line per request (request id, front, backend, status, timings, tool calls, "
                        "diagnostics) and every other log line as JSON (default: [server] log_format, else text)")
    s.add_argument("--responses-store", default=None, metavar="URL",
                   help="where /v1/responses keeps answers for previous_response_id and item_reference: 'memory' "
                        "(each process its own) or redis://HOST:PORT/DB (rediss:// too): one store for every "
                        "worker and replica (default: [server] responses_store, else memory)")
    s.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="uvicorn's log level (default info)")
    s.set_defaults(func=run_serve)
    s.__class__ = _ServeParser  # (the subparsers' class is the command line's; an unknown flag is ours to report)


class _ServeParser(argparse.ArgumentParser):
    """``serve``'s parser: an unknown flag is one ``CliError`` line, with the flag probably meant."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        from ..proxy.checks import did_you_mean

        parsed, extras = super().parse_known_args(args, namespace)
        unknown = [word.partition("=")[0] for word in extras if word.startswith("-")]
        if unknown:
            known = [option for action in self._actions for option in action.option_strings]
            raise CliError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
                           f"{did_you_mean(unknown, known)}; see streamparse serve --help")
        return parsed, extras
