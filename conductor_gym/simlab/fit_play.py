"""Recorded plans played again on a simulated pool: what a fitted pool predicts for them
(:mod:`conductor_gym.simlab.fit`, :mod:`conductor_gym.simlab.fit_fidelity`).

Contract. :class:`Player` builds, for one recorded run, an env per task source with the
run's env settings (:func:`~conductor_gym.bench.replay.replay_config`) on a pool of
simulated workers shown unshuffled in the given order. :meth:`Player.outcome` plays an
episode's first plan (:class:`~conductor_gym.simlab.fit_steps.TracedEpisode`) with each
step sent to the worker that ran it when recorded, on the recorded task, once per seed
(the recorded seed, then ``seed + j * SEED_STRIDE``), and returns the share of plays
graded correct (a recursive run is stopped after that plan): the pool's probability
for that episode (given the simulator's fixed difficulty of that task for each worker).
A play the env does not score (a worker the pool lacks, a failure) raises
:class:`~conductor_gym.simlab.fit_data.SimFitError`. :func:`fit_check_scale` uses it to
fit ``check_scale`` (:mod:`conductor_gym.simlab.fit`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from conductor_gym.bench.replay import ReplayError, replay_config, run_sources
from conductor_gym.bench.results import Results
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.reward import Outcome
from conductor_gym.plan import Plan
from conductor_gym.sim.params import VERSION_DYNAMICS, SimDynamics
from conductor_gym.sim.versions import version_info
from conductor_gym.simlab.fit_data import Estimate, SimFitError
from conductor_gym.simlab.fit_steps import TracedEpisode
from conductor_gym.workers.spec import WorkerSpec

__all__ = ["CHECK_SEEDS", "SEED_STRIDE", "Player", "fit_check_scale"]

CHECK_SEEDS = 2
"""Plays per episode when fitting ``check_scale``."""

SEED_STRIDE = 1_000_003
"""The distance between the seeds of one episode's plays."""


STOP = "model_id = []\nsubtasks = []\naccess_list = []"


class Player:
    """Plays a run's recorded plans on ``specs`` (module docstring)."""

    def __init__(self, results: Results, specs: Sequence[WorkerSpec]) -> None:
        try:
            config = replay_config(results)
            sources = run_sources(results)
        except ReplayError as exc:
            raise SimFitError(f"{results.suite.name}: {exc}", field="results") from None
        self.names = [spec.name for spec in specs]
        self.envs = {
            name: ConductorEnv(
                config.replace(
                    tasks=source, pool=list(specs), k=None, shuffle_workers=False, cache=None
                )
            )
            for name, source in sources.items()
        }

    def completion(self, episode: TracedEpisode) -> str:
        """The episode's first plan with each step's ``Model`` id that of its worker here."""
        missing = sorted(set(episode.workers) - set(self.names))
        if missing:
            raise SimFitError(f"the pool has no worker {missing[0]!r}", field="pool")
        plan = episode.plan
        ids = tuple(self.names.index(w) for w in episode.workers)
        return Plan(model_ids=ids, subtasks=plan.subtasks, access=plan.access).to_text()

    def outcome(self, episode: TracedEpisode, seeds: int = 1) -> float:
        """The share of ``seeds`` plays of ``episode`` graded correct (module docstring)."""
        env = self.envs[episode.record.benchmark]
        action = self.completion(episode)
        correct = 0
        for j in range(seeds):
            seed = episode.record.seed + j * SEED_STRIDE
            env.reset(seed=seed, options={"task_index": episode.record.task_index})
            _, _, terminated, truncated, info = env.step(action)
            for _ in range(8):  # a recursive run: stop after the first plan
                if terminated or truncated:
                    break
                _, _, terminated, truncated, info = env.step(STOP)
            if info["outcome"] not in (Outcome.CORRECT, Outcome.WRONG):
                raise SimFitError(
                    f"episode {episode.record.key}: the simulated pool's play ended "
                    f"{info['outcome']!r} ({info.get('error') or info.get('parse_error')})",
                    field="pool",
                )
            correct += info["outcome"] is Outcome.CORRECT
        return correct / seeds


def fit_check_scale(
    specs: Sequence[WorkerSpec],
    version: str,
    runs: Sequence[Results],
    episodes: Sequence[TracedEpisode],
) -> dict[str, Estimate]:
    """Per checking worker, the ``check_scale`` at which ``specs`` (a fitted pool at
    simulator ``version``) scores the ``episodes`` whose first plan ends in a ``check``
    step as they were recorded: bisected on ``[0, 4]`` (9 halvings, :data:`CHECK_SEEDS`
    plays per episode, each worker's episodes on its own bracket); the standard error is
    the recorded accuracy's and the plays' binomial error over the slope between the
    scale -/+ 0.25. Empty without such episodes, or below simulator v3."""
    by_worker: dict[str, list[TracedEpisode]] = {}
    for e in episodes:
        first = e.first
        if first and first[-1].kind == "check" and not e.record.followups:
            by_worker.setdefault(first[-1].worker, []).append(e)
    if not by_worker or not version_info(version).bounded_checking:
        return {}
    bounds = {w: [0.0, 4.0] for w in by_worker}
    observed = {w: sum(e.record.correct for e in es) / len(es) for w, es in by_worker.items()}

    def rates(scales: Mapping[str, float]) -> dict[str, float]:
        played: list[WorkerSpec] = []
        for given in specs:
            spec = given
            if spec.name in scales:
                options = dict(spec.backend_options)
                options["dynamics"] = {
                    **options.get("dynamics", {}),
                    "check_scale": scales[spec.name],
                }
                spec = replace(spec, backend_options=options)
            played.append(spec)
        players: dict[int, Player] = {}
        out = {}
        for w, es in by_worker.items():
            total = 0.0
            for e in es:
                if e.run not in players:
                    players[e.run] = Player(runs[e.run], played)
                total += players[e.run].outcome(e, CHECK_SEEDS)
            out[w] = total / len(es)
        return out

    for _ in range(9):
        mids = {w: sum(b) / 2 for w, b in bounds.items()}
        for w, rate in rates(mids).items():
            if rate < observed[w]:
                bounds[w][0] = mids[w]
            else:
                bounds[w][1] = mids[w]
    scales = {w: sum(b) / 2 for w, b in bounds.items()}
    low = rates({w: max(0.0, s - 0.25) for w, s in scales.items()})
    high = rates({w: s + 0.25 for w, s in scales.items()})
    prior = SimDynamics(**VERSION_DYNAMICS[version]).check_scale
    out = {}
    for w, es in by_worker.items():
        n = len(es)
        p = observed[w]
        slope = (high[w] - low[w]) / (scales[w] + 0.25 - max(0.0, scales[w] - 0.25))
        var = p * (1 - p) / n * (1 + 1 / CHECK_SEEDS)
        se = math.sqrt(var) / slope if slope > 1e-6 else math.inf
        out[w] = Estimate.normal(scales[w], se, n, bounds=(0.0, 4.0), prior=prior, unit="episodes")
    return out
