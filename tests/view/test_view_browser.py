"""The viewer page in headless Chromium (driven over the DevTools pipe, as a person's
clicks and typing would): the counts it shows are the results file's, every filter and
the search give the episodes Python counts in the file, multi-step plans are drawn as
graphs, invalid plans mark their slice, and hostile text stays text."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium_support import Browser, chromium
from view_support import KINDS, ScriptedConductor, scripted_run

from conductor_gym.bench.results import Results
from conductor_gym.core.env import ConductorEnv
from conductor_gym.tasks import make_task_source
from conductor_gym.view.page import write_view

Page = tuple[Path, Results, dict[str, Any]]
"""The page's file, the run it shows and the page's data."""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Page:
    folder = tmp_path_factory.mktemp("view-browser")
    results = scripted_run(folder / "run.json", limit=40, repeats=2)  # 80 episodes: 2 pages
    data = write_view(folder / "run.json", folder / "run.html")
    return folder / "run.html", results, data


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chromium()
    with contextlib.closing(Browser(tmp_path_factory.mktemp("profile"))) as b:
        yield b


def _select(browser: Browser, key: str, value: str) -> int:
    """Choose ``value`` in the filter ``key`` (a change event, as a click would) and
    return the match count the page shows."""
    browser.run(
        f"(() => {{ const s = document.getElementById('filter-{key}');"
        f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
    )
    return _count(browser)


def _count(browser: Browser) -> int:
    return int(browser.run("document.getElementById('match-count').dataset.matches"))


def _listed(browser: Browser) -> list[int]:
    rows = "document.querySelectorAll('#episode-list tbody tr')"
    return list(browser.run(f"[...{rows}].map((r) => +r.dataset.episode)"))


def test_counts_on_the_page_are_the_files(page: Page, browser: Browser) -> None:
    path, results, _ = page
    browser.open(path.as_uri())
    assert _count(browser) == len(results.episodes) == 80
    assert browser.run("document.getElementById('match-count').textContent") == (
        "80 of 80 episodes"
    )
    rows = browser.run(
        "[...document.querySelectorAll('#summary-table tbody tr')].map((r) =>"
        " [r.dataset.group, r.dataset.name, +r.dataset.n, +r.dataset.accuracy])"
    )
    shown = {(g, name): (n, acc) for g, name, n, acc in rows}
    for name, m in results.metrics.items():
        assert shown["overall" if name == "overall" else "benchmark", name] == (m.n, m.accuracy)
    families = Counter(e.domain for e in results.episodes)
    assert {name: n for (g, name), (n, _) in shown.items() if g == "family"} == families
    bars = browser.run(
        "[...document.querySelectorAll('#steps-hist .bar-row')].map((r) =>"
        " [r.dataset.label, +r.dataset.count])"
    )
    assert dict(bars) == Counter(str(e.steps) for e in results.episodes)
    assert _listed(browser) == list(range(50))  # the first page of 50
    assert browser.run("document.getElementById('page-info').textContent") == "page 1 of 2"
    browser.run("document.getElementById('next').click()")
    assert _listed(browser) == list(range(50, 80))


def test_every_filter_and_the_search_match_the_file(page: Page, browser: Browser) -> None:
    path, results, data = page
    browser.open(path.as_uri())
    episodes = results.episodes
    for key, values in (
        ("outcome", Counter(e.outcome for e in episodes)),
        ("family", Counter(e.domain for e in episodes)),
        ("parse", Counter(e.parse_error or "(none)" for e in episodes)),
        ("steps", Counter(str(e.steps) for e in episodes)),
        ("benchmark", Counter(e.benchmark for e in episodes)),
    ):
        assert len(values) >= 1
        for value, expected in values.items():
            assert _select(browser, key, value) == expected, (key, value)
        assert _select(browser, key, "") == len(episodes)
    used = Counter(name for view in data["episodes"] for name in view["workers"])
    assert len(used) >= 3
    for name, expected in used.items():
        assert _select(browser, "worker", name) == expected, name
    _select(browser, "worker", "")

    both = sum(e.outcome == "wrong" and e.domain == "countdown" for e in episodes)
    _select(browser, "outcome", "wrong")
    assert _select(browser, "family", "countdown") == both
    listed = _listed(browser)
    assert all((episodes[i].outcome, episodes[i].domain) == ("wrong", "countdown") for i in listed)
    _select(browser, "outcome", "")
    _select(browser, "family", "")

    source = make_task_source("offline")
    term = "remainder when"
    expected = sum(term in source[e.task_index].question.lower() for e in episodes)
    assert 0 < expected < len(episodes)
    browser.run(
        "(() => { const s = document.getElementById('search');"
        f" s.value = {json.dumps(term.upper())}; s.dispatchEvent(new Event('input')); }})()"
    )
    assert _count(browser) == expected
    assert "q=REMAINDER+WHEN" in browser.run("location.hash")  # the view can be linked
    browser.run("window.location.hash = ''")


def test_a_multi_step_plan_is_drawn_as_a_graph(page: Page, browser: Browser) -> None:
    path, results, data = page
    browser.open(path.as_uri())
    index = next(i for i, e in enumerate(results.episodes) if e.steps == 3)
    browser.run(f"document.querySelector('tr[data-episode=\"{index}\"]').click()")
    graph = browser.run(
        "(() => { const g = document.querySelector('#detail svg.plan-graph');"
        " return {steps: +g.dataset.steps, edges: +g.dataset.edges,"
        " boxes: [...g.querySelectorAll('g.step')].map((s) => s.dataset.worker),"
        " arrows: [...g.querySelectorAll('path.edge')]"
        ".map((p) => [+p.dataset.from, +p.dataset.to]),"
        " final: [...g.querySelectorAll('g.final')].map((s) => +s.dataset.step),"
        " labels: [...g.querySelectorAll('text.head')].map((t) => t.textContent)}; })()"
    )
    view = data["episodes"][index]
    plan = view["rounds"][0]["plan"]
    assert graph["steps"] == 3 and graph["final"] == [2]
    assert graph["boxes"] == [view["pool"][m] for m in plan["model_id"]]  # real names
    assert graph["labels"] == [f"Step {i} \u00b7 Model {m}" for i, m in enumerate(plan["model_id"])]
    assert sorted(graph["arrows"]) == [[0, 1], [0, 2], [1, 2]]  # [], [0], "all"
    assert graph["edges"] == 3
    responses = browser.run(
        "[...document.querySelectorAll('#detail pre.response')].map((p) => p.textContent)"
    )
    assert responses == [s["response"] for s in view["rounds"][0]["steps"]]
    assert browser.run("document.querySelector('#detail').dataset.episode") == str(index)
    assert browser.run("location.hash") == f"#ep={index}"


def test_an_invalid_plan_marks_its_offending_slice(page: Page, browser: Browser) -> None:
    path, results, _ = page
    index = next(
        i for i, e in enumerate(results.episodes) if KINDS[e.task_index % 5] == "unknown_worker"
    )
    browser.open(path.as_uri() + f"#ep={index}")
    shown = browser.run(
        "[document.querySelector('#detail .parse-error').dataset.reason,"
        " document.querySelector('#detail mark.offending').textContent,"
        " document.querySelectorAll('#detail svg.plan-graph').length]"
    )
    assert shown == ["unknown_worker", "model_id = [0, 99]", 0]


def test_a_live_episode_page_and_hostile_text(tmp_path: Path, browser: Browser) -> None:
    env = ConductorEnv(render_mode="html", max_recursions=1)
    obs, info = env.reset(seed=2, options={"task_index": 0})
    agent = ScriptedConductor()
    obs, *_, info = env.step(agent.act(obs, info))
    env.step(agent.act(obs, info))  # the recursive round: stop
    live = tmp_path / "episode.html"
    live.write_text(str(env.render()))
    browser.open(live.as_uri())
    shown = browser.run(
        "[document.querySelectorAll('svg.plan-graph').length,"
        " [...document.querySelectorAll('.round')].map((r) => +r.dataset.round),"
        " document.querySelectorAll('#episode-list').length]"
    )
    assert shown == [1, [0, 1], 0]

    hostile = '<img src=x onerror="document.title=1"> <script>document.title=2</script>'
    env = ConductorEnv(render_mode="html")
    obs, info = env.reset(seed=0)
    env.step(f"{hostile}\nmodel_id = [0]\nsubtasks = [{json.dumps(hostile)}]\naccess_list = [[]]")
    page_path = tmp_path / "hostile.html"
    page_path.write_text(str(env.render()))
    browser.open(page_path.as_uri())
    assert browser.run("document.querySelectorAll('img, main script').length") == 0
    assert browser.run("document.title").startswith("conductor-gym episode")
    assert hostile in browser.run("document.querySelector('pre.completion').textContent")


def _waited(path: Path) -> str:
    """The text of a download once Chromium has finished writing it."""
    for _ in range(500):
        if path.exists() and not list(path.parent.glob("*.crdownload")):
            return path.read_text(encoding="utf-8")
        time.sleep(0.02)
    raise AssertionError(f"{path} was not downloaded")


def test_sort_export_and_compare(page: Page, browser: Browser, tmp_path: Path) -> None:
    path, results, data = page
    episodes = results.episodes
    browser.open(path.as_uri())

    def sort(value: str) -> list[int]:
        browser.run(
            "(() => { const s = document.getElementById('sort');"
            f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()"
        )
        return _listed(browser)

    order = {"correct": 0, "wrong": 1, "invalid": 2, "error": 3}
    index = range(len(episodes))
    by: dict[str, Callable[[int], float]] = {
        "outcome": lambda i: order[episodes[i].outcome],
        "-reward": lambda i: -episodes[i].reward,
        "cost": lambda i: episodes[i].cost_usd,
        "-steps": lambda i: -episodes[i].steps,
    }
    for value, key in by.items():  # ties keep the file's order (a stable sort)
        assert sort(value) == sorted(index, key=lambda i: (key(i), i))[:50], value
    assert "sort=-steps" in browser.run("location.hash")

    # Export: the filtered episodes, every page, in the sort's order, as real downloads.
    browser.download_to(tmp_path)
    wrong = [i for i in sorted(index, key=lambda i: (-episodes[i].steps, i))]
    wrong = [i for i in wrong if episodes[i].outcome == "wrong"]
    assert _select(browser, "outcome", "wrong") == len(wrong) > 0
    browser.run("document.getElementById('export-json').click()")
    rows = json.loads(_waited(tmp_path / "episodes.json"))
    assert [row["index"] for row in rows] == wrong
    for row in rows:
        record, view = episodes[row["index"]], data["episodes"][row["index"]]
        assert (row["task_id"], row["outcome"], row["reward"]) == (
            record.task_id,
            record.outcome,
            record.reward,
        )
        assert row["question"] == data["tasks"][view["task"]]["question"]
        assert row["rounds"] == view["rounds"]  # unpacked exactly
    browser.run("document.getElementById('export-csv').click()")
    table = list(csv.DictReader(io.StringIO(_waited(tmp_path / "episodes.csv"), newline="")))
    assert [int(row["index"]) for row in table] == wrong
    for row in table:
        record = episodes[int(row["index"])]
        assert row["task_id"] == record.task_id and float(row["cost_usd"]) == record.cost_usd
        assert (
            row["question"] == data["tasks"][f"{record.benchmark}/{record.task_index}"]["question"]
        )
    assert browser.run("window.viewer.lastExport.rows") == len(wrong)
    _select(browser, "outcome", "")

    # Compare: click one row, shift-click another: both side by side.
    first, second = _listed(browser)[:2]
    browser.run(f"document.querySelector('tr[data-episode=\"{first}\"]').click()")
    browser.run(
        f"document.querySelector('tr[data-episode=\"{second}\"]')"
        ".dispatchEvent(new MouseEvent('click', {shiftKey: true, bubbles: true}))"
    )
    shown = browser.run(
        "[...document.querySelectorAll('#detail .compare > div')].map((d) => +d.dataset.shown)"
    )
    assert shown == [first, second]
    assert f"ep={first}&cmp={second}" in browser.run("location.hash")
    browser.run("window.location.hash = ''")
