"""The viewer page's stylesheet and script (:mod:`conductor_gym.core.render_html` inlines
them): package data, ``assets/viewer.css`` and ``assets/viewer.js`` beside this module
(listed in ``pyproject.toml``), read once by :func:`asset`.

The script reads the page's data from ``<script type="application/json"
id="viewer-data">`` and draws, with DOM calls and text nodes only (no ``innerHTML`` of
data, no library, nothing fetched):

* the run and its summary (``mode == "results"``): metrics per group, steps-per-plan and
  worker-use histograms;
* the episode list: filters (benchmark, family, outcome, worker used, steps, parse
  failure), a search over question text and task id, a sort (file order, outcome, reward,
  cost, steps, tokens; ties in file order), 50 rows a page, and an export of every listed
  episode (all pages, in the sort's order) as a JSON or CSV download (a ``blob:`` URL,
  nothing sent);
* the selected episode: question, reference, each round's completion (reasoning, then the
  lists; an invalid plan's offending slice marked), the plan as an SVG graph (a box per
  step labelled with ``Model i``, the worker and the subtask; an arrow per access; the
  final step marked), each step's response and usage, the conductor's inner calls, the
  grade; shift-clicking a second row shows the two episodes side by side.

The data arrives packed (:func:`conductor_gym.core.render_html.render_page`: each dict's
keys and each repeated text once) and is unpacked first. The filter state, the sort and
the selected (and compared) episodes live in the URL fragment (``#outcome=wrong&
sort=-cost&ep=12&cmp=3``), so a view can be linked. Once drawn, ``<html
data-viewer-ready="1">`` is set and ``window.viewer`` holds ``{parseMs, readyMs,
lastFilterMs, matches, lastExport}`` (timings in ms; ``lastExport``: ``{name, type, rows,
text}`` of the latest export).
"""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["ASSETS", "asset"]

ASSETS = ("viewer.css", "viewer.js")
"""The page's style sheet and script: package data in ``conductor_gym/core/assets/``."""


@functools.cache
def asset(name: str) -> str:
    """The text of the asset ``name`` (one of :data:`ASSETS`)."""
    if name not in ASSETS:
        raise ValueError(f"no viewer asset {name!r}; the assets: {list(ASSETS)}")
    return resources.files("conductor_gym.core").joinpath("assets", name).read_text("utf-8")
