"""Issue 14, item 11: the command line says what it is and what it does."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from support import CountingWorker

import conductor_gym
from conductor_gym import ConductorEnv
from conductor_gym.cli import pools
from conductor_gym.cli.main import build_parser, main
from conductor_gym.workers.spec import WorkerSpec


def test_version_and_a_plain_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"conductor-gym {conductor_gym.__version__}"
    text = build_parser().format_help()
    assert "``" not in text and "train, evaluate and serve conductors" in text
    train = next(a for a in build_parser()._subparsers._group_actions)  # type: ignore[union-attr]
    assert "prepare data for" not in str(train.choices["train"].description or "")


def test_render_without_a_mode_says_so() -> None:
    env = ConductorEnv()
    env.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert env.render() is None
    assert any("without a render mode" in str(w.message) for w in caught)


def test_evaluate_announces_the_run_first_and_breaks_results_down_by_family(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["evaluate", "--agent", "random", "--suite", "offline", "--repeats", "2",
            "--limit", "8", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("conductor-gym evaluate: agent 'random', suite 'offline'")
    families = [line.split()[0] for line in out if line.startswith("  ")]
    assert families == ["arithmetic", "countdown", "multiple_choice", "program_trace"]


class _SlowFirstCall(CountingWorker):
    """Test double: counts the calls made to it (in-process backends load their model at
    the first one)."""

    calls: int = 0

    async def complete(self, messages: Any, **kwargs: Any) -> Any:
        type(self).calls += 1
        return await super().complete(messages, **kwargs)


def test_pools_check_reports_model_loading_apart_from_the_ping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from conductor_gym.workers.spec import register_backend

    register_backend("test-slow-first", _SlowFirstCall)  # type: ignore[arg-type]
    spec = WorkerSpec(name="local", backend="test-slow-first")
    monkeypatch.setattr(pools, "IN_PROCESS_BACKENDS", ("test-slow-first",))
    (check,) = pools.check_pool([spec], timeout_s=5)
    # a first call loads the model and is reported as such; the ping is a second call
    assert check.status == "ok" and "model loaded in" in check.detail
    assert _SlowFirstCall.calls == 2
