"""Training curves (a PNG) and plan statistics (a table) of a TRL run.

The log histories are built like a ``GRPOTrainer``'s ``state.log_history`` (TRL 1.16:
one entry per logging step with the trainer's own keys, the reward function's
``rewards/conductor/*`` and the ``conductor/*`` metrics it logs, ``epoch`` and ``step``;
then the run's summary entry). The plans are hand-built over real procedural questions.
"""

from __future__ import annotations

import json
import math
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.trainers.trl.report import (
    access_pattern,
    curve,
    plan_statistics,
    plan_table,
    plot_curves,
    read_log_history,
    step_role,
)
from support import require

from conductor_gym.plan import Plan
from conductor_gym.tasks.procedural.source import ProceduralTasks

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def grpo_entry(step: int, n: int) -> dict[str, Any]:
    """One logging step of a GRPOTrainer run of ``n`` steps, with trends to plot."""
    t = step / n
    accuracy = 0.3 + 0.4 * t + 0.05 * math.sin(step)
    invalid = 0.5 * (1 - t)
    reward = accuracy * (1 - invalid)
    return {
        "loss": 0.002 * math.cos(step),
        "grad_norm": 0.8,
        "learning_rate": 1e-6 * (1 - t),
        "num_tokens": 4000.0 * step,
        "completions/mean_length": 90.0,
        "completions/clipped_ratio": 0.1,
        "rewards/conductor/mean": reward,
        "rewards/conductor/std": 0.4,
        "reward": reward,
        "reward_std": 0.4,
        "frac_reward_zero_std": 0.2,
        "conductor/accuracy": accuracy,
        "conductor/parse_failure_rate": invalid,
        "conductor/truncated_rate": 0.0,
        "conductor/steps_per_plan": 1.0 + t,
        "conductor/worker_calls": (1.0 + t) * (1 - invalid),
        "conductor/cost_usd": 0.001,
        "conductor/episodes": 16.0,
        "kl": 0.0,
        "entropy": 0.9,
        "epoch": t,
        "step": step,
    }


def grpo_history(n: int = 40) -> list[dict[str, Any]]:
    summary = {"train_runtime": 312.5, "train_loss": 0.001, "epoch": 1.0, "step": n}
    return [grpo_entry(s, n) for s in range(1, n + 1)] + [summary]


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk (after checking the signature)."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module", autouse=True)
def _matplotlib() -> None:
    require("matplotlib")


# ------------------------------------------------------------------------------- curves


def test_plot_curves_writes_a_png_of_the_five_panels(tmp_path: Path) -> None:
    out = plot_curves(
        grpo_history(),
        tmp_path / "curves.png",
        title="test run",
        evals=[(0, 0.31, "before"), (40, 0.68, "after")],
    )
    assert out == tmp_path / "curves.png"
    width, height = png_size(out)
    assert (width, height) == (14 * 110, 8 * 110)
    assert out.stat().st_size > 50_000
    # something is drawn: the image is far from one flat colour
    image = require("matplotlib.image").imread(out)
    assert image.std() > 0.05


def test_plot_curves_is_deterministic(tmp_path: Path) -> None:
    a = plot_curves(grpo_history(), tmp_path / "a.png")
    b = plot_curves(grpo_history(), tmp_path / "b.png")
    assert a.read_bytes() == b.read_bytes()


def test_curve_skips_entries_without_step_or_key_or_a_finite_value() -> None:
    history: list[dict[str, Any]] = [
        {"conductor/accuracy": 0.9},  # no step
        {"conductor/accuracy": 0.4, "step": 1},
        {"loss": 0.1, "step": 2},  # no key
        {"conductor/accuracy": None, "step": 3},  # TRL's all-NaN logging step
        {"conductor/accuracy": float("nan"), "step": 4},
        {"conductor/accuracy": True, "step": 5},
        {"conductor/accuracy": 0.5, "step": "6"},
        {"conductor/accuracy": 1, "step": 7},
        {"eval_conductor/accuracy": 0.2, "step": 8},  # an evaluation-mode entry
    ]
    assert curve(history, "conductor/accuracy") == ([1, 7], [0.4, 1.0])


def test_plot_curves_draws_what_is_logged_and_skips_the_rest(tmp_path: Path) -> None:
    # only "reward" (no per-function key) and accuracy, some entries without them
    history: list[dict[str, Any]] = [
        {"reward": 0.1 * s, "conductor/accuracy": 0.05 * s, "step": s} for s in range(1, 9)
    ]
    history += [{"loss": 0.3, "step": 9}, {"train_runtime": 1.0}]
    out = plot_curves(history, tmp_path / "partial.png", smooth=1, raw=False)
    assert png_size(out) == (14 * 110, 8 * 110)
    assert out.stat().st_size > 20_000


