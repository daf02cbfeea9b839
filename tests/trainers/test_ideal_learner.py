"""The tabular yardstick of a recipe's learning problem (``ideal_learner``): it draws only
what an episode lists, its updates move the policy the way the reward says, and on
``cpu-adapt``'s episodes it learns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conductor_gym.trainers.trl import ideal_learner
from conductor_gym.trainers.trl.ideal_learner import (
    Context,
    LearnerSettings,
    TabularPolicy,
    learning_curve,
)
from support import docs_figures_build

NAMES = ("a", "b", "c", "d", "e")
FAMILIES = ("arithmetic", "countdown")


def test_settings_are_checked_naming_the_field() -> None:
    with pytest.raises(ValueError, match="num_generations"):
        LearnerSettings(num_generations=1)
    with pytest.raises(ValueError, match="learning_rate"):
        LearnerSettings(learning_rate=0.0)
    with pytest.raises(ValueError, match="marks"):
        LearnerSettings(steps=10, marks=(20,))


def test_the_policy_asks_only_the_drawn_workers_by_their_positions() -> None:
    policy = TabularPolicy(NAMES, FAMILIES)
    context = Context("What is 2 + 2?", ("d", "a", "e"), "arithmetic")
    rng = np.random.default_rng(0)
    shapes = [policy.act(context, rng)[0] for _ in range(200)]
    assert {w for s in shapes for w in s.workers} == {0, 1, 2}  # positions in the pool
    assert {len(s.workers) for s in shapes} == {1, 2, 3}
    assert all(s.roles[0] == "attempt" for s in shapes)
    greedy = policy.act(context, None)[0]
    assert greedy == policy.act(context, None)[0]


def test_reinforcing_a_draw_makes_it_likelier_in_its_family_only() -> None:
    policy = TabularPolicy(NAMES, FAMILIES)
    context = Context("q", ("d", "a", "e", "b"), "countdown")
    rng = np.random.default_rng(1)
    for _ in range(50):  # reward asking "e" (position 2) first, whatever else
        shape, choices = policy.act(context, rng)
        policy.reinforce(choices, 0.5 if shape.workers[0] == 2 else -0.5)
    assert policy.act(context, None)[0].workers[0] == 2
    shuffled = Context("q", ("e", "c", "b", "d"), "countdown")
    assert policy.act(shuffled, None)[0].workers[0] == 0  # "e" by name, wherever listed
    other = Context("q", ("d", "a", "e", "b"), "arithmetic")
    assert not policy.workers[FAMILIES.index("arithmetic")].any()  # untouched
    assert policy.act(other, None)[0].workers[0] == 0  # uniform: the first listed


def test_on_cpu_adapts_episodes_it_learns_above_its_start() -> None:
    scorer, train, held_out, repeats = ideal_learner._recipe_episodes("cpu-adapt")
    settings = LearnerSettings(steps=150, marks=(150,))
    start, end = learning_curve(scorer, train, held_out[:80], settings, eval_repeats=repeats)
    assert (start.step, end.step, end.episodes) == (0, 150, 150 * 32)
    # the uniform table's greedy plan is one call to Model 0 (a random drawn worker);
    # after 4,800 episodes it reads family and names: well above it
    assert end.accuracy - start.accuracy > 0.06
    assert end.reward > start.reward


def test_the_command_prints_the_curve_beside_best_single(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert ideal_learner.main(["--steps", "3", "--marks", "1,3", "--seeds", "0,1"]) == 0
    out = capsys.readouterr().out
    assert "| 3 (96) |" in out and "| `best-single` |" in out
    with pytest.raises(SystemExit):
        ideal_learner.main(["--recipe", "no-such-recipe"])


@pytest.mark.slow
@pytest.mark.figures
def test_the_docs_block_is_what_the_yardstick_prints() -> None:
    # three seeds of 2,000 steps (about two and a half minutes): the figures and the
    # sentence docs/training-cpu.md quotes, with the generator's check of its prose
    block = docs_figures_build().block("ideal-learner")
    doc = (Path(__file__).resolve().parents[2] / block.doc).read_text()
    assert block.current(doc) == block.generate(), "regenerate: make docs-figures"


def test_the_command_plays_another_pool_and_records_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--steps", "1", "--marks", "1", "--pool", "sim-paper", "--json"]
    assert ideal_learner.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["env"]["pool"] == "sim-paper" and "k" not in report["env"]
    assert report["beside"] == {}
    assert ideal_learner.main([*argv[:-1], "--k", "4", "--shuffle-workers", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["env"]["k"], report["env"]["shuffle_workers"]) == (4, True)
