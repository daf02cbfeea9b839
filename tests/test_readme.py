"""The README's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "README lost its python examples"
    for block in blocks:
        namespace: dict[str, object] = {}
        exec(compile(block, str(README), "exec"), namespace)  # our own documentation code
        assert namespace["reward"] in (0.5, 1.0)
        assert namespace["info"]["outcome"] in ("correct", "wrong")  # type: ignore[index]
        assert namespace["terminated"] is True
