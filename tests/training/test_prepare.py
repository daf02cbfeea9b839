"""``conductor-gym train prepare``: prompt rows, labels and the env config."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conductor_gym.cli.train import TrainCommand
from conductor_gym.training.prepare import (
    CONFIG_ENV,
    TrainConfig,
    config_path_for,
    group_seed,
    make_label,
    parse_label,
    prepare_prompts,
)
from conductor_gym.training.scoring import EpisodeRef


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="conductor-gym")
    command = TrainCommand()
    command.register(parser.add_subparsers(dest="command", required=True))
    return command.run(parser.parse_args(["train", *argv]))


def rows_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_rows_hold_the_scorers_prompt_and_round_tripping_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "data" / "prompts.jsonl"
    assert cli(
        "prepare", "--tasks", "offline", "--out", str(out), "--k", "3",
        "--shuffle-workers", "--seed", "5", "--limit", "12",
    ) == 0  # fmt: skip
    printed = capsys.readouterr().out
    config_path = config_path_for(out)
    assert config_path == tmp_path / "data" / "prompts.env.json"
    assert f"{CONFIG_ENV}={config_path.resolve()}" in printed
    config = TrainConfig.load(config_path)
    env = config.env
    assert (env.tasks, env.k, env.shuffle_workers, config.seed) == ("offline", 3, True, 5)
    assert config.num_tasks == 2000 and env.cache is None
    rows = rows_of(out)
    assert len(rows) == 12
    scorer = config.scorer()
    try:
        for index, row in enumerate(rows):
            ref = EpisodeRef(index, group_seed(5, index))
            label = str(row["label"])
            assert EpisodeRef.from_label(label) == ref
            assert parse_label(label) == (ref, config.task_fingerprint)
            assert config.check_label(label) == ref
            assert row["prompt"] == scorer.prompt(ref)
            task = config.task_source()[index]
            assert (row["task_id"], row["domain"], row["datasource"], row["task_index"]) == (
                task.id, task.domain, task.domain, index,
            )  # fmt: skip
    finally:
        scorer.close()
    assert len({row["domain"] for row in rows}) == 4


def test_group_seeds_are_deterministic_and_the_files_reproduce(tmp_path: Path) -> None:
    first = prepare_prompts(tmp_path / "a.jsonl", tasks="offline", k=2, limit=5, seed=9)
    again = prepare_prompts(tmp_path / "b.jsonl", tasks="offline", k=2, limit=5, seed=9)
    other = prepare_prompts(tmp_path / "c.jsonl", tasks="offline", k=2, limit=5, seed=10)
    assert first.prompts_path.read_bytes() == again.prompts_path.read_bytes()
    assert first.config_path.read_text() == again.config_path.read_text()
    seeds = {EpisodeRef.from_label(str(r["label"])).group_seed for r in rows_of(first.prompts_path)}
    assert len(seeds) == 5 and all(0 <= s < 2**62 for s in seeds)
    assert rows_of(first.prompts_path) != rows_of(other.prompts_path)
    assert group_seed(9, 3) == group_seed(9, 3) != group_seed(3, 9)
    assert TrainConfig.load(first.config_path) == first.config


def test_recursion_pool_file_and_chat_settings_are_recorded(tmp_path: Path) -> None:
    pool = tmp_path / "pools" / "two.toml"
    pool.parent.mkdir()
    pool.write_text(
        'name = "two"\ndescription = "two simulated workers"\n'
        '[[workers]]\nname = "gpt-5"\n[[workers]]\nname = "gemma-3-27b-it"\n'
    )
    result = prepare_prompts(
        tmp_path / "r.jsonl",
        tasks="offline/countdown",
        pool=str(pool),
        max_recursions=1,
        force_recursion=0.5,
        initial_round_weight=0.25,
        chat_format="plain",
        limit=3,
    )
    config = TrainConfig.load(result.config_path)
    env = config.env
    assert Path(env.pool).is_absolute() and env.pool == str(pool.resolve())
    assert (env.max_recursions, env.force_recursion, env.initial_round_weight) == (
        1, 0.5, 0.25,
    )  # fmt: skip
    assert config.chat["turn_end"] == "" and result.domains == {"countdown": 3}
    assert "Model 1" in str(rows_of(result.prompts_path)[0]["prompt"])


def test_mismatches_and_bad_input_fail_loudly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = prepare_prompts(tmp_path / "p.jsonl", tasks="offline", limit=2)
    other = prepare_prompts(tmp_path / "q.jsonl", tasks="offline-ood", limit=2)
    foreign = str(rows_of(other.prompts_path)[0]["label"])
    with pytest.raises(ValueError, match="do not belong together"):
        result.config.check_label(foreign)
    with pytest.raises(ValueError, match="do not belong together"):
        result.config.check_label(EpisodeRef(0, 1).to_label())  # no fingerprint at all
    with pytest.raises(ValueError, match="task_index is outside"):
        result.config.check_label(make_label(EpisodeRef(5000, 1), result.config.task_fingerprint))
    data = json.loads(result.config_path.read_text())
    with pytest.raises(RuntimeError, match="prompts were prepared on"):
        TrainConfig.from_mapping({**data, "num_tasks": 7}).scorer()
    with pytest.raises(ValueError, match="unknown keys"):
        TrainConfig.from_mapping({**data, "temperature": 1.0})
    with pytest.raises(ValueError, match="not a"):
        TrainConfig.from_mapping({**data, "format": "something-else"})
    assert cli("prepare", "--tasks", "no-such-source", "--out", str(tmp_path / "x.jsonl")) == 2
    assert "unknown task source" in capsys.readouterr().err
    assert cli("prepare", "--tasks", "offline", "--out", str(tmp_path / "y.jsonl"), "--k", "9") == 2
    with pytest.raises(SystemExit):
        cli("prepare", "--tasks", "offline", "--out", "z.jsonl", "--task-options", "[1]")


def test_agent_path_and_lean_imports(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("agent-path") == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.name == "agent.py" and path.is_file()
    code = (
        "import sys, conductor_gym, conductor_gym.cli.train, conductor_gym.training.prepare\n"
        "import conductor_gym.trainers.openrlhf\n"
        "print([m for m in ('torch', 'openrlhf', 'ray', 'transformers') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
