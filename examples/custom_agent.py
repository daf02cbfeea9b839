"""A custom conductor: plug your own planner into the env, the harness and the CLI.

    python examples/custom_agent.py                         # one episode, then a small evaluation
    conductor-gym evaluate --agent examples/custom_agent.py:SolveThenCheck --limit 10

An agent is any object with ``act(observation, info) -> str`` (the completion: free
reasoning, then the three lists). Subclassing ``BaseAgent`` adds the optional hooks with
their defaults (``act_batch``, ``name``, ``describe``, ...). This one asks the first
worker of the episode to solve and the second to check, routing by ``info`` alone; a
learned conductor would read the prompt (``observation``) instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conductor_gym import ConductorEnv
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.core.agent import BaseAgent


class SolveThenCheck(BaseAgent):
    """Model 0 solves; Model 1 (when the episode has two workers) checks and answers."""

    name = "solve-then-check"

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if info.get("can_stop"):  # a recursive round: keep the answer
            return "model_id = []\nsubtasks = []\naccess_list = []"
        solve = f"Solve the problem and end with the final answer.\n\n{info['question']}"
        if info["num_workers"] < 2:
            return f"model_id = [0]\nsubtasks = {[solve]!r}\naccess_list = [[]]"
        check = (
            "Check the solution above step by step; correct it if needed and end with "
            f"the final answer.\n\nProblem: {info['question']}"
        )
        return (
            "One model solves, another checks.\n"
            f'model_id = [0, 1]\nsubtasks = {[solve, check]!r}\naccess_list = [[], "all"]'
        )


def main() -> None:
    env = ConductorEnv()  # the offline default: procedural tasks, simulated pool
    agent = SolveThenCheck()
    obs, info = env.reset(seed=0)
    _, reward, _, _, info = env.step(agent.act(obs, info))
    print(f"one episode: reward {reward}, outcome {info['outcome']}, {info['worker_calls']} calls")
    results = evaluate(agent, "offline", limit=10, repeats=2, progress=False)
    overall = results.metrics["overall"]
    print(f"offline, first 10 tasks x 2 repeats: accuracy {overall.accuracy:.3f}, "
          f"mean reward {overall.mean_reward:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
