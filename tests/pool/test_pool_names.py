"""A pool file cannot take a name that passes for a preset's (issue 39, item 7).

The attack: a hand-edited simulated pool (every worker always right) named ``sim-paper``
with a Cyrillic i (U+0456) or ``sim-paper-2026`` loaded, evaluated and was labelled as if it were
the preset. Now the file is refused at load, naming the field and the preset.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conductor_gym.cli.main import main
from conductor_gym.pool.config import PRESET_DIR, PoolConfigError, load_pool_file, preset_names
from conductor_gym.pool.names import preset_lookalike, skeleton
from conductor_gym.pool.pool import make_pool


def renamed_preset(tmp_path: Path, name: str) -> Path:
    """sim-paper's file under another pool name."""
    text = (PRESET_DIR / "sim-paper.toml").read_text(encoding="utf-8")
    assert 'name = "sim-paper"\n' in text
    path = tmp_path / "pool.toml"
    path.write_text(text.replace('name = "sim-paper"\n', f'name = "{name}"\n', 1), "utf-8")
    return path


@pytest.mark.parametrize(
    "name",
    [
        "s\u0456m-paper",  # Cyrillic i
        "\u0455\u0456m-\u0440a\u0440er",  # Cyrillic s, i, p, p
        "sim-p\u03b1per",  # Greek alpha
        "\uff53\uff49\uff4d-paper",  # full-width: NFKC makes it sim-paper
        "sim-pa\u0301per",  # a combining accent
        "SIM_PAPER",
        "sim paper",
        "sim\u2010paper",  # a Unicode hyphen
        "sim-paper-2026",
        "sim-paper-v4",
        "official-sim-paper",
        "simpaper",
        "s1m-paper",
        "5im-pap3r",
        "paper-constrained-2",
    ],
)
def test_lookalikes_of_a_preset_name_are_refused_at_load(tmp_path: Path, name: str) -> None:
    path = renamed_preset(tmp_path, name)
    with pytest.raises(PoolConfigError) as caught:
        load_pool_file(path)
    (line,) = caught.value.errors
    assert line.startswith(f"{path}: name: {name!r} ")
    assert "the preset 'sim-paper'" in line or "the preset 'paper-constrained'" in line
    assert line.endswith("must have a name of its own")
    with pytest.raises(PoolConfigError):
        make_pool(path)


def test_the_cli_refuses_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = renamed_preset(tmp_path, "s\u0456m-paper")
    assert main(["pools", "check", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "looks like the preset 'sim-paper'" in err


@pytest.mark.parametrize(
    "name",
    ["sim-paper", "sim-paper-v1", "fitted", "my-pool", "paper", "sim", "\u6a21\u578b" * 5],
)
def test_own_names_and_exact_copies_load(tmp_path: Path, name: str) -> None:
    assert load_pool_file(renamed_preset(tmp_path, name)).name == name


def test_the_presets_themselves_and_the_skeleton() -> None:
    for preset in preset_names():
        assert preset_lookalike(preset, preset_names()) is None
    assert skeleton("\uff33\uff29\uff2d\uff3f\u0440aper") == "sim-paper"
