"""A conductor as a service: one question in, the pool's answer out (no HTTP here).

:class:`ConductorModel` is what ``conductor-gym serve`` exposes as one OpenAI "model": a
conductor (any :class:`~conductor_gym.agents.Agent`, or a ``make_agent`` spec) over a
worker pool, with the env settings of its episodes. :meth:`ConductorModel.answer` plays
one episode of :class:`~conductor_gym.core.env.ConductorEnv` on the question:

* the question becomes a one-task source whose task has no reference; its grader,
  ``"served"``, judges nothing (a served answer is never scored);
* the conductor plans (recursive rounds too, with ``max_recursions > 0``) through the
  evaluation harness's batcher (:mod:`conductor_gym.bench.evaluate`): concurrent
  requests share ``act_batch`` calls, and each request's conductor tokens and cost
  are attributed to it exactly as in an evaluation;
* the pool executes each plan; the answer is the final step's response of the last
  round that ran (a stop, three empty lists, keeps the previous round's answer);
* a simulated worker cannot answer a served question: it models how often a real model
  is right on a benchmark task whose answer it is given, and a served question has
  none, so what it writes (``Final answer: \\boxed{}``, or no answer) is a placeholder.
  When the final step's worker is simulated, the answer says so after the response
  (:data:`SIMULATED_NOTE`), and :attr:`ServedAnswer.simulated` is true (the response's
  ``conductor.simulated``).

``seed`` fixes the episode as ``env.reset(seed=...)`` does (the worker draw and every
simulated outcome; with a conductor that depends only on its input, the whole answer).

Failures are never answers: :class:`ServeError` carries the HTTP status and the
OpenAI-style error fields. A worker that fails after its retries is a 502
``worker_error`` naming the step, the worker and the error class; a spent episode budget
a 429 ``budget_exhausted``, a spent run budget (the pool's, for every request) a 503;
the conductor's own model failing (``AgentError``) a 502 ``conductor_error``; a
completion that is not a valid plan a 500 ``conductor_error`` whose code is the parse
reason, except a plan over ``max_plan_chars`` only by its copies of the question (a
conductor that quotes it in every step): that is the question's size, a 413
``question_too_long``. The error's ``conductor`` details carry what failed and the tokens and cost
already spent (``usage``). Messages pass through :func:`redact` first.

Retries. Every failure of an episode that ran (each of the above) says
``x-should-retry: false`` (:meth:`ServeError.headers`): the official ``openai`` client
obeys it, where it would otherwise re-send a 429 or 5xx twice and so play, and pay for,
the whole episode three times. A worker's transient errors are already retried inside
the episode (the env's ``retry`` policy); the client cannot do better by re-sending.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conductor_gym.bench.evaluate import Batcher, run_config
from conductor_gym.core.agent import Agent, as_base_agent
from conductor_gym.core.agent_spec import make_agent
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.info import StepInfo
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConductorGymError, ConfigurationError
from conductor_gym.graders import Grade, register_grader, registered_graders
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.seeding import hash_seed
from conductor_gym.tasks.base import Task, TaskSource
from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "SERVED_GRADER",
    "SIMULATED_NOTE",
    "ConductorModel",
    "ServeError",
    "ServedAnswer",
    "TokenUsage",
    "redact",
]

SERVED_GRADER = "served"
"""The grader of a served question: it has no reference, so nothing is judged."""

SIMULATED_NOTE = (
    "[conductor-gym: this answer is a placeholder from the simulated worker {worker!r}"
    "{of_pool}. Simulated workers reproduce how often real models are right on "
    "benchmark tasks with known answers; they cannot answer a question of their own. "
    "Serve a pool of real models (backend litellm, hf or vllm) for real answers.]"
)
"""What follows the response when the final step's worker is simulated (module
docstring); ``{worker}`` is the worker's name, ``{of_pool}`` `` of pool 'NAME'`` when the
pool has a name."""

_RESERVED_ENV_ARGUMENTS = ("tasks", "task_options")


def _served_grade(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    return Grade(False, None, "a served question has no reference answer; nothing is graded")


if SERVED_GRADER not in registered_graders():
    register_grader(SERVED_GRADER)(_served_grade)


class _Question(TaskSource):
    """A task source of one task: the request's question, without a reference."""

    name = "served"

    def __init__(self, question: str) -> None:
        digest = hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self.task = Task(
            id=f"served/{digest}",
            question=question,
            reference="",
            grader=SERVED_GRADER,
            domain="served",
        )

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> Task:
        if index != 0:
            raise IndexError(f"task index {index} is outside 0..0")
        return self.task

    def __iter__(self) -> Iterator[Task]:
        return iter((self.task,))

    def fingerprint(self) -> str:
        return self.task.id


