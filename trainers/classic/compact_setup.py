"""What the classic baselines on the compact plan action share.

A :class:`CompactWorld` is one env setting (pool, ``k``, shuffled ids, ``max_steps``)
wrapped in :class:`~conductor_gym.CompactPlanAction`, split into **training tasks**
(task indices ``eval_tasks ..``) and **fresh tasks** (indices ``0 .. eval_tasks - 1``,
never trained on, drawn with their own group seeds), and:

* :meth:`CompactWorld.observe`: the observation a planner may see: the question's family
  (``info["domain"]``, what a reader of the question tells at a glance) and, per
  ``Model i``, the name of the worker the episode lists there (``info["pool"]``: the
  names a planner is shown; in the default pool they never change). Never the answer,
  the task's hidden difficulty or any worker's skill;
* :func:`best_fixed_action`: the best **fixed** compact plan (one vector for every
  question) a cross-entropy search finds on training episodes, from the reward alone: the
  baseline a learner that reads its observation has to beat;
* :func:`evaluate_fresh`: a policy's greedy plans on the fresh tasks, beside
  ``best-single``, that fixed plan and any other agent spec, every row played on the same
  episodes with the same rollout seeds (:func:`~conductor_gym.trainers.trl.evaluate.score_plans`),
  so differences are paired; :func:`format_rows` prints them with standard errors over
  tasks; :func:`fresh_report` runs the fixed-plan search and that evaluation and returns
  the results entries both baselines write;
* :func:`parse_settings`: a baseline's settings dataclass from the command line, one flag
  per field through the project's one flag generator
  (:func:`~conductor_gym.core.flags.add_flag`), its help the field's docstring
  (:func:`field_docs`); :func:`run_command`: the rest of a baseline's command (train,
  print the paired table, exit with one line on a configuration error).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import textwrap
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import gymnasium as gym
import numpy as np

from conductor_gym.core.compact_action import CompactPlanAction, RoleTemplates
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.flags import add_flag
from conductor_gym.errors import ConfigurationError
from conductor_gym.training.compact_network import observation_features
from conductor_gym.training.scoring import Scorer

from ..trl.data import HELD_OUT_SEED_OFFSET, make_refs
from ..trl.evaluate import EvalResult, agent_eval, paired_difference, score_plans, standard_error

__all__ = [
    "CompactWorld",
    "Observation",
    "WorldSettings",
    "best_fixed_action",
    "evaluate_fresh",
    "field_docs",
    "format_plans",
    "format_report",
    "format_rows",
    "format_worker_choice",
    "fresh_report",
    "parse_settings",
    "plan_table",
    "plot_curve",
    "run_command",
    "summary",
    "worker_choice",
]

EVAL_SEED = 12345
"""Rollout seeds of the fresh-task evaluation (the same for every row: paired)."""


@dataclass(frozen=True)
class WorldSettings:
    """The env setting and its split: ``pool`` (a preset name or a ``.toml`` pool file),
    ``k`` workers per episode (``None``: all), ``shuffle_workers``, ``max_steps`` of a
    plan, the task source ``tasks``; fresh tasks are task indices ``0 .. eval_tasks -
    1``, drawn with group seeds from ``seed + HELD_OUT_SEED_OFFSET``; training uses the
    rest."""

    pool: str = "sim-paper"
    k: int | None = None
    shuffle_workers: bool = False
    max_steps: int = 3
    eval_tasks: int = 200
    seed: int = 0
    tasks: str = "offline"

    def config(self) -> EnvConfig:
        """The env's configuration (validated by :class:`EnvConfig`)."""
        return EnvConfig(
            tasks=self.tasks,
            pool=self.pool,
            k=self.k,
            shuffle_workers=self.shuffle_workers or None,
            max_steps=self.max_steps,
        )


@dataclass(frozen=True)
class Observation:
    """What a policy reads of an episode: ``features`` (the family one-hot, then one
    one-hot of the worker name per ``Model`` position) and ``names`` (each position's
    worker as an index into :attr:`CompactWorld.names`)."""

    features: np.ndarray
    names: np.ndarray


