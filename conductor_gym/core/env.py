"""``ConductorEnv``: one conductor episode as a Gymnasium environment."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import gymnasium as gym

from conductor_gym._loop import LoopRunner
from conductor_gym._validate import as_seed
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.episode import (
    ENV_REASONS,
    EpisodeState,
    Round,
    bind_task,
    draw_forced,
    option_task_index,
)
from conductor_gym.core.execute import Trace, run_plan
from conductor_gym.core.info import ErrorInfo, ResetInfo, StepInfo
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.core.render import render_episode
from conductor_gym.core.reward import Outcome, make_reward_scheme
from conductor_gym.core.self_worker import (
    SELF_WORKER_NAME,
    ConductorPolicy,
    RecursionBudget,
    SelfWorker,
    check_self_steps,
)
from conductor_gym.core.spaces import UnicodeText
from conductor_gym.errors import ConfigurationError, InfrastructureError, PolicyError
from conductor_gym.graders import Grade, GraderError, grade, grader_blocks
from conductor_gym.plan import Plan, parse_plan
from conductor_gym.seeding import rollout_seed, stream_seed
from conductor_gym.tasks import Task, TaskSource
from conductor_gym.workers.bound import BoundWorker, RetryPolicy
from conductor_gym.workers.budget import Ledger

__all__ = ["MAX_OBSERVATION_CHARS", "ConductorEnv", "Round", "StepResult"]

MAX_OBSERVATION_CHARS = 1 << 20
_RESET_OPTIONS = ("task_index", "force_recursion", "rollout_seed")

StepResult = tuple[str, float, bool, bool, StepInfo]
_ROUND_SEED = 1 << 20  # recursive round r runs with stream_seed(episode seed, _ROUND_SEED + r)
_DEFAULT_CONFIG = EnvConfig()


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

    Every setting is a field of :class:`~conductor_gym.core.config.EnvConfig` (its docs give
    each default): pass ``config=EnvConfig(...)``, or the same fields as keywords (what
    ``gym.make("ConductorEnv-v0", k=3)`` does), or both (keywords override the config).
    A bad value raises :class:`~conductor_gym.errors.ConfigurationError` naming the field.
    In short:

    * ``tasks`` (+ ``task_options``): a task source name (``"offline"``,
      ``"offline-ood"``, ``"offline/<family>"``, see
      :func:`conductor_gym.tasks.task_source_names`) or a
      :class:`~conductor_gym.tasks.TaskSource`.
    * ``pool``: a pool preset name (``"sim-paper"``, ``"local-smol"``, ...:
      ``conductor-gym pools list``), a pool file (``*.toml``), a list of
      :class:`~conductor_gym.workers.spec.WorkerSpec` or a ready
      :class:`~conductor_gym.pool.pool.WorkerPool`; ``k``, ``shuffle_workers`` and
      ``cache`` (a response-cache file or :class:`~conductor_gym.workers.cache.ResponseCache`)
      apply to the first three.
    * ``reward``: ``"paper"``, ``"binary"``, a cost-aware preset (``"cost-usd"``,
      ``"cost-ktokens"``, ``"cost-calls"``, with its own price as ``"cost-usd:25"``) or a
      :class:`~conductor_gym.core.reward.RewardScheme`.
    * ``max_steps``, ``max_recursions``, ``force_recursion``, ``initial_round_weight``,
      ``templates``, ``question_to_all_workers``, ``max_plan_chars``, ``retry``,
      ``episode_budget``: as documented on the config.

    Two arguments are not settings but objects of this env: ``conductor``, a policy
    offered as worker ``Model k`` (recursion, above; needs ``max_recursions >= 1``), and
    ``render_mode``: ``None``, ``"ansi"`` (a text account of the episode) or ``"html"`` (a
    self-contained page showing the episode: the plan as a graph, every step, the grade;
    :mod:`conductor_gym.core.render_html`).

    ## Reset

    ``reset(seed=s)`` fixes the task, the worker draw, forced recursion and every
    simulated outcome in every round: the same seed and the same actions give the same
    rewards and traces. ``options={"task_index": i}`` picks task ``i`` of the source;
    the RNG is consumed exactly as without it, so the worker draw for a seed does not
    depend on the option. ``options={"force_recursion": bool}`` overrides the draw.
    ``options={"rollout_seed": r}`` keeps the task and the worker draw of the seed but
    gives the workers fresh randomness: the rollouts of one GRPO group share a ``seed``
    (the group seed) and differ in ``r`` (see :mod:`conductor_gym.training.scoring`).

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

    # render_fps only silences Gymnasium's checker: both modes return text, at no frame rate.
    metadata: dict[str, Any] = {"render_modes": ["ansi", "html"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        config: EnvConfig | None = None,
        *,
        conductor: ConductorPolicy | None = None,
        render_mode: str | None = None,
        **settings: Any,
    ) -> None:
        if config is not None and not isinstance(config, EnvConfig):
            raise ConfigurationError(
                f"must be an EnvConfig or None, got {type(config).__name__}", field="config"
            )
        base = config or _DEFAULT_CONFIG
        config = base.replace(**settings) if settings else base
        if conductor is not None and config.max_recursions == 0:
            raise ConfigurationError(
                "the conductor is offered as a worker only with max_recursions >= 1"
                " (each self-call spends one inner call)",
                field="conductor",
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigurationError(
                f"unknown mode {render_mode!r}; choose one of "
                f"{self.metadata['render_modes']} or None",
                field="render_mode",
            )
        self.config = config
        self.tasks: TaskSource = config.build_tasks()
        self.pool = config.build_pool()
        self.episode_budget = config.episode_budget or self.pool.episode_budget
        self.reward_scheme = make_reward_scheme(config.reward)
        self.max_steps = config.max_steps
        self.max_recursions = config.max_recursions
        self.force_recursion = config.force_recursion
        self.initial_round_weight = float(config.initial_round_weight)
        self.conductor = conductor
        self.templates = config.templates or DEFAULT_TEMPLATES
        self.question_to_all_workers = config.question_to_all_workers
        self.max_plan_chars = config.max_plan_chars
        self.retry = config.retry or RetryPolicy()
        self.render_mode = render_mode

        self.action_space = UnicodeText(self.max_plan_chars, min_length=0)
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS, min_length=1)

        self._episode: EpisodeState | None = None
        self._last_info: StepInfo | None = None
        self._actions: list[str] = []  # the episode's completions, for render
        self._runner = LoopRunner()

    # -- episode API -------------------------------------------------------------------

    def reset(  # type: ignore[override]  # info is a TypedDict, not dict[str, Any]
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, ResetInfo]:
        super().reset(seed=as_seed("reset: seed", seed))
        options = dict(options or {})
        if unknown := sorted(set(options) - set(_RESET_OPTIONS)):
            raise ConfigurationError(
                f"reset: unknown option(s) {unknown}; valid: {list(_RESET_OPTIONS)}"
            )
        rng = self.np_random
        task_index = int(rng.integers(len(self.tasks)))
        task_index = option_task_index(options, task_index, len(self.tasks))
        task = self.tasks[task_index]
        draw = self.pool.sample(rng)
        episode_seed = int(rng.integers(0, 2**63 - 1))
        episode_seed = rollout_seed(episode_seed, options.get("rollout_seed"))
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
                names=draw.names,
            ),
        )
        self._last_info = None
        self._actions = []
        return self._episode.observation, self._base_info(self._episode)

    def step(self, action: str) -> StepResult:  # type: ignore[override]  # typed info
        return self._runner.run(self.astep(action))

    async def astep(self, action: str) -> StepResult:
        """:meth:`step` as a coroutine, for callers that already run an event loop."""
        episode = self._episode
        if episode is None:
            raise gym.error.ResetNeeded("call reset() first: no episode has started")
        if episode.done:
            raise gym.error.ResetNeeded("call reset() before step() (the episode has ended)")
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the completion), got {type(action).__name__}")
        index = len(episode.rounds)
        self._actions.append(action)
        try:
            plan = parse_plan(
                action, len(episode.workers), self.max_steps, max_chars=self.max_plan_chars
            )
        except PolicyError as exc:
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
        except PolicyError as exc:
            new_round = Round(index, plan, None, None, episode.self_calls_since(calls_before))
            return self._invalid(episode, new_round, exc.reason, exc.detail)
        except InfrastructureError as exc:
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
            names=episode.draw.names,
        )
        info = self._step_info(episode)
        self._last_info = info
        return episode.observation, 0.0, False, False, info

    def render(self) -> str | None:
        if self.render_mode not in ("ansi", "html"):
            gym.logger.warn(
                "render() without a render mode returns nothing: build the env with "
                "render_mode='ansi' (text) or 'html' (a page)"
            )
            return None
        if self._episode is None:
            return "(no episode: call reset())\n"
        episode = self._episode
        if self.render_mode == "html":
            from conductor_gym.core.render_html import render_episode_html

            info = self._last_info or self._base_info(episode)
            return render_episode_html(episode.task, info, episode.rounds, self._actions)
        return render_episode(episode.task, episode.draw.names, episode.rounds, self._last_info)

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
            seed=episode.seed if index == 0 else stream_seed(episode.seed, _ROUND_SEED + index),
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

    def _base_info(self, episode: EpisodeState) -> ResetInfo:
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

    def _step_info(self, episode: EpisodeState) -> StepInfo:
        last = episode.rounds[-1]
        return {
            **self._base_info(episode),
            **episode.totals(),
            "round": last.index,
            "rounds": tuple(episode.rounds),
            "plan": last.plan,
            "parse_error": last.parse_error,
            "trace": last.trace,
            "outcome": None,
            "grade": None,
            "initial_grade": None,
            "error": None,
        }

    def _close(self, episode: EpisodeState, info: StepInfo, reward: float) -> StepResult:
        episode.done = True
        self._last_info = info
        truncated = info["outcome"] == Outcome.ERROR
        return episode.observation, reward, not truncated, truncated, info

    def _invalid(
        self, episode: EpisodeState, new_round: Round, reason: str, detail: str
    ) -> StepResult:
        episode.rounds.append(
            dataclasses.replace(new_round, parse_error={"reason": reason, "detail": detail})
        )
        info = self._step_info(episode)
        info["outcome"] = Outcome.INVALID
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
            return self._fail(episode, {**exc.to_dict(), "grader": episode.task.grader})
        outcome = Outcome.CORRECT if final.correct else Outcome.WRONG
        reward = self.reward_scheme(outcome)
        if initial is not None:
            first = self.reward_scheme(Outcome.CORRECT if initial.correct else Outcome.WRONG)
            weight = self.initial_round_weight
            reward = (weight * first + reward) / (1.0 + weight)
        if self.reward_scheme.cost_aware:  # the paper's scheme prices nothing
            reward = self.reward_scheme.charge(reward, episode.spend())
        info["outcome"], info["grade"], info["initial_grade"] = outcome, final, initial
        return self._close(episode, info, reward)

    def _fail(self, episode: EpisodeState, error: ErrorInfo) -> StepResult:
        info = self._step_info(episode)
        info["outcome"], info["error"] = Outcome.ERROR, error
        return self._close(episode, info, 0.0)
