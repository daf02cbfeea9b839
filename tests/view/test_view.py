"""The viewer's page data, built from real runs on the offline suite (simulated pool):
summary counts equal the results file's, episodes are re-played exactly, invalid plans
show their reason and offending slice, every input kind reads, and text stays text.
``test_view_browser.py`` opens the pages in headless Chromium."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from view_support import KINDS, ScriptedConductor, as_real_pool, scripted_run

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.replay import Replayer, ReplayError
from conductor_gym.bench.results import Results, journal_path, json_safe, load_results
from conductor_gym.cli.main import main
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.render_html import offending_span, unpack_page_data
from conductor_gym.view.page import build_view, write_view


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results]:
    out = tmp_path_factory.mktemp("view") / "scripted.json"
    return out, scripted_run(out)


def test_summary_counts_equal_the_results_file(run: tuple[Path, Results]) -> None:
    path, results = run
    data = build_view(path)
    rows = {(r["group"], r["name"]): r for r in data["summary"]["rows"]}
    for name, metrics in results.metrics.items():
        group = "overall" if name == "overall" else "benchmark"
        assert {k: rows[(group, name)][k] for k in type(metrics).model_fields} == dict(metrics)
    families = Counter(e.domain for e in results.episodes)
    assert {name: r["n"] for (group, name), r in rows.items() if group == "family"} == families
    steps = Counter(str(e.steps) for e in results.episodes)
    assert dict((k, n) for k, n in data["summary"]["steps_histogram"]) == steps
    routed = sum(e.steps for e in results.episodes)
    assert sum(n for _, n, _ in data["summary"]["worker_use"]) == routed
    assert len(data["episodes"]) == len(results.episodes) == 30


def test_episodes_are_replayed_exactly_with_their_steps(run: tuple[Path, Results]) -> None:
    path, results = run
    data = build_view(path)
    assert data["run"]["details"] == "steps re-played from the completions"
    for view, record in zip(data["episodes"], results.episodes, strict=True):
        assert view["source"] == "replay" and view["notes"] == []  # the replay is the record
        assert (view["outcome"], view["reward"], view["steps"]) == (
            record.outcome,
            record.reward,
            record.steps,
        )
        assert view["seed"] == str(record.seed)  # 63-bit seeds travel as text
        first = view["rounds"][0]
        kind = KINDS[record.task_index % len(KINDS)]
        if kind in ("three_steps", "one_step"):
            assert len(first["steps"]) == record.steps == len(first["plan"]["model_id"])
            assert [s["worker"] for s in first["steps"]] == [
                view["pool"][m] for m in first["plan"]["model_id"]
            ]
            assert view["answer"] == record.final_response == first["steps"][-1]["response"]
            assert view["grade"]["reason"] == record.grade_reason
        else:
            assert first["steps"] is None and first["parse_error"]["reason"] == record.parse_error
    three = data["episodes"][0]["rounds"][0]
    assert three["visible"] == [[], [0], [0, 1]]  # "all" is every earlier step
    assert [s["visible"] for s in three["steps"]] == three["visible"]
    assert data["tasks"]["offline/0"]["question"] == ConductorEnv().tasks[0].question


def test_an_invalid_plan_marks_the_offending_slice(run: tuple[Path, Results]) -> None:
    path, _ = run
    episodes = build_view(path)["episodes"]

    def slice_of(index: int) -> tuple[str, str]:
        r = episodes[index]["rounds"][0]
        start, end = r["parse_error"]["span"] or (0, 0)
        return r["parse_error"]["reason"], r["completion"][start:end]

    assert slice_of(2) == ("unknown_worker", "model_id = [0, 99]")
    assert slice_of(4) == ("syntax", 'subtasks = ["Solve the problem, then')
    assert episodes[3]["rounds"][0]["parse_error"]["span"] is None  # no_lists: nowhere
    text = "Plan:\nmodel_id = [0, 1]\nsubtasks = ['a']\naccess_list = [[], []]\n"
    start, end = offending_span(text, "length_mismatch", "model_id has 2 entries ...") or (0, 0)
    assert text[start:end] == text[text.index("model_id") : text.rindex("]") + 1]
    unclosed = "model_id = [0]\nsubtasks = ['x']\naccess_list = [[]"
    span = offending_span(unclosed, "incomplete", "the access_list list starting on line 3 ...")
    assert span == [unclosed.index("access_list"), len(unclosed)]


def test_without_a_replay_plans_are_parsed_from_the_completions(
    run: tuple[Path, Results],
) -> None:
    path, results = run
    data = build_view(path, replay="never")
    assert data["run"]["details"] == "not replayed (replay off): plans parsed from the completions"
    replayed = build_view(path)
    # The question and reference still come from the (offline) suite, and the workers'
    # real names from the results' worker records (this pool shows every worker, in order).
    assert data["tasks"] == replayed["tasks"]
    assert all(task["question"] and task["reference"] for task in data["tasks"].values())
    assert data["run"]["workers"] == ", ".join(w.name for w in results.workers or ())
    for view, record, full in zip(
        data["episodes"], results.episodes, replayed["episodes"], strict=True
    ):
        first = view["rounds"][0]
        assert view["source"] == "record" and first["steps"] is None
        assert view["pool"] == full["pool"] and view["workers"] == full["workers"]
        assert view["outcome"] == record.outcome
        if record.grade_reason is None:
            assert view["grade"] is None
        else:  # the stored grade, as the file has it
            assert view["grade"]["reason"] == record.grade_reason
        if record.parse_error is None:
            assert len(first["plan"]["model_id"]) == record.steps
        else:
            assert first["parse_error"]["reason"] == record.parse_error


def test_a_replay_that_differs_from_the_record_says_so(
    run: tuple[Path, Results], tmp_path: Path
) -> None:
    _, results = run
    tampered = results.model_copy(deep=True)
    record = tampered.episodes[1]
    assert record.outcome in ("correct", "wrong")
    tampered.episodes[1] = record.model_copy(update={"prompt_tokens": record.prompt_tokens + 7})
    tampered.dump(tmp_path / "tampered.json")
    view = build_view(tmp_path / "tampered.json")["episodes"][1]
    want = f"prompt_tokens {record.prompt_tokens + 7} -> {record.prompt_tokens}"
    assert view["notes"] == [f"the replay differs from the record: {want}"]
    assert view["prompt_tokens"] == record.prompt_tokens + 7  # the page shows the file


def test_a_real_pool_without_its_cache_is_not_replayed(
    run: tuple[Path, Results], tmp_path: Path
) -> None:
    _, results = run
    real = as_real_pool(results)
    with pytest.raises(ReplayError, match="without the run's response cache would call them"):
        Replayer(real)
    real.dump(tmp_path / "real.json")
    data = build_view(tmp_path / "real.json")
    assert "not replayed: the pool has real workers" in data["run"]["details"]
    assert all(view["rounds"][0]["steps"] is None for view in data["episodes"])


def test_the_journal_and_a_trace_list_are_views_too(
    run: tuple[Path, Results], tmp_path: Path
) -> None:
    path, results = run
    journal = build_view(journal_path(path))
    assert [e["task_id"] for e in journal["episodes"]] == [e.task_id for e in results.episodes]
    assert journal["summary"]["rows"][0]["n"] == len(results.episodes)
    assert load_results(journal_path(path)).metrics == results.metrics

    env, agent, traces = ConductorEnv(max_recursions=1), ScriptedConductor(), []
    for seed in range(3):
        obs, info = env.reset(seed=seed, options={"task_index": 5 * seed})  # three steps
        completions = []
        while True:
            completions.append(agent.act(obs, info))
            obs, reward, terminated, truncated, info = env.step(completions[-1])
            if terminated or truncated:
                break
        traces.append({**json_safe(info), "completions": completions, "reward": reward})
    listing = tmp_path / "traces.json"
    listing.write_text(json.dumps(traces))
    data = build_view(listing)
    assert data["summary"] is None and len(data["episodes"]) == 3
    for view, trace in zip(data["episodes"], traces, strict=True):
        assert [r["index"] for r in view["rounds"]] == [0, 1]  # the plan, then the stop
        assert view["rounds"][1]["stop"] and view["rounds"][0]["completion"] is not None
        assert len(view["rounds"][0]["steps"]) == 3
        assert view["outcome"] == trace["outcome"] and view["reward"] == trace["reward"]
    lines = tmp_path / "traces.jsonl"
    lines.write_text("\n".join(json.dumps(t) for t in traces) + "\n")
    assert build_view(lines)["episodes"] == data["episodes"]


def test_env_render_html_shows_the_live_episode() -> None:
    assert ConductorEnv.metadata["render_modes"] == ["ansi", "html"]
    env = ConductorEnv(render_mode="html")
    assert env.render() == "(no episode: call reset())\n"
    obs, info = env.reset(seed=4, options={"task_index": 0})
    before = _data(str(env.render()))["episodes"][0]
    assert before["rounds"] == [] and before["notes"] == ["awaiting a plan"]
    action = ScriptedConductor().act(obs, info)
    env.step(action)
    page = str(env.render())
    view = _data(page)["episodes"][0]
    assert view["question"] == info["question"] and view["reference"] == env.tasks[0].reference
    assert view["rounds"][0]["completion"] == action and len(view["rounds"][0]["steps"]) == 3
    assert view["pool"] == list(info["pool"]) and view["grade"] is not None
    with pytest.raises(ValueError, match="render_mode"):
        ConductorEnv(render_mode="rgb_array")


def _data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="viewer-data">(.*?)</script>', page)
    assert found is not None
    return unpack_page_data(json.loads(found.group(1)))


def test_text_is_escaped_and_the_page_is_self_contained(tmp_path: Path) -> None:
    hostile = '</script><img src=x onerror="alert(1)"> & <b>bold</b>'
    tasks = tmp_path / "hostile.jsonl"
    rows = [
        {"question": f"{hostile} What is {n} + 1?", "answer": str(n + 1), "grader": "numeric"}
        for n in range(3)
    ]
    tasks.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    out = tmp_path / "hostile.json"
    evaluate("random", f"jsonl:{tasks}", repeats=1, out=out, progress=False)
    page_path = tmp_path / "hostile.html"
    write_view(out, page_path)
    page = page_path.read_text()
    assert "<img" not in page and "</script><" not in page and "<b>bold" not in page
    assert _data(page)["tasks"]["hostile/0"]["question"].startswith(hostile)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z]+:)?//""", page, re.I)
    # CSS url(...) loads (url(#id) is local); the script's URL.createObjectURL( is the
    # export's blob: download, an identifier, not a CSS url() token.
    assert not re.search(r"@import|(?<![\w.])url\(\s*['\"]?(?!#)", page, re.I)
    # The only URL-like text is the SVG namespace name, which loads nothing.
    assert set(re.findall(r"https?://[^\s\"']+", page)) == {"http://www.w3.org/2000/svg"}


def test_cli_view_writes_the_page(
    run: tuple[Path, Results], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, results = run
    out = tmp_path / "page.html"
    assert main(["view", str(path), "--out", str(out), "--no-replay"]) == 0
    assert f"wrote {out}: {len(results.episodes)} episode(s)" in capsys.readouterr().out
    assert _data(out.read_text())["episodes"][0]["source"] == "record"
    assert main(["view", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