class CompactWorld:
    """One env setting under the compact action, its training and fresh tasks (module
    docstring)."""

    def __init__(self, settings: WorldSettings) -> None:
        self.settings = settings
        self.scorer = Scorer(settings.config())
        self.env = CompactPlanAction(self.scorer.make_env())
        n_tasks = len(self.scorer.tasks)
        if not 1 <= settings.eval_tasks < n_tasks:
            raise ConfigurationError(
                f"must be in 1..{n_tasks - 1} (the source has {n_tasks} tasks; the rest train)",
                field="eval_tasks",
            )
        self.train_tasks = range(settings.eval_tasks, n_tasks)
        self.fresh = make_refs(
            range(settings.eval_tasks), seed=settings.seed + HELD_OUT_SEED_OFFSET
        )
        self.families = tuple(sorted({self.scorer.tasks[i].domain for i in range(n_tasks)}))
        self.names = tuple(spec.name for spec in self.scorer.pool.specs)
        self.k = self.env.num_workers

    @property
    def observation_size(self) -> int:
        return len(self.families) + self.k * len(self.names)

    def observe(self, info: Mapping[str, Any]) -> Observation:
        """The :class:`Observation` of an episode's reset ``info``
        (:func:`~conductor_gym.training.compact_network.observation_features`: what the
        ``compact:<path>`` agent reads too)."""
        features, names = observation_features(
            self.families, self.names, self.k, info["domain"], info["pool"]
        )
        return Observation(features, names)

    def reset_training(self, episode: int) -> dict[str, Any]:
        """Reset the env to training episode number ``episode`` (a task of the training
        range and a worker draw, both fixed by ``seed`` and ``episode``, so a resumed run
        sees the episodes an uninterrupted one would); its reset ``info``."""
        rng = np.random.default_rng([self.settings.seed, episode])
        task = int(self.train_tasks[int(rng.integers(len(self.train_tasks)))])
        _, info = self.env.reset(seed=int(rng.integers(2**62)), options={"task_index": task})
        return dict(info)

    def play(self, action: np.ndarray) -> float:
        """Play ``action`` (a vector of the compact action space) on the episode reset
        last; its reward."""
        _, reward, *_ = self.env.step(action)
        return float(reward)

    def close(self) -> None:
        self.env.close()
        self.scorer.close()


def best_fixed_action(
    world: CompactWorld,
    *,
    iterations: int = 8,
    population: int = 96,
    episodes: int = 32,
    elite: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray, float]:
    """The best fixed compact plan on training episodes, from the reward alone: a
    cross-entropy search over the action vector's entries (``iterations`` rounds of
    ``population`` vectors, each played on the same ``episodes`` training episodes; the
    ``elite`` share moves each entry's distribution 0.7 of the way, with 5 % uniform
    mixed back), then the 8 best vectors of the last round re-played on 4x as many new
    episodes. Returns the best vector and its mean reward there."""
    space = world.env.action_space
    assert isinstance(space, gym.spaces.MultiDiscrete)
    rng = np.random.default_rng([seed, 7])
    probs = [np.full(n, 1.0 / n) for n in space.nvec]
    next_episode = 10**9  # apart from the learners' training episodes

    def score(vectors: Sequence[np.ndarray], count: int) -> np.ndarray:
        nonlocal next_episode
        rewards = np.zeros(len(vectors))
        for e in range(next_episode, next_episode + count):
            for i, vector in enumerate(vectors):
                world.reset_training(e)
                rewards[i] += world.play(vector)
        next_episode += count
        return rewards / count

    vectors: list[np.ndarray] = []
    means = np.zeros(0)
    n_elite = max(1, round(elite * population))
    for _ in range(iterations):
        vectors = [
            np.array([rng.choice(len(p), p=p) for p in probs], dtype=np.int64)
            for _ in range(population)
        ]
        means = score(vectors, episodes)
        elites = [vectors[i] for i in np.argsort(-means, kind="stable")[:n_elite]]
        for d, p in enumerate(probs):
            counts = np.bincount([int(v[d]) for v in elites], minlength=len(p))
            p[:] = 0.95 * (0.3 * p + 0.7 * counts / counts.sum()) + 0.05 / len(p)
    finalists = [vectors[i] for i in np.argsort(-means, kind="stable")[:8]]
    final = score(finalists, 4 * episodes)
    best = int(np.argmax(final))
    return finalists[best], float(final[best])


