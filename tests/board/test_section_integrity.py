"""A board section is a like-with-like comparison: what sets it is derived on validation,
never taken on the submitted file's word (security issue 29, items 4 and 5).

* **Grader swap.** A file re-scored with a more lenient registered grader validates (its
  re-play grades with that grader), but the graders in force are part of its section
  key, with versions derived from the installed grader's source: it lands in a section
  of its own, never above the run it re-scored. Made-up versions or hashes are refused.
* **Env disguise.** A ``max_steps=3`` run whose ``agent.env_overrides`` was edited to
  claim the limit as the agent's own need lands in the ``max_steps=3`` section (the env
  the re-play ran), not the default one; a claim that disagrees with the recorded env
  is refused. The mixture of agents, which does need 8 steps, stays in the default one.

Every file starts as a real ``evaluate`` run on the ranked offline suite (``offline-160``,
3 repeats, simulated pool), edited as the attacker would.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from board_support import Json, board_run, messages, wrap

from conductor_gym.bench.rescore import grader_version, rescore
from conductor_gym.bench.results import Results
from conductor_gym.board.render import entries_from
from conductor_gym.board.sections import Section
from conductor_gym.board.submissions import Report, validate_submission
from conductor_gym.graders import Grade, register_grader
from conductor_gym.graders.numeric import extract_number, parse_number

LENIENT = "numeric-within-a-tenth"


@register_grader(LENIENT)
def numeric_within_a_tenth(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """A registered, more lenient numeric grader: within 10 % of the reference counts."""
    found = extract_number(response)
    if found is None or found.value is None:
        return Grade(False, None, "no number")
    want = parse_number(reference)
    close = want is not None and abs(found.value - want) <= abs(want) / 10
    return Grade(close, found.text, f"{found.text} {'is' if close else 'is not'} within 10 %")


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results]:
    path = tmp_path_factory.mktemp("section") / "random.json"
    return path, board_run("random", path)


@pytest.fixture(scope="module")
def genuine(original: tuple[Path, Results]) -> Json:
    return wrap(original[1]).model_dump(mode="json")


@pytest.fixture(scope="module")
def default_section(genuine: Json) -> Section:
    report = validate_submission(genuine)
    assert report.ok and report.placement is not None and report.placement.ranked
    assert (report.placement.section.env, report.placement.section.graders) == ("", "")
    return report.placement.section


@pytest.fixture(scope="module")
def swapped(original: tuple[Path, Results]) -> Json:
    """The run re-scored with the lenient grader for its numeric tasks."""
    rescored = rescore(original[0], graders={"numeric": LENIENT})
    assert rescored.changes  # some wrong numeric answers were close enough
    return wrap(rescored.results, name="Random planner, re-scored").model_dump(mode="json")


def _accepted(data: Json) -> Report:
    report = validate_submission(data)
    assert report.ok, messages(report)
    assert report.placement is not None and report.placement.ranked, str(report.placement)
    return report


def _accuracy(data: Json) -> float:
    return float(data["results"]["metrics"]["overall"]["accuracy"])


def _board(**reports: Report) -> dict[Section, list[str]]:
    """Each section's ranked entries (slugs), best first, as the board renders them."""
    groups: dict[Section, list[str]] = {}
    for entry in entries_from(list(reports.items())):
        if entry.ranked:
            groups.setdefault(entry.section, []).append(entry.slug)
    return groups


# ------------------------------------------------------------------------ grader swap


def test_a_file_rescored_with_a_lenient_grader_gets_a_section_of_its_own(
    genuine: Json, swapped: Json, default_section: Section
) -> None:
    assert _accuracy(swapped) > _accuracy(genuine)  # it would top the original's section
    report = _accepted(swapped)
    assert report.placement is not None
    section = report.placement.section
    graders = f"offline:numeric->{LENIENT}@{grader_version(LENIENT)}"
    assert section.graders == graders
    assert section == Section(**{**vars(default_section), "graders": graders})
    assert section.title().endswith(f", graders {graders}")
    board = _board(original=validate_submission(genuine), rescored=report)
    assert board == {default_section: ["original"], section: ["rescored"]}


