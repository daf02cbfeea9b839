"""The step-cost script (conductor_gym.trainers.trl.step_cost) on a tiny policy: both paths
run real GRPO steps of the cpu-adapt setting, interleaved, and the split adds up."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from support import require, require_smollm2


@pytest.fixture(scope="module")
def step_cost() -> ModuleType:
    require("torch").set_num_threads(1)
    for module in ("transformers", "trl", "datasets", "gguf"):
        require(module)
    require_smollm2()
    from conductor_gym.trainers.trl import step_cost

    return step_cost


def test_both_paths_are_measured_and_the_split_adds_up(step_cost: ModuleType) -> None:
    setting = step_cost.Setting(
        model="tiny",
        rounds=2,
        prompts_per_step=1,
        num_generations=2,
        max_completion_length=8,
        precision="bf16",
    )
    result = step_cost.measure(setting)
    rows = result["steps"]
    assert [(r["path"], r["step"]) for r in rows] == [
        ("before", 1),
        ("before", 2),
        ("after", 1),
        ("after", 2),
    ]
    assert result["cheap_step"] == {"completion_logits": True, "bf16_sampling": True}
    for row in rows:
        parts = row["parts"]
        assert row["completions"] == 2
        assert 0 < row["useful_tokens"] <= row["padded_tokens"] <= 2 * 8
        assert all(parts[p] > 0 for p in ("sampling", "forward", "backward", "scoring"))
        assert sum(parts.values()) <= row["wall_s"] + 1e-6
        assert row["padded_tokens_per_s"] == pytest.approx(row["padded_tokens"] / parts["sampling"])
    text = step_cost.table(result)
    assert "before  mean" in text and "after   mean" in text
    assert result["cpu"] in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "--steps must be >= 1"),
        (["--micro-batch-size", "5"], "--micro-batch-size must divide the step's 32"),
    ],
)
def test_bad_counts_are_refused(
    step_cost: ModuleType, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        step_cost.main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_cpu_name_reads_the_model_name(tmp_path: Path) -> None:
    from conductor_gym.trainers.trl.precision import cpu_name

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Example CPU 9000\nflags\t\t: fpu amx_bf16\n")
    assert cpu_name(str(info)) == "Example CPU 9000"
    assert cpu_name(str(tmp_path / "missing")) != ""
