"""The yardstick on both pools (``docs/figures/yardstick_pools.py``, block
``yardstick-pools``): the doc's block was made with the generator's settings (a cheap
check, so changing them without regenerating fails here), the adaptive oracle beside it
finds each family's specialist on the tiny world, and (``figures``) the block is what
the generator prints."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from classic_support import SPECIALISTS, tiny_pool
from conductor_gym.trainers.trl.data import make_refs
from conductor_gym.trainers.trl.ideal_learner import Beside, adaptive_oracle
from support import docs_figures_build

from conductor_gym.bench.readme_figures import wrap
from conductor_gym.core.config import EnvConfig
from conductor_gym.training.scoring import Scorer

ROOT = Path(__file__).resolve().parents[2]


def generator() -> ModuleType:
    build = docs_figures_build()
    module = sys.modules.get("docs_figures_yardstick_pools")
    if module is None:  # build.py loads it; this is a fallback for a changed loader
        spec = importlib.util.spec_from_file_location(
            "docs_figures_yardstick_pools", ROOT / "docs/figures/yardstick_pools.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    assert build.block("yardstick-pools").generate == module.pools_block
    return module


def test_the_docs_block_was_made_with_the_generators_settings() -> None:
    block = docs_figures_build().block("yardstick-pools")
    text = block.current((ROOT / block.doc).read_text())
    assert text.startswith(wrap(generator().settings_line()) + "\n\n"), (
        "regenerate: make docs-figures"
    )
    header = next(line for line in text.splitlines() if line.startswith("| held-out accuracy"))
    for label in generator().POOLS:
        assert label in header
    for row in ("`best-single`", "best fixed plan", "adaptive oracle"):
        assert f"| {row} |" in text


def test_the_adaptive_oracle_asks_each_familys_specialist(tmp_path: Path) -> None:
    scorer = Scorer(EnvConfig(pool=tiny_pool(tmp_path), max_steps=2))
    try:
        train = make_refs(range(200, 600), seed=0)
        beside = Beside(oracle_top=2, oracle_rounds=(6, 24), calibration=120)
        rates, chosen = adaptive_oracle(scorer, train, 2, beside)
    finally:
        scorer.close()
    names = {spec.name for spec in scorer.pool.specs}
    for family, (specialist, _) in SPECIALISTS.items():
        ranked = sorted(names, key=lambda n: -rates[family, n])
        assert ranked[0] == specialist, (family, rates)
        assert 0 in chosen[family].ranks, (family, chosen[family])


@pytest.mark.slow
@pytest.mark.figures
def test_the_docs_block_is_what_the_generator_prints() -> None:
    # both pools: 2 seeds x 1,000 yardstick steps, the best fixed plan's search and the
    # adaptive oracle's (about 10 minutes on one core)
    block = docs_figures_build().block("yardstick-pools")
    doc = (ROOT / block.doc).read_text()
    assert block.current(doc) == block.generate(), "regenerate: make docs-figures"
