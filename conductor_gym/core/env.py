"""``ConductorEnv``: one conductor episode as a Gymnasium environment."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from conductor_gym._loop import LoopRunner
from conductor_gym._validate import require_int
from conductor_gym.core.budget import Budget, BudgetExceeded, Ledger
from conductor_gym.core.episode import (
    ENV_REASONS,
    EpisodeState,
    Round,
    bind_task,
    check_recursion_arguments,
    draw_forced,
    option_task_index,
    rollout_episode_seed,
)
from conductor_gym.core.execute import (
    BoundWorker,
    ExecutionError,
    PolicyFailure,
    RetryPolicy,
    Trace,
    run_plan,
    step_seed,
)
from conductor_gym.core.prompts import DEFAULT_TEMPLATES, PromptTemplates
from conductor_gym.core.render import render_episode
from conductor_gym.core.reward import Outcome, RewardScheme, make_reward_scheme
from conductor_gym.core.self_worker import (
    SELF_WORKER_NAME,
    ConductorPolicy,
    RecursionBudget,
    SelfWorker,
    check_self_steps,
)
from conductor_gym.core.spaces import UnicodeText
from conductor_gym.graders import Grade, GraderError, grade, grader_blocks
from conductor_gym.plan import Plan, PlanParseError, parse_plan
from conductor_gym.pool.base import WorkerPool, WorkerSpec, make_pool
from conductor_gym.tasks import Task, TaskSource, make_task_source

if TYPE_CHECKING:
    from conductor_gym.workers.cache import ResponseCache

__all__ = ["MAX_OBSERVATION_CHARS", "ConductorEnv", "Round", "StepResult"]

MAX_OBSERVATION_CHARS = 1 << 20
_RESET_OPTIONS = ("task_index", "force_recursion", "rollout_seed")

StepResult = tuple[str, float, bool, bool, dict[str, Any]]
_ROUND_SEED = 1 << 20  # recursive round r runs with step_seed(episode seed, _ROUND_SEED + r)


class ConductorEnv(gym.Env[str, str]):
    r"""A conductor episode: plan a workflow for a pool of worker LLMs, get it graded.

    ## Description

    Each episode samples a task (a question, its reference and grader) and the ``k``
    workers the conductor may use, shown only as ``Model 0 .. Model k-1``. The agent
    answers with a completion that ends in three Python lists, ``model_id``,
    ``subtasks`` and ``access_list`` (1 to ``max_steps`` steps). The env parses them
    (:func:`conductor_gym.plan.parse_plan`), runs the steps, each worker seeing its
    subtask and the earlier steps its access list selects, each step as soon as those
    have answered, with the result of running them in order
    (:func:`conductor_gym.core.execute.run_plan`), and grades the last step's answer.
    Offline by default: the ``offline`` procedural tasks on the ``sim-paper``
    simulated pool, with no network and no keys.

    ## Recursion (paper §3.2)

    With ``max_recursions=R > 0`` an episode is multi-turn. After a plan runs, the
    observation is the recursive prompt (the question, the current final answer, the
    step limit) and the next action is a new plan, or three empty lists, which return
    the current answer as final. In a recursive round the access entry ``"all"`` also
    shows the previous round's final step (its subtask and answer) first. With a
    ``conductor`` policy the conductor is also offered as worker ``Model k`` (listed as
    itself); a step routed to it runs an inner plan that the policy writes for that step
    (:mod:`conductor_gym.core.self_worker`). Recursive rounds and self-calls spend one
    budget of ``R`` inner calls; when it is spent the episode ends on the current
    answer. Without a ``conductor`` the self-worker is not offered.

    ``force_recursion`` (``True``, or a probability drawn per episode from the env's
    RNG, or ``reset(options={"force_recursion": ...})``) requires at least one inner
    call: the recursive prompt then withdraws the stop option, and an empty plan before
    an inner call is invalid (``recursion_required``).

    ## Action space

    ``UnicodeText(0, max_plan_chars)``: any string (the conductor's completion).
    Longer text is an invalid plan (``too_long``), not an error.

    ## Observation space

    ``UnicodeText(1, 2**20)``: the conductor prompt at reset, the recursive prompt
    between rounds. After the final step the observation is unchanged.

    ## Rewards

    From ``reward`` (default ``"paper"``: 1.0 correct, 0.5 a valid plan with a wrong
    final answer, 0.0 an invalid plan, paper §3.1). Three empty lists are invalid at the
    start of an episode (``empty_plan``). Rounds that continue the episode earn 0.0; the
    reward comes at the end, on the final answer. An invalid plan in any round (or in
    an inner call) ends the episode with the ``invalid`` reward.

    A cost-aware scheme (:mod:`conductor_gym.core.reward`) then subtracts its price for
    the episode's worker spending from a graded episode's reward, never going below the
    ``invalid`` reward; invalid plans and truncated episodes pay nothing.

    ``initial_round_weight = w`` (default 0) is the training variant of the paper's
    recursive fine-tune, which scales the reward of the initial, non-recursive answer by
    0.25 and normalises across rounds without giving a formula. We use
    ``(w * r(initial answer) + r(final answer)) / (1 + w)``: with ``w = 0.25`` the first
    plan keeps a stake in being right on its own, the reward stays within the scheme's
    range, and an episode that stops after its first plan scores exactly ``r(answer)``.
    It applies only to episodes that end on a graded answer (not to invalid plans).

    When a worker or the grader fails after retries, or a spending budget runs out,
    the reward is 0.0 and ``truncated`` is ``True``: that is not a score, and
    ``info["error"]`` says what failed (``kind``: ``"infrastructure"``, ``"grader"`` or
    ``"budget"``).

    ## Episode end

    ``terminated=True`` after an invalid plan, an empty plan that stops, or a plan that
    leaves no recursion budget (always after the first plan when ``R = 0``);
    ``truncated=True`` (and ``terminated=False``) after an infrastructure failure or a
    spent budget.

    ## Arguments

    * ``tasks``: a task source name (``"offline"``, ``"offline-ood"``,
      ``"offline/<family>"``, see :func:`conductor_gym.tasks.task_source_names`) or a
      :class:`~conductor_gym.tasks.TaskSource`.
    * ``pool``: a pool preset name (``"sim-paper"``, ``"local-smol"``,
      ``"paper-constrained"``, ...: ``conductor-gym pools list``), a pool file
      (``*.toml``), a list of :class:`~conductor_gym.pool.base.WorkerSpec` or a
      :class:`~conductor_gym.pool.base.WorkerPool`.
    * ``k``: workers per episode (default: all); ``shuffle_workers``: shuffle the
      ordinal ids every episode (default off). Both only with a name or specs.
    * ``reward``: ``"paper"``, ``"binary"``, a cost-aware preset (``"cost-usd"``,
      ``"cost-ktokens"``, ``"cost-calls"``, with its own price as ``"cost-usd:25"``) or a
      :class:`~conductor_gym.core.reward.RewardScheme`.
    * ``max_steps``: most steps a plan may have (paper: 5).
    * ``max_recursions``, ``force_recursion``, ``initial_round_weight``, ``conductor``:
      recursion, above.
    * ``templates``: :class:`~conductor_gym.core.prompts.PromptTemplates` for every prompt.
    * ``question_to_all_workers``: also give the question to every step's worker, not
      just the first (default off, as in the paper).
    * ``max_plan_chars``: longest completion parsed (default 65536).
    * ``retry``: :class:`~conductor_gym.core.execute.RetryPolicy` for transient worker errors.
    * ``episode_budget``: a :class:`~conductor_gym.core.budget.Budget` on each episode's worker
      calls, tokens and dollars (default: the pool file's, else none). The run's budget
      belongs to the pool (``run_budget``).
    * ``cache``: a response-cache file (read and written) or a
      :class:`~conductor_gym.workers.cache.ResponseCache` (e.g. ``mode="replay"`` to
      reproduce a recorded run offline); only with a pool name, file or specs.
    * ``render_mode``: ``None`` or ``"ansi"`` (a text account of the episode).

    ## Reset

    ``reset(seed=s)`` fixes the task, the worker draw, forced recursion and every
    simulated outcome in every round: the same seed and the same actions give the same
    rewards and traces. ``options={"task_index": i}`` picks task ``i`` of the source;
    the RNG is consumed exactly as without it, so the worker draw for a seed does not
    depend on the option. ``options={"force_recursion": bool}`` overrides the draw.
    ``options={"rollout_seed": r}`` keeps the task and the worker draw of the seed but
    gives the workers fresh randomness: the rollouts of one GRPO group share a ``seed``
    (the group seed) and differ in ``r`` (see :mod:`conductor_gym.bridge`).

    ## Info

    After ``reset``: ``task_id``, ``task_index``, ``domain``, ``question``, ``pool``
    (worker names; position ``i`` is ``Model i``), ``num_workers``, ``max_steps``,
    ``round`` (0), ``can_stop`` (whether three empty lists are accepted now),
    ``recursions_left``, ``forced_recursion``, ``self_worker_id`` (or ``None``).
    After ``step``, additionally, for the round just played: ``plan``
    (:class:`~conductor_gym.plan.Plan` or ``None``), ``parse_error``
    (``{"reason", "detail"}`` or ``None``; ``reason`` is one of
    :data:`conductor_gym.plan.REASONS`, ``"empty_plan"``, ``"recursion_required"`` or
    ``"recursion_budget"``), ``trace`` (:class:`~conductor_gym.core.execute.Trace` or
    ``None``; partial after a failure); for the episode: ``rounds`` (every
    :class:`Round` so far), ``outcome`` (``None`` while it goes on, then
    ``"correct"``, ``"wrong"``, ``"invalid"`` or ``"error"``), ``grade``
    (:class:`~conductor_gym.graders.Grade` of the final answer, or ``None``),
    ``initial_grade`` (with ``initial_round_weight > 0``), ``error`` (``None`` or a
    dict naming the failed step, worker and error class), and totals over every round
    and inner call: ``worker_calls`` (calls to real workers, retries included),
    ``prompt_tokens``, ``completion_tokens``, ``cost_usd`` (every call, cached ones at their
    recorded cost), ``billed_usd`` (calls that reached a backend), ``cache_saved_usd``
    (calls answered from the cache), ``latency_s`` (summed worker latency: steps in order;
    each trace's ``critical_path_s`` is its latency with steps in parallel, and
    :func:`conductor_gym.core.episode.critical_path_s` sums it over the rounds).

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
        max_recursions: int = 0,
        force_recursion: bool | float = False,
        initial_round_weight: float = 0.0,
        conductor: ConductorPolicy | None = None,
        templates: PromptTemplates | None = None,
        question_to_all_workers: bool = False,
        max_plan_chars: int = 65536,
        retry: RetryPolicy | None = None,
        episode_budget: Budget | None = None,
        cache: str | ResponseCache | None = None,
        render_mode: str | None = None,
    ) -> None:
        require_int("max_steps", max_steps)
        require_int("max_plan_chars", max_plan_chars)
        check_recursion_arguments(max_recursions, force_recursion, initial_round_weight, conductor)
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
        if episode_budget is not None and not isinstance(episode_budget, Budget):
            raise ValueError(f"episode_budget must be a Budget, got {episode_budget!r}")
        self.pool = make_pool(pool, k=k, shuffle=shuffle_workers, cache=cache)
        self.episode_budget = episode_budget or self.pool.episode_budget
        self.reward_scheme = make_reward_scheme(reward)
        self.max_steps = max_steps
        self.max_recursions = max_recursions
        self.force_recursion = force_recursion
        self.initial_round_weight = float(initial_round_weight)
        self.conductor = conductor
        self.templates = templates or DEFAULT_TEMPLATES
        self.question_to_all_workers = bool(question_to_all_workers)
        self.max_plan_chars = max_plan_chars
        self.retry = retry or RetryPolicy()
        self.render_mode = render_mode

        self.action_space = UnicodeText(max_plan_chars, min_length=0)
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS, min_length=1)

        self._episode: EpisodeState | None = None
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
        task_index = option_task_index(options, task_index, len(self.tasks))
        task = self.tasks[task_index]
        draw = self.pool.sample(rng)
        episode_seed = int(rng.integers(0, 2**63 - 1))
        episode_seed = rollout_episode_seed(episode_seed, options.get("rollout_seed"))
        forced = draw_forced(self.force_recursion, rng, options, self.max_recursions)

        budget = RecursionBudget(self.max_recursions)
        ledgers = (Ledger(self.episode_budget, scope="episode"), self.pool.run_ledger)
        workers = tuple(bind_task(w, task) for w in draw.workers)
        self_worker = None
        if self.conductor is not None:
            self_worker = SelfWorker(
                policy=self.conductor,
                self_id=len(workers),
                budget=budget,
                templates=self.templates,
                max_steps=self.max_steps,
                max_plan_chars=self.max_plan_chars,
                retry=self.retry,
                question_to_all_workers=self.question_to_all_workers,
                ledgers=ledgers,
            )
            workers = (*workers, BoundWorker(self_worker))
            self_worker.workers = workers
        self._episode = EpisodeState(
            task=task,
            task_index=task_index,
            draw=draw,
            workers=workers,
            self_worker=self_worker,
            seed=episode_seed,
            budget=budget,
            force_recursion=forced,
            ledgers=ledgers,
            observation=self.templates.conductor_prompt(
                task.question,
                len(workers),
                self.max_steps,
                self_id=self_worker.self_id if self_worker else None,
            ),
        )
        self._last_info = None
        return self._episode.observation, self._base_info(self._episode)

    def step(self, action: str) -> StepResult:
        return self._runner.run(self.astep(action))

    async def astep(self, action: str) -> StepResult:
        """:meth:`step` as a coroutine, for callers that already run an event loop."""
        episode = self._episode
        if episode is None or episode.done:
            raise gym.error.ResetNeeded("call reset() before step() (the episode has ended)")
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the completion), got {type(action).__name__}")
        index = len(episode.rounds)
        try:
            plan = parse_plan(
                action, len(episode.workers), self.max_steps, max_chars=self.max_plan_chars
            )
        except PlanParseError as exc:
            return self._invalid(episode, Round(index, None, None), exc.reason, exc.detail)
        if plan.is_empty:
            if index == 0:
                reason = "empty_plan"
            elif self._must_continue(episode):
                reason = "recursion_required"
            else:
                episode.rounds.append(Round(index, plan, None))
                return await self._end(episode)
            return self._invalid(episode, Round(index, plan, None), reason, ENV_REASONS[reason])

        calls_before = episode.self_call_count
        try:
            trace = await self._run_round(episode, plan, index)
        except PolicyFailure as exc:
            new_round = Round(index, plan, None, None, episode.self_calls_since(calls_before))
            return self._invalid(episode, new_round, exc.reason, exc.detail)
        except (ExecutionError, BudgetExceeded) as exc:
            calls = episode.self_calls_since(calls_before)
            episode.rounds.append(Round(index, plan, exc.trace, None, calls))
            return self._fail(episode, exc.to_dict())
        episode.rounds.append(
            Round(index, plan, trace, None, episode.self_calls_since(calls_before))
        )
        episode.answer = trace.final_response
        episode.last_subtask = plan.subtasks[-1]
        if index == 0:
            episode.initial_answer = episode.answer
        if episode.budget.left < 1:
            return await self._end(episode)
        episode.observation = self.templates.recursive_prompt(
            episode.task.question,
            episode.answer or "",
            len(episode.workers),
            self.max_steps,
            may_stop=not self._must_continue(episode),
            self_id=episode.self_id,
        )
        info = self._step_info(episode)
        self._last_info = info
        return episode.observation, 0.0, False, False, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._episode is None:
            return "(no episode: call reset())\n"
        return render_episode(
            self._episode.task, self._episode.draw.names, self._episode.rounds, self._last_info
        )

    def close(self) -> None:
        self._runner.close()
        super().close()

    # -- internals ---------------------------------------------------------------------

    async def _run_round(self, episode: EpisodeState, plan: Plan, index: int) -> Trace:
        """Run ``plan`` as round ``index``: a recursive round spends one inner call, and
        sees the previous round's final step through ``"all"``."""
        if index > 0:
            episode.budget.left -= 1
        check_self_steps(plan, episode.self_id, episode.budget)
        return await run_plan(
            plan,
            episode.workers,
            question=episode.task.question,
            seed=episode.seed if index == 0 else step_seed(episode.seed, _ROUND_SEED + index),
            templates=self.templates,
            question_to_all_workers=self.question_to_all_workers,
            retry=self.retry,
            prior=() if index == 0 else ((episode.last_subtask, episode.answer or ""),),
            ledgers=episode.ledgers,
        )

    def _must_continue(self, episode: EpisodeState) -> bool:
        """Forced recursion and no inner call made yet."""
        return episode.force_recursion and episode.inner_calls(self.max_recursions) == 0

    @staticmethod
    async def _grade(task: Task, response: str) -> Grade:
        # Graders that wait on subprocesses (code) run on a worker thread, so the other
        # episodes of a vector env keep stepping; the rest (math-verify's SIGALRM
        # timeouts among them) run on the loop's own thread.
        if grader_blocks(task.grader):
            return await asyncio.to_thread(
                grade, task.grader, response, task.reference, **task.metadata
            )
        return grade(task.grader, response, task.reference, **task.metadata)

    def _base_info(self, episode: EpisodeState) -> dict[str, Any]:
        index = len(episode.rounds)
        return {
            "task_id": episode.task.id,
            "task_index": episode.task_index,
            "domain": episode.task.domain,
            "question": episode.task.question,
            "pool": (*episode.draw.names, *([SELF_WORKER_NAME] if episode.self_worker else [])),
            "num_workers": len(episode.workers),
            "max_steps": self.max_steps,
            "round": index,
            "can_stop": index > 0 and not self._must_continue(episode),
            "recursions_left": episode.budget.left,
            "forced_recursion": episode.force_recursion,
            "self_worker_id": episode.self_id,
        }

    def _step_info(self, episode: EpisodeState) -> dict[str, Any]:
        last = episode.rounds[-1]
        info = self._base_info(episode)
        info.update(
            round=last.index,
            rounds=tuple(episode.rounds),
            plan=last.plan,
            parse_error=last.parse_error,
            trace=last.trace,
            outcome=None,
            grade=None,
            initial_grade=None,
            error=None,
        )
        info.update(episode.totals())
        return info

    def _close(self, episode: EpisodeState, info: dict[str, Any], reward: float) -> StepResult:
        episode.done = True
        self._last_info = info
        truncated = info["outcome"] == "error"
        return episode.observation, reward, not truncated, truncated, info

    def _invalid(
        self, episode: EpisodeState, new_round: Round, reason: str, detail: str
    ) -> StepResult:
        episode.rounds.append(
            dataclasses.replace(new_round, parse_error={"reason": reason, "detail": detail})
        )
        info = self._step_info(episode)
        info["outcome"] = Outcome.INVALID.value
        return self._close(episode, info, self.reward_scheme(Outcome.INVALID))

    async def _end(self, episode: EpisodeState) -> StepResult:
        """Grade the current answer (and, with ``initial_round_weight``, the first one)."""
        info = self._step_info(episode)
        try:
            final = await self._grade(episode.task, episode.answer or "")
            initial = None
            if self.initial_round_weight > 0:
                initial = (
                    final
                    if episode.initial_answer == episode.answer
                    else await self._grade(episode.task, episode.initial_answer or "")
                )
        except GraderError as exc:
            error = {"kind": "grader", "grader": episode.task.grader, "message": str(exc)}
            return self._fail(episode, error)
        outcome = Outcome.CORRECT if final.correct else Outcome.WRONG
        reward = self.reward_scheme(outcome)
        if initial is not None:
            first = self.reward_scheme(Outcome.CORRECT if initial.correct else Outcome.WRONG)
            weight = self.initial_round_weight
            reward = (weight * first + reward) / (1.0 + weight)
        reward = self.reward_scheme.charge(reward, episode.spend())
        info.update(outcome=outcome.value, grade=final, initial_grade=initial)
        return self._close(episode, info, reward)

    def _fail(self, episode: EpisodeState, error: dict[str, Any]) -> StepResult:
        info = self._step_info(episode)
        info.update(outcome="error", error=error)
        return self._close(episode, info, 0.0)