def test_plot_curves_names_the_keys_when_nothing_is_logged(tmp_path: Path) -> None:
    history = [{"loss": 0.1, "step": 1}, {"conductor/accuracy": 0.5}, {"train_runtime": 2.0}]
    with pytest.raises(ValueError) as err:
        plot_curves(history, tmp_path / "none.png")
    for key in ("rewards/conductor/mean", "reward", "conductor/accuracy",
                "conductor/parse_failure_rate", "conductor/steps_per_plan",
                "conductor/worker_calls"):  # fmt: skip
        assert repr(key) in str(err.value)
    assert not (tmp_path / "none.png").exists()
    with pytest.raises(ValueError, match="smooth"):
        plot_curves(grpo_history(), tmp_path / "bad.png", smooth=0)


def test_read_log_history_from_a_checkpoint(tmp_path: Path) -> None:
    history = grpo_history(5)
    (tmp_path / "trainer_state.json").write_text(
        json.dumps({"global_step": 5, "log_history": history})
    )
    assert read_log_history(tmp_path) == history
    assert read_log_history(tmp_path / "trainer_state.json") == history
    (tmp_path / "other.json").write_text(json.dumps({"global_step": 5}))
    with pytest.raises(ValueError, match="log_history"):
        read_log_history(tmp_path / "other.json")


# -------------------------------------------------------------------------- statistics


@pytest.fixture(scope="module")
def questions() -> dict[str, str]:
    tasks = ProceduralTasks(["arithmetic", "countdown"], 2)
    return {tasks[i].domain: tasks[i].question for i in range(2)}


def rows(questions: dict[str, str]) -> list[tuple[str, str | None, Plan | None]]:
    a, c = questions["arithmetic"], questions["countdown"]
    return [
        # arithmetic: a solve -> check chain, a two-way vote, a one-step route, an invalid one
        ("arithmetic", a, Plan((2, 0), (f"Solve: {a}", "Check the answer above."), ((), "all"))),
        (
            "arithmetic",
            a,
            Plan(
                (2, 1, 0),
                (a, f"Solve this: {a}", "Which answer do most of them agree on?"),
                ((), (), (0, 1)),
            ),
        ),
        ("arithmetic", a, Plan((0,), ("Answer the question.",), ((),))),
        ("arithmetic", a, None),
        # countdown: one solve -> restate chain, one invalid
        ("countdown", c, Plan((1, 1), (c, "Restate the answer given above."), ((), (0,)))),
        ("countdown", c, None),
    ]


def test_step_roles_as_the_simulated_workers_read_them(questions: dict[str, str]) -> None:
    assert step_role(questions["countdown"]) == "solve"
    assert step_role("Check the answer above.") == "check"
    assert step_role("Which answer do most of them agree on?") == "vote"
    assert step_role("Restate the answer given above.") == "restate"
    assert step_role("Reply with the word yes.") == "literal"
    assert step_role("Write a haiku about the sea.") == "unrelated"


def test_plan_statistics_counts_per_family_and_overall(questions: dict[str, str]) -> None:
    arithmetic, countdown, overall = plan_statistics(rows(questions))
    assert arithmetic["family"] == "arithmetic"
    assert arithmetic["plans"] == 4
    assert arithmetic["invalid"] == 0.25
    assert arithmetic["mean_steps"] == pytest.approx(2.0)  # (2 + 3 + 1) / 3 valid plans
    assert arithmetic["multi_step"] == 0.5  # 2 of 4 plans
    assert arithmetic["workers"] == {
        1: Counter({2: 2, 0: 1}),
        2: Counter({0: 1, 1: 1}),
        3: Counter({0: 1}),
    }
    assert arithmetic["access"] == Counter({"[] | all": 1, "[] | [] | [0,1]": 1, "[]": 1})
    assert arithmetic["roles"] == {
        1: Counter({"solve": 3}),
        2: Counter({"check": 1, "solve": 1}),
        3: Counter({"vote": 1}),
    }
    # step 1: "Solve: <q>" and "<q>" hold the question, "Answer the question." does not
    assert arithmetic["question_verbatim"] == {1: (2, 3), 2: (1, 2), 3: (0, 1)}

    assert countdown["plans"] == 2
    assert countdown["invalid"] == 0.5
    assert countdown["mean_steps"] == 2.0
    assert countdown["multi_step"] == 0.5
    assert countdown["workers"] == {1: Counter({1: 1}), 2: Counter({1: 1})}
    assert countdown["roles"] == {1: Counter({"solve": 1}), 2: Counter({"restate": 1})}

    assert overall["family"] == "all"
    assert overall["plans"] == 6
    assert overall["invalid"] == pytest.approx(2 / 6)
    assert overall["mean_steps"] == pytest.approx(8 / 4)
    assert overall["multi_step"] == pytest.approx(3 / 6)
    assert overall["workers"][1] == Counter({2: 2, 0: 1, 1: 1})
    assert overall["question_verbatim"] == {1: (3, 4), 2: (1, 3), 3: (0, 1)}


