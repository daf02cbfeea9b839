"""conductor-gym: a Gymnasium environment for training and benchmarking conductors.

A conductor is a language model that answers a question by writing a short workflow
for a pool of worker LLMs (after "Learning to Orchestrate Agents in Natural Language
with the Conductor", arXiv 2512.04388). Importing this package registers
``ConductorEnv-v0`` (with a vector entry point) and imports nothing heavy::

    import gymnasium as gym
    import conductor_gym  # noqa: F401  (registers the env)

    env = gym.make("ConductorEnv-v0")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(completion)
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import gymnasium

from conductor_gym.core.compact_action import CompactPlanAction, RoleTemplates
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv, Round
from conductor_gym.core.execute import ExecutionError, PolicyFailure, StepRecord, Trace, run_plan
from conductor_gym.core.prompts import FewShotExample, PromptTemplates
from conductor_gym.core.reward import Outcome, RewardScheme
from conductor_gym.core.vector import ConductorVectorEnv
from conductor_gym.graders import Grade, GraderError, grade
from conductor_gym.plan import Plan, PlanParseError, parse_plan
from conductor_gym.pool.pool import PoolDraw, WorkerPool, make_pool
from conductor_gym.tasks import Task, TaskSource, make_task_source, task_source_names
from conductor_gym.training.scoring import EpisodeRef, ScoredCompletion, Scorer, score_completions
from conductor_gym.workers.base import Completion, Worker, WorkerError
from conductor_gym.workers.bound import BoundWorker, RetryPolicy
from conductor_gym.workers.spec import WorkerSpec

try:
    __version__ = version("conductor-gym")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

ENV_ID = "ConductorEnv-v0"

__all__ = [
    "ENV_ID",
    "BoundWorker",
    "CompactPlanAction",
    "Completion",
    "ConductorEnv",
    "ConductorVectorEnv",
    "EnvConfig",
    "EpisodeRef",
    "ExecutionError",
    "FewShotExample",
    "Grade",
    "GraderError",
    "Outcome",
    "Plan",
    "PlanParseError",
    "PolicyFailure",
    "PoolDraw",
    "PromptTemplates",
    "RetryPolicy",
    "RewardScheme",
    "RoleTemplates",
    "Round",
    "ScoredCompletion",
    "Scorer",
    "StepRecord",
    "Task",
    "TaskSource",
    "Trace",
    "Worker",
    "WorkerError",
    "WorkerPool",
    "WorkerSpec",
    "__version__",
    "grade",
    "make_pool",
    "make_task_source",
    "parse_plan",
    "run_plan",
    "score_completions",
    "task_source_names",
]

if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="conductor_gym.core.env:ConductorEnv",
        vector_entry_point="conductor_gym.core.vector:ConductorVectorEnv",
    )
