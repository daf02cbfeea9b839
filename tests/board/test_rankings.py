"""Self-reported completions never share a ranking with re-derived ones, no entry shows
another agent's name, and no pool passes for a shipped preset it is not (issue 39,
items 5 and 7).

The attack of item 5 is built from the committed board's own ``single:0..6`` runs
(``sim-paper``, ``offline-160``, 3 repeats): per episode, the first of the seven runs
that got it right, claimed as a ``policy:`` agent with a made-up checkpoint hash. Every
episode re-plays (they are real episodes), so only the ranking rule holds it."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest
from board_support import messages, wrap

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results, aggregate
from conductor_gym.board.render import entries_from, render_markdown, section_heading
from conductor_gym.board.sections import lookalike_preset, name_skeleton
from conductor_gym.board.submissions import (
    SUBMISSIONS_DIR,
    Report,
    Submission,
    check_names,
    load_submissions,
    make_submission,
    validate_submission,
)
from conductor_gym.pool.config import PoolConfigError
from conductor_gym.sim.profiles import PAPER_PROFILES

BOARD = Path(__file__).resolve().parents[2] / "leaderboard" / SUBMISSIONS_DIR
POLICY = {"name": "policy", "spec": "policy:/ckpt/conductor", "checkpoint_sha256": "ab" * 32}


def _committed(slug: str) -> Submission:
    return Submission.model_validate_json((BOARD / f"{slug}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def best_of_singles() -> Results:
    """The attack: the per-episode best of the seven single-worker runs, as a policy."""
    runs = [_committed(f"baseline-single-{k}").results for k in range(7)]
    picked = [
        next((run.episodes[i] for run in runs if run.episodes[i].correct), episode)
        for i, episode in enumerate(runs[0].episodes)
    ]
    metrics = aggregate(picked, runs[0].repeats)
    return runs[0].model_copy(update={"episodes": picked, "metrics": metrics, "agent": POLICY})


def _board(tmp_path: Path, forged: Results, name: str) -> list[tuple[Path, Report]]:
    folder = tmp_path / SUBMISSIONS_DIR
    folder.mkdir()
    _committed("baseline-best-single").dump(folder / "baseline-best-single.json")
    wrap(forged, name=name, date=datetime.date(2026, 12, 1)).dump(folder / "forged.json")
    return load_submissions(tmp_path)


def test_self_reported_best_of_singles_never_outranks_the_re_derived(
    best_of_singles: Results, tmp_path: Path
) -> None:
    best = _committed("baseline-best-single").results.metrics["overall"].accuracy
    forged = best_of_singles.metrics["overall"].accuracy
    # the attack: on simulator v3 86.2 % against best-single's 69.0 %; v3.1 80.8 against 72.1
    assert forged > best + 0.05
    loaded = _board(tmp_path, best_of_singles, "My conductor")
    assert all(report.ok for _, report in loaded), [messages(r) for _, r in loaded]
    entries = entries_from([(p.stem, r) for p, r in loaded])
    assert [(e.slug, e.ranked) for e in entries] == [
        ("baseline-best-single", True),
        ("forged", True),
    ]
    rederived, reported = entries[0].section, entries[1].section
    assert rederived.ranking == "re-derived" and reported.ranking == "self-reported"
    assert reported != rederived and reported.pool_fingerprint == rederived.pool_fingerprint
    assert section_heading(reported) == section_heading(rederived) + ", self-reported completions"
    readme = render_markdown(entries)
    first, second = readme.index("| 1 | Best single worker"), readme.index("| 1 | My conductor")
    assert first < readme.index("self-reported completions") < second
    assert "ranked among themselves only: never in one ranking with re-derived" in readme


@pytest.fixture(scope="module")
def small_runs() -> tuple[Report, Results]:
    """A re-derived entry (best-single, validated once) and a run to claim as a policy."""
    best = evaluate("best-single", "offline", repeats=1, limit=4, progress=False)
    report = validate_submission(wrap(best, name="Best single worker per domain"))
    assert report.ok, messages(report)
    run = evaluate("single:0", "offline", repeats=1, limit=4, progress=False)
    return report, run.model_copy(update={"agent": POLICY})


@pytest.mark.parametrize(
    "name",
    [
        "Best single worker per domain",  # the real entry's name
        "best single worker per DOMAIN",
        "Best_single-worker per domain",
        "B\u0435st single worker per domain",  # a Cyrillic ie
        "\uff22\uff45\uff53\uff54 single worker per domain",  # full-width (NFKC)
        "best-single",  # the re-run agent's spec
    ],
)
def test_no_entry_shows_another_agents_name(small_runs: tuple[Report, Results], name: str) -> None:
    best, run = small_runs
    # the later entry in file order and the earlier in date: the re-derived one keeps it
    forged = validate_submission(wrap(run, name=name, date=datetime.date(2020, 1, 1)))
    assert forged.ok, messages(forged)
    check_names([dataclasses.replace(best, errors=[]), forged])
    refused = messages(forged)
    assert len(refused) == 1 and refused[0].startswith(f"metadata: name {name!r} is the "), refused
    assert "a name belongs to one agent" in refused[0] and forged.placement is None
    other = validate_submission(wrap(run, name="My conductor"))
    check_names([dataclasses.replace(best, errors=[]), other])
    assert other.ok


def test_the_same_agent_keeps_its_name_across_pools() -> None:
    # the seeded baselines: one agent, one name, in several sections
    specs = {
        _committed(slug).metadata.agent
        for slug in ("baseline-best-single", "sim-paper-v2-baseline-best-single")
    }
    assert specs == {"best-single"}
    assert name_skeleton("S\u0456m_Paper") == name_skeleton("sim-paper") == "simpaper"


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("s\u0456m-paper", "is not printable ASCII"),  # a Cyrillic i
        ("\uff53\uff49\uff4d-paper", "is not printable ASCII"),  # full-width
        ("Sim_Paper", "looks like the shipped preset 'sim-paper'"),
        ("sim-paper-2026", "looks like the shipped preset 'sim-paper'"),
        ("SIM PAPER v3", "looks like the shipped preset 'sim-paper'"),
        ("paper-constrained-mine", "looks like the shipped preset 'paper-constrained'"),
        ("sim-paper", None),  # the presets themselves (their workers are checked)
        ("sim-paper-v2", None),
        ("myteam-fit-2026", None),
        ("/etc/passwd", None),  # never opened: any other printable name
    ],
)
def test_look_alike_preset_names(name: str, refused: str | None) -> None:
    found = lookalike_preset(name)
    assert (found is None) if refused is None else (refused in (found or "")), found


def _fitted_pool(folder: Path, name: str) -> Path:
    """A hand-made 'fitted' pool: the paper's workers, every one always right."""
    profiles = sorted({p for profile in PAPER_PROFILES.values() for p in profile.accuracy})
    accuracy = "{ " + ", ".join(f'"{p}" = 1.0' for p in profiles) + " }"
    rows = "".join(
        f'[[workers]]\nname = "{w}"\nbackend = "simulated"\nmodel = "{w}"\n'
        f'backend_options = {{ version = "v3", accuracy = {accuracy} }}\n\n'
        for w in ("gpt-5", "gemma-3-27b-it")
    )
    path = folder / "pool.toml"
    path.write_text(f'name = "{name}"\ndescription = "fitted"\n\n{rows}', encoding="utf-8")
    return path


