"""The one replay engine and the results file that feeds it: the env settings are recorded
once (as ``EnvConfig.to_dict`` writes them) and read back by ``EnvConfig.from_dict``; an
older (``v2``) file still loads and re-plays; every refusal is one error type.

``tests/fixtures/results/v2-random-offline.json`` is a results file in the ``v2`` form:
the settings twice (``env_kwargs`` as ``json_safe`` wrote them, with a
``{"type": "RewardScheme", ...}`` setting, and the ``env_config`` copy nothing read), 6
episodes of the random planner on the offline suite (first 3 tasks, 2 repeats, seed 5).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.replay import Replayer, ReplayError, replay_config
from conductor_gym.bench.results import SCHEMA, Results, load_results
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.reward import RewardScheme
from conductor_gym.errors import ConductorGymError, ConfigurationError

V2_FILE = Path(__file__).parent.parent / "fixtures" / "results" / "v2-random-offline.json"
PAPER = {"correct": 1.0, "wrong": 0.5, "invalid": 0.0, "cost_lambda": 0.0, "cost_unit": "usd"}


def test_a_v2_file_loads_with_its_settings_once_and_replays_exactly(tmp_path: Path) -> None:
    raw = json.loads(V2_FILE.read_text())
    assert raw["schema"] == "conductor-gym/results/v2" and "env_config" in raw
    assert raw["env_kwargs"]["reward"]["type"] == "RewardScheme"
    results = load_results(V2_FILE)
    assert results.schema_ == "conductor-gym/results/v2" and SCHEMA.endswith("/v4")
    assert "env_config" not in Results.model_fields
    assert results.env_kwargs == {"max_steps": 4, "reward": PAPER}
    assert replay_config(results) == EnvConfig(max_steps=4, reward=RewardScheme())
    with Replayer(results) as replayer:
        report = replayer.verify()
        assert report.ok and report.method == "simulated", report.differences
        assert report.episodes == len(results.episodes) == 6
        for record in results.episodes:
            assert replayer.replay(record).record == record
    # written back, it is still a v2 file (without the unread copy), and reads the same
    results.dump(tmp_path / "again.json")
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["schema"] == "conductor-gym/results/v2" and "env_config" not in again
    assert Results.load(tmp_path / "again.json") == results


def test_the_settings_are_recorded_once_and_read_back_by_from_dict(tmp_path: Path) -> None:
    base = EnvConfig(max_recursions=1, question_to_all_workers=True)
    out = tmp_path / "r.json"
    results = evaluate(
        "random", "offline", config=base, repeats=1, limit=4, seed=2, out=out,
        progress=False, reward=RewardScheme(wrong=0.25), k=3,
    )  # fmt: skip
    data = json.loads(out.read_text())
    assert data["schema"] == SCHEMA and "env_config" not in data
    wrong = {**PAPER, "wrong": 0.25}
    assert data["env_kwargs"] == {
        "k": 3, "reward": wrong, "max_recursions": 1, "question_to_all_workers": True,
    }  # fmt: skip
    assert results.env_kwargs == data["env_kwargs"]
    want = EnvConfig(max_recursions=1, question_to_all_workers=True, reward=wrong)
    assert replay_config(results) == want  # the pool's k is the pool's record
    with Replayer(load_results(out)) as replayer:
        assert replayer.verify().ok


def _refusal(results: Results, **env_kwargs: Any) -> str:
    changed = results.model_copy(update={"env_kwargs": {**results.env_kwargs, **env_kwargs}})
    with pytest.raises(ReplayError) as caught:
        Replayer(changed)
    return str(caught.value)


def test_one_error_type_names_what_cannot_be_replayed() -> None:
    assert issubclass(ReplayError, ConfigurationError) and issubclass(ReplayError, ValueError)
    assert issubclass(ReplayError, ConductorGymError)
    results = load_results(V2_FILE)
    assert "unknown setting(s) ['conductor']" in _refusal(results, conductor={"mode": "x"})
    assert _refusal(results, templates="<PromptTemplates>").startswith("env_kwargs.templates")
    assert _refusal(results, max_steps=0).startswith("env_kwargs.max_steps")
    fingerprint = results.suite.model_copy(update={"fingerprint": "0" * 16})
    with pytest.raises(ReplayError, match="its tasks changed since the run"):
        Replayer(results.model_copy(update={"suite": fingerprint}))
