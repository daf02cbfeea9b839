"""The tabular learner on the compact plan action (``trainers/classic/bandit_compact.py``):
its arms are every distinct named plan, it plays only what the episode's pool lists, and
end to end on the tiny world of specialists (drawn two of four, shuffled ids) it asks
each family's specialist wherever it is listed; an interrupted run resumes its table."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from classic_support import specialist_followed, tiny_pool
from conductor_gym.trainers.classic import bandit_compact
from conductor_gym.trainers.classic.bandit_compact import BanditArgs, CompactBandit, arms
from conductor_gym.trainers.classic.compact_setup import CompactWorld, WorldSettings


def tiny_args(tmp_path: Path, **changes: object) -> BanditArgs:
    args = BanditArgs(
        output_dir=str(tmp_path / "run"),
        pool=tiny_pool(tmp_path),
        k=2,
        shuffle_workers=True,
        eval_tasks=48,
        eval_repeats=1,
        total_episodes=2500,
        checkpoint_every=500,
        fixed_plan_iterations=1,
        fixed_plan_episodes=4,
        baselines="",
    )
    return dataclasses.replace(args, **changes)  # type: ignore[arg-type]


def test_the_arms_are_every_distinct_named_plan() -> None:
    roles = ("attempt", "solve", "check", "vote")
    # one step: a name; two: two names and an attempt, or 3 roles x 2 accesses
    assert len(arms(4, roles, 2)) == 4 + 16 * 7
    assert len(set(arms(3, roles, 3))) == 3 + 9 * 7 + 27 * 49


def test_it_plays_only_listed_workers_at_their_positions(tmp_path: Path) -> None:
    world = CompactWorld(
        WorldSettings(pool=tiny_pool(tmp_path), k=2, shuffle_workers=True, max_steps=2)
    )
    try:
        bandit = CompactBandit(world, 2, 0.5)
        rng = np.random.default_rng(0)
        for e in range(60):
            info = world.reset_training(e)
            seen = world.observe(info)
            arm = bandit.choose(seen, rng)
            asked = {world.names[n] for n in bandit.arms[arm].names}
            assert asked <= set(info["pool"])
            played = world.env.structure(bandit.vector(arm, seen))
            assert [info["pool"][w] for w in played.workers] == [
                world.names[n] for n in bandit.arms[arm].names
            ]
            bandit.update(seen, arm, world.play(bandit.vector(arm, seen)))
    finally:
        world.close()


def test_in_a_drawn_shuffled_pool_it_asks_the_specialist_where_listed(tmp_path: Path) -> None:
    results = bandit_compact.train(tiny_args(tmp_path))
    followed = specialist_followed(results).values()
    drawn, asked = sum(d for d, _ in followed), sum(a for _, a in followed)
    assert drawn >= 12
    assert asked >= 0.8 * drawn, results["worker_choice"]
    fresh = results["fresh"]
    assert fresh["bandit"]["accuracy"] > fresh["best fixed compact plan"]["accuracy"] + 0.1


def test_an_interrupted_run_resumes_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = {"fixed_plan_iterations": 0, "eval_tasks": 8, "total_episodes": 600}
    whole = bandit_compact.train(tiny_args(tmp_path / "a", **common))
    bandit_compact.train(tiny_args(tmp_path / "b", **{**common, "total_episodes": 300}))
    resumed = bandit_compact.train(tiny_args(tmp_path / "b", **common))
    assert "resumed from" in capsys.readouterr().out
    a, b = np.load(tmp_path / "a/run/bandit.npz"), np.load(tmp_path / "b/run/bandit.npz")
    assert (a["counts"] == b["counts"]).all() and (a["sums"] == b["sums"]).all()
    assert resumed["plans"] == whole["plans"]
    with pytest.raises(SystemExit, match="other settings"):
        bandit_compact.train(tiny_args(tmp_path / "b", **{**common, "exploration": 2.0}))


def test_help_and_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        bandit_compact.main(["--help"])
    assert exited.value.code == 0
    assert "--exploration" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        bandit_compact.main(["--total-episodes", "0"])
    assert exited.value.code == 2
    assert "--total-episodes must be >= 1" in capsys.readouterr().err


def test_importing_the_baselines_imports_no_torch() -> None:
    code = (
        "import sys, conductor_gym.trainers.classic.ppo_compact, "
        "conductor_gym.trainers.classic.bandit_compact; print('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