def test_a_fitted_pool_under_a_preset_look_alike_is_refused(tmp_path: Path) -> None:
    # the pool loader refuses the name first (tests/pool/test_pool_names.py) ...
    with pytest.raises(PoolConfigError, match="looks like the preset 'sim-paper'"):
        evaluate("single:0", "offline", pool=str(_fitted_pool(tmp_path, "s\u0456m-paper")))
    # ... and the board, a results file that claims it however it was written
    pool = _fitted_pool(tmp_path, "myteam-fit")
    results = evaluate("single:0", "offline", pool=str(pool), repeats=1, limit=4, progress=False)
    assert results.metrics["overall"].accuracy == 1.0  # the attack's 100 %
    renamed = {**results.pool, "name": "s\u0456m-paper"}
    report = validate_submission(wrap(results.model_copy(update={"pool": renamed})))
    assert messages(report) == [
        "pool: pool name 's\u0456m-paper' is not printable ASCII (at most 200 characters): a board "
        "pool name is plain text, so that no letter of another script or NFKC form can make "
        "it pass for another"
    ]


def test_a_fitted_pool_is_labelled_as_such(tmp_path: Path) -> None:
    pool = _fitted_pool(tmp_path, "myteam-fit")
    results = evaluate("single:0", "offline", pool=str(pool), repeats=1, limit=4, progress=False)
    report = validate_submission(
        make_submission(
            results, name="x", authors=["a"], training_data="none", pool_setting="simulated"
        )
    )
    assert report.ok and report.placement is not None, messages(report)
    section = report.placement.section
    assert section.custom_pool and section.simulator == "v3"
    assert section_heading(section).startswith(
        f"Suite offline ({section.fingerprint}), simulated pool myteam-fit "
        f"({section.pool_fingerprint}, fitted or hand-made, not a preset), simulator v3"
    )
    preset = validate_submission(
        wrap(evaluate("single:0", "offline", repeats=1, limit=4, progress=False))
    )
    assert preset.placement is not None and not preset.placement.section.custom_pool
