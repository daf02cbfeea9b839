"""The ``cpu-adapt`` recipe's code path end to end, on a tiny model in seconds (issue 25).

What the documented command runs: the paper's randomised pool (``k`` of seven simulated
v3 workers, shuffled ids) with the drawn workers named in the policy's chat, a warm start
on the uniform prior (the format only: no search), GRPO, and the held-out evaluation
beside ``best-single`` and the random planner. The tiny model cannot learn the plan
syntax in a few steps; what this pins down is that the pieces run together and that every
chat (warm start, GRPO prompts, evaluation) names the workers its episode drew.
"""

from __future__ import annotations

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
    from conductor_gym.trainers.trl.train import make_args, train
    from conductor_gym.trainers.trl.warm_start import WarmStart

    settings = make_args(
        recipe="cpu-adapt",
        model="tiny:32x2",
        output_dir=str(tmp_path_factory.mktemp("adapt")),
        iterations=2,
        train_tasks=16,
        eval_tasks=4,
        eval_repeats=2,
        warm_start=WarmStart(steps=4, batch_size=4, learning_rate=3e-3),
        precision="fp32",
        grpo_overrides={
            "num_generations": 4,
            "prompts_per_step": 2,
            "micro_batch_size": 4,
            "max_completion_length": 24,
            "disable_tqdm": True,
        },
    )
    return train(settings)


def test_the_env_is_the_papers_randomised_pool(run: Any) -> None:
    from conductor_gym.trainers.trl.recipes.cpu_adapt import K

    env = run.settings.env
    assert (env.pool, env.k, env.shuffle_workers) == ("sim-paper", K, True)


def test_the_warm_start_teaches_the_format_only(run: Any) -> None:
    from conductor_gym.trainers.trl.plan_prior import PlanPrior
    from conductor_gym.trainers.trl.recipes.cpu_adapt import K

    search = run.plan_search
    assert search["settings"]["iterations"] == 0 and search["history"] == []
    assert search["prior"] == PlanPrior.uniform(K).to_dict()  # every id of the k listed
    assert len(run.warm_start["losses"]) == 4


def test_every_chat_names_the_workers_its_episode_drew(run: Any) -> None:
    from conductor_gym.trainers.trl.recipes import common
    from conductor_gym.trainers.trl.recipes.cpu_adapt import CHAT_PROMPT

    from conductor_gym.training.scoring import Scorer

    scorer = Scorer(run.settings.env, seed=run.settings.seed)
    from conductor_gym.trainers.trl.data import make_refs

    refs = make_refs(range(160, 176), seed=run.settings.seed)
    questions, names = common.episode_questions(scorer, refs)
    dataset, _ = common.training_dataset(
        run.settings, scorer, range(160, 176), chat_prompt=CHAT_PROMPT
    )
    assert len({tuple(n) for n in names}) > 1  # the draws differ between episodes
    for row, question, drawn in zip(dataset, questions, names, strict=True):
        user = row["prompt"][-1]["content"]
        assert question in user
        assert user.endswith("\n".join(f"Model {i}: {n}" for i, n in enumerate(drawn)))


def test_the_evaluation_is_beside_best_single_random_and_the_best_fixed_plans(run: Any) -> None:
    from conductor_gym.trainers.trl.recipes.cpu_adapt import FIXED_PLANS

    assert sorted(run.baselines) == sorted(["best-single", "random", *FIXED_PLANS])
    for evaluation in (run.before, run.after, *run.baselines.values()):
        assert evaluation["tasks"] == 4


def test_the_plan_report_shows_whom_the_plans_ask(run: Any) -> None:
    from conductor_gym.trainers.trl.report import write_reports

    written = {path.name: path for path in write_reports(run)}
    table = written["plans.md"].read_text()
    assert "Worker choice before GRPO" in table and "Worker choice after GRPO" in table


def test_confirm_plays_the_checkpoint_in_the_randomised_pool_beside_best_single(
    run: Any,
) -> None:
    import json
    import math

    from conductor_gym.trainers.trl.confirm import SUITE_SIZE, confirm
    from conductor_gym.trainers.trl.recipes.cpu_adapt import K

    result = confirm(
        run.checkpoint,
        first=SUITE_SIZE,
        tasks=4,
        repeats=2,
        bf16=False,
        recipe="cpu-adapt",
        agents=("random",),
    )
    singles = [f"single:{i}" for i in range(K)]  # the k listed ids, not the seven workers
    assert sorted(result.baselines) == sorted(["best-single", "random", *singles])
    # a shuffled Model i is no one worker: the reference is best-single
    assert result.best_single == "best-single" and result.recipe == "cpu-adapt"
    gain = result.policy["accuracy"] - result.baselines["best-single"]["accuracy"]
    assert math.isclose(result.accuracy_gain, gain, abs_tol=1e-12)
    assert "cpu-adapt's env" in result.summary()
    json.dumps(result.to_dict(), default=str)


def test_the_run_records_paired_accuracy_changes_and_gaps(run: Any) -> None:
    import math

    from conductor_gym.trainers.trl.report import summary

    change = run.paired["change"]
    before, after = run.evaluations["before"], run.evaluations["after"]
    assert math.isclose(change["accuracy"]["mean"], after.accuracy - before.accuracy, abs_tol=1e-12)
    assert math.isclose(change["reward"]["mean"], run.improvement[0], abs_tol=1e-12)
    assert sorted(run.paired["versus"]) == sorted(run.baselines)
    for spec, versus in run.paired["versus"].items():
        gap = after.accuracy - run.baselines[spec]["accuracy"]
        assert math.isclose(versus["accuracy"]["mean"], gap, abs_tol=1e-12)
        assert versus["accuracy"]["se"] >= 0
    assert "accuracy change" in summary(run) and "after minus best-single" in summary(run)
    assert run.to_dict()["paired"] == run.paired


def test_the_warm_start_is_saved_and_confirm_pairs_grpo_with_it(run: Any) -> None:
    import math
    from pathlib import Path

    from conductor_gym.trainers.trl.confirm import SUITE_SIZE, confirm

    from conductor_gym.training.chat_prompt import PROMPT_FILE

    warm = Path(run.warm_start["checkpoint"])
    assert warm == Path(run.settings.output_dir) / "warm_start"
    assert (warm / PROMPT_FILE).is_file()  # the chat GRPO's policy answers too
    kwargs: dict[str, Any] = {"first": SUITE_SIZE, "tasks": 4, "repeats": 2, "bf16": False}
    result = confirm(run.checkpoint, recipe="cpu-adapt", versus=str(warm), **kwargs)
    assert result.versus is not None and result.change is not None
    change = result.change["accuracy"]["mean"]
    assert math.isclose(
        change, result.policy["accuracy"] - result.versus["accuracy"], abs_tol=1e-12
    )
    assert 0 <= result.change["accuracy_where_parsed"]["n"] <= 4
    # the warm start paired with itself changes nothing
    alone = confirm(str(warm), recipe="cpu-adapt", versus=str(warm), **kwargs)
    assert alone.change is not None and alone.change["reward"] == {"mean": 0.0, "se": 0.0}
    assert "change from versus (paired)" in result.summary()
