"""The viewer on pools other than the default simulated one (issue 26, item 4): a run's
pool rebuilt from a pool file for the replay (``view --pool``), a real llama.cpp pool
on loopback re-played from its response cache, the cap on embedded texts, the packed
page data and the progress line on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import sys
from pathlib import Path

import pytest
from support import require_spec
from view_support import scripted_run

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.replay import ReplayError
from conductor_gym.bench.results import Results
from conductor_gym.cli import view as view_cli
from conductor_gym.cli.main import main
from conductor_gym.core.render_html import render_page, unpack_page_data
from conductor_gym.pool.config import PRESET_DIR
from conductor_gym.view.page import build_view
from conductor_gym.workers.spec import WorkerSpec

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results]:
    out = tmp_path_factory.mktemp("view-pools") / "scripted.json"
    return out, scripted_run(out, limit=10, repeats=1)


def test_the_pool_is_rebuilt_from_a_pool_file(run: tuple[Path, Results], tmp_path: Path) -> None:
    path, results = run
    pool_file = tmp_path / "my-pool.toml"
    shutil.copyfile(PRESET_DIR / "sim-paper.toml", pool_file)
    data = build_view(path, pool=pool_file)
    assert data["run"]["details"] == "steps re-played from the completions"
    assert all(view["source"] == "replay" and not view["notes"] for view in data["episodes"])
    # A pool that is not the run's is refused by name: the replay asked for cannot happen,
    # and a page without it would pass for the real one.
    text = pool_file.read_text(encoding="utf-8")
    pool_file.write_text(text.replace('name = "gpt-5"', 'name = "gpt-4"'), encoding="utf-8")
    with pytest.raises(ReplayError, match=f"pool {re.escape(repr(str(pool_file)))} has workers"):
        build_view(path, pool=pool_file)
    assert len(results.episodes) == len(data["episodes"])


def test_long_texts_are_clipped_and_the_page_packs_its_data(run: tuple[Path, Results]) -> None:
    path, results = run
    whole = build_view(path, max_text=0)
    clipped = build_view(path, max_text=30)
    assert "clipped" not in whole["run"]["details"]
    long = [e for e in results.episodes if len(e.completion) > 30]
    assert long
    assert clipped["run"]["details"] == (
        f"steps re-played from the completions; texts over 30 characters clipped in "
        f"{len(long)} episode(s) (the results file keeps them whole)"
    )
    for view, record in zip(clipped["episodes"], results.episodes, strict=True):
        completion = view["rounds"][0]["completion"]
        if len(record.completion) > 30:
            more = len(record.completion) - 30
            assert (
                completion
                == record.completion[:30] + f"\u2026 [{more:,} more characters in the results file]"
            )
        else:
            assert completion == record.completion
    # The page embeds the data packed (keys and repeated texts once) and it unpacks exactly.
    page = render_page(whole)
    found = re.search(r'id="viewer-data">(.*?)</script>', page)
    assert found is not None
    embedded = json.loads(found.group(1))
    assert embedded["shapes"] and '"task_id"' not in json.dumps(embedded["episodes"])
    assert unpack_page_data(embedded) == json.loads(json.dumps(whole))
    assert len(found.group(1)) < 0.8 * len(json.dumps(whole, separators=(",", ":")))


def test_the_cli_shows_progress_on_a_terminal_only(
    run: tuple[Path, Results], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, results = run
    out = tmp_path / "page.html"
    assert main(["view", str(path), "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""  # not a terminal: the outcome line only
    leader, follower = pty.openpty()
    with (
        os.fdopen(follower, "w", encoding="utf-8") as terminal,
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setattr(sys, "stderr", terminal)
        patch.setattr(view_cli, "PROGRESS_FROM", 5)  # a count for this small file too
        assert main(["view", str(path), "--out", str(out), "--pool", "sim-paper"]) == 0
        terminal.flush()
        received = b""
        while select.select([leader], [], [], 0.2)[0]:  # every write the terminal got
            received += os.read(leader, 65536)
        shown = received.decode()
    os.close(leader)
    n = len(results.episodes)
    assert shown.replace("\r\n", "\n") == (
        f"conductor-gym view: reading {path}, re-playing the steps where it can ...\n"
        f"\rconductor-gym view: {n}/{n} episodes\n"
    )
    assert f"wrote {out}: {n} episode(s)" in capsys.readouterr().out
    assert main(["view", str(path), "--max-text", "-1"]) == 2
    assert capsys.readouterr().err == "conductor-gym view: --max-text must be 0 or more\n"


# -- a real pool ---------------------------------------------------------------------------


def _specs(api_base: str) -> list[WorkerSpec]:
    options = {"api_base": api_base, "api_key_env": "CG_TEST_KEY"}
    return [
        WorkerSpec(
            name,
            backend="litellm",
            model="openai/smollm2",
            max_tokens=16,
            price_in_per_mtok=2.0,
            price_out_per_mtok=8.0,
            backend_options=options,
        )
        for name in ("smol-a", "smol-b")
    ]


def _pool_file(folder: Path, api_base: str) -> Path:
    """The run's pool as a file for a keyless local server (a file that routes a key to
    an endpoint needs the credential policy's trust, which a replay does not ask for)."""
    rows = "".join(
        f'\n[[workers]]\nname = "{name}"\nbackend = "litellm"\nmodel = "openai/smollm2"\n'
        "max_tokens = 16\nprice_in_per_mtok = 2.0\nprice_out_per_mtok = 8.0\n"
        f'backend_options = {{ api_base = "{api_base}" }}\n'
        for name in ("smol-a", "smol-b")
    )
    path = folder / "smol.toml"
    path.write_text('name = "smol"\ndescription = "two SmolLM2 workers"\n' + rows, "utf-8")
    return path


def test_a_real_pool_is_replayed_from_its_cache(
    llama_base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_spec("litellm")
    cache, out = tmp_path / "responses.sqlite", tmp_path / "real.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CG_TEST_KEY", "sk-local")
        results = evaluate(
            "single:0",
            "offline",
            pool=_specs(f"{llama_base_url}/v1"),
            repeats=1,
            limit=2,
            cache=str(cache),
            out=out,
            progress=False,
        )
    assert results.metrics["overall"].infra_failures == 0
    # Without the cache: the question, reference and worker names, no steps.
    bare = build_view(out, replay="never")
    assert all(t["question"] and t["reference"] for t in bare["tasks"].values())
    assert [v["pool"] for v in bare["episodes"]] == [["smol-a", "smol-b"]] * 2
    # With it (and the pool file, whose server is never called: nothing listens there now).
    pool = _pool_file(tmp_path, "http://127.0.0.1:9/v1")
    page = tmp_path / "real.html"
    command = ["view", str(out), "--replay", str(cache), "--pool", str(pool), "--out", str(page)]
    assert main(command) == 0
    assert "steps re-played from the completions" in capsys.readouterr().out
    found = re.search(r'id="viewer-data">(.*?)</script>', page.read_text(encoding="utf-8"))
    assert found is not None
    data = unpack_page_data(json.loads(found.group(1)))
    for view, record in zip(data["episodes"], results.episodes, strict=True):
        assert view["source"] == "replay" and not view["notes"], view["notes"]
        steps = view["rounds"][0]["steps"]
        assert [s["worker"] for s in steps] == ["smol-a"]
        assert steps[0]["response"] == record.final_response and steps[0]["cached"]
