"""Choosing the CPU recipe's precision by measuring it: bf16 autocast or float32.

bf16 autocast pays off only on CPUs that compute in bf16 natively (``amx_bf16`` on
Sapphire Rapids and later Xeons, ``avx512_bf16`` on AMD Zen 4 and later, Cooper Lake);
elsewhere oneDNN emulates it and it is several times *slower* than float32 (an AVX2-only
AMD EPYC: a SmolLM2-135M forward over 8 x 128 tokens took 4.1 s in float32 and 30.8 s
under bf16 autocast). The flags alone do not settle it (a VM may hide them, a library
build may not use them), so :func:`choose_cpu_precision` times both:

* the probe is the shape of SmolLM2-135M's MLP input projection (1024 tokens x 576 ->
  1536), one ``torch.nn.Linear`` forward, the best of :data:`PROBE_REPEATS` after a
  warm-up, in float32 and under ``torch.autocast("cpu", dtype=torch.bfloat16)``, on the
  threads torch is set to use (about 0.1 s in all where bf16 is native, under 1 s where
  it is emulated);
* bf16 is chosen only when it is at least :data:`BF16_SPEEDUP` times faster than
  float32: autocast changes the numerics, so a tie goes to float32.

The choice, both timings and the CPU's bf16 flags are a :class:`PrecisionChoice`; the
training run prints it and records it in ``results.json`` (``precision``), and the
``GRPOConfig`` it builds has ``bf16`` set accordingly (what the trainer logs as its
arguments). Where it is bf16 on a CPU, the trainer
(:class:`~conductor_gym.trainers.trl.trainer.ConductorGRPOTrainer`) also samples with
bf16 weights. Measured figures for both kinds of CPU are in
``docs/training-cpu.md``.
"""

from __future__ import annotations

import importlib
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "BF16_FLAGS",
    "BF16_SPEEDUP",
    "PROBE_REPEATS",
    "PrecisionChoice",
    "choose_cpu_precision",
    "cpu_bf16_flags",
    "cpu_name",
    "measure_probe",
]

BF16_FLAGS = ("amx_bf16", "avx512_bf16")
"""``/proc/cpuinfo`` flags of native bf16 arithmetic."""

BF16_SPEEDUP = 1.25
"""How many times faster than float32 the bf16 probe must be for bf16 to be chosen."""

PROBE_REPEATS = 3
PROBE_SHAPE = (1024, 576, 1536)
"""Tokens, input and output features of the probe's linear layer."""


@dataclass(frozen=True)
class PrecisionChoice:
    """The precision chosen for CPU training, and why.

    Attributes:
        bf16: Whether to train (and evaluate) under bf16 autocast.
        fp32_s, bf16_s: The probe's best time in each precision, in seconds.
        cpu_flags: The :data:`BF16_FLAGS` the CPU reports (empty off Linux).
        reason: One line for the log.
    """

    bf16: bool
    fp32_s: float
    bf16_s: float
    cpu_flags: tuple[str, ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cpu_bf16_flags(cpuinfo: str = "/proc/cpuinfo") -> tuple[str, ...]:
    """The :data:`BF16_FLAGS` in the first ``flags`` line of ``cpuinfo`` (``()`` when it
    cannot be read)."""
    try:
        with open(cpuinfo, encoding="utf-8") as handle:
            line = next((raw for raw in handle if raw.startswith("flags")), "")
    except OSError:
        return ()
    flags = set(line.partition(":")[2].split())
    return tuple(flag for flag in BF16_FLAGS if flag in flags)


def cpu_name(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU's ``model name`` in ``cpuinfo`` (``platform.processor()`` when it cannot
    be read), for logs that name the CPU kind they measured on."""
    try:
        with open(cpuinfo, encoding="utf-8") as handle:
            line = next((raw for raw in handle if raw.startswith("model name")), "")
    except OSError:
        line = ""
    return line.partition(":")[2].strip() or platform.processor() or "unknown CPU"


def measure_probe(bf16: bool) -> float:
    """Best time in seconds of the probe's forward pass (module docstring)."""
    torch: Any = importlib.import_module("torch")
    tokens, features_in, features_out = PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    layer = torch.nn.Linear(features_in, features_out)
    inputs = torch.randn(tokens, features_in, generator=generator)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)
    best = float("inf")
    with torch.no_grad(), autocast:
        layer(inputs)  # warm-up: oneDNN picks and caches its kernels
        for _ in range(PROBE_REPEATS):
            start = time.perf_counter()
            layer(inputs)
            best = min(best, time.perf_counter() - start)
    return best


def choose_cpu_precision(
    measure: Callable[[bool], float] | None = None,
    *,
    flags: tuple[str, ...] | None = None,
) -> PrecisionChoice:
    """bf16 autocast when the probe runs at least :data:`BF16_SPEEDUP` times faster in
    it than in float32, else float32. ``measure(bf16)`` returns the probe's time (by
    default :func:`measure_probe`); ``flags`` defaults to :func:`cpu_bf16_flags`."""
    measure = measure or measure_probe
    fp32_s, bf16_s = float(measure(False)), float(measure(True))
    flags = cpu_bf16_flags() if flags is None else flags
    bf16 = bf16_s * BF16_SPEEDUP <= fp32_s
    chosen = "bf16 autocast" if bf16 else "float32"
    reason = (
        f"{chosen}: probe {fp32_s * 1e3:.1f} ms in float32, {bf16_s * 1e3:.1f} ms in bf16 "
        f"(CPU bf16 flags: {', '.join(flags) or 'none'})"
    )
    return PrecisionChoice(bf16, fp32_s, bf16_s, tuple(flags), reason)
