"""``conductor-gym serve``'s argument errors (the running server is tested in tests/serve)."""

from __future__ import annotations

import pytest
from support import require

from conductor_gym.cli.main import main


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nonsense"], "unknown agent 'nonsense'"),
        (["--agent", "single:0", "--pool", "no-such-pool"], "unknown preset 'no-such-pool'"),
        (["--agent", "single:0", "--env", "tasks=offline"], "['tasks'] are set by the server"),
        (["--agent", "single:0", "--max-queue", "-1"], "max_queue"),
        (["--agent", "single:0", "--max-steps", "0"], "max_steps"),
    ],
)
def test_bad_arguments_exit_2_naming_the_problem(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    require("starlette")
    assert main(["serve", *args]) == 2
    assert message in capsys.readouterr().err


def test_serve_takes_the_env_settings_flags() -> None:
    from conductor_gym.cli.main import build_parser
    from conductor_gym.core.config import settings_from_arguments

    args = build_parser().parse_args(
        ["serve", "--agent", "single:0", "--max-steps", "3", "--reward", "binary"]
    )
    settings = settings_from_arguments(args)
    assert settings.pop("pool") == "sim-paper"  # serve's own --pool
    assert settings == {"max_steps": 3, "reward": "binary"}
