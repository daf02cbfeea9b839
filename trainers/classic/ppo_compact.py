"""PPO on the compact plan action, CleanRL-style: one file, one :class:`Args`, read top to bottom.

::

    python -m conductor_gym.trainers.classic.ppo_compact --output-dir runs/ppo-default
    python -m conductor_gym.trainers.classic.ppo_compact --k 4 --shuffle-workers \\
        --output-dir runs/ppo-randomised

The env is :class:`~conductor_gym.ConductorEnv` under
:class:`~conductor_gym.CompactPlanAction`: an action is a plan's structure (steps, the
``Model i`` of each step, each later step's role and access), its subtasks written from
templates. An episode is one plan, so PPO's return is the reward and its advantage the
reward minus the critic's value (no bootstrapping, no GAE). The observation is
:meth:`~.compact_setup.CompactWorld.observe`'s: the question's family and the drawn
workers' names per ``Model`` position (never the answer or a hidden difficulty).

The policy is a small MLP over the observation with one categorical head per entry of
the ``MultiDiscrete`` action; a step's worker head scores worker *names* and is read at
the names the episode lists, so "ask gpt-5" is one logit whatever ``Model i`` it is
drawn as. Entries the structure ignores (slots past the plan's length, the access of an
``attempt``) count neither in the log-probability nor in the entropy.

Every ``checkpoint_every`` updates (and at the end) ``checkpoint.pt`` in ``output_dir``
holds the network, the optimizer, the update count and the random state; a run started
again with the same ``output_dir`` resumes there (training episodes are numbered, so a
resumed run sees the episodes an uninterrupted one would). The end: greedy plans on fresh
tasks beside ``best-single``, the best fixed compact plan a cross-entropy search finds
on the training episodes and any ``--baselines``, paired, written to ``results.json``.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .compact_setup import (
    CompactWorld,
    Observation,
    WorldSettings,
    fresh_report,
    parse_settings,
)


@dataclass
class Args:
    """Every setting of a run (each is a ``--flag``; see ``--help``)."""

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
    """training episodes (one plan each)"""
    episodes_per_update: int = 512
    """episodes collected per update (the rollout batch)"""
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
    hidden: int = 64
    """width of the two hidden layers"""
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


def make_agent(world: CompactWorld, args: Args) -> Any:
    """The actor-critic network for ``world``'s observation and action."""
    import torch
    from torch import nn

    steps = args.max_steps
    roles = len(world.env.templates.names)
    names = len(world.names)

    def layer(n_in: int, n_out: int, std: float = float(np.sqrt(2))) -> nn.Linear:
        linear = nn.Linear(n_in, n_out)
        nn.init.orthogonal_(linear.weight, std)
        nn.init.constant_(linear.bias, 0.0)
        return linear

    class Agent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            size, h = world.observation_size, args.hidden
            self.critic = nn.Sequential(
                layer(size, h), nn.Tanh(), layer(h, h), nn.Tanh(), layer(h, 1, 1.0)
            )
            self.trunk = nn.Sequential(layer(size, h), nn.Tanh(), layer(h, h), nn.Tanh())
            self.length = layer(h, steps, 0.01)
            self.worker = layer(h, steps * names, 0.01)
            self.role = layer(h, (steps - 1) * roles, 0.01)
            self.access = layer(h, (steps - 1) * 2, 0.01)

        def value(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.critic(x).squeeze(-1)
            return out

        def heads(self, x: torch.Tensor, pool: torch.Tensor) -> list[torch.Tensor]:
            """Logits of each action entry, in the action vector's order."""
            h = self.trunk(x)
            batch = x.shape[0]
            by_name = self.worker(h).view(batch, steps, names)
            workers = by_name.gather(2, pool[:, None, :].expand(batch, steps, pool.shape[1]))
            role = self.role(h).view(batch, steps - 1, roles)
            access = self.access(h).view(batch, steps - 1, 2)
            return [
                self.length(h),
                *workers.unbind(1),
                *role.unbind(1),
                *access.unbind(1),
            ]

    return Agent()


def active(actions: Any, steps: int, attempt: int) -> Any:
    """Which entries of each action vector the structure reads (a 0/1 tensor): the
    length; the workers of its steps; the role of each later step and its access unless
    the role is ``attempt`` (role index ``attempt``)."""
    import torch

    length = actions[:, 0:1] + 1
    slot = torch.arange(steps)[None, :]
    later = torch.arange(1, steps)[None, :]
    roles = actions[:, 1 + steps : 2 * steps]
    worker_on = slot < length
    role_on = later < length
    access_on = role_on & (roles != attempt)
    return torch.cat([torch.ones_like(length, dtype=torch.bool), worker_on, role_on, access_on], 1)


def act(
    agent: Any,
    x: Any,
    pool: Any,
    steps: int,
    attempt: int,
    action: Any = None,
    greedy: bool = False,
) -> tuple[Any, Any, Any, Any]:
    """An action (sampled, greedy, or the given one), its log-probability and entropy over
    the entries the structure reads, and the critic's value."""
    import torch
    from torch.distributions import Categorical

    dists: list[Any] = [Categorical(logits=logits) for logits in agent.heads(x, pool)]
    if action is None:
        chosen = [d.probs.argmax(-1) if greedy else d.sample() for d in dists]
        action = torch.stack(chosen, 1)
    mask = active(action, steps, attempt).float()
    logp = torch.stack([d.log_prob(action[:, i]) for i, d in enumerate(dists)], 1)
    entropy = torch.stack([d.entropy() for d in dists], 1)
    return action, (logp * mask).sum(1), (entropy * mask).sum(1), agent.value(x)


_FREE_ON_RESUME = frozenset(
    {
        "output_dir",
        "threads",
        "total_episodes",
        "checkpoint_every",
        "eval_repeats",
        "baselines",
        "fixed_plan_iterations",
        "fixed_plan_episodes",
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
    agent = make_agent(world, args)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    checkpoint = out / "checkpoint.pt"
    start_update = _load_or_start(checkpoint, agent, optimizer, args)
    batch = args.episodes_per_update
    minibatch = max(1, batch // args.num_minibatches)
    num_updates = args.total_episodes // batch
    curve: list[dict[str, float]] = []
    clock = time.perf_counter()

    for update in range(start_update + 1, num_updates + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (
                1.0 - (update - 1.0) / num_updates
            )
        # rollout: `batch` one-plan episodes, numbered so a resumed run sees the same ones
        first = (update - 1) * batch
        seen = [world.observe(world.reset_training(first + i)) for i in range(batch)]
        obs = torch.tensor(np.stack([o.features for o in seen]))
        pools = torch.tensor(np.stack([o.names for o in seen]))
        with torch.no_grad():
            actions, logprobs, _, values = act(agent, obs, pools, steps, attempt)
        rewards = torch.zeros(batch)
        for i, action in enumerate(actions.numpy()):
            world.reset_training(first + i)  # the same episode again, now to play it
            rewards[i] = world.play(action)
        advantages = rewards - values

        # PPO update (CleanRL's clipped surrogate, clipped-free value loss)
        order = np.arange(batch)
        clipfracs = []
        for _ in range(args.update_epochs):
            np.random.default_rng([args.seed, update]).shuffle(order)
            for s in range(0, batch, minibatch):
                idx = torch.as_tensor(order[s : s + minibatch])
                _, newlogp, entropy, newvalue = act(
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
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
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
            action, *_ = act(
                agent,
                torch.tensor(o.features[None]),
                torch.tensor(o.names[None]),
                steps,
                attempt,
                greedy=True,
            )
        chosen: np.ndarray = action[0].numpy()
        return chosen

    results = {
        "args": dataclasses.asdict(args),
        **fresh_report(world, greedy, args, "PPO"),
        "curve": curve,
        "wall_s": time.perf_counter() - clock,
    }
    (out / "results.json").write_text(json.dumps(results, indent=1))
    world.close()
    return results


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """:class:`Args` from the command line: one ``--flag`` per field, its comment as help."""
    args, parser = parse_settings(
        Args,
        argv,
        prog="python -m conductor_gym.trainers.classic.ppo_compact",
        description="PPO on the compact plan action; evaluated on fresh tasks beside "
        "best-single and the best fixed compact plan",
        helps=_field_docs(),
    )
    for name in ("total_episodes", "episodes_per_update", "update_epochs", "num_minibatches",
                 "hidden", "checkpoint_every", "eval_repeats", "threads", "max_steps",
                 "fixed_plan_episodes"):  # fmt: skip
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.total_episodes < args.episodes_per_update:
        parser.error("--total-episodes must be at least --episodes-per-update")
    if args.fixed_plan_iterations < 0:
        parser.error(f"--fixed-plan-iterations must be >= 0, got {args.fixed_plan_iterations}")
    if not args.learning_rate > 0:
        parser.error(f"--learning-rate must be > 0, got {args.learning_rate}")
    return args


def _field_docs() -> dict[str, str]:
    """Each :class:`Args` field's docstring (the string under it in this file)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(Args))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
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


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from conductor_gym.errors import ConfigurationError

    try:
        results = train(args)
    except (ConfigurationError, ValueError) as exc:
        raise SystemExit(f"ppo_compact: {exc}") from exc
    print(results["table"])
    print(f"best fixed compact plan: {results['fixed_plan']}")
    print(f"results: {Path(args.output_dir) / 'results.json'} ({results['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
