"""The ``cpu-adapt`` recipe: a conductor that GRPO teaches to read its pool, on two CPU cores.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-adapt --output-dir runs/adapt

The paper's adaptive setting (§3.2) on simulator v3: every episode draws ``k = 4`` of the
seven ``sim-paper`` workers under shuffled ids, and the policy's chat
(:data:`CHAT_PROMPT`) names them (``Model 2: gpt-5``), so who a step asks has to be read
from the prompt: no fixed ``Model i`` is always the strong worker.

The stages are ``cpu-orchestrate``'s (:func:`~.cpu_orchestrate.run_with`) with two
differences of purpose:

* **the warm start teaches the format only**: its plans come from the *uniform* prior
  over plan structures (``plan_search`` has ``iterations=0``: 1-3 steps, any listed
  worker, any role), shown with each training episode's drawn workers, so the policy
  leaves it writing parseable plans that know nothing of which worker or structure pays;
* **GRPO does the learning**: more rollouts per step than ``cpu-orchestrate``
  (:data:`GRPO`: 4 prompts x 8 completions), shorter completions and a larger learning
  rate, spent on the env's reward alone; the warm start is twice as long
  (:data:`WARM_START_STEPS`), so that GRPO's samples parse and its steps go to whom to
  ask and how, not to the format.

The held-out evaluation plays the same randomised pool (tasks 0-159, never trained on)
beside ``best-single`` (which reads ``info["pool"]``), the random planner and the best
fixed plans of 1, 2 and 3 calls that ``conductor-gym sim audit`` finds in this pool
(:data:`FIXED_PLANS`: the same plan, by ``Model`` position, for every question). The
cross-entropy search of ``cpu-orchestrate`` stays available as a baseline
(``--search-iterations 12``), never as this recipe's source of plans.

What its first full run showed (``docs/training-cpu.md``): GRPO raised the held-out
reward by 0.132 ± 0.022 and, on fresh tasks, accuracy by 0.114 ± 0.018 over its warm
start (0.051 ± 0.016 where the warm start's plan parsed), by repairing the plan format
and settling on one two-step plan for every question; it did not learn to read the
pool, and the run stays below ``best-single`` and the best fixed plans. Its float32 run
collapsed to one call. The settings are the ones the bf16 run used.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig

from ..plan_prior import PlanSearch
from ..warm_start import WarmStart
from . import common, cpu_demo, cpu_orchestrate
from .common import TrainResult

__all__ = [
    "CHAT_PROMPT",
    "FIXED_PLANS",
    "FIXED_PLAN_DIR",
    "FLOAT32_ITERATIONS",
    "GRPO",
    "ITERATIONS",
    "Args",
    "K",
    "adaptive_env",
    "grpo_config",
    "resolve",
    "run",
]

K = 4
"""Workers drawn per episode (of seven): the paper gives no ``k``; 4 keeps each worker
in 4 of 7 episodes, so the best one is often missing and choosing has to adapt."""

CHAT_PROMPT = dataclasses.replace(cpu_orchestrate.CHAT_PROMPT, worker_item="Model {id}: {name}")
"""``cpu-orchestrate``'s chat with the drawn workers named; saved with the checkpoint."""

ITERATIONS = 20
"""GRPO steps of a run that leaves them to the recipe (bf16 autocast). A first run with 60
took 130-195 s a step on this project's 2-core Xeon (32 completions of 90-130 tokens, a
test suite on the other core): 20 steps keep the run near the 90-minute budget."""

FLOAT32_ITERATIONS = 8
"""GRPO steps of a float32 run that leaves them to the recipe. On the AVX2 stand-in
(``docs/training-cpu.md``) the warm start took 1.75x the bf16 run's time and a GRPO step
179 s against 158 s; the whole run took 72 minutes."""

WARM_START_STEPS = 64
"""Warm-start steps: after 32 (``cpu-orchestrate``'s), 50-78 % of the plans sampled at
temperature 1.0 in the first GRPO steps failed to parse, and GRPO spent its first ten
steps on the format (6-16 % by steps 9-11) instead of on whom to ask."""

GRPO: dict[str, Any] = {
    "max_steps": ITERATIONS,
    "num_generations": 8,
    "prompts_per_step": 4,
    "micro_batch_size": 8,
    "learning_rate": 5e-5,
    "temperature": 0.7,
    "max_completion_length": 160,
}
"""The recipe's :func:`~.cpu_demo.cpu_demo_config` values (the settings' own win).
Sampling at 0.7, not 1.0: at 1.0 a fifth of the plans GRPO sampled failed to parse or
were cut, and the format penalty drove the policy to one-step plans."""


FIXED_PLAN_DIR = Path(__file__).with_name("fixed_plans")
"""The audit's best fixed plans in this recipe's pool, written by::

    conductor-gym sim audit --pool sim-paper --k 4 --shuffle-workers --episodes 60000 \\
        --save-plans trainers/trl/recipes/fixed_plans

(``tests/trainers/test_fixed_plans.py`` re-runs it and compares)."""

FIXED_PLANS: tuple[str, ...] = tuple(
    f"plan:{FIXED_PLAN_DIR / f'calls-{n}.plan'}" for n in (1, 2, 3)
)
"""The best fixed plans of 1, 2 and 3 calls (the policy writes 1-3 steps): baselines at
the policy's numbers of calls."""


def adaptive_env() -> EnvConfig:
    """The recipe's env: ``sim-paper`` (simulator v3), ``k`` of its seven workers per
    episode under shuffled ids."""
    return EnvConfig(pool="sim-paper", k=K, shuffle_workers=True)


@dataclass
class Args(cpu_orchestrate.Args):
    """The ``cpu-adapt`` recipe's settings: ``cpu-orchestrate``'s with these defaults."""

    recipe: ClassVar[str] = "cpu-adapt"

    env: EnvConfig = dataclasses.field(default_factory=adaptive_env)
    eval_repeats: int = 8
    warm_start: WarmStart | None = dataclasses.field(
        default_factory=lambda: WarmStart(steps=WARM_START_STEPS)
    )
    plan_search: PlanSearch | None = dataclasses.field(
        default_factory=lambda: PlanSearch(iterations=0)
    )


def resolve(args: Args) -> Args:
    """The settings the run uses: the warm start and the (uniform) prior seeded with
    ``seed`` (:func:`~.cpu_orchestrate.resolve`)."""
    return cpu_orchestrate.resolve(args)


def grpo_config(args: common.Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: :func:`~.cpu_demo.grpo_config` with :data:`GRPO`."""
    return cpu_demo.grpo_config(args, bf16=bf16, defaults=GRPO)


def run(args: Args) -> TrainResult:
    """Warm-start on the format, train with GRPO and evaluate (module docstring)."""
    return cpu_orchestrate.run_with(
        args,
        CHAT_PROMPT,
        GRPO,
        FLOAT32_ITERATIONS,
        default_baselines=("best-single", "random", *FIXED_PLANS),
    )
