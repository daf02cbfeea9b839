"""PPO on the compact plan action, CleanRL-style: one file, one :class:`Args`, read top to bottom.

::

    python -m conductor_gym.trainers.classic.ppo_compact --output-dir runs/ppo-default
    python -m conductor_gym.trainers.classic.ppo_compact --k 4 --shuffle-workers \\
        --output-dir runs/ppo-randomised

The env is :class:`~conductor_gym.ConductorEnv` under
:class:`~conductor_gym.CompactPlanAction`: an action is a plan's structure (steps, the
``Model i`` of each step, each later step's role and access), its subtasks written from
templates. An episode is one plan, so PPO's return is the reward and its advantage the
reward minus a baseline (no bootstrapping, no GAE): the critic's value, or with
``--group-size G`` the mean reward of the other ``G - 1`` plans sampled for the same
training episode (GRPO's group baseline). The observation is
:meth:`~.compact_setup.CompactWorld.observe`'s: the question's family and the drawn
workers' names per ``Model`` position (never the answer or a hidden difficulty).

The policy (:func:`conductor_gym.training.compact_network.build_network`, shared with the
``compact:<path>`` agent that plays it) is a small MLP over the observation with one
categorical head per entry of the ``MultiDiscrete`` action; a step's worker head scores
worker *names* and is read at the names the episode lists, so "ask gpt-5" is one logit
whatever ``Model i`` it is drawn as; ``--sequential-workers`` adds a name ranking shared
by every step and a learned score for asking an earlier step's worker again. Entries the
structure ignores (slots past the plan's length, the access of an ``attempt``) count
neither in the log-probability nor in the entropy.

The recipe for the paper's randomised pool (4 of 7 workers, shuffled ids, plans of up to
5 steps) is in ``docs/training-cpu.md`` ("compact-adapt")::

    python -m conductor_gym.trainers.classic.ppo_compact --recipe compact-adapt --seed 0 \
        --output-dir runs/compact-adapt

Every ``checkpoint_every`` updates (and at the end) ``checkpoint.pt`` in ``output_dir``
holds the network, the optimizer, the update count and the random state; a run started
again with the same ``output_dir`` resumes there (training episodes are numbered, so a
resumed run sees the episodes an uninterrupted one would). The end: greedy plans on fresh
tasks beside ``best-single``, the best fixed compact plan a cross-entropy search finds
on the training episodes and any ``--baselines``, paired, written to ``results.json``
with the training curve (also drawn in ``curve.png``), the plan table and the
worker-choice table (also in ``report.md``); the policy itself
goes to ``policy.pt`` (play it with ``conductor-gym evaluate --agent compact:PATH``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conductor_gym.training.compact_network import (
    PolicyShape,
    build_network,
    sample_actions,
    save_policy,
)

from .compact_setup import (
    CompactWorld,
    Observation,
    WorldSettings,
    format_report,
    fresh_report,
    parse_settings,
    plot_curve,
    run_command,
)


@dataclass
class Args:
    """Every setting of a run (each is a ``--flag``; see ``--help``)."""

    recipe: str | None = None
    """a preset of the settings below (RECIPES: compact-adapt); flags given win"""
    output_dir: str = "runs/ppo-compact"
    """where checkpoint.pt and results.json go; a run resumes from its checkpoint"""
    seed: int = 0
    """seeds the network, the sampling and the training episodes"""
    threads: int = 1
    """torch threads (one is fastest for a network this small)"""

    # the env
    pool: str = "sim-paper"
    """a pool preset or a .toml pool file"""
    k: int | None = None
    """workers drawn per episode (None: all, in the pool's order)"""
    shuffle_workers: bool = False
    """shuffle the Model ids every episode (the paper's randomised pool: --k 4 --shuffle-workers)"""
    max_steps: int = 3
    """most steps of a plan"""
    eval_tasks: int = 200
    """fresh tasks: task indices 0 .. eval_tasks-1, never trained on"""

    # PPO
    total_episodes: int = 60_000
    """training plans played (one episode each)"""
    episodes_per_update: int = 512
    """plans played per update (the rollout batch)"""
    group_size: int = 1
    """plans sampled per training episode (its task, drawn pool and seed), GRPO-style: with
    more than 1 a plan's advantage is its reward minus the mean of the others on the same
    episode (so a hard question or a weak draw does not read as a bad plan); 1: reward
    minus the critic's value. Must divide episodes_per_update"""
    learning_rate: float = 3e-3
    """Adam's step size"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0"""
    update_epochs: int = 4
    """passes over each rollout batch"""
    num_minibatches: int = 4
    """minibatches per pass"""
    clip_coef: float = 0.2
    """the surrogate objective's clipping range"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradients clipped to this global norm"""
    norm_adv: bool = True
    """normalise advantages within each minibatch"""
    ent_coef_end: float | None = None
    """the entropy weight at the last update, reached linearly from ent_coef (None: constant)"""
    hidden: int = 64
    """width of the two hidden layers"""
    sequential_workers: bool = False
    """worker heads that rank: one learned score per worker name shared by every step, and
    each step's worker chosen after the earlier steps' (a learned bonus or penalty, per
    pair of steps, for asking one again), so plans of distinct workers, or a check by the
    first step's worker, are one choice instead of a coincidence"""
    checkpoint_every: int = 10
    """updates between checkpoints"""

    # evaluation
    eval_repeats: int = 4
    """rollouts per fresh task (the same rollout seeds for every row)"""
    baselines: str = "best-single"
    """comma-separated agent specs played beside the policy (e.g. plan:FILE)"""
    fixed_plan_iterations: int = 8
    """rounds of the search for the best fixed compact plan on training episodes, played
    beside the policy (0: none)"""
    fixed_plan_episodes: int = 32
    """training episodes each candidate fixed plan plays per round"""
    unseen_tasks: str = ""
    """a task source of families never trained on (e.g. offline-ood): the policy is also
    played there beside the baselines (empty: not)"""
    unseen_count: int = 200
    """how many of unseen_tasks' tasks (its first ones) are played"""


RECIPES: dict[str, dict[str, Any]] = {
    "compact-adapt": {
        "k": 4,
        "shuffle_workers": True,
        "max_steps": 5,
        "eval_tasks": 400,
        "sequential_workers": True,
        "group_size": 8,
        "total_episodes": 400_000,
        "episodes_per_update": 1024,
        "ent_coef": 0.02,
        "ent_coef_end": 0.0,
        "eval_repeats": 4,
        "unseen_tasks": "offline-ood",
    },
}
"""``--recipe`` presets. ``compact-adapt``: the paper's randomised pool (4 of the 7
workers an episode, shuffled ids) with plans of up to 5 steps, ranked worker heads and
group baselines (``docs/training-cpu.md``, "compact-adapt")."""


def policy_shape(world: CompactWorld, args: Args) -> PolicyShape:
    """The network's shape and how it reads an episode of ``world``."""
    return PolicyShape(
        families=world.families,
        names=world.names,
        k=world.k,
        max_steps=args.max_steps,
        roles=world.env.templates.roles,
        hidden=args.hidden,
        sequential_workers=args.sequential_workers,
    )


_FREE_ON_RESUME = frozenset(
    {
        "recipe",
        "output_dir",
        "threads",
        "total_episodes",
        "checkpoint_every",
        "eval_repeats",
        "baselines",
        "fixed_plan_iterations",
        "fixed_plan_episodes",
        "unseen_tasks",
        "unseen_count",
    }
)
"""Settings a resumed run may change (the rest shape training and must match)."""


def _load_or_start(path: Path, agent: Any, optimizer: Any, args: Args) -> int:
    """The update to continue from: 0, or the checkpoint's (whose settings must match)."""
    import torch

    if not path.exists():
        return 0
    state = torch.load(path, weights_only=True)
    saved = {k: v for k, v in state["args"].items() if k not in _FREE_ON_RESUME}
    mine = {k: v for k, v in dataclasses.asdict(args).items() if k in saved}
    if saved != mine:
        changed = sorted(k for k in saved if saved[k] != mine.get(k))
        raise SystemExit(
            f"{path}: saved with other settings ({', '.join(changed)}); use another --output-dir"
        )
    agent.load_state_dict(state["agent"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    print(f"resumed from {path} at update {state['update']}", flush=True)
    return int(state["update"])


def _save(path: Path, agent: Any, optimizer: Any, args: Args, update: int) -> None:
    import torch

    state = {
        "agent": agent.state_dict(),
        "optimizer": optimizer.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "update": update,
        "args": dataclasses.asdict(args),
    }
    partial = path.with_suffix(".tmp")
    torch.save(state, partial)
    os.replace(partial, path)


def train(args: Args) -> dict[str, Any]:
    """Train (or resume), evaluate on fresh tasks and write ``results.json``; the results."""
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    from torch import nn, optim

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    world = CompactWorld(
        WorldSettings(
            pool=args.pool,
            k=args.k,
            shuffle_workers=args.shuffle_workers,
            max_steps=args.max_steps,
            eval_tasks=args.eval_tasks,
            seed=args.seed,
        )
    )
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    steps, attempt = args.max_steps, world.env.templates.names.index("attempt")
    shape = policy_shape(world, args)
    agent = build_network(shape)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    checkpoint = out / "checkpoint.pt"
    start_update = _load_or_start(checkpoint, agent, optimizer, args)
    batch, group = args.episodes_per_update, args.group_size
    minibatch = max(1, batch // args.num_minibatches)
    num_updates = args.total_episodes // batch
    curve: list[dict[str, float]] = []
    clock = time.perf_counter()

    for update in range(start_update + 1, num_updates + 1):
        progress = (update - 1.0) / num_updates
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - progress)
        ent_coef = args.ent_coef
        if args.ent_coef_end is not None:
            ent_coef += (args.ent_coef_end - args.ent_coef) * progress
        # rollout: `batch` plans, `group` of them on each training episode (numbered, so a
        # resumed run sees the episodes an uninterrupted one would)
        first = (update - 1) * (batch // group)
        episode = [first + i // group for i in range(batch)]
        seen = [world.observe(world.reset_training(e)) for e in episode]
        obs = torch.tensor(np.stack([o.features for o in seen]))
        pools = torch.tensor(np.stack([o.names for o in seen]))
        with torch.no_grad():
            actions, logprobs, _, values = sample_actions(agent, obs, pools, steps, attempt)
        rewards = torch.zeros(batch)
        for i, action in enumerate(actions.numpy()):
            world.reset_training(episode[i])  # the same episode again, now to play it
            rewards[i] = world.play(action)
        if group > 1:  # the baseline is the other plans' mean reward on the same episode
            by_episode = rewards.view(-1, group)
            others = (by_episode.sum(1, keepdim=True) - by_episode) / (group - 1)
            advantages = (by_episode - others).flatten()
        else:
            advantages = rewards - values

        # PPO update (CleanRL's clipped surrogate, clipped-free value loss)
        order = np.arange(batch)
        clipfracs = []
        for _ in range(args.update_epochs):
            np.random.default_rng([args.seed, update]).shuffle(order)
            for s in range(0, batch, minibatch):
                idx = torch.as_tensor(order[s : s + minibatch])
                _, newlogp, entropy, newvalue = sample_actions(
                    agent, obs[idx], pools[idx], steps, attempt, actions[idx]
                )
                ratio = (newlogp - logprobs[idx]).exp()
                adv = advantages[idx]
                if args.norm_adv:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = 0.5 * ((newvalue - rewards[idx]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                clipfracs.append(float(((ratio - 1.0).abs() > args.clip_coef).float().mean()))
        point = {
            "update": update,
            "episodes": update * batch,
            "mean_reward": float(rewards.mean()),
            "entropy": float(entropy.detach().mean()),
            "clipfrac": float(np.mean(clipfracs)),
        }
        curve.append(point)
        print(
            f"update {update}/{num_updates} episodes {point['episodes']:,} reward "
            f"{point['mean_reward']:.3f} entropy {point['entropy']:.2f} "
            f"({time.perf_counter() - clock:.0f} s)",
            flush=True,
        )
        if update % args.checkpoint_every == 0 or update == num_updates:
            _save(checkpoint, agent, optimizer, args, update)

    def greedy(o: Observation) -> np.ndarray:
        with torch.no_grad():
            action, *_ = sample_actions(
                agent,
                torch.tensor(o.features[None]),
                torch.tensor(o.names[None]),
                steps,
                attempt,
                greedy=True,
            )
        chosen: np.ndarray = action[0].numpy()
        return chosen

    save_policy(out / "policy.pt", agent, shape)
    train_wall_s = time.perf_counter() - clock
    results = {
        "args": dataclasses.asdict(args),
        **fresh_report(world, greedy, args, "PPO"),
        "curve": curve,
        "train_wall_s": train_wall_s,
        "wall_s": time.perf_counter() - clock,
    }
    (out / "results.json").write_text(json.dumps(results, indent=1))
    (out / "report.md").write_text(format_report(results, "PPO"))
    if curve:  # this invocation's updates (a resumed run's curve starts where it resumed)
        plot_curve(curve, out / "curve.png", f"PPO on the compact action, seed {args.seed}")
    world.close()
    return results


_POSITIVE = (
    "total_episodes", "episodes_per_update", "update_epochs", "num_minibatches", "hidden",
    "checkpoint_every", "eval_repeats", "threads", "max_steps", "fixed_plan_episodes",
)  # fmt: skip
"""The settings that must be >= 1."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """:class:`Args` from the command line: one ``--flag`` per field, its comment as help."""
    args, parser = parse_settings(
        Args,
        argv,
        prog="python -m conductor_gym.trainers.classic.ppo_compact",
        description="PPO on the compact plan action; evaluated on fresh tasks beside "
        "best-single and the best fixed compact plan",
        positive=_POSITIVE,
        presets=RECIPES,
    )
    if args.group_size < 1 or args.episodes_per_update % args.group_size:
        parser.error(
            f"--group-size must be >= 1 and divide --episodes-per-update, got {args.group_size}"
        )
    if args.total_episodes < args.episodes_per_update:
        parser.error("--total-episodes must be at least --episodes-per-update")
    if args.fixed_plan_iterations < 0:
        parser.error(f"--fixed-plan-iterations must be >= 0, got {args.fixed_plan_iterations}")
    if not args.learning_rate > 0:
        parser.error(f"--learning-rate must be > 0, got {args.learning_rate}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run_command("ppo_compact", train, args, args.output_dir)


if __name__ == "__main__":
    raise SystemExit(main())
