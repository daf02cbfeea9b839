"""A tiny world for the classic baselines' tests: four simulated workers, each right on
one family of the offline tasks only, so what a learner should ask is known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPECIALISTS = {
    "arithmetic": ("arith", "math500"),
    "multiple_choice": ("mc", "mmlu"),
    "countdown": ("countdown", "rlpr"),
    "program_trace": ("trace", "livecodebench"),
}
"""Family -> its specialist's name and the task profile it is right on."""


def tiny_pool(folder: Path) -> str:
    """A pool file of four simulated workers, each 97 % on one profile, 2-5 % elsewhere."""
    lines = ['name = "tiny-specialists"', 'description = "one specialist per family"']
    lines += ["[defaults]", "max_tokens = 4096"]
    for name, profile in SPECIALISTS.values():
        skills = ", ".join(
            f"{p} = {0.97 if p == profile else 0.03}" for _, p in SPECIALISTS.values()
        )
        lines += [
            "[[workers]]",
            f'name = "{name}"',
            'backend = "simulated"',
            'model = "gemma-3-27b-it"',
            f"backend_options = {{ accuracy = {{ {skills} }} }}",
        ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def specialist_followed(results: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Per family: fresh episodes whose pool lists the family's specialist, and those of
    them whose greedy plan asks it (the trainer's worker-choice table, by name)."""
    choice = results["worker_choice"]
    return {f: tuple(choice[f][SPECIALISTS[f][0]]) for f in SPECIALISTS}  # type: ignore[misc]
