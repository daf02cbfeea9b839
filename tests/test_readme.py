"""The README's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "README lost its python examples"
    episodes = 0
    for block in blocks:
        namespace: dict[str, object] = {}
        exec(compile(block, str(README), "exec"), namespace)  # our own documentation code
        if "env" in namespace:  # an episode example: it must have run to its end
            episodes += 1
            assert namespace["reward"] in (0.5, 1.0)
            assert namespace["info"]["outcome"] in ("correct", "wrong")  # type: ignore[index]
            assert namespace["terminated"] is True
    assert episodes >= 2


def test_readme_grader_example_is_right(capsys) -> None:  # type: ignore[no-untyped-def]
    block = next(
        b
        for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
        if "from conductor_gym.graders import grade" in b
    )
    exec(compile(block, str(README), "exec"), {})
    assert "Grade(correct=True" in capsys.readouterr().out