def evaluate_fresh(
    world: CompactWorld,
    act: Callable[[Observation], np.ndarray],
    *,
    fixed: np.ndarray | None = None,
    baselines: Sequence[str] = ("best-single",),
    repeats: int = 4,
    label: str = "policy",
    observe: Callable[[Mapping[str, Any]], Observation] | None = None,
) -> dict[str, EvalResult]:
    """``act``'s greedy plans on the fresh tasks (row ``label``), then each agent spec of
    ``baselines`` and, when given, the ``fixed`` vector on every question (row ``best
    fixed compact plan``), all on the same episodes and rollout seeds. ``observe`` reads
    an episode for ``act`` (default ``world.observe``; give the training world's to play
    a policy on another world's tasks)."""
    observe = observe or world.observe
    texts: list[str] = []
    fixed_texts: list[str] = []
    for ref in world.fresh:
        _, info = world.env.reset(seed=ref.group_seed, options={"task_index": ref.task_index})
        texts.append(world.env.action(act(observe(info))))
        if fixed is not None:
            fixed_texts.append(world.env.action(fixed))
    rows = {label: score_plans(world.scorer, world.fresh, texts, repeats=repeats, seed=EVAL_SEED)}
    for spec in baselines:
        rows[spec] = agent_eval(world.scorer, world.fresh, spec, repeats=repeats, seed=EVAL_SEED)
    if fixed is not None:
        rows["best fixed compact plan"] = score_plans(
            world.scorer, world.fresh, fixed_texts, repeats=repeats, seed=EVAL_SEED
        )
    return rows


class FreshSettings(Protocol):
    """The settings :func:`fresh_report` reads (both baselines' ``Args`` have them)."""

    @property
    def seed(self) -> int: ...
    @property
    def baselines(self) -> str: ...
    @property
    def eval_repeats(self) -> int: ...
    @property
    def fixed_plan_iterations(self) -> int: ...
    @property
    def fixed_plan_episodes(self) -> int: ...


def fresh_report(
    world: CompactWorld,
    act: Callable[[Observation], np.ndarray],
    args: FreshSettings,
    label: str,
) -> dict[str, Any]:
    """The best fixed compact plan (:func:`best_fixed_action`, skipped when
    ``args.fixed_plan_iterations`` is 0), then :func:`evaluate_fresh` of ``act`` (row
    ``label``) beside it and ``args.baselines`` (comma-separated agent specs); returns
    the results entries ``fresh``, ``table``, ``fixed_plan``, ``plans`` and
    ``worker_choice``; with ``args.unseen_tasks`` (a task source whose families the
    policy never saw, e.g. ``offline-ood``) also ``unseen``: ``act`` (reading its
    observations as on the training world) beside ``args.baselines`` on the first
    ``args.unseen_count`` tasks of that source, paired the same way."""
    fixed = None
    if args.fixed_plan_iterations:
        fixed, _ = best_fixed_action(
            world,
            iterations=args.fixed_plan_iterations,
            episodes=args.fixed_plan_episodes,
            seed=args.seed,
        )
    rows = evaluate_fresh(
        world,
        act,
        fixed=fixed,
        baselines=[b for b in args.baselines.split(",") if b],
        repeats=args.eval_repeats,
        label=label,
    )
    report = {
        "fresh": summary(rows),
        "table": format_rows(rows, label),
        "fixed_plan": None if fixed is None else world.env.structure(fixed).to_text(),
        "plans": plan_table(rows[label], world.env.templates),
        "worker_choice": worker_choice(rows[label]),
    }
    unseen_tasks = getattr(args, "unseen_tasks", "")
    if unseen_tasks:
        settings = dataclasses.replace(
            world.settings, tasks=unseen_tasks, eval_tasks=getattr(args, "unseen_count", 200)
        )
        other = CompactWorld(settings)
        try:
            unseen = evaluate_fresh(
                other, act, baselines=[b for b in args.baselines.split(",") if b],
                repeats=args.eval_repeats, label=label, observe=world.observe,
            )  # fmt: skip
        finally:
            other.close()
        report["unseen"] = {
            "tasks": unseen_tasks,
            "fresh": summary(unseen),
            "table": format_rows(unseen, label),
            "plans": plan_table(unseen[label], world.env.templates),
        }
    return report


Settings = TypeVar("Settings")


