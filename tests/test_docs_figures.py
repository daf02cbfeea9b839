"""Every generated figure block of the docs has its generator and markers, and the fast
ones hold exactly what their generators print now (``make docs-figures`` rewrites them:
``docs/figures/build.py``; the calibration table is checked by
``tests/sim/test_calibration.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import docs_figures_build

from conductor_gym.bench import readme_figures
from conductor_gym.bench.frontier import FrontierPoint
from conductor_gym.bench.readme_figures import StaleProseError, cost_sweep_paragraph

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


build = docs_figures_build()
REGEN = "regenerate with make docs-figures (python docs/figures/build.py {name})"


def test_every_marker_in_the_docs_is_a_registered_block_and_back() -> None:
    found: dict[str, list[tuple[str, str]]] = {}
    for doc in DOCS:
        for match in build.MARKER.finditer(doc.read_text()):
            found.setdefault(match[2], []).append((doc.relative_to(ROOT).as_posix(), match[1]))
    marked = {b.name: b for b in build.BLOCKS if b.header is None}
    assert set(found) == set(marked), "markers without a generator, or a generator without markers"
    for name, places in found.items():
        assert sorted(places) == [(marked[name].doc, ""), (marked[name].doc, "/")], name
    for b in build.BLOCKS:  # each block located exactly once in its doc
        assert b.current((ROOT / b.doc).read_text()).strip(), b.name


@pytest.mark.parametrize("name", [b.name for b in build.BLOCKS if b.fast])
def test_a_fast_block_is_what_its_generator_prints(name: str) -> None:
    b = build.block(name)
    assert b.current((ROOT / b.doc).read_text()) == b.generate(), REGEN.format(name=name)


def test_the_cost_sweep_paragraph_is_what_the_sweep_prints() -> None:
    # The paragraph quotes the highest price's points and holds only while behaviour does
    # not move with the price (cost_sweep_paragraph checks that on the full sweep, which
    # make docs-figures runs): at that price alone it must give the README's text.
    top = max(readme_figures.COST_SWEEP_LAMBDAS)
    text = cost_sweep_paragraph(readme_figures.cost_sweep_points([top]))
    b = build.block("cost-sweep")
    assert b.current((ROOT / b.doc).read_text()) == text, REGEN.format(name="cost-sweep")


def _point(label: str, accuracy: float, cost: float, cost_lambda: float = 30.0) -> FrontierPoint:
    return FrontierPoint(label, label, cost_lambda, "usd", accuracy, 0.01, 0.5, cost, 500.0, 1.0)


SWEEP = [
    _point("random", 0.54, 0.010),
    _point("single:0", 0.63, 0.007),
    _point("best-single", 0.67, 0.005),
    _point("reflect:2:5", 0.64, 0.026),
    _point("moa", 0.60, 0.030),
]


def test_the_sweep_paragraph_computes_its_words_from_the_points() -> None:
    text = cost_sweep_paragraph(SWEEP)
    words = " ".join(text.split())
    assert "rewards move (at 30 per dollar: random 0.500, single:0 0.500," in words
    assert "best-single (67.0 %, $0.0050 per question) is the whole front" in words
    assert "reflection (64.0 %, $0.0260) and MoA (60.0 %, $0.0300) pay 5.2 and 6.0 times" in words
    assert all(len(line) <= readme_figures.WIDTH for line in text.splitlines())


def test_the_sweep_paragraph_refuses_points_that_contradict_its_prose() -> None:
    as_cheap = [*SWEEP[:3], _point("reflect:2:5", 0.67, 0.005), SWEEP[4]]  # ties best-single
    with pytest.raises(StaleProseError, match="reflect:2:5 is not both costlier and no more"):
        cost_sweep_paragraph(as_cheap)
    two_fronts = [*SWEEP[:3], _point("reflect:2:5", 0.70, 0.026), _point("moa", 0.72, 0.03)]
    with pytest.raises(StaleProseError, match=r"the front is \['best-single', 'reflect"):
        cost_sweep_paragraph(two_fronts)
    moving = [*SWEEP, _point("moa", 0.61, 0.030, cost_lambda=0.0)]
    with pytest.raises(StaleProseError, match="moa's accuracy or cost moves with the price"):
        cost_sweep_paragraph(moving)
    with pytest.raises(ValueError, match="points: no moa point at lambda 30"):
        cost_sweep_paragraph(SWEEP[:4])


def test_a_rewrite_replaces_only_the_block_and_a_lost_marker_is_named() -> None:
    b = build.block("heldout-splits")
    text = (ROOT / b.doc).read_text()
    current = b.current(text)
    rewritten = b.replace(text, "NEW")
    assert rewritten == text.replace(current, "NEW", 1)
    assert b.current(rewritten) == "NEW"
    inline = build.block("episode-latency")
    assert inline.replace(
        "is <!-- figures:episode-latency -->9%<!-- /figures:episode-latency --> below", "21%"
    ) == ("is <!-- figures:episode-latency -->21%<!-- /figures:episode-latency --> below")
    with pytest.raises(build.BlockNotFoundError, match="found 0 times, expected once"):
        b.span("no markers here")


def test_a_table_block_runs_from_its_header_to_its_last_generated_row() -> None:
    b = build.block("orchestrate-baselines")
    table = "\n".join(
        [
            "| conductor | accuracy (± SE) | reward (± SE) | steps | x |",
            "|---|---|---|---|---|",
            "| `single:0` | 1 | 2 | 1 | x |",
            "| `best-single` (per family) | 3 | 4 | 1 | x |",
            "| the policy | 5 | 6 | 3 | x |",
        ]
    )
    text = f"before\n\n{table}\n\nafter\n"
    assert (
        b.replace(text, "GENERATED")
        == "before\n\nGENERATED\n| the policy | 5 | 6 | 3 | x |\n\nafter\n"
    )
    with pytest.raises(
        build.BlockNotFoundError, match=re.escape("no line starting '| `best-single`'")
    ):
        b.span(text.replace("`best-single`", "`oracle`"))


def test_the_commands_check_a_block_and_refuse_an_unknown_name(capsys) -> None:  # type: ignore[no-untyped-def]
    assert build.main(["--check", "episode-latency"]) == 0
    assert "README.md [episode-latency]: unchanged" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        build.main(["no-such-block"])
    assert exit_info.value.code == 2
    assert "no figures block 'no-such-block'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        readme_figures.main(["no-such-block"])
    assert "unknown figure block(s) ['no-such-block']" in capsys.readouterr().err
