"""``conductor-gym serve``: run a conductor behind an OpenAI-compatible API (uvicorn).

Contract. :func:`add_parser` adds the ``serve`` command; :func:`run_serve` builds one
:class:`~conductor_gym.serve.service.ConductorModel` named ``--name`` from ``--agent``
(an agent spec; ``--agent-arg KEY=VALUE`` passes keyword arguments to it), ``--pool``
and ``--env KEY=VALUE`` env arguments (``VALUE`` read as JSON when it parses), serves it
with :func:`conductor_gym.serve.create_app` on ``--host``/``--port`` until interrupted,
and returns the exit status: 0 after a clean shutdown, 2 for a bad argument or a
missing ``[serve]`` extra. The bearer token, when wanted, is read from the environment
variable named by ``--api-key-env`` (default ``CONDUCTOR_GYM_API_KEY``), never from the
command line, and is never printed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from conductor_gym.cli.evaluate import _env_pair
from conductor_gym.pool.pool import DEFAULT_POOL

__all__ = ["DEFAULT_API_KEY_ENV", "add_parser", "run_serve"]

DEFAULT_API_KEY_ENV = "CONDUCTOR_GYM_API_KEY"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``conductor-gym serve`` to ``commands``."""
    serve = commands.add_parser(
        "serve", help="serve a conductor over a pool behind an OpenAI-compatible HTTP API"
    )
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
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--max-concurrency", type=int, default=64, help="episodes at once")
    serve.add_argument("--max-queue", type=int, default=256, help="requests waiting at most")
    serve.add_argument(
        "--max-request-bytes", type=int, default=1 << 20, help="largest request body (1 MiB)"
    )
    serve.add_argument(
        "--api-key-env", default=DEFAULT_API_KEY_ENV, metavar="VAR",
        help=f"environment variable holding the bearer token (default {DEFAULT_API_KEY_ENV}; "
        "unset or empty: no authentication)",
    )  # fmt: skip
    serve.add_argument("--log-level", default="info", choices=("debug", "info", "warning"))
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """Run the server (module docstring)."""
    try:
        import uvicorn

        from conductor_gym.serve import ConductorModel, create_app
    except ImportError as exc:
        print(
            f"conductor-gym serve: {exc}; install the server: pip install 'conductor-gym[serve]'",
            file=sys.stderr,
        )
        return 2
    from conductor_gym.core.agent_spec import make_agent
    from conductor_gym.pool.config import PoolConfigError

    api_key = os.environ.get(args.api_key_env) or None
    try:
        agent_kwargs: dict[str, Any] = dict(args.agent_arg)
        model = ConductorModel(
            args.name,
            make_agent(args.agent, **agent_kwargs),
            args.pool,
            max_batch=args.max_concurrency,
            **dict(args.env),
        )
        app = create_app(
            [model],
            api_key=api_key,
            max_concurrency=args.max_concurrency,
            max_queue=args.max_queue,
            max_request_bytes=args.max_request_bytes,
        )
    except (ValueError, TypeError, PoolConfigError) as exc:
        print(f"conductor-gym serve: {exc}", file=sys.stderr)
        return 2
    auth = f"bearer token from ${args.api_key_env}" if api_key else "none"
    print(
        f"serving {args.name!r} (agent {model.spec!r}, pool {args.pool!r}) on "
        f"http://{args.host}:{args.port}/v1; authentication: {auth}",
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
