"""A fitted pool on the board (issue 28, item 5): a run on a pool file written by
``sim fit`` validates (re-played on the simulated workers the file describes) and is
ranked in a section of its own, named after the pool with the fingerprint of its
workers' fitted settings, apart from ``sim-paper``'s and from another fit's."""

from __future__ import annotations

from pathlib import Path

import pytest
from board_support import board_run, messages, wrap

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.board.sections import pool_fingerprint
from conductor_gym.board.submissions import validate_submission
from conductor_gym.simlab.fit import fit


@pytest.fixture(scope="module")
def fitted_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("fitted-board")
    paths = []
    for limit in (40, 80):  # two fits of the same pool, on different amounts of data
        runs = [
            evaluate(f"single:{i}", "offline", repeats=1, limit=limit, progress=False,
                     pool="sim-paper", shuffle_workers=False)
            for i in range(2)
        ]  # fmt: skip
        path = folder / f"fitted-{limit}.toml"
        fit(runs).to_toml(path, name=f"fitted-{limit}")
        paths.append(path)
    return paths[0], paths[1]


def test_a_fitted_pool_run_is_ranked_in_its_own_section(
    fitted_files: tuple[Path, Path], tmp_path: Path
) -> None:
    sections = []
    for pool in (*fitted_files, "sim-paper"):
        results = board_run("single:0", tmp_path / f"{Path(str(pool)).stem}.json", pool=str(pool))
        report = validate_submission(wrap(results, name=f"Single worker on {pool}"))
        assert report.ok, messages(report)
        assert report.placement is not None and report.placement.ranked, str(report.placement)
        section = report.placement.section
        assert section.pool_fingerprint == pool_fingerprint(results)
        sections.append(section)
    first, second, paper = sections
    assert (first.pool, second.pool, paper.pool) == ("fitted-40", "fitted-80", "sim-paper")
    assert len({s.pool_fingerprint for s in sections}) == 3
    assert first.simulator == "v3.1" and first.pool_fingerprint in first.title()
