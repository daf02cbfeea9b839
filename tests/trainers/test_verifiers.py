"""conductor-gym as a verifiers 0.4 environment, run by verifiers' own evaluation CLI.

``vf-eval conductor-gym-env`` (the installed console script, in a subprocess) evaluates
SmolLM2-135M served by llama.cpp on loopback (the session fixture ``llama_base_url``) as
the conductor, on the offline default (procedural tasks, simulated paper pool). SmolLM2
rarely writes the three lists on its own, so the run passes llama.cpp a GBNF grammar as a
sampling field (verifiers forwards extra sampling keys to the endpoint): its plans are
then well-formed and get executed and graded, with rewards 1 and 0.5 as well as 0.
Each test reads the run's ``traces.jsonl`` and checks verifiers' rewards against the
env's own for the same completions (:func:`conductor_gym.score_completions`, or a
``ConductorEnv`` replayed turn by turn), with the same group and rollout seeds."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import require

from conductor_gym import EpisodeRef, Scorer, score_completions
from conductor_gym.core.prompts import DEFAULT_TEMPLATES

PLANS = r"""
one ::= "model_id = [" id "]\nsubtasks = [" str "]\naccess_list = [[]]"
two ::= "model_id = [" id ", " id "]\nsubtasks = [" str ", " str "]\naccess_list = [[], \"all\"]"
id ::= [0-2]
str ::= "\"" [a-zA-Z ,.]{3,40} "\""
"""
GRAMMAR = "root ::= one | two" + PLANS
"""A plan of one or two steps over Model 0..2 (GBNF, for llama.cpp)."""
SHORT_PROMPT = dataclasses.replace(DEFAULT_TEMPLATES, examples=())
TASKSET = {"id": "conductor-gym-env", "few_shot": False, "k": 3, "shuffle_workers": True}


def _toml(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, bool) else str(value).lower()


class VfEval:
    """``vf-eval @ eval.toml`` started in a subprocess; :meth:`episodes` waits for it and
    returns its ``traces.jsonl`` episodes."""

    def __init__(
        self,
        folder: Path,
        base_url: str,
        taskset: dict[str, Any],
        limit: int,
        rollouts: int,
        grammar: str = GRAMMAR,
    ) -> None:
        script = Path(sys.executable).with_name("vf-eval")
        assert script.exists(), f"verifiers' console script is missing: {script}"
        lines = [
            'model = "smollm2"', f"num_rollouts = {rollouts}",
            "[client]", f'base_url = "{base_url}/v1"', 'api_key_var = "CONDUCTOR_GYM_NO_KEY"',
            "[sampling]", "max_tokens = 80", "temperature = 1.0",
            f"grammar = {json.dumps(grammar)}",
            "[select]", f"limit = {limit}",
            "[env.taskset]", *(f"{k} = {_toml(v)}" for k, v in taskset.items()),
        ]  # fmt: skip
        folder.mkdir(parents=True)
        config = folder / "eval.toml"
        config.write_text("\n".join(lines) + "\n")
        self.out = folder / "out"
        self.log = (folder / "vf-eval.log").open("w+")
        self.process = subprocess.Popen(
            [str(script), "@", str(config), "--no-push", "--no-rich", "-o", str(self.out)],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env={**os.environ, "HOME": str(folder)},  # verifiers' caches stay in the test
        )

    def episodes(self) -> list[dict[str, Any]]:
        code = self.process.wait(timeout=300)
        self.log.seek(0)
        assert code == 0, self.log.read()[-4000:]
        (traces,) = self.out.glob("*/traces.jsonl")
        return [json.loads(line) for line in traces.read_text().splitlines()]


def _budget_pool(path: Path) -> Path:
    """Three simulated workers and one worker call per episode."""
    workers = "".join(
        f'[[workers]]\nname = "{name}"\nbackend = "simulated"\n'
        for name in ("gpt-5", "claude-sonnet-4", "gemini-2.5-pro")
    )
    path.write_text(
        'name = "one-call"\ndescription = "one worker call per episode"\n'
        f"[episode_budget]\nmax_calls = 1\n{workers}"
    )
    return path


@pytest.fixture(scope="module")
def runs(llama_base_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, VfEval]:
    """The three runs of this module, started together (their start-ups overlap)."""
    require("verifiers")
    root = tmp_path_factory.mktemp("vf-eval")
    recursive = {**TASKSET, "max_recursions": 1, "force_recursion": True}
    budget = {"id": "conductor-gym-env", "few_shot": False}
    budget["pool"] = str(_budget_pool(root / "one-call.toml"))
    two_steps = "root ::= two" + PLANS  # the second step is refused by the budget
    return {
        "single": VfEval(root / "single", llama_base_url, TASKSET, limit=2, rollouts=2),
        "recursive": VfEval(root / "recursive", llama_base_url, recursive, limit=1, rollouts=1),
        "budget": VfEval(root / "budget", llama_base_url, budget, 1, 1, grammar=two_steps),
    }


def _turns(trace: dict[str, Any], role: str) -> list[str]:
    return [n["message"]["content"] for n in trace["nodes"] if n["message"]["role"] == role]


def test_vf_eval_rewards_are_the_envs_rewards_for_the_same_completions(
    runs: dict[str, VfEval],
) -> None:
    episodes = runs["single"].episodes()
    assert len(episodes) == 4 and all(e["ok"] for e in episodes)
    settings = {"k": 3, "shuffle_workers": True, "templates": SHORT_PROMPT}
    prompts = Scorer(**settings)
    outcomes, pools = [], {}
    for episode in episodes:
        data = episode["task"]["data"]
        ref = EpisodeRef(data["task_index"], data["group_seed"])
        (trace,) = episode["traces"]
        state = trace["info"]["conductor"]
        (prompt,) = _turns(trace, "user")
        assert prompt == prompts.prompt(ref)  # the env's conductor prompt, verbatim
        (completion,) = _turns(trace, "assistant")
        (scored,) = score_completions(
            [ref], [completion], rollout_seeds=[state["rollout_seed"]], **settings
        )
        assert trace["rewards"]["conductor"]["score"] == scored.reward
        assert state["outcome"] == scored.outcome and not scored.truncated
        assert trace["metrics"]["correct"] == scored.correct
        assert trace["metrics"]["worker_calls"] == scored.info["worker_calls"]
        assert trace["metrics"]["completion_tokens"] == scored.info["completion_tokens"]
        assert state["cost_usd"] == pytest.approx(scored.info["cost_usd"])
        assert state["rounds"][0]["trace"] == scored.info["trace"].to_dict()
        pools.setdefault(ref.task_index, []).append(tuple(state["workers"]))
        outcomes.append(scored.outcome)
    # a GRPO group shares its worker draw (k=3 of 7, shuffled); rollouts differ in seeds
    assert all(len(set(draws)) == 1 for draws in pools.values())
    assert len({s["traces"][0]["info"]["conductor"]["rollout_seed"] for s in episodes}) == 4
    assert {"correct", "wrong"} & set(outcomes)  # plans ran: not every reward is 0
    prompts.close()


def test_a_recursive_episode_is_a_multi_turn_exchange(runs: dict[str, VfEval]) -> None:
    (episode,) = runs["recursive"].episodes()
    (trace,) = episode["traces"]
    state = trace["info"]["conductor"]
    completions = _turns(trace, "assistant")
    assert len(completions) == 2 and len(state["rounds"]) == 2 and state["finished"]
    followup = _turns(trace, "user")[1]  # the env's recursive prompt, as a user turn
    assert state["rounds"][0]["trace"]["final_response"] in followup

    data = episode["task"]["data"]
    scorer = Scorer(
        k=3, shuffle_workers=True, templates=SHORT_PROMPT, max_recursions=1,
        force_recursion=True,
    )  # fmt: skip
    env = scorer.make_env()
    scorer.reset(env, EpisodeRef(data["task_index"], data["group_seed"]), state["rollout_seed"])
    observation, reward, *_ = env.step(completions[0])
    assert observation == followup
    _, reward, terminated, _, info = env.step(completions[1])
    assert terminated and trace["rewards"]["conductor"]["score"] == reward
    assert state["outcome"] == info["outcome"]
    scorer.close()


def test_an_infrastructure_failure_fails_the_rollout_instead_of_scoring_it(
    runs: dict[str, VfEval],
) -> None:
    # A spent budget is an infrastructure failure (truncated), like a dead worker (whose
    # 502 path tests/serve covers on a closed port); it needs no retries, so it is quick.
    (episode,) = runs["budget"].episodes()
    (trace,) = episode["traces"]
    assert not episode["ok"] and not trace["ok"]
    assert trace["rewards"].get("conductor") is None  # no reward recorded
    (error,) = trace["errors"]
    assert error["type"] == "EpisodeTruncated" and "infrastructure" in error["message"]
    state = trace["info"]["conductor"]
    assert state["truncated"] and state["error"]["kind"] == "budget"
    assert state["worker_calls"] == 1
