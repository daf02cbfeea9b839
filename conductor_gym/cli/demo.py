"""``conductor-gym demo``: a few episodes of the random planner, offline.

Contract. ``demo [--episodes N] [--seed S] [ENV SETTINGS]`` plays ``N`` episodes (8) of
the random planner on the env the flags give (every :class:`~conductor_gym.core.config.EnvConfig`
setting is a flag; default: procedural tasks on the simulated paper pool), episode ``i``
reset with seed ``S + i``, and prints one line per episode (task, reward, outcome, steps,
tokens, cost, workers), the mean reward and the trace of episode 0. Exit 0; 2 for a bad
setting.
"""

from __future__ import annotations

import argparse
import sys

from conductor_gym.cli.command import Command, Subparsers, one_line
from conductor_gym.core.config import add_config_arguments

__all__ = ["DemoCommand"]


class DemoCommand(Command):
    """``conductor-gym demo`` (module docstring)."""

    name = "demo"
    help = "play episodes of the random planner offline"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        demo = self.add_parser(subparsers)
        demo.add_argument("--episodes", type=int, default=8, help="episodes to play (8)")
        demo.add_argument(
            "--seed",
            type=int,
            default=0,
            help="seed of the planner; episode i resets with seed+i (0)",
        )
        add_config_arguments(demo)  # --tasks, --pool and every other env setting
        return demo

    def run(self, args: argparse.Namespace) -> int:
        import gymnasium as gym

        from conductor_gym import ENV_ID
        from conductor_gym.core.agent_spec import make_agent
        from conductor_gym.core.config import config_from_arguments
        from conductor_gym.errors import ConductorGymError

        try:
            config = config_from_arguments(args)
            env = gym.make(ENV_ID, config=config, render_mode="ansi")
        except ConductorGymError:
            raise  # main prints it
        except (ValueError, TypeError) as exc:  # a setting checked below the config (pool's k)
            print(f"conductor-gym demo: {one_line(str(exc))}", file=sys.stderr)
            return 2
        agent = make_agent("random", seed=args.seed)
        rewards: list[float] = []
        pool = config.pool if isinstance(config.pool, str) else "custom"
        print(f"{ENV_ID}: tasks={config.tasks!r} pool={pool!r}, random planner, seed={args.seed}")
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
