"""The ``conductor-gym`` command line.

``conductor-gym demo`` plays a few episodes of the random planner on the offline
default (procedural tasks, simulated paper pool) and prints rewards and one trace.
``conductor-gym tasks list`` shows every task source, its size, its domain and whether
it runs offline here (no download, no network).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import gymnasium as gym

from conductor_gym import ENV_ID
from conductor_gym.agents import RandomPlanner


def _demo(args: argparse.Namespace) -> int:
    env = gym.make(ENV_ID, tasks=args.tasks, pool=args.pool, render_mode="ansi")
    agent = RandomPlanner(seed=args.seed)
    rewards: list[float] = []
    print(f"{ENV_ID}: tasks={args.tasks!r} pool={args.pool!r}, random planner, seed={args.seed}")
    for episode in range(args.episodes):
        obs, info = env.reset(seed=args.seed + episode)
        action = agent.act(obs, info)
        _, reward, _, _, info = env.step(action)
        rewards.append(float(reward))
        plan = info["plan"]
        steps = len(plan) if plan is not None else 0
        workers = ", ".join(s.worker for s in info["trace"].steps) if info["trace"] else "-"
        print(
            f"episode {episode:3d}  {info['task_id']:<22} reward={reward:.1f} "
            f"outcome={info['outcome']:<8} steps={steps} tokens="
            f"{info['prompt_tokens'] + info['completion_tokens']:>6} "
            f"cost=${info['cost_usd']:.4f}  [{workers}]"
        )
        if episode == 0:
            first_trace = env.render()
    mean = sum(rewards) / len(rewards)
    print(f"\nmean reward over {len(rewards)} episodes: {mean:.3f}")
    print("\ntrace of episode 0:\n" + str(first_trace))
    env.close()
    return 0


def _tasks_list(args: argparse.Namespace) -> int:
    from conductor_gym.cli_tasks import format_table, list_sources

    print(format_table(list_sources()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="conductor-gym", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="play episodes of the random planner offline")
    demo.add_argument("--episodes", type=int, default=8)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--tasks", default="offline")
    demo.add_argument("--pool", default="sim-paper")
    demo.set_defaults(handler=_demo)
    tasks = commands.add_parser("tasks", help="task sources")
    tasks_commands = tasks.add_subparsers(dest="tasks_command", required=True)
    tasks_list = tasks_commands.add_parser("list", help="every source, size, domain, offline?")
    tasks_list.set_defaults(handler=_tasks_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "episodes", 1) < 1:
        print("conductor-gym: --episodes must be >= 1", file=sys.stderr)
        return 2
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