def parse_settings(
    cls: type[Settings],
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    positive: Sequence[str] = (),
    presets: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[Settings, argparse.ArgumentParser]:
    """``cls`` (a dataclass of settings) from ``argv``: one ``--flag`` per field made by
    :func:`~conductor_gym.core.flags.add_flag` from the field's type, its help the
    field's docstring (:func:`field_docs`) followed by its default; a flag not given keeps
    the field's default. With ``presets`` (name -> field values), ``cls`` has a ``recipe``
    field and ``--recipe NAME`` sets that preset's values under the flags given (a flag
    given wins). The fields named in ``positive`` must be >= 1 (a usage error otherwise).
    Returns the settings and the parser (for the caller's other range checks)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    hints = typing.get_type_hints(cls)
    helps = field_docs(cls)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        text = f"{helps.get(f.name, '')} (default: {f.default})".strip()
        choices = sorted(presets) if presets is not None and f.name == "recipe" else None
        add_flag(
            parser, "--" + f.name.replace("_", "-"), dest=f.name, annotation=hints[f.name],
            help=text, choices=choices,
        )  # fmt: skip
    given = {k: v for k, v in vars(parser.parse_args(argv)).items() if v is not None}
    preset = dict(presets[given["recipe"]]) if presets and given.get("recipe") else {}
    settings = cls(**{**preset, **given})
    for name in positive:
        if getattr(settings, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(settings, name)}")
    return settings, parser


def field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring in the dataclass ``cls`` (the string under it in its source,
    as CleanRL's ``Args`` write them)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = after.value.value
    return docs


def run_command(
    name: str, train: Callable[[Settings], Mapping[str, Any]], args: Settings, output_dir: str
) -> int:
    """A baseline's command after its settings are parsed: ``train(args)``, its paired
    table, the best fixed compact plan and where ``results.json`` went; a configuration
    error exits with one line naming the command."""
    try:
        results = train(args)
    except (ConfigurationError, ValueError) as exc:
        raise SystemExit(f"{name}: {exc}") from exc
    print(results["table"])
    print(f"best fixed compact plan: {results['fixed_plan']}")
    print(f"results: {Path(output_dir) / 'results.json'} ({results['wall_s']:.0f} s)")
    return 0


def format_rows(rows: Mapping[str, EvalResult], policy: str = "policy") -> str:
    """A Markdown table of ``rows``: accuracy and reward ± SE over tasks; worker calls,
    tokens (workers') and cost in USD per question (means); and ``policy`` minus each
    row, paired per task (accuracy and reward)."""
    lines = [
        f"| conductor | accuracy (± SE) | reward (± SE) | calls | tokens | cost | {policy} "
        "minus it: accuracy | reward |",
        "|---|---|---|---|---|---|---|---|",
    ]
    mine = rows[policy]
    for name, row in rows.items():
        if name == policy:
            gap = "| |"
        else:
            acc, acc_se = paired_difference(row, mine, metric="accuracy")
            rew, rew_se = paired_difference(row, mine, metric="reward")
            gap = f"{100 * acc:+.1f} ± {100 * acc_se:.1f} pts | {rew:+.3f} ± {rew_se:.3f} |"
        spent = row.per_question
        lines.append(
            f"| {name} | {row.accuracy:.3f} ± {standard_error(row.task_accuracy):.3f} | "
            f"{row.mean:.3f} ± {row.se:.3f} | {spent['worker_calls']:.2f} | "
            f"{spent['tokens']:,.0f} | ${spent['cost_usd']:.4f} | {gap}"
        )
    return "\n".join(lines)


def summary(rows: Mapping[str, EvalResult]) -> dict[str, Any]:
    """``rows`` as JSON-ready dicts (``results.json``)."""
    return {name: row.to_dict() for name, row in rows.items()}


def plan_table(row: Any, templates: RoleTemplates | None = None) -> dict[str, dict[str, int]]:
    """Per family, how often each greedy plan was written on the fresh tasks, its workers
    by name (what the policy asked, whatever ``Model i`` they were drawn as); with the
    ``templates`` the plans were written from, each later step's role too (``gpt-5 |
    gemini-2.5-pro check``; ``/prev``: it saw only the step before)."""
    table: dict[str, dict[str, int]] = {}
    for family, plan, pool in zip(row.families, row.plans, row.pools, strict=True):
        steps = [pool[w] for w in plan.model_ids]
        if templates is not None:
            for i, (subtask, seen) in enumerate(zip(plan.subtasks, plan.access, strict=True)):
                role = next((n for n, t in templates.roles.items() if t == subtask), "attempt")
                if i:
                    steps[i] += f" {role}" + ("/prev" if seen == (i - 1,) else "")
        key = " | ".join(steps) + f" ({len(plan.model_ids)} steps)"
        counts = table.setdefault(family, {})
        counts[key] = counts.get(key, 0) + 1
    return {f: dict(sorted(c.items(), key=lambda kv: -kv[1])) for f, c in sorted(table.items())}


def plot_curve(curve: Sequence[Mapping[str, float]], path: str | Path, title: str) -> Path:
    """Write a run's training curve (each update's ``mean_reward`` and ``entropy`` over
    ``episodes``, the reward also as a moving average of about a tenth of the updates)
    to ``path`` as a PNG; returns the path."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    episodes = [p["episodes"] for p in curve]
    fig = Figure(figsize=(10, 4), layout="constrained")
    fig.suptitle(title, fontweight="bold")
    reward, entropy = fig.subplots(1, 2)
    values = np.array([p["mean_reward"] for p in curve])
    reward.plot(episodes, values, lw=0.6, alpha=0.5, label="per update")
    window = max(1, len(values) // 10)
    if window > 1:
        smooth = np.convolve(values, np.ones(window) / window, mode="valid")
        reward.plot(episodes[window - 1 :], smooth, lw=2, label=f"mean of {window} updates")
    reward.set(xlabel="training plans", ylabel="mean reward (sampled plans)")
    reward.legend(frameon=False, fontsize=8)
    entropy.plot(episodes, [p["entropy"] for p in curve], color="C2")
    entropy.set(xlabel="training plans", ylabel="policy entropy (nats, summed over entries)")
    for ax in (reward, entropy):
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}k"))
    path = Path(path)
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})
    return path


