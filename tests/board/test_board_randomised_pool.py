"""The randomised pool on the board (issue 25, item 5): a run where each question draws
``k`` of the pool's workers under shuffled ids is ranked in a section of its own, whose
heading names the draw, apart from the same pool played whole in a fixed order."""

from __future__ import annotations

from pathlib import Path

from board_support import board_run, messages, wrap

from conductor_gym.board.render import section_heading
from conductor_gym.board.sections import draw_setting
from conductor_gym.board.submissions import validate_submission


def test_a_randomised_pool_run_is_ranked_apart_under_a_heading_that_names_the_draw(
    tmp_path: Path,
) -> None:
    placements = {}
    for name, settings in {
        "fixed": {"shuffle_workers": False},
        "randomised": {"k": 4, "shuffle_workers": True},
    }.items():
        results = board_run("random", tmp_path / f"{name}.json", pool="sim-paper", **settings)
        report = validate_submission(wrap(results))
        assert report.ok, messages(report)
        assert report.placement is not None and report.placement.ranked, str(report.placement)
        placements[name] = (results, report.placement.section)
    (fixed, fixed_section), (randomised, section) = placements["fixed"], placements["randomised"]
    assert draw_setting(fixed) == "" and fixed_section.draw == ""
    assert draw_setting(randomised) == "4 of 7 workers per question, shuffled ids"
    assert section != fixed_section and section.pool == fixed_section.pool == "sim-paper"
    assert section.pool_fingerprint != fixed_section.pool_fingerprint
    assert section_heading(section).endswith(
        ", simulator v3.1, 4 of 7 workers per question, shuffled ids"
    )
    assert section.title().endswith(", simulator v3.1, 4 of 7 workers per question, shuffled ids")
