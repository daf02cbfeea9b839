"""The README's usage example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_usage_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no python example"
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)  # our own documentation code
    assert namespace["reward"] in (0.5, 1.0)
    assert namespace["info"]["outcome"] in ("correct", "wrong")  # type: ignore[index]
    assert namespace["envs"].num_envs == 64  # type: ignore[attr-defined]
