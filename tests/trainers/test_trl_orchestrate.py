"""The ``cpu-orchestrate`` recipe's code path end to end, on a tiny model in seconds.

``train()`` runs what the documented command runs: the policy's own chat prompt, the
plan prior's search on training episodes, the warm start on plans drawn from it, two GRPO
steps on the default env (seven ``sim-paper`` workers), the held-out evaluation beside
every ``single:<id>`` and the saved checkpoint with its prompt; :func:`write_reports`
then writes the curves and the plan table. The
tiny model (random init) is far too small to learn the plan syntax in a few warm-start
steps, so its rewards are 0 here; ``test_trl.py`` checks that GRPO moves a policy whose
samples earn different rewards. What this test pins down is that every piece of the
recipe runs together, that the weights the run saves are not the ones it loaded, and that
what TRL logged as the reward is what the env computed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from support import require, require_smollm2


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    torch = require("torch")
    for module in ("transformers", "trl", "datasets", "gguf", "matplotlib"):
        require(module)
    require_smollm2()
    torch.set_num_threads(1)
    from conductor_gym.trainers.trl.plan_prior import PlanSearch
    from conductor_gym.trainers.trl.train import make_args, train
    from conductor_gym.trainers.trl.warm_start import WarmStart

    settings = make_args(
        recipe="cpu-orchestrate",
        model="tiny:32x2",
        output_dir=str(tmp_path_factory.mktemp("orchestrate")),
        iterations=2,
        train_tasks=16,
        eval_tasks=4,
        eval_repeats=2,
        warm_start=WarmStart(steps=6, batch_size=4, learning_rate=3e-3),
        plan_search=PlanSearch(iterations=2, population=16, tasks_per_plan=4),
        precision="fp32",
        grpo_overrides={"num_generations": 4, "max_completion_length": 24, "disable_tqdm": True},
    )
    return train(settings)


def test_the_run_trains_from_its_own_prompt_and_saves_it(run: Any) -> None:
    from conductor_gym.trainers.trl.recipes.cpu_orchestrate import CHAT_PROMPT

    from conductor_gym.training.chat_prompt import ChatPrompt

    folder = Path(run.checkpoint)
    assert ChatPrompt.find(folder) == CHAT_PROMPT
    assert (folder / "model.safetensors").is_file()
    losses = run.warm_start["losses"]
    assert len(losses) == 6 and losses[-1] < losses[0]


def test_the_plan_search_ran_on_training_episodes_and_is_recorded(run: Any) -> None:
    search = run.plan_search
    assert [h["iteration"] for h in search["history"]] == [1, 2]
    assert search["settings"]["seed"] == run.settings.seed
    assert len(search["prior"]["lengths"]) == search["settings"]["max_steps"]
    from conductor_gym.trainers.trl.report import summary

    assert "plan search:" in summary(run)


def test_micro_batches_accumulate_the_same_warm_start_step() -> None:
    torch = require("torch")
    from conductor_gym.trainers.trl.plan_prior import PlanPrior
    from conductor_gym.trainers.trl.policy import load_policy
    from conductor_gym.trainers.trl.recipes.cpu_orchestrate import CHAT_PROMPT
    from conductor_gym.trainers.trl.warm_start import WarmStart, warm_start

    questions = ["Compute 3 + 4 * 2.", "What is 17 mod 5?\nA) 1\nB) 2", "Compute 9 - 2."]
    results = []
    for micro in (1, 2, 4):
        model, tokenizer = load_policy("tiny:32x2")
        settings = WarmStart(steps=2, batch_size=4, micro_batch_size=micro, learning_rate=1e-3)
        losses = warm_start(
            model,
            tokenizer,
            CHAT_PROMPT,
            questions,
            PlanPrior.uniform(7),
            settings,
            log_every=0,
        )["losses"]
        results.append((losses, [p.detach().clone() for p in model.parameters()]))
    (base_losses, base_weights), *others = results
    for losses, weights in others:
        assert losses == pytest.approx(base_losses, rel=1e-5)
        assert all(
            torch.allclose(a, b, atol=1e-6) for a, b in zip(weights, base_weights, strict=True)
        )


def test_the_saved_weights_differ_from_the_loaded_ones(run: Any) -> None:
    torch = require("torch")
    transformers = require("transformers")
    from conductor_gym.trainers.trl.policy import load_policy

    initial, _ = load_policy("tiny:32x2")
    saved = transformers.AutoModelForCausalLM.from_pretrained(run.checkpoint)
    start = dict(initial.named_parameters())
    changed = [
        name
        for name, parameter in saved.named_parameters()
        if not torch.equal(parameter.detach(), start[name].detach())
    ]
    assert changed


def test_logged_rewards_are_the_envs(run: Any) -> None:
    reward = run.trainer.reward_funcs[0]
    steps = [entry for entry in run.log_history if "rewards/conductor/mean" in entry]
    assert len(steps) == len(reward.history) == 2
    for entry, batch in zip(steps, reward.history, strict=True):
        scored = [r for r in batch if r is not None]
        assert len(batch) == 8
        assert math.isclose(entry["rewards/conductor/mean"], sum(scored) / len(scored))


def test_the_evaluation_is_held_out_and_beside_every_single_worker(run: Any) -> None:
    assert run.settings.train_first == 160 and run.settings.eval_first == 0
    singles = [f"single:{i}" for i in range(7)]
    assert sorted(run.baselines) == ["best-single", *singles]
    for evaluation in (run.after, *run.baselines.values()):
        assert evaluation["tasks"] == 4
    best = max(singles, key=lambda spec: run.baselines[spec]["accuracy"])
    assert run.versus_best_single["agent"] == best
    gain = run.after["accuracy"] - run.baselines[best]["accuracy"]
    assert math.isclose(run.versus_best_single["accuracy_gain"], gain, abs_tol=1e-12)


def test_reports_are_written(run: Any) -> None:
    from conductor_gym.trainers.trl.report import write_reports

    written = {path.name: path for path in write_reports(run)}
    assert written["curves.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = written["plans.md"].read_text()
    assert "| **all** |" in table and "arithmetic" in table
    json.dumps(run.to_dict(), default=str)


def test_overlapping_training_and_evaluation_tasks_are_refused(tmp_path: Path) -> None:
    require("trl")
    from conductor_gym.trainers.trl.train import make_args, train

    settings = make_args(
        recipe="cpu-orchestrate",
        model="tiny",
        output_dir=str(tmp_path),
        train_first=0,
        train_tasks=16,
        eval_tasks=8,
    )
    with pytest.raises(ValueError, match="overlap the evaluation tasks"):
        train(settings)


def test_policy_agent_asks_the_checkpoint_with_the_prompt_it_was_trained_on(run: Any) -> None:
    import asyncio

    from conductor_gym.agents import PolicyConductor, make_agent
    from conductor_gym.trainers.trl.recipes.cpu_orchestrate import CHAT_PROMPT

    from conductor_gym import ConductorEnv

    limit = run.trainer.args.max_completion_length
    assert isinstance(make_agent(f"policy:{run.checkpoint}", load=False), PolicyConductor)
    assert make_agent(f"policy:{run.checkpoint}", load=False).max_new_tokens == limit
    agent = make_agent(f"policy:{run.checkpoint}", max_new_tokens=8, device="cpu")
    assert isinstance(agent, PolicyConductor)
    env = ConductorEnv()
    observation, info = env.reset(seed=3)
    assert agent._messages(observation, info) == CHAT_PROMPT.for_info(info)
    [completion] = asyncio.run(agent.act_batch([observation], [info]))
    assert isinstance(completion, str)
    assert agent.describe()["chat_prompt"] == CHAT_PROMPT.fingerprint
    agent.close()
    env.close()


@pytest.mark.parametrize("name", ["warm_start", "plan_search"])
def test_orchestrate_stages_outside_cpu_orchestrate_are_refused(tmp_path: Path, name: str) -> None:
    require("trl")
    from conductor_gym.trainers.trl.plan_prior import PlanSearch
    from conductor_gym.trainers.trl.train import make_args, train
    from conductor_gym.trainers.trl.warm_start import WarmStart

    from conductor_gym.errors import ConfigurationError

    stage = {"warm_start": WarmStart(), "plan_search": PlanSearch()}[name]
    settings = make_args(recipe="cpu-demo", output_dir=str(tmp_path), **{name: stage})
    with pytest.raises(ConfigurationError, match=name):
        train(settings)


def test_float32_shortens_grpo_unless_the_user_set_its_steps() -> None:
    require("trl")
    from conductor_gym.trainers.trl.recipes.common import schedule_for_precision as schedule
    from conductor_gym.trainers.trl.recipes.cpu_orchestrate import (
        FLOAT32_ITERATIONS,
        ITERATIONS,
        grpo_config,
        resolve,
    )
    from conductor_gym.trainers.trl.train import make_args

    def schedule_for_precision(args: Any, requested: Any, *, bf16: bool) -> Any:
        return schedule(args, requested, bf16=bf16, float32_iterations=FLOAT32_ITERATIONS)

    requested = make_args(recipe="cpu-orchestrate", output_dir="unused")
    settings = resolve(requested)
    assert schedule_for_precision(settings, requested, bf16=True) == (settings, "full")
    assert grpo_config(settings, bf16=True).max_steps == ITERATIONS

    short, name = schedule_for_precision(settings, requested, bf16=False)
    assert name == "float32"
    assert grpo_config(short, bf16=False).max_steps == FLOAT32_ITERATIONS
    assert FLOAT32_ITERATIONS < ITERATIONS
    assert short.warm_start == settings.warm_start

    given = make_args(recipe="cpu-orchestrate", output_dir="unused", iterations=20)
    kept, name = schedule_for_precision(resolve(given), given, bf16=False)
    assert name == "given" and grpo_config(kept, bf16=False).max_steps == 20
    overridden = make_args(
        recipe="cpu-orchestrate", output_dir="unused", grpo_overrides={"max_steps": 3}
    )
    kept, name = schedule_for_precision(resolve(overridden), overridden, bf16=False)
    assert name == "given" and grpo_config(kept, bf16=False).max_steps == 3


def test_a_run_that_sets_its_steps_keeps_them_in_float32(run: Any) -> None:
    assert run.precision["bf16"] is False and run.precision["schedule"] == "given"
    assert run.settings.iterations == 2 and run.warm_start["settings"]["steps"] == 6
    from conductor_gym.trainers.trl.report import summary

    assert "schedule given: 6 warm-start steps, 2 GRPO steps" in summary(run)


def test_confirm_plays_the_checkpoint_on_fresh_tasks_beside_every_single_worker(
    run: Any,
) -> None:
    from conductor_gym.trainers.trl.confirm import SUITE_SIZE, confirm

    assert SUITE_SIZE == 2000  # the figures in docs/training-cpu.md start here
    result = confirm(run.checkpoint, first=SUITE_SIZE, tasks=4, repeats=2, bf16=False)
    assert result.policy["tasks"] == 4 and result.duplicates >= 0
    singles = [f"single:{i}" for i in range(7)]
    assert sorted(result.baselines) == ["best-single", *singles]
    best = max(singles, key=lambda spec: result.baselines[spec]["accuracy"])
    assert result.best_single == best
    gain = result.policy["accuracy"] - result.baselines[best]["accuracy"]
    assert math.isclose(result.accuracy_gain, gain, abs_tol=1e-12)
    assert "fresh offline tasks 2000..2003 x 2" in result.summary()
    json.dumps(result.to_dict(), default=str)


@pytest.mark.parametrize(("change", "field"), [({"first": 1999}, "first"), ({"tasks": 0}, "tasks")])
def test_confirm_refuses_tasks_that_are_not_fresh(change: dict[str, int], field: str) -> None:
    from conductor_gym.trainers.trl.confirm import confirm

    with pytest.raises(ValueError, match=field):
        confirm("unused", **change)
