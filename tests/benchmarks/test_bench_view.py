"""Opening and filtering a 10,000-episode results file in the viewer (headless Chromium).

The file is a real run: the random planner on the whole offline suite (2,000 tasks) with
5 repeats on the simulated pool; its page re-plays every episode (so each carries its
steps). Figures (``extra_info``, and printed; ``make bench``):

* ``evaluate_s``, ``build_s`` (``write_view``), ``page_mb``;
* ``open_s``: navigating to the page until its script has drawn the summary, the first
  list page and the filters (median of the rounds); ``parse_ms`` and ``ready_ms``: the
  page's own timings of ``JSON.parse`` and of its whole start;
* ``filter_ms``: the page's time to re-filter all 10,000 episodes, per filter, and for a
  search typed into the box; ``detail_ms``: drawing one episode with its graph.

The test asserts that every count equals the file's, not the timings.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from chromium_support import Browser, chromium

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.tasks import make_task_source
from conductor_gym.view.page import write_view

FILTERS = (("outcome", "wrong"), ("family", "countdown"), ("steps", "3"), ("worker", "gpt-5"))


def _filter(browser: Browser, element: str, value: str, event: str) -> tuple[int, float]:
    browser.run(
        f"(() => {{ const s = document.getElementById({json.dumps(element)});"
        f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event({json.dumps(event)})); }})()"
    )
    return int(browser.run("window.viewer.matches")), float(
        browser.run("window.viewer.lastFilterMs")
    )


def test_a_10000_episode_file_opens_and_filters(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    chromium()
    start = time.perf_counter()
    results = evaluate("random", "offline", repeats=5, out=tmp_path / "run.json", progress=False)
    evaluate_s = time.perf_counter() - start
    assert len(results.episodes) == 10_000
    start = time.perf_counter()
    data = write_view(tmp_path / "run.json", tmp_path / "run.html")
    build_s = time.perf_counter() - start
    url = (tmp_path / "run.html").as_uri()
    figures: dict[str, Any] = {
        "evaluate_s": evaluate_s,
        "build_s": build_s,
        "page_mb": (tmp_path / "run.html").stat().st_size / 1e6,
    }
    with contextlib.closing(Browser(tmp_path / "profile")) as browser:
        opens: list[float] = []
        benchmark.pedantic(lambda: opens.append(browser.open(url)), rounds=3, iterations=1)
        opens.sort()
        timings = browser.run("window.viewer")
        figures.update(
            open_s=opens[len(opens) // 2],
            parse_ms=timings["parseMs"],
            ready_ms=timings["readyMs"],
        )
        assert browser.run("+document.getElementById('match-count').dataset.total") == 10_000

        expected = {
            "outcome": Counter(e.outcome for e in results.episodes),
            "family": Counter(e.domain for e in results.episodes),
            "steps": Counter(str(e.steps) for e in results.episodes),
            "worker": Counter(n for v in data["episodes"] for n in v["workers"]),
        }
        filter_ms: dict[str, float] = {}
        for key, value in FILTERS:
            matches, ms = _filter(browser, f"filter-{key}", value, "change")
            assert matches == expected[key][value], (key, value)
            filter_ms[f"{key}={value}"] = ms
            _filter(browser, f"filter-{key}", "", "change")
        tasks = make_task_source("offline")
        term = "remainder when"
        matches, ms = _filter(browser, "search", term, "input")
        assert matches == sum(term in tasks[e.task_index].question for e in results.episodes)
        filter_ms[f"search {term!r}"] = ms
        figures["filter_ms"] = filter_ms
        figures["detail_ms"] = browser.run(
            "(() => { const t = performance.now();"
            " document.querySelector('#episode-list tbody tr').click();"
            " return performance.now() - t; })()"
        )
        assert browser.run("document.querySelectorAll('#detail svg.plan-graph').length") == 1
    benchmark.extra_info.update(figures)
    print(json.dumps(figures, indent=1))
