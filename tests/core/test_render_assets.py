"""The viewer page's style sheet and script are package data (files in
``conductor_gym/core/assets/``, listed in ``pyproject.toml``), not Python strings, and
the page inlines them unchanged."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from conductor_gym.core.render_assets import ASSETS, asset
from conductor_gym.core.render_html import VIEW_SCHEMA, render_page

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_inlines_the_asset_files() -> None:
    folder = resources.files("conductor_gym.core").joinpath("assets")
    for name in ASSETS:
        text = folder.joinpath(name).read_text("utf-8")
        assert text.strip() and asset(name) == text
    data = {"schema": VIEW_SCHEMA, "mode": "results", "title": "t", "run": None,
            "summary": None, "tasks": None, "episodes": []}  # fmt: skip
    page = render_page(data)
    assert f"<style>\n{asset('viewer.css')}</style>" in page
    assert f"<script>\n{asset('viewer.js')}</script>\n</body>" in page
    with pytest.raises(ValueError, match="no viewer asset"):
        asset("../env.py")


def test_the_assets_are_declared_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["conductor_gym.core"]
    for name in ASSETS:
        assert any(Path("assets", name).match(pattern) for pattern in patterns), name
