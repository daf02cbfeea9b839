"""``ConductorEnv``: one conductor episode as a Gymnasium environment."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from conductor_gym._loop import LoopRunner
from conductor_gym._validate import is_int, require_int
from conductor_gym.execute import BoundWorker, ExecutionError, RetryPolicy, Trace, run_plan
from conductor_gym.graders import Grade, GraderError, grade
from conductor_gym.plan import PlanParseError, parse_plan
from conductor_gym.pool import PoolDraw, WorkerPool, WorkerSpec, make_pool
from conductor_gym.prompts import DEFAULT_TEMPLATES, PromptTemplates
from conductor_gym.reward import Outcome, RewardScheme, make_reward_scheme
from conductor_gym.spaces import UnicodeText
from conductor_gym.tasks import Task, TaskSource, make_task_source

__all__ = ["MAX_OBSERVATION_CHARS", "ConductorEnv", "StepResult"]

MAX_OBSERVATION_CHARS = 1 << 20
_RESET_OPTIONS = ("task_index",)
_EMPTY_PLAN_DETAIL = (
    "three empty lists return an earlier answer in a recursive round; the first plan of an "
    "episode needs at least one step"
)

StepResult = tuple[str, float, bool, bool, dict[str, Any]]


@dataclass
class _Episode:
    task: Task
    task_index: int
    draw: PoolDraw
    workers: tuple[BoundWorker, ...]
    seed: int
    prompt: str
    done: bool = False


def _bind_task(bound: BoundWorker, task: Task) -> BoundWorker:
    # Simulated backends need the task's ground truth to simulate an answer; real
    # backends have no ``for_task`` and are used as they are.
    for_task = getattr(bound.worker, "for_task", None)
    return dataclasses.replace(bound, worker=for_task(task)) if for_task else bound


class ConductorEnv(gym.Env[str, str]):
    r"""A conductor episode: plan a workflow for a pool of worker LLMs, get it graded.

    ## Description

    Each episode samples a task (a question, its reference and grader) and the ``k``
    workers the conductor may use, shown only as ``Model 0 .. Model k-1``. The agent
    answers with a completion that ends in three Python lists, ``model_id``,
    ``subtasks`` and ``access_list`` (1 to ``max_steps`` steps). The env parses them
    (:func:`conductor_gym.plan.parse_plan`), runs the steps in order, each worker
    seeing its subtask and the earlier steps its access list selects
    (:func:`conductor_gym.execute.run_plan`), and grades the last step's answer.
    Offline by default: the ``offline`` procedural tasks on the ``sim-paper``
    simulated pool, with no network and no keys.

    ## Action space

    ``UnicodeText(0, max_plan_chars)``: any string (the conductor's completion).
    Longer text is an invalid plan (``too_long``), not an error.

    ## Observation space

    ``UnicodeText(1, 2**20)``: the conductor prompt (rules, worked examples, the
    question and ``Model 0 .. Model k-1``). After the final step the observation is
    the same prompt, unchanged.

    ## Rewards

    From ``reward`` (default ``"paper"``: 1.0 correct, 0.5 a valid plan with a wrong
    final answer, 0.0 an invalid plan, paper §3.1). Three empty lists (the empty plan)
    are invalid at the start of an episode. When a worker or the grader fails after
    retries the reward is 0.0 and ``truncated`` is ``True``: that is not a score, and
    ``info["error"]`` says what failed.

    ## Episode end

    Single-turn: ``terminated=True`` after one valid or invalid plan;
    ``truncated=True`` (and ``terminated=False``) after an infrastructure failure.

    ## Arguments

    * ``tasks``: a task source name (``"offline"``, ``"offline-ood"``,
      ``"offline/<family>"``, see :func:`conductor_gym.tasks.task_source_names`) or a
      :class:`~conductor_gym.tasks.TaskSource`.
    * ``pool``: a pool preset name (``"sim-paper"``), a list of
      :class:`~conductor_gym.pool.WorkerSpec` or a :class:`~conductor_gym.pool.WorkerPool`.
    * ``k``: workers per episode (default: all); ``shuffle_workers``: shuffle the
      ordinal ids every episode (default off). Both only with a name or specs.
    * ``reward``: ``"paper"``, ``"binary"`` or a :class:`~conductor_gym.reward.RewardScheme`.
    * ``max_steps``: most steps a plan may have (paper: 5).
    * ``templates``: :class:`~conductor_gym.prompts.PromptTemplates` for every prompt.
    * ``question_to_all_workers``: also give the question to every step's worker, not
      just the first (default off, as in the paper).
    * ``max_plan_chars``: longest completion parsed (default 65536).
    * ``retry``: :class:`~conductor_gym.execute.RetryPolicy` for transient worker errors.
    * ``render_mode``: ``None`` or ``"ansi"`` (a text account of the last episode).

    ## Reset

    ``reset(seed=s)`` fixes the task, the worker draw and every simulated outcome: the
    same seed and the same action give the same reward and trace.
    ``options={"task_index": i}`` picks task ``i`` of the source; the RNG is consumed
    exactly as without it, so the worker draw for a seed does not depend on the option.

    ## Info

    After ``reset``: ``task_id``, ``task_index``, ``domain``, ``question``, ``pool``
    (real worker names; position ``i`` is ``Model i``), ``num_workers``, ``max_steps``.
    After ``step``, additionally: ``outcome`` (``"correct"``, ``"wrong"``,
    ``"invalid"`` or ``"error"``), ``plan`` (:class:`~conductor_gym.plan.Plan` or
    ``None``), ``parse_error`` (``{"reason", "detail"}`` or ``None``; ``reason`` is one of
    :data:`conductor_gym.plan.REASONS`, or ``"empty_plan"``), ``trace``
    (:class:`~conductor_gym.execute.Trace` or ``None``; partial after a failure),
    ``grade`` (:class:`~conductor_gym.graders.Grade` or ``None``), ``error`` (``None``
    or a dict naming the failed step, worker and error class), and the totals
    ``worker_calls``, ``prompt_tokens``, ``completion_tokens``, ``cost_usd``,
    ``latency_s`` (summed worker latency).

    ## Async use

    ``step`` runs the plan on a private event loop. From inside a running loop (an
    async trainer, a notebook), ``await env.unwrapped.astep(action)`` instead; a plain
    ``step`` there still works but runs the plan on a helper thread.
    """

    # render_fps only silences Gymnasium's checker: "ansi" returns text, at no frame rate.
    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        tasks: str | TaskSource = "offline",
        pool: str | WorkerPool | Sequence[WorkerSpec] = "sim-paper",
        *,
        k: int | None = None,
        shuffle_workers: bool | None = None,
        reward: str | RewardScheme = "paper",
        max_steps: int = 5,
        templates: PromptTemplates | None = None,
        question_to_all_workers: bool = False,
        max_plan_chars: int = 65536,
        retry: RetryPolicy | None = None,
        render_mode: str | None = None,
    ) -> None:
        require_int("max_steps", max_steps)
        require_int("max_plan_chars", max_plan_chars)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode: unknown mode {render_mode!r}; choose one of "
                f"{self.metadata['render_modes']} or None"
            )
        if templates is not None and not isinstance(templates, PromptTemplates):
            raise ValueError("templates must be a PromptTemplates")
        self.tasks: TaskSource = make_task_source(tasks) if isinstance(tasks, str) else tasks
        if len(self.tasks) < 1:
            raise ValueError("tasks: the task source is empty")
        self.pool = make_pool(pool, k=k, shuffle=shuffle_workers)
        self.reward_scheme = make_reward_scheme(reward)
        self.max_steps = max_steps
        self.templates = templates or DEFAULT_TEMPLATES
        self.question_to_all_workers = bool(question_to_all_workers)
        self.max_plan_chars = max_plan_chars
        self.retry = retry or RetryPolicy()
        self.render_mode = render_mode

        self.action_space = UnicodeText(max_plan_chars, min_length=0)
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS, min_length=1)

        self._episode: _Episode | None = None
        self._last_info: dict[str, Any] | None = None
        self._runner = LoopRunner()

    # -- episode API -------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        if unknown := sorted(set(options) - set(_RESET_OPTIONS)):
            raise ValueError(f"reset: unknown option(s) {unknown}; valid: {list(_RESET_OPTIONS)}")
        rng = self.np_random
        task_index = int(rng.integers(len(self.tasks)))
        if "task_index" in options:
            task_index = options["task_index"]
            if not is_int(task_index):
                raise ValueError("reset: options['task_index'] must be an int")
            if not 0 <= task_index < len(self.tasks):
                raise ValueError(
                    f"reset: options['task_index']={task_index} is outside 0..{len(self.tasks) - 1}"
                )
        task = self.tasks[task_index]
        draw = self.pool.sample(rng)
        episode_seed = int(rng.integers(0, 2**63 - 1))
        prompt = self.templates.conductor_prompt(task.question, len(draw), self.max_steps)
        self._episode = _Episode(
            task=task,
            task_index=task_index,
            draw=draw,
            workers=tuple(_bind_task(w, task) for w in draw.workers),
            seed=episode_seed,
            prompt=prompt,
        )
        self._last_info = None
        return prompt, self._reset_info(self._episode)

    def step(self, action: str) -> StepResult:
        return self._runner.run(self.astep(action))

    async def astep(self, action: str) -> StepResult:
        """:meth:`step` as a coroutine, for callers that already run an event loop."""
        episode = self._episode
        if episode is None or episode.done:
            raise gym.error.ResetNeeded("call reset() before step() (the episode has ended)")
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the completion), got {type(action).__name__}")
        episode.done = True
        info = self._reset_info(episode)
        info.update(
            outcome=None,
            plan=None,
            parse_error=None,
            trace=None,
            grade=None,
            error=None,
        )
        try:
            plan = parse_plan(
                action, len(episode.draw), self.max_steps, max_chars=self.max_plan_chars
            )
        except PlanParseError as exc:
            error = {"reason": exc.reason, "detail": exc.detail}
            return self._finish(episode, info, Outcome.INVALID, parse_error=error)
        if plan.is_empty:
            error = {"reason": "empty_plan", "detail": _EMPTY_PLAN_DETAIL}
            return self._finish(episode, info, Outcome.INVALID, parse_error=error)
        info["plan"] = plan
        try:
            trace = await run_plan(
                plan,
                episode.workers,
                question=episode.task.question,
                seed=episode.seed,
                templates=self.templates,
                question_to_all_workers=self.question_to_all_workers,
                retry=self.retry,
            )
        except ExecutionError as exc:
            info["trace"] = exc.trace
            return self._fail(episode, info, exc.to_dict())
        info["trace"] = trace
        try:
            verdict = self._grade(episode.task, trace.final_response or "")
        except GraderError as exc:
            return self._fail(
                episode,
                info,
                {"kind": "grader", "grader": episode.task.grader, "message": str(exc)},
            )
        info["grade"] = verdict
        outcome = Outcome.CORRECT if verdict.correct else Outcome.WRONG
        return self._finish(episode, info, outcome)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return _render_ansi(self._episode, self._last_info)

    def close(self) -> None:
        self._runner.close()
        super().close()

    # -- internals ---------------------------------------------------------------------

    @staticmethod
    def _grade(task: Task, response: str) -> Grade:
        return grade(task.grader, response, task.reference, **task.metadata)

    def _reset_info(self, episode: _Episode) -> dict[str, Any]:
        return {
            "task_id": episode.task.id,
            "task_index": episode.task_index,
            "domain": episode.task.domain,
            "question": episode.task.question,
            "pool": episode.draw.names,
            "num_workers": len(episode.draw),
            "max_steps": self.max_steps,
        }

    def _totals(self, info: dict[str, Any]) -> None:
        trace: Trace = info["trace"] or Trace()
        info.update(
            worker_calls=trace.worker_calls,
            prompt_tokens=trace.prompt_tokens,
            completion_tokens=trace.completion_tokens,
            cost_usd=trace.cost_usd,
            latency_s=trace.latency_s,
        )

    def _finish(
        self,
        episode: _Episode,
        info: dict[str, Any],
        outcome: Outcome,
        *,
        parse_error: dict[str, str] | None = None,
    ) -> StepResult:
        info["outcome"] = outcome.value
        info["parse_error"] = parse_error
        self._totals(info)
        self._last_info = info
        return episode.prompt, self.reward_scheme(outcome), True, False, info

    def _fail(self, episode: _Episode, info: dict[str, Any], error: dict[str, Any]) -> StepResult:
        info["outcome"] = "error"
        info["error"] = error
        self._totals(info)
        self._last_info = info
        return episode.prompt, 0.0, False, True, info


def _render_ansi(episode: _Episode | None, info: dict[str, Any] | None) -> str:
    if episode is None:
        return "(no episode: call reset())\n"
    lines = [f"task {episode.task.id} [{episode.task.domain}]", f"Q: {episode.task.question}"]
    lines.append("pool: " + ", ".join(f"Model {i}={n}" for i, n in enumerate(episode.draw.names)))
    if info is None:
        return "\n".join([*lines, "(awaiting a plan)"]) + "\n"
    if info["parse_error"] is not None:
        lines.append(
            f"invalid plan: {info['parse_error']['reason']}: {info['parse_error']['detail']}"
        )
    trace: Trace | None = info["trace"]
    for step in trace.steps if trace else ():
        shown = "no earlier step" if not step.visible else f"steps {list(step.visible)}"
        lines.append(f"step {step.index}: Model {step.model_id} ({step.worker}) sees {shown}")
        lines.append(f"  subtask:  {step.subtask}")
        lines.append(f"  response: {step.response}")
    if info["grade"] is not None:
        g: Grade = info["grade"]
        lines.append(f"grade: correct={g.correct} extracted={g.extracted!r} ({g.reason})")
    if info["error"] is not None:
        lines.append(f"error: {info['error']}")
    lines.append(f"outcome: {info['outcome']}")
    return "\n".join(lines) + "\n"
