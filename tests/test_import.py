from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "torch", "transformers", "vllm", "litellm", "datasets",
    "verifiers", "verl", "starlette", "uvicorn", "fastapi",
)  # fmt: skip


def test_import_is_lean_and_registers_the_env() -> None:
    code = (
        "import sys, gymnasium, conductor_gym\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
        "print('ConductorEnv-v0' in gymnasium.registry)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"


def test_public_api_is_exported() -> None:
    import conductor_gym

    for name in conductor_gym.__all__:
        assert hasattr(conductor_gym, name), name