_SECRET_VARIABLE = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.I)
_MIN_SECRET_CHARS = 8


def redact(text: str, secrets_: Sequence[str] = ()) -> str:
    """``text`` with every value of ``secrets_`` and of every environment variable whose
    name looks secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``) replaced by
    ``[redacted]`` (values shorter than 8 characters are left: too common to be secrets)."""
    values = [*secrets_, *(v for k, v in os.environ.items() if _SECRET_VARIABLE.search(k))]
    for value in sorted(set(values), key=len, reverse=True):
        if len(value) >= _MIN_SECRET_CHARS:
            text = text.replace(value, "[redacted]")
    return text


class ServeError(ConductorGymError):
    """A request that got no answer: the HTTP ``status`` and OpenAI's error fields.

    Attributes:
        status: HTTP status code.
        type: OpenAI's ``error.type`` (``invalid_request_error``, ``worker_error``, ...).
        code: A machine-readable code (``worker_failed``, ``model_not_found``, ...).
        param: The request field at fault, or ``None``.
        details: JSON-ready facts for the response's ``conductor`` field (the failed
            worker, the conductor's completion, ...), or ``None``.
        retry: Whether a client should re-send the request (the ``x-should-retry``
            header), or ``None`` to leave it to the client; a 5xx defaults to ``False``.
        retry_after_s: Seconds a client should wait before re-sending
            (``retry-after``), or ``None``.
    """

    def __init__(
        self,
        status: int,
        type: str,
        code: str,
        message: str,
        *,
        param: str | None = None,
        details: dict[str, Any] | None = None,
        retry: bool | None = None,
        retry_after_s: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.code = code
        self.message = message
        self.param = param
        self.details = details
        self.retry = False if retry is None and status >= 500 else retry
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        """The response headers that tell a client whether and when to re-send."""
        headers = {}
        if self.retry is not None:
            headers["x-should-retry"] = "true" if self.retry else "false"
        if self.retry_after_s is not None:
            headers["retry-after"] = str(self.retry_after_s)
        return headers

    def body(self, secrets_: Sequence[str] = ()) -> dict[str, Any]:
        """The JSON error body: OpenAI's ``{"error": {...}}``, plus ``conductor``."""
        body: dict[str, Any] = {
            "error": {
                "message": redact(self.message, secrets_),
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }
        if self.details is not None:
            body["conductor"] = _redact_json(self.details, secrets_)
        return body


def _redact_json(value: Any, secrets_: Sequence[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets_)
    if isinstance(value, Mapping):
        return {k: _redact_json(v, secrets_) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_json(v, secrets_) for v in value]
    return value


@dataclass(frozen=True)
class TokenUsage:
    """Tokens and cost of one party of an episode (the conductor, or the workers)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class ServedAnswer:
    """The answer to one question, with everything that produced it.

    Attributes:
        content: The final step's response (the assistant message), followed by
            :data:`SIMULATED_NOTE` when that step's worker is simulated.
        conductor: The conductor's tokens and cost (every round).
        workers: The workers' tokens and cost (every call, retries included).
        seed: The episode's reset seed.
        completions: The conductor's completion of each round.
        info: The env's final ``info`` (``rounds``, ``pool``, ``worker_calls``, ...).
        simulated: Whether the final step's worker is simulated (its answer is a
            placeholder).
    """

    content: str
    conductor: TokenUsage
    workers: TokenUsage
    seed: int
    completions: tuple[str, ...]
    info: StepInfo = field(repr=False)
    simulated: bool = False

    @property
    def usage(self) -> TokenUsage:
        """Conductor plus workers: what the response's ``usage`` reports."""
        return self.conductor + self.workers

    def extension(self) -> dict[str, Any]:
        """The response's ``conductor`` field: the plan of every round, its trace, the
        workers the ids stood for, and the cost split (JSON-ready)."""
        rounds = [
            {**r.to_dict(), "completion": text}
            for r, text in zip(self.info["rounds"], self.completions, strict=True)
        ]
        executed = [r for r in rounds if r["trace"] is not None]
        return {
            "seed": self.seed,
            "workers": list(self.info["pool"]),
            "plan": executed[-1]["plan"],
            "rounds": rounds,
            "worker_calls": int(self.info["worker_calls"]),
            "latency_s": float(self.info["latency_s"]),
            "cost_usd": self.usage.cost_usd,
            "usage": {"conductor": self.conductor.to_dict(), "workers": self.workers.to_dict()},
            "simulated": self.simulated,
        }


class ConductorModel:
    """A conductor over a worker pool, served under ``name`` (module docstring).

    Args:
        name: The model id clients ask for.
        agent: An :class:`~conductor_gym.core.agent.Agent` or a ``make_agent`` spec.
        pool: A pool preset, file, specs or :class:`~conductor_gym.pool.pool.WorkerPool`
            (the ``pool`` setting; default: the config's).
        config: The episodes' :class:`~conductor_gym.core.config.EnvConfig`; ``settings`` (its
            fields as keywords: ``k``, ``shuffle_workers``, ``cache``, ``max_steps``,
            ``max_recursions``, ``retry``, ``episode_budget``, ...) override it, and the
            agent's ``env_overrides`` apply. ``tasks`` is the server's to set: each
            request is its own task.
        max_batch: Most requests in one ``act_batch`` call of the conductor.

    Bad arguments raise ``ConfigurationError`` here, not at the first request.
    """

    def __init__(
        self,
        name: str,
        agent: Agent | str,
        pool: str | WorkerPool | Sequence[WorkerSpec] | None = None,
        *,
        config: EnvConfig | None = None,
        max_batch: int = 64,
        **settings: Any,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError("model name must be a non-empty string")
        if reserved := sorted(set(settings) & set(_RESERVED_ENV_ARGUMENTS)):
            raise ConfigurationError(f"env setting(s) {reserved} are set by the server")
        if pool is not None:
            settings["pool"] = pool
        self.name = name
        self.agent = as_base_agent(make_agent(agent) if isinstance(agent, str) else agent)
        self.spec = agent if isinstance(agent, str) else _agent_label(self.agent, agent)
        self.config, _ = run_config(self.agent, config, settings)
        self.pool = self.config.build_pool()
        self._simulated = frozenset(s.name for s in self.pool.specs if s.backend == "simulated")
        self._episodes = self.config.replace(
            pool=self.pool, k=None, shuffle_workers=None, cache=None
        )
        self._batcher = Batcher(self.agent, max_batch)
        self._env(_Question("?")).close()  # fail on bad env arguments now

    def describe(self) -> dict[str, Any]:
        """What ``GET /v1/models`` shows: the agent spec, the pool and the env settings."""
        return {
            "agent": self.spec,
            "pool": self.pool.describe(),
            "env": {k: v for k, v in self.config.describe().items() if k not in ("tasks", "pool")},
        }

    def _env(self, question: _Question) -> ConductorEnv:
        return ConductorEnv(self._episodes.replace(tasks=question, task_options={}))

    async def answer(self, question: str, *, seed: int | None = None) -> ServedAnswer:
        """Play one episode on ``question`` (module docstring); raise :class:`ServeError`
        when it gives no answer."""
        if seed is None:
            seed = secrets.randbits(62)
        env = self._env(_Question(question))
        completions: list[str] = []
        conductor = TokenUsage()
        try:
            observation, first = env.reset(seed=seed)
            seen: dict[str, Any] = dict(first)
            while True:
                agent_seed = hash_seed("serve", seed, len(completions))
                action, prompt, completion, cost, failure = await self._batcher.act(
                    observation, seen, agent_seed
                )
                conductor += TokenUsage(prompt, completion, cost)
                if action is None:
                    raise _conductor_failure(failure or {})
                completions.append(action)
                observation, _, terminated, truncated, info = await env.astep(action)
                seen = dict(info)
                if terminated or truncated:
                    break
        finally:
            env.close()
        workers = TokenUsage(
            int(info["prompt_tokens"]), int(info["completion_tokens"]), float(info["cost_usd"])
        )
        spent = {"conductor": conductor.to_dict(), "workers": workers.to_dict()}
        if info["outcome"] == Outcome.INVALID:
            raise _invalid_plan(info, completions, spent, question, self._episodes.max_plan_chars)
        if info["outcome"] == Outcome.ERROR:
            raise _episode_failure(info["error"] or {}, spent)
        traces = [r.trace for r in info["rounds"] if r.trace is not None and r.trace.steps]
        content = traces[-1].final_response or ""
        last = traces[-1].steps[-1].worker
        simulated = last in self._simulated
        if simulated:
            of_pool = f" of pool {self.pool.name!r}" if self.pool.name else ""
            note = SIMULATED_NOTE.format(worker=last, of_pool=of_pool)
            content = f"{content}\n\n{note}" if content else note
        return ServedAnswer(
            content=content,
            conductor=conductor,
            workers=workers,
            seed=seed,
            completions=tuple(completions),
            info=info,
            simulated=simulated,
        )

    def close(self) -> None:
        self._batcher.close()


def _agent_label(agent: Agent, given: object) -> str:
    spec = as_base_agent(agent).spec
    return spec or f"{type(given).__module__}:{type(given).__qualname__}"


def _conductor_failure(failure: Mapping[str, Any]) -> ServeError:
    return ServeError(
        502,
        "conductor_error",
        "conductor_unavailable",
        f"the conductor's model gave no completion: {failure.get('message', 'unknown error')}",
        details={"error": dict(failure)},
        retry=False,
    )


def _quoted_chars(question: str, completion: str) -> int:
    """Characters of ``completion`` that are copies of ``question`` (as it is, or
    escaped as a string literal)."""
    forms = {question, json.dumps(question, ensure_ascii=False)[1:-1], repr(question)[1:-1]}
    return max(completion.count(form) * len(form) for form in forms if form)


def _invalid_plan(
    info: Mapping[str, Any],
    completions: Sequence[str],
    spent: dict[str, Any],
    question: str,
    max_plan_chars: int,
) -> ServeError:
    error = info["parse_error"] or {"reason": "invalid", "detail": "no valid plan"}
    last = completions[-1] if completions else ""
    if error["reason"] == "too_long" and len(last) - _quoted_chars(question, last) <= (
        max_plan_chars
    ):
        # The plan is over the parser's limit only by its copies of the question.
        return ServeError(
            413,
            "invalid_request_error",
            "question_too_long",
            f"the conductor's plan quotes the question ({len(question)} characters) and "
            f"so is over the limit of {max_plan_chars} characters a plan may have: send "
            "a shorter question",
            param="messages",
            details={"parse_error": dict(error), "usage": spent},
            retry=False,
        )
    return ServeError(
        500,
        "conductor_error",
        str(error["reason"]),
        f"the conductor wrote no valid plan ({error['reason']}): {error['detail']}",
        details={"parse_error": dict(error), "completions": list(completions), "usage": spent},
        retry=False,
    )


def _episode_failure(error: Mapping[str, Any], spent: dict[str, Any]) -> ServeError:
    details = {"error": dict(error), "usage": spent}
    kind = error.get("kind")
    if kind == "budget":
        # The run budget is the pool's, for every request: the server is out of credit.
        run = error.get("scope") == "run"
        return ServeError(
            503 if run else 429,
            "server_error" if run else "rate_limit_error",
            "budget_exhausted",
            f"a spending budget ran out: {error.get('message', '')}",
            details=details,
            retry=False,
        )
    if kind == "infrastructure":
        return ServeError(
            502,
            "worker_error",
            "worker_failed",
            f"worker {error['worker']!r} ({error['error_type']}) failed at step "
            f"{error['step']} after {error['attempts']} attempt(s): {error['message']}",
            details=details,
            retry=False,
        )
    return ServeError(500, "server_error", f"{kind}_failed", f"{kind} failed", details=details)