def test_made_up_grader_versions_are_refused(swapped: Json) -> None:
    data = copy.deepcopy(swapped)
    data["results"]["rescored"][-1]["graders"]["numeric"]["version"] = "9.9.9+0123456789ab"
    report = validate_submission(data)
    assert messages(report) == [
        f"graders: rescored[0].graders['numeric']: grader {LENIENT!r} claims version "
        f"'9.9.9+0123456789ab', but the installed grader's source gives "
        f"{grader_version(LENIENT)!r}: re-score the run with this grader "
        "(`conductor-gym rescore`)"
    ]
    # an own grader's made-up version is a claim too
    data = copy.deepcopy(swapped)
    data["results"]["rescored"][-1]["graders"]["choice"]["version"] = "0.1.0+ffffffffffff"
    assert [p.check for p in validate_submission(data).errors] == ["graders"]


def test_an_older_release_of_the_same_grader_source_is_corrected_not_refused(
    swapped: Json,
) -> None:
    data = copy.deepcopy(swapped)
    digest = grader_version(LENIENT).partition("+")[2]
    data["results"]["rescored"][-1]["graders"]["numeric"]["version"] = f"0.0.1+{digest}"
    report = _accepted(data)
    assert [str(w) for w in report.warnings if w.check == "graders"] == [
        f"graders: rescored[0].graders['numeric']: grader {LENIENT!r} was recorded as release "
        f"'0.0.1'; its source is unchanged in the installed "
        f"{grader_version(LENIENT).partition('+')[0]!r} (hash {digest}), whose version the "
        "section uses"
    ]
    assert report.placement is not None
    assert report.placement.section.graders.endswith(f"@{grader_version(LENIENT)}")


def test_grader_claims_the_suite_or_the_registry_cannot_honour_are_refused(
    swapped: Json,
) -> None:
    data = copy.deepcopy(swapped)
    graders = data["results"]["rescored"][-1]["graders"]
    graders["numeric"]["name"] = "lenient-but-unregistered"
    assert any(
        m.startswith(
            "graders: rescored[0].graders['numeric']: 'lenient-but-unregistered' is not "
            "registered here (grader: unknown grader 'lenient-but-unregistered'; registered:"
        )
        for m in messages(validate_submission(data))
    ), messages(validate_submission(data))
    data = copy.deepcopy(swapped)
    data["results"]["rescored"][-1]["graders"]["code"] = {"name": LENIENT, "version": "x"}
    assert messages(validate_submission(data)) == [
        "graders: rescored[0].graders['code']: no task of suite 'offline-160' is graded by "
        "'code' (its tasks' graders: ['choice', 'countdown', 'numeric'])"
    ]


def test_hiding_the_rescoring_leaves_outcomes_the_replay_does_not_reproduce(
    swapped: Json,
) -> None:
    data = copy.deepcopy(swapped)
    del data["results"]["rescored"]  # now the tasks' own graders would be in force
    assert any(
        m.startswith("replay: ") and "outcome: recorded 'correct', re-played 'wrong'" in m
        for m in messages(validate_submission(data))
    )


# ----------------------------------------------------------------------- env disguise


@pytest.fixture(scope="module")
def disguised(tmp_path_factory: pytest.TempPathFactory) -> Json:
    """A ``--max-steps 3`` run claiming the limit as the agent's own declared need."""
    run = board_run("random", tmp_path_factory.mktemp("steps") / "r.json", max_steps=3)
    assert run.env_kwargs == {"max_steps": 3} and "env_overrides" not in run.agent
    data = wrap(run, name="Random planner, 3 steps").model_dump(mode="json")
    data["results"]["agent"]["env_overrides"] = {"max_steps": 3}
    # The built-in random planner declares no override: the claim is refused outright
    # (its re-run description differs), so the claim is made for a self-reported agent.
    refused = messages(validate_submission(data))
    assert refused == [
        "agent: results.agent is not what the built-in agent 'random' records (env_overrides: "
        "recorded {'max_steps': 3}, the built-in agent records None): re-run evaluate with "
        "that agent"
    ]
    return _self_reported(data)


