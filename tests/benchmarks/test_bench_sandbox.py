"""Benchmark: one sandboxed run of a trivial program (target: 15 runs/s or more on two
cores, i.e. a median under ~66 ms, whatever isolation this machine provides)."""

from __future__ import annotations

from typing import Any

from conductor_gym.sandbox import isolation, run_python


def test_run_python_trivial(benchmark: Any) -> None:
    isolation()  # the one-time probe is not part of a run
    result = benchmark(run_python, "print(1)")
    assert (result.status, result.stdout) == ("ok", "1\n")
