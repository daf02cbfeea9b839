"""The tamper battery: every edit a submitter could make to a genuine, ranked submission
is rejected, or moves the entry off the ranking, each with its own message.

The genuine submission is a real ``evaluate`` run of the random planner on the ranked
offline suite (``offline-160``, 3 repeats, the suite seed 0, simulated pool). Each tamper
edits a copy of its JSON, as carefully as a cheater would (re-aggregating the metrics,
re-deriving seeds where that hides the edit), and says which problem (check and text) or
which reason for listing the entry apart the validation must report.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from board_support import BOARD_REPEATS, Json, board_run, messages, reaggregate, wrap

from conductor_gym.bench.results import Results
from conductor_gym.bench.suites import episode_seed, get_suite
from conductor_gym.board.submissions import validate_file, validate_submission

Expected = tuple[str, str, str]
"""``("error", check, text)`` (rejected) or ``("apart", "placement", text)`` (accepted,
listed apart with a reason containing ``text``)."""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    return board_run("random", tmp_path_factory.mktemp("run") / "results.json")


@pytest.fixture(scope="module")
def genuine(results: Results) -> Json:
    return wrap(results).model_dump(mode="json")


def _episodes(data: Json) -> list[Json]:
    episodes: list[Json] = data["results"]["episodes"]
    return episodes


def _first(data: Json, outcome: str) -> Json:
    return next(e for e in _episodes(data) if e["outcome"] == outcome)


def _key(e: Json) -> str:
    return str((e["benchmark"], e["task_index"], e["repeat"]))


# -------------------------------------------------------------- edits that leave traces


def edit_aggregate(data: Json) -> Expected:
    data["results"]["metrics"]["overall"]["accuracy"] += 0.05
    return "error", "metrics", "metrics['overall'] differs from the episodes: accuracy"


def edit_aggregate_by_a_hair(data: Json) -> Expected:
    data["results"]["metrics"]["offline"]["tokens_per_sample"] += 1e-6
    return "error", "metrics", "metrics['offline'] differs from the episodes: tokens_per_sample"


def inconsistent_reward(data: Json) -> Expected:
    _first(data, "correct")["reward"] = 0.5
    return "error", "episode", "reward is not the scheme's reward for the outcome"


def inconsistent_correct_flag(data: Json) -> Expected:
    _first(data, "wrong")["correct"] = True
    return "error", "episode", "correct flag contradicts the outcome"


def missing_episode(data: Json) -> Expected:
    removed = _episodes(data).pop(3)
    return (
        "error",
        "episodes",
        f"1 missing episode(s) (benchmark, task_index, repeat): {_key(removed)}",
    )


def duplicated_episode(data: Json) -> Expected:
    _episodes(data).append(copy.deepcopy(_episodes(data)[0]))
    return "error", "episodes", "1 duplicated episode(s)"


def other_suites_fingerprint(data: Json) -> Expected:
    data["results"]["suite"]["fingerprint"] = get_suite("offline-ood", limit=160).fingerprint()
    return "error", "suite", "is not the fingerprint of suite 'offline-160'"


def more_repeats_declared(data: Json) -> Expected:
    data["results"]["repeats"] = BOARD_REPEATS + 1
    return "error", "repeats", f"declare repeats={BOARD_REPEATS + 1} but the episodes"


def fewer_repeats_declared(data: Json) -> Expected:
    data["results"]["repeats"] = BOARD_REPEATS - 1
    return "error", "repeats", f"declare repeats={BOARD_REPEATS - 1} but the episodes"


def agent_mismatch(data: Json) -> Expected:
    data["metadata"]["agent"] = "moa"
    return "error", "metadata", "metadata.agent is 'moa' but the results were produced"


def unknown_field_in_an_episode(data: Json) -> Expected:
    _episodes(data)[0]["bonus"] = 1.0
    return "error", "schema", "results.episodes[0].bonus: Extra inputs"


def unknown_field_in_metadata(data: Json) -> Expected:
    data["metadata"]["verified"] = True
    return "error", "schema", "metadata.verified: Extra inputs"


def wrong_task_id(data: Json) -> Expected:
    _episodes(data)[0]["task_id"] = "arithmetic-999"
    return "error", "episode", "has task_id 'arithmetic-999', the suite's task is 'arithmetic-0'"


def wrong_limit(data: Json) -> Expected:
    data["results"]["suite"]["limit"] = 7
    return "error", "suite", "with limit 7 has source sizes"


def wrong_pool_setting(data: Json) -> Expected:
    data["metadata"]["pool_setting"] = "unconstrained"
    return "error", "metadata", "pool_setting is 'unconstrained' but the pool"


# ------------------------------------------------ self-consistent edits: the re-play


def flip_wrong_to_correct(data: Json) -> Expected:
    for episode in [e for e in _episodes(data) if e["outcome"] == "wrong"][:4]:
        episode.update(outcome="correct", correct=True, reward=1.0)
    reaggregate(data)
    return "error", "replay", "outcome: recorded 'correct', re-played 'wrong'"


def relabel_wrong_as_failures(data: Json) -> Expected:
    error = {"kind": "infrastructure", "message": "timeout", "transient": True}
    for episode in [e for e in _episodes(data) if e["outcome"] == "wrong"][:4]:
        episode.update(outcome="error", correct=False, reward=0.0, error=error)
    reaggregate(data)
    return "error", "replay", "outcome: recorded 'error', re-played 'wrong'"


def zeroed_costs(data: Json) -> Expected:
    for episode in _episodes(data):
        episode["cost_usd"] = 0.0
    reaggregate(data)
    return "error", "replay", "cost_usd: recorded 0.0, re-played"


def deflated_tokens(data: Json) -> Expected:
    for episode in _episodes(data):
        episode["completion_tokens"] //= 2
    reaggregate(data)
    return "error", "replay", "completion_tokens: recorded"


def edited_final_answer(data: Json) -> Expected:
    _first(data, "wrong")["final_answer"] = "123456789"
    return "error", "replay", "final_answer: recorded '123456789', re-played"


def swapped_completion(data: Json) -> Expected:
    episodes = _episodes(data)
    target = next(e for e in episodes if e["steps"] == 1)
    donor = next(e for e in episodes if e["steps"] == 5)
    target["completion"] = donor["completion"]  # every recorded number left as it was
    return "error", "replay", f"{_key(target)} steps: recorded 1, re-played 5"


# ------------------------------------------------- repeats and seeds chosen after the fact


def copy_a_good_episode_onto_another_task(data: Json) -> Expected:
    episodes = _episodes(data)
    good = _first(data, "correct")
    bad = next(e for e in episodes if e["outcome"] == "wrong" and e["task_id"] != good["task_id"])
    slot = {k: bad[k] for k in ("benchmark", "task_index", "repeat")}
    bad.clear()
    bad.update({**copy.deepcopy(good), **slot})
    reaggregate(data)
    return "error", "episode", f"{_key(bad)} has task_id {good['task_id']!r}"


def copy_a_good_repeat_onto_a_bad_one(data: Json) -> Expected:
    episodes = _episodes(data)
    by_task: dict[int, dict[str, Json]] = {}
    for e in episodes:
        by_task.setdefault(e["task_index"], {})[e["outcome"]] = e
    good, bad = next(
        (o["correct"], o["wrong"]) for o in by_task.values() if {"correct", "wrong"} <= set(o)
    )
    repeat = bad["repeat"]
    bad.clear()
    bad.update({**copy.deepcopy(good), "repeat": repeat})
    reaggregate(data)
    want = episode_seed(0, "offline", bad["task_index"], repeat)
    return "error", "seeds", f"{_key(bad)} has seed {good['seed']}, not {want}"


def best_of_three_as_one_repeat(data: Json) -> Expected:
    best: dict[int, Json] = {}
    for e in _episodes(data):
        kept = best.get(e["task_index"])
        if kept is None or e["reward"] > kept["reward"]:
            best[e["task_index"]] = e
    chosen = [dict(e, repeat=0) for _, e in sorted(best.items())]
    data["results"]["episodes"], data["results"]["repeats"] = chosen, 1
    reaggregate(data)
    first = next(e for e in chosen if e["seed"] != episode_seed(0, "offline", e["task_index"], 0))
    return "error", "seeds", f"{_key(first)} has seed {first['seed']}"


def random_episode_seeds(data: Json) -> Expected:
    rng = random.Random(0)
    for episode in _episodes(data):
        episode["seed"] = rng.randrange(2**63)
    return "error", "seeds", f"{len(_episodes(data))} episode(s) whose seed is not the one"


# ----------------------------------------------------------------- pools and suites


def _relabel_backend(data: Json, backend: str) -> None:
    for worker in data["results"]["workers"]:
        worker.update(backend=backend, options={})
    for worker in data["results"]["pool"]["workers"]:
        worker["backend"] = backend


def simulated_run_relabelled_as_litellm(data: Json) -> Expected:
    _relabel_backend(data, "litellm")
    data["metadata"]["pool_setting"] = "constrained"
    return (
        "error",
        "pool",
        "pool 'sim-paper' is a shipped preset, but the results' workers differ from it "
        "('gemini-2.5-pro', ",
    )


def relabelled_as_a_custom_litellm_pool(data: Json) -> Expected:
    _relabel_backend(data, "litellm")
    data["metadata"]["pool_setting"] = "constrained"
    data["results"]["pool"]["name"] = "my-frontier-pool"
    return (
        "apart",
        "placement",
        "unverified: the pool has real workers (litellm) and no response cache",
    )


def an_easier_simulator_under_the_presets_name(data: Json) -> Expected:
    data["results"]["workers"][2]["options"]["accuracy"] = {"math500": 1.0}
    return "error", "pool", "differ from it ('gpt-5'): name a custom pool after its file"


def invented_hub_suite(data: Json) -> Expected:
    names = [spec.name for spec in get_suite("paper-ood3").specs]
    sizes = {name: 0 for name in names}
    for e in _episodes(data):
        name, index = names[e["task_index"] % 3], e["task_index"] // 3
        sizes[name] = max(sizes[name], index + 1)
        e.update(benchmark=name, task_index=index, task_id=f"{name}-{index}", correct=True)
        e.update(outcome="correct", reward=1.0, seed=episode_seed(0, name, index, e["repeat"]))
    sources = [{"name": n, "fingerprint": "0123456789abcdef", "size": sizes[n]} for n in names]
    data["results"]["suite"] = {
        "name": "paper-ood3", "fingerprint": "fedcba9876543210", "sources": sources, "limit": None
    }  # fmt: skip
    reaggregate(data)
    return "apart", "placement", "unverified: suite 'paper-ood3' cannot be re-played offline"


def a_local_jsonl_suite(data: Json) -> Expected:
    data["results"]["suite"]["name"] = "jsonl:/etc/passwd"
    return "apart", "placement", "unverified: suite 'jsonl:/etc/passwd' cannot be re-played"


def an_unknown_suite(data: Json) -> Expected:
    data["results"]["suite"]["name"] = "offline-easy"
    return "error", "suite", "unknown suite 'offline-easy'; the board's suites"


# ------------------------------------------------------------------- hostile input


def a_50_mb_notes_field(data: Json) -> Expected:
    data["metadata"]["notes"] = "x" * 50_000_000
    return "error", "schema", "metadata.notes: String should have at most 2000 characters"


def a_javascript_url(data: Json) -> Expected:
    data["metadata"]["url"] = "javascript:alert(document.cookie)"
    return "error", "schema", "metadata.url: Value error, must be an http:// or https:// URL"


def a_multi_line_name(data: Json) -> Expected:
    data["metadata"]["name"] = "Top\n| 1 | fake row |"
    return "error", "schema", "metadata.name: Value error, must be one line"


def a_gigantic_plan_limit(data: Json) -> Expected:
    data["results"]["env_kwargs"]["max_steps"] = 1_000_000
    return "error", "env", "env_kwargs.max_steps is 1000000: the board allows 0..32"


def a_missing_response_cache(data: Json) -> Expected:
    data["metadata"]["response_cache"] = "responses.sqlite"
    return "error", "metadata", "response_cache 'responses.sqlite': no such file beside the entry"


TAMPERS: list[Callable[[Json], Expected]] = [
    edit_aggregate,
    edit_aggregate_by_a_hair,
    inconsistent_reward,
    inconsistent_correct_flag,
    missing_episode,
    duplicated_episode,
    other_suites_fingerprint,
    more_repeats_declared,
    fewer_repeats_declared,
    agent_mismatch,
    unknown_field_in_an_episode,
    unknown_field_in_metadata,
    wrong_task_id,
    wrong_limit,
    wrong_pool_setting,
    flip_wrong_to_correct,
    relabel_wrong_as_failures,
    zeroed_costs,
    deflated_tokens,
    edited_final_answer,
    swapped_completion,
    copy_a_good_episode_onto_another_task,
    copy_a_good_repeat_onto_a_bad_one,
    best_of_three_as_one_repeat,
    random_episode_seeds,
    simulated_run_relabelled_as_litellm,
    relabelled_as_a_custom_litellm_pool,
    an_easier_simulator_under_the_presets_name,
    invented_hub_suite,
    a_local_jsonl_suite,
    an_unknown_suite,
    a_50_mb_notes_field,
    a_javascript_url,
    a_multi_line_name,
    a_gigantic_plan_limit,
    a_missing_response_cache,
]


def test_the_genuine_submission_is_ranked(genuine: Json) -> None:
    report = validate_submission(genuine)
    assert report.ok, messages(report)
    assert report.placement is not None and report.placement.ranked, str(report.placement)
    assert report.replay is not None and report.replay.episodes == 480
    assert str(report.placement.verification) == "simulated re-play (480 episodes)"
    assert str(report.placement.identity) == "agent re-run (480 episodes)"


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.__name__ for t in TAMPERS])
def test_tampering_is_caught_with_its_own_message(
    genuine: Json, tamper: Callable[[Json], Expected], tmp_path: Path
) -> None:
    data = copy.deepcopy(genuine)
    kind, check, text = tamper(data)
    report = validate_submission(data, folder=tmp_path)
    if kind == "error":
        assert not report.ok
        hits = [p for p in report.errors if p.check == check and text in p.message]
        assert hits, f"no {check!r} error containing {text!r} in {messages(report)}"
    else:
        assert report.ok, messages(report)
        assert report.placement is not None and not report.placement.ranked
        assert any(text in reason for reason in report.placement.reasons), report.placement


def test_every_tamper_expects_a_message_of_its_own(genuine: Json) -> None:
    expected = [tamper(copy.deepcopy(genuine)) for tamper in TAMPERS]
    assert len(TAMPERS) >= 15 and len(set(expected)) == len(expected)
    texts = [text for _, _, text in expected]
    overlaps = [(a, b) for a in texts for b in texts if a != b and a in b]
    assert overlaps == []  # no tamper's text would also pass as another's


def test_a_file_nested_100000_deep_is_one_line_of_rejection(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    report = validate_file(path)
    assert [str(p) for p in report.errors] == ["file: JSON nested deeper than 32 levels"]
    path.write_text(
        json.dumps(
            {
                "metadata": {
                    "notes": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                }
            }
        )
    )
    assert [str(p) for p in validate_file(path).errors] == [
        "file: JSON nested deeper than 32 levels"
    ]


def test_an_oversized_file_is_refused_before_it_is_read(genuine: Json, tmp_path: Path) -> None:
    path = tmp_path / "entry.json"
    path.write_text(json.dumps(genuine))
    size = path.stat().st_size
    report = validate_file(path, max_bytes=1000)
    assert [str(p) for p in report.errors] == [
        f"file: the file is {size:,} bytes, over the 1,000-byte limit"
    ]
    assert validate_file(path).ok


def test_not_json_and_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "junk.json"
    path.write_text("{not json")
    assert messages(validate_file(path))[0].startswith("file: not JSON:")
    path.write_bytes(b'{"a": "\xff"}')
    assert messages(validate_file(path))[0].startswith("file: not UTF-8 text:")