def format_report(results: Mapping[str, Any], label: str) -> str:
    """``report.md`` of a run: the paired table on fresh tasks, the best fixed compact
    plan, the plan and worker-choice tables, the unseen families' table when played, and
    the training wall time (what ``docs/training-cpu.md`` quotes)."""
    parts = [
        f"Fresh tasks (paired per task; {label} minus each row):\n\n{results['table']}",
        f"Best fixed compact plan: `{results['fixed_plan']}`",
        f"Greedy plans per family:\n\n{format_plans(results['plans'])}",
        "Worker choice (asked / drawn, fresh tasks):\n\n"
        + format_worker_choice(results["worker_choice"]),
    ]
    if "unseen" in results:
        unseen = results["unseen"]
        parts.append(
            f"Unseen families (`{unseen['tasks']}`, paired):\n\n{unseen['table']}\n\n"
            + format_plans(unseen["plans"], top=2)
        )
    if "train_wall_s" in results:
        parts.append(
            f"Training wall time: {results['train_wall_s']:.0f} s; whole run "
            f"{results['wall_s']:.0f} s."
        )
    return "\n\n".join(parts) + "\n"


def format_plans(table: Mapping[str, Mapping[str, int]], top: int = 3) -> str:
    """A Markdown table of :func:`plan_table`: per family its ``top`` plans and counts."""
    lines = ["| family | greedy plan (workers by name, later steps' roles) | questions |",
             "|---|---|---|"]  # fmt: skip
    for family, counts in table.items():
        total = sum(counts.values())
        for plan, n in list(counts.items())[:top]:
            cell = plan.replace("|", "\\|")  # a plan's step separator, inside a table cell
            lines.append(f"| {family} | {cell} | {n} of {total} |")
    return "\n".join(lines)


def format_worker_choice(table: Mapping[str, Mapping[str, Sequence[int]]]) -> str:
    """A Markdown table of :func:`worker_choice`: family x worker, ``asked / drawn``."""
    names = sorted({n for row in table.values() for n in row})
    lines = ["| family | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for family, row in table.items():
        cells = [f"{row[n][1]}/{row[n][0]}" if n in row else "" for n in names]
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def worker_choice(row: Any) -> dict[str, dict[str, list[int]]]:
    """Per family and worker name: ``[drawn, asked]``, the fresh episodes whose pool
    listed the worker and those of them whose greedy plan asked it (any step)."""
    table: dict[str, dict[str, list[int]]] = {}
    for family, plan, pool in zip(row.families, row.plans, row.pools, strict=True):
        asked = {pool[w] for w in plan.model_ids}
        for name in pool:
            counts = table.setdefault(family, {}).setdefault(name, [0, 0])
            counts[0] += 1
            counts[1] += name in asked
    return {f: dict(sorted(c.items())) for f, c in sorted(table.items())}
