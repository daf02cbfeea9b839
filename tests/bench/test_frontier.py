"""The accuracy-cost frontier: ``sweep_cost_lambda``, ``pareto_front``, ``plot_frontier`` and
``conductor-gym evaluate --cost-lambda``."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import require

from conductor_gym.bench.frontier import (
    FrontierPoint,
    cost_reward_spec,
    pareto_front,
    plot_frontier,
    sweep_cost_lambda,
)
from conductor_gym.bench.results import Results
from conductor_gym.cli.main import main

QUICK = {"limit": 8, "repeats": 2, "progress": False}


def point(label: str, accuracy: float, cost: float, cost_lambda: float = 0.0) -> FrontierPoint:
    return FrontierPoint(label, label, cost_lambda, "usd", accuracy, None, 0.0, cost, 0.0, 0.0)


def test_a_fixed_agent_keeps_its_answers_and_pays_more_as_the_price_rises(tmp_path: Path) -> None:
    points = sweep_cost_lambda(
        "reflect:1:3", "offline", [0, 20, 60], out=tmp_path / "r.json", **QUICK
    )
    assert [p.cost_lambda for p in points] == [0, 20, 60]
    assert len({(p.accuracy, p.cost_per_question_usd, p.tokens_per_question) for p in points}) == 1
    assert points[0].mean_reward > points[1].mean_reward > points[2].mean_reward
    saved = Results.load(tmp_path / "r.reflect_1_3.lambda-20.json")
    assert saved.env_kwargs["reward"] == "cost-usd:20"
    # the reward is the paper's less 20 per dollar, floored at the invalid reward (0)
    for e in saved.episodes:
        base = {"correct": 1.0, "wrong": 0.5, "invalid": 0.0, "error": 0.0}[e.outcome]
        charged = base if e.outcome in ("invalid", "error") else max(0.0, base - 20 * e.cost_usd)
        assert e.reward == pytest.approx(charged)


def test_lambda_in_the_agent_spec_picks_one_agent_per_price() -> None:
    points = sweep_cost_lambda("single:{lambda}", "offline", [0, 3], unit="calls", **QUICK)
    assert [p.agent for p in points] == ["single:0", "single:3"]
    assert {p.label for p in points} == {"single:{lambda}"} and points[1].cost_unit == "calls"
    assert points[0].cost_per_question_usd != points[1].cost_per_question_usd


def test_the_sweep_owns_the_reward_and_checks_its_prices() -> None:
    with pytest.raises(ValueError, match="the sweep sets the reward"):
        sweep_cost_lambda("random", "offline", [0], reward="binary", **QUICK)
    with pytest.raises(ValueError, match="at least one price"):
        sweep_cost_lambda("random", "offline", [], **QUICK)
    with pytest.raises(ValueError, match="must be >= 0"):
        cost_reward_spec(-1.0)
    with pytest.raises(ValueError, match="choose one of"):
        cost_reward_spec(1.0, "euros")  # type: ignore[arg-type]
    assert cost_reward_spec(0.25, "ktokens") == "cost-ktokens:0.25"


def test_the_pareto_front_keeps_what_nothing_beats_on_both_axes() -> None:
    a, b, c = point("a", 0.5, 0.01), point("b", 0.7, 0.02), point("c", 0.6, 0.03)
    d, e = point("d", 0.7, 0.05), point("e", 0.4, 0.01)
    assert pareto_front([c, d, b, e, a]) == [a, b]
    twin = point("a2", 0.5, 0.01)
    assert pareto_front([a, twin]) == [a]


def test_the_plot_is_a_png(tmp_path: Path) -> None:
    require("matplotlib")
    points = [point("a", 0.5, 0.01), point("b", 0.7, 0.02, 1.0), point("b", 0.6, 0.01, 5.0)]
    path = plot_frontier(points, tmp_path / "f.png", note="suite x")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_frontier([], tmp_path / "g.png")


def test_evaluate_cost_lambda_prints_the_sweep_and_draws_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require("matplotlib")
    png = tmp_path / "frontier.png"
    argv = ["evaluate", "--agent", "single:1", "--sweep-agent", "moa", "--limit", "6"]
    argv += ["--repeats", "1", "--no-progress", "--cost-lambda", "0,10", "--frontier", str(png)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "cost-lambda sweep" in text and "Pareto front" in text
    assert text.count("single:1 ") >= 2 and "10/usd" in text and png.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cost-lambda", "0,5", "--env", "reward=binary"], "the sweep sets the reward"),
        (["--frontier", "x.png"], "need --cost-lambda"),
        (["--sweep-agent", "moa"], "need --cost-lambda"),
    ],
)
def test_evaluate_cost_lambda_errors(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["evaluate", "--limit", "2", "--repeats", "1", "--no-progress"]
    assert main([*base, *extra]) == 2
    assert message in capsys.readouterr().err


def test_bad_prices_are_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("a,b", "-1", "inf"):
        with pytest.raises(SystemExit) as exc:
            main(["evaluate", "--cost-lambda", bad])
        assert exc.value.code == 2
    assert "expected" in capsys.readouterr().err