def test_plan_statistics_without_questions_and_bad_rows() -> None:
    only_invalid, overall = plan_statistics([("countdown", None), ("countdown", None)])
    assert only_invalid["invalid"] == 1.0
    assert only_invalid["mean_steps"] is None
    assert only_invalid["question_verbatim"] is None
    assert only_invalid["workers"] == {}
    assert overall["plans"] == 2
    with pytest.raises(ValueError, match="at least one"):
        plan_statistics([])
    with pytest.raises(ValueError, match="family, question, plan"):
        plan_statistics([("countdown",)])  # type: ignore[list-item]


def test_access_pattern_is_compact() -> None:
    plan = Plan((0, 1, 2), ("a", "b", "c"), ((), (0,), "all"))
    assert access_pattern(plan) == "[] | [0] | all"
    assert access_pattern(Plan((), (), ())) == "(empty plan)"


def test_plan_table_renders_the_numbers(questions: dict[str, str]) -> None:
    table = plan_table(plan_statistics(rows(questions)))
    lines = table.splitlines()
    assert lines[0].startswith("| family | plans | invalid | mean steps | ≥2 steps |")
    assert lines[0].endswith("| question verbatim in subtask |")
    assert len(lines) == 2 + 3
    arithmetic = lines[2]
    assert arithmetic.startswith("| arithmetic | 4 | 25% | 2.00 | 50% |")
    assert "step 1: M2 2, M0 1; step 2: M0 1, M1 1; step 3: M0 1" in arithmetic
    assert r"[] \| [] \| [0,1] 1" in arithmetic  # pipes escaped inside a table cell
    assert "step 1: solve 3; step 2: check 1, solve 1; step 3: vote 1" in arithmetic
    assert "step 1: 2/3; step 2: 1/2; step 3: 0/1" in arithmetic
    assert lines[3].startswith("| countdown | 2 | 50% | 2.00 | 50% |")
    assert "step 2: restate 1" in lines[3]
    assert lines[4].startswith("| **all** | 6 | 33% | 2.00 | 50% |")
    for line in lines:  # every row has the header's cells (escaped pipes aside)
        assert line.replace(r"\|", "").count("|") == lines[0].count("|")


def test_plan_table_names_workers_and_limits_access_patterns(questions: dict[str, str]) -> None:
    stats = plan_statistics(rows(questions))
    table = plan_table(stats, worker_names=["qwen-7b", "claude", "gpt-5"], top_access=1)
    assert "step 1: gpt-5 2, qwen-7b 1;" in table
    assert "M2" not in table
    assert ", +2 more" in table.splitlines()[2]
    with pytest.raises(ValueError, match="no name for model id 2"):
        plan_table(stats, worker_names=["qwen-7b", "claude"])
    no_questions = plan_table(plan_statistics([("arithmetic", None)]))
    assert "question verbatim" not in no_questions
    assert "| arithmetic | 1 | 100% | - | 0% | - | - | - |" in no_questions


def test_worker_choice_counts_who_is_asked_when_drawn() -> None:
    from conductor_gym.trainers.trl.worker_choice import choice_rates, choice_table

    def plan(*ids: int) -> Plan:
        return Plan(model_ids=ids, subtasks=("Solve it.",) * len(ids), access=((),) * len(ids))

    rows = [
        ("countdown", ("gpt-5", "gemma"), plan(0)),
        ("countdown", ("gemma", "gpt-5"), plan(1, 1)),
        ("arithmetic", ("gemma", "gemini"), plan(0, 1)),
        ("arithmetic", ("gemini", "gpt-5"), None),
    ]
    rates = choice_rates(rows)
    assert list(rates) == ["arithmetic", "countdown", "all"]
    gpt5 = rates["all"]["gpt-5"]
    assert (gpt5.drawn, gpt5.asked, gpt5.last) == (3, 2, 2)
    gemma = rates["all"]["gemma"]
    assert (gemma.drawn, gemma.asked, gemma.last) == (3, 1, 0)
    table = choice_table(rates)
    assert table.splitlines()[2] == "| gpt-5 | 0 / 0 (n=1) | 100 / 100 (n=2) | 67 / 67 (n=3) |"
    with pytest.raises(ValueError, match="asks Model 2 of a pool of 2"):
        choice_rates([("countdown", ("a", "b"), plan(2))])
