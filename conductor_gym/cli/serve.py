"""``conductor-gym serve``: run a conductor behind an OpenAI-compatible API (uvicorn).

Contract. :class:`ServeCommand` is the ``serve`` command; :func:`run_serve` builds one
:class:`~conductor_gym.serve.service.ConductorModel` named ``--name`` from ``--agent``
(an agent spec; ``--agent-arg KEY=VALUE`` passes keyword arguments to it), ``--pool``
the env settings' generated flags (``--max-steps``, ``--reward``, ...:
:func:`~conductor_gym.core.config.add_config_arguments`) and ``--env KEY=VALUE`` (``VALUE``
read as JSON when it parses; it wins over a flag of the same setting), serves it
with :func:`conductor_gym.serve.create_app` on ``--host``/``--port`` until interrupted,
and returns the exit status: 0 after a clean shutdown, 2 for a bad argument or a
missing ``[serve]`` extra. The bearer token, when wanted, is read from the environment
variable named by ``--api-key-env`` (default ``CONDUCTOR_GYM_API_KEY``), never from the
command line, and is never printed.

Before serving it prints what the pool sends where (each worker's key variable -> host),
and which workers are simulated (their answers to served questions are placeholders);
a pool file that would send a key the policy of
:mod:`conductor_gym.workers.credentials` refuses is exit 2 unless
``--trust-pool-credentials`` is given. Connection limits (``--header-timeout``,
``--keep-alive``, ``--max-connections``, ``--write-timeout``, ``--max-unread-bytes``)
are :class:`~conductor_gym.serve.server.ServerLimits`;
``--body-timeout``, ``--max-request-bytes`` and ``--max-question-chars`` the app's;
``--log-interval`` the logs' rate limit. Binding a non-loopback ``--host`` without a
token prints a warning to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from conductor_gym.cli.command import Command, Subparsers
from conductor_gym.cli.evaluate import _env_pair
from conductor_gym.core.config import add_config_arguments, settings_from_arguments
from conductor_gym.pool.pool import DEFAULT_POOL

__all__ = ["DEFAULT_API_KEY_ENV", "ServeCommand", "run_serve"]

DEFAULT_API_KEY_ENV = "CONDUCTOR_GYM_API_KEY"


class ServeCommand(Command):
    """``conductor-gym serve`` (module docstring): :func:`run_serve`."""

    name = "serve"
    help = "serve a conductor over a pool behind an OpenAI-compatible HTTP API"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        serve = self.add_parser(subparsers)
        serve.add_argument("--agent", required=True, help="the conductor: an agent spec")
        serve.add_argument("--pool", default=DEFAULT_POOL, help="pool preset or .toml file")
        serve.add_argument("--name", default="conductor", help="the model id clients ask for")
        serve.add_argument(
            "--agent-arg", type=_env_pair, action="append", default=[], metavar="KEY=VALUE",
            help="a keyword argument of the agent (repeatable), e.g. api_base=http://...",
        )  # fmt: skip
        serve.add_argument(
            "--env", type=_env_pair, action="append", default=[], metavar="KEY=VALUE",
            help="a ConductorEnv argument (repeatable), e.g. max_recursions=1",
        )  # fmt: skip
        serve.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
        serve.add_argument(
            "--port", type=int, default=8000, help="the TCP port to listen on (default: 8000)"
        )
        serve.add_argument("--max-concurrency", type=int, default=64, help="episodes at once")
        serve.add_argument("--max-queue", type=int, default=256, help="requests waiting at most")
        serve.add_argument(
            "--max-request-bytes", type=int, default=1 << 20, help="largest request body (1 MiB)"
        )
        serve.add_argument(
            "--max-question-chars", type=int, default=16_384,
            help="longest question, in characters (default 16384; longer: 413)",
        )  # fmt: skip
        serve.add_argument(
            "--header-timeout", type=float, default=10.0, metavar="S",
            help="seconds a connection has to send a request head (default 10)",
        )  # fmt: skip
        serve.add_argument(
            "--body-timeout", type=float, default=30.0, metavar="S",
            help="seconds a request body has to arrive (default 30; slower: 408)",
        )  # fmt: skip
        serve.add_argument(
            "--keep-alive", type=float, default=5.0, metavar="S",
            help="seconds an idle connection is kept (default 5)",
        )  # fmt: skip
        serve.add_argument(
            "--max-connections", type=int, default=512,
            help="connections open at once; more close the oldest idle one (default 512)",
        )  # fmt: skip
        serve.add_argument(
            "--write-timeout", type=float, default=10.0, metavar="S",
            help="seconds a client may leave its responses unread past --max-unread-bytes "
            "before its connection is dropped (default 10)",
        )  # fmt: skip
        serve.add_argument(
            "--max-unread-bytes", type=int, default=65_536, metavar="N",
            help="most response bytes held for a client that does not read (default 65536)",
        )  # fmt: skip
        serve.add_argument(
            "--log-interval", type=float, default=10.0, metavar="S",
            help="log at most one line per kind of error per this many seconds (default 10)",
        )  # fmt: skip
        serve.add_argument(
            "--trust-pool-credentials", action="store_true",
            help="send the keys the pool file names wherever it says (default: only a "
            "provider's API-key variables, to its hosts or to loopback)",
        )  # fmt: skip
        serve.add_argument(
            "--api-key-env", default=DEFAULT_API_KEY_ENV, metavar="VAR",
            help=f"environment variable holding the bearer token (default {DEFAULT_API_KEY_ENV}; "
            "unset or empty: no authentication)",
        )  # fmt: skip
        serve.add_argument(
            "--private-monitoring", action="store_true",
            help="/health and /metrics ask for the bearer token too (they name the models and "
            "the spend; default: open, for probes and scrapers)",
        )  # fmt: skip
        serve.add_argument(
            "--log-level",
            default="info",
            choices=("debug", "info", "warning"),
            help="the server log's level (default: info)",
        )
        # the clients give the questions; every other env setting has its flag
        add_config_arguments(serve, exclude=("tasks", "task_options", "pool"))
        return serve

    def run(self, args: argparse.Namespace) -> int:
        return run_serve(args)


def run_serve(args: argparse.Namespace) -> int:
    """Run the server (module docstring)."""
    try:
        from conductor_gym.serve import ConductorModel, create_app
        from conductor_gym.serve.server import ServerLimits, exposure_warning, run
    except ImportError as exc:
        print(
            f"conductor-gym serve: {exc}; install the server: pip install 'conductor-gym[serve]'",
            file=sys.stderr,
        )
        return 2
    from conductor_gym.core.agent_spec import make_agent
    from conductor_gym.pool.pool import make_pool
    from conductor_gym.workers.credentials import check_credentials, format_routes

    api_key = os.environ.get(args.api_key_env) or None
    try:
        agent_kwargs: dict[str, Any] = dict(args.agent_arg)
        settings = settings_from_arguments(args)
        settings.pop("pool", None)  # serve's own --pool (the same dest), passed on its own
        env = {**settings, **dict(args.env)}
        pool: Any = args.pool
        if args.trust_pool_credentials:
            # A ready pool: the env would rebuild a file's pool under the default policy.
            pool = make_pool(
                args.pool,
                k=env.pop("k", None),
                shuffle=env.pop("shuffle_workers", None),
                cache=env.pop("cache", None),
                trust_credentials=True,
            )
        model = ConductorModel(
            args.name,
            make_agent(args.agent, **agent_kwargs),
            pool,
            max_batch=args.max_concurrency,
            **env,
        )
        app = create_app(
            [model],
            api_key=api_key,
            max_concurrency=args.max_concurrency,
            max_queue=args.max_queue,
            max_request_bytes=args.max_request_bytes,
            max_question_chars=args.max_question_chars,
            body_timeout_s=args.body_timeout,
            log_interval_s=args.log_interval,
            private_monitoring=args.private_monitoring,
        )
        limits = ServerLimits(
            header_timeout_s=args.header_timeout,
            keep_alive_s=args.keep_alive,
            max_connections=args.max_connections,
            write_timeout_s=args.write_timeout,
            max_unread_bytes=args.max_unread_bytes,
        )
    except (ValueError, TypeError) as exc:  # PoolConfigError and CredentialPolicyError too
        print(f"conductor-gym serve: {exc}", file=sys.stderr)
        return 2
    print(format_routes(check_credentials(model.pool.specs, trust=True)), flush=True)
    if simulated := [s.name for s in model.pool.specs if s.backend == "simulated"]:
        print(
            f"note: simulated workers {simulated} cannot answer a question of their own: "
            "an answer whose final step one of them gives is a placeholder, and says so",
            flush=True,
        )
    if (warning := exposure_warning(args.host, api_key)) is not None:
        print(f"conductor-gym serve: WARNING: {warning}", file=sys.stderr, flush=True)
    auth = f"bearer token from ${args.api_key_env}" if api_key else "none"
    print(
        f"serving {args.name!r} (agent {model.spec!r}, pool {args.pool!r}) on "
        f"http://{args.host}:{args.port}/v1 (health: /health, Prometheus: /metrics); "
        f"authentication: {auth}",
        flush=True,
    )
    run(
        app,
        host=args.host,
        port=args.port,
        limits=limits,
        log_level=args.log_level,
        log_interval_s=args.log_interval,
    )
    return 0
