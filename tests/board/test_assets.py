"""The board page's template, style sheet and script are package data (files in
``conductor_gym/board/assets/``, listed in ``pyproject.toml``), not Python strings."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from conductor_gym.board.render import ASSETS, asset, render_html

ROOT = Path(__file__).resolve().parents[2]


def test_the_page_is_filled_from_the_asset_files() -> None:
    folder = resources.files("conductor_gym.board").joinpath("assets")
    for name in ASSETS:
        text = folder.joinpath(name).read_text("utf-8")
        assert text.strip() and asset(name) == text
    page = render_html([], plot=False)
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert f"<style>\n{asset('board.css')}</style>" in page
    assert f"<script>\n{asset('board.js')}</script>" in page
    assert "${" not in page and "<p>No ranked entries yet.</p>" in page
    with pytest.raises(ValueError, match="no board asset"):
        asset("../submissions.py")


def test_the_assets_are_declared_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert {"conductor_gym.board", "conductor_gym.view"} <= set(setuptools["packages"])
    patterns = setuptools["package-data"]["conductor_gym.board"]
    for name in ASSETS:
        assert any(Path("assets", name).match(pattern) for pattern in patterns), name