def _self_reported(data: Json) -> Json:
    """``data`` claimed for an agent the board cannot re-run (an LLM conductor)."""
    spec = "llm:openai/planner"
    data["metadata"]["agent"] = spec
    data["results"]["agent"].update(name=spec, spec=spec)
    return data


def test_a_disguised_max_steps_run_lands_in_its_own_section(
    genuine: Json, disguised: Json, default_section: Section
) -> None:
    # on simulator v3 the shorter plans scored above the default run and would have topped
    # its section; whatever they score, they are ranked only with runs of their own env
    report = _accepted(disguised)
    assert report.placement is not None and report.replay is not None
    section = report.placement.section
    assert report.replay.settings == {"max_steps": 3} and report.replay.longest_plan == 3
    # a self-reported agent: its own ranking, in its own env's section
    want = {"env": '{"max_steps":3}', "ranking": "self-reported"}
    assert section == Section(**{**vars(default_section), **want})
    assert [str(w) for w in report.warnings] == [
        "env: agent.env_overrides declares max_steps=3: part of this entry's section all "
        "the same (only a max_steps above the default that the re-played plans fill is the "
        "agent's own need; the longest re-played plan has 3 step(s)), so it is compared "
        "with runs of the same env only"
    ]
    board = _board(original=validate_submission(genuine), disguised=report)
    assert board == {default_section: ["original"], section: ["disguised"]}


@pytest.mark.parametrize(
    ("claim", "message"),
    [
        (
            {"max_steps": 8},
            "env: agent.env_overrides.max_steps is 8, but the run's env (env_kwargs) had "
            "max_steps=5: evaluate applies and records an agent's declared settings, so a "
            "genuine file never differs",
        ),
        ({"bonus": 1}, "env: agent.env_overrides.bonus: 'bonus' is not an env setting"),
        ("max_steps=3", "env: agent.env_overrides is 'max_steps=3': expected a mapping"),
    ],
    ids=["a-limit-the-run-never-had", "not-a-setting", "not-a-mapping"],
)
def test_declared_env_claims_that_disagree_with_the_run_are_refused(
    genuine: Json, claim: Any, message: str
) -> None:
    data = copy.deepcopy(genuine)
    data["results"]["agent"]["env_overrides"] = claim
    assert messages(validate_submission(data)) == [message]


def test_the_section_follows_the_env_the_replay_ran_not_the_recorded_words(
    genuine: Json, default_section: Section
) -> None:
    data = copy.deepcopy(genuine)
    data["results"]["env_kwargs"] = {"max_steps": 5, "reward": "paper"}  # the defaults
    report = _accepted(data)
    assert report.placement is not None and report.replay is not None
    assert report.replay.settings == {}
    assert report.placement.section == default_section


def test_the_mixture_of_agents_needs_its_8_steps_and_keeps_the_default_section(
    tmp_path: Path, default_section: Section
) -> None:
    moa = wrap(board_run("moa", tmp_path / "moa.json"), name="MoA").model_dump(mode="json")
    assert moa["results"]["agent"]["env_overrides"] == {"max_steps": 8}
    report = _accepted(moa)
    assert report.replay is not None and report.replay.longest_plan == 8
    assert report.placement is not None and report.placement.section == default_section
    assert report.warnings == []
    # without its declaration the built-in agent is not the one named ...
    del moa["results"]["agent"]["env_overrides"]
    assert messages(validate_submission(moa))[0].startswith(
        "agent: results.agent is not what the built-in agent 'moa' records (env_overrides: "
        "recorded None, the built-in agent records {'max_steps': 8})"
    )
    # ... and a self-reported agent's same run is compared only with 8-step runs
    bare = _accepted(_self_reported(moa)).placement
    assert bare is not None
    want = {"env": '{"max_steps":8}', "ranking": "self-reported"}
    assert bare.section == Section(**{**vars(default_section), **want})
